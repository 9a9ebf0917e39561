package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentruns/agentruns/explore"
	"github.com/agentruns/agentruns/steps"
)

// exploreBudget is the value of --explore: a number of calls or a
// duration.
type exploreBudget struct {
	calls int
	time  time.Duration
}

func (b *exploreBudget) set() bool { return b.calls > 0 || b.time > 0 }

func (b *exploreBudget) String() string {
	switch {
	case b == nil:
		return ""
	case b.time > 0:
		return b.time.String()
	case b.calls > 0:
		return strconv.Itoa(b.calls)
	}
	return ""
}

func (b *exploreBudget) Set(s string) error {
	if n, err := strconv.Atoi(s); err == nil {
		if n <= 0 {
			return errors.New("want a number of calls above zero, or a duration such as 2m")
		}
		b.calls = n
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return errors.New("want a number of calls, such as 500, or a duration with its unit, such as 2m")
	}
	b.time = d
	return nil
}

// errFindings means an exploration found something.
var errFindings = errors.New("the exploration found what breaks the contract")

// runExplore explores the server instead of running the features, prints
// what it found and fails when it found anything.
func runExplore(ctx context.Context, o options, stdout, stderr io.Writer) error {
	cfg := steps.Config{BaseURL: o.baseURL, APIKey: o.apiKey, OtherAPIKey: o.otherAPIKey, ReadOnly: o.readOnly}
	target, keyFrom, stop, err := chooseTarget(o, &cfg)
	if err != nil {
		return err
	}
	defer stop()
	seed := o.seed
	fmt.Fprintf(stderr, "exploring %s\nkey from %s; %s\n", target, keyFrom, describeBudget(o))
	res, err := explore.Run(ctx, explore.Options{
		BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, OtherAPIKey: cfg.OtherAPIKey,
		HTTPClient: &http.Client{Timeout: 60 * time.Second},
		Steps:      o.explore.calls, Duration: o.explore.time, Seed: seed,
		ReadOnly: cfg.ReadOnly, MaxRuns: o.maxRuns, NewestClient: o.newestClient, NoControl: o.noControl,
	})
	printExploration(stdout, res)
	if err != nil {
		return err
	}
	if len(res.Findings) > 0 {
		return errFindings
	}
	return nil
}

func describeBudget(o options) string {
	what := "calls for " + o.explore.String()
	if o.explore.calls > 0 {
		what = strconv.Itoa(o.explore.calls) + " calls"
	}
	if o.readOnly {
		what += ", reads only"
	}
	if o.maxRuns > 0 {
		what += fmt.Sprintf(", at most %d runs", o.maxRuns)
	}
	return what
}

// printExploration writes a plain summary of an exploration: what it
// sent and created, then each finding with its cause, what was seen and
// the calls that show it.
func printExploration(w io.Writer, res explore.Result) {
	fmt.Fprintf(w, "explored with seed %d (--seed %d replays it): %d calls", res.Seed, res.Seed, res.Calls)
	if res.ReadOnly {
		fmt.Fprint(w, ", reads only")
	}
	fmt.Fprintln(w)
	var created []string
	for kind, n := range res.Created {
		created = append(created, fmt.Sprintf("%d %s", n, kind))
	}
	sort.Strings(created)
	if len(created) == 0 {
		created = []string{"nothing"}
	}
	fmt.Fprintf(w, "created: %s\n", strings.Join(created, ", "))
	if len(res.Unreached) > 0 {
		fmt.Fprintf(w, "not called: %d operations\n", len(res.Unreached))
		for _, op := range sortedKeys(res.Unreached) {
			fmt.Fprintf(w, "  %s: %s\n", op, res.Unreached[op])
		}
	}
	if len(res.Findings) == 0 {
		fmt.Fprintln(w, "no finding")
		return
	}
	fmt.Fprintf(w, "%d findings:\n", len(res.Findings))
	for i, f := range res.Findings {
		fmt.Fprintf(w, "\n%d. %s\n   %s\n   shown by %d calls:\n", i+1, f.Cause, f.Detail, len(f.Calls))
		for _, c := range f.Calls {
			team := ""
			if c.Team != explore.MainTeam {
				team = " (" + c.Team + " team's key)"
			}
			q := ""
			if len(c.Query) > 0 {
				q = "?" + c.Query.Encode()
			}
			fmt.Fprintf(w, "   %s %s%s%s -> %d\n", c.Method, c.Path, q, team, c.Status)
			if len(c.Body) > 0 {
				fmt.Fprintf(w, "      body: %s\n", c.Body)
			}
			if c.Invalid != "" {
				fmt.Fprintf(w, "      wrong on purpose: %s\n", c.Invalid)
			}
		}
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
