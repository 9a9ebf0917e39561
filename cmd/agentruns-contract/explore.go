package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/agentruns/agentruns/explore"
	"github.com/agentruns/agentruns/runner"
	"github.com/agentruns/agentruns/suiteconfig"
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
	cfg := suiteconfig.Config{BaseURL: o.baseURL, APIKey: o.apiKey, OtherAPIKey: o.otherAPIKey, ReadOnly: o.readOnly}
	target, keyFrom, stop, err := chooseTarget(o, &cfg)
	if err != nil {
		return err
	}
	defer stop()
	seed := o.seed
	fmt.Fprintf(stderr, "exploring %s\nkey from %s; %s\n", target, keyFrom, describeBudget(o))
	// The suite's pre-flight first: a server that is not the API, a key it
	// refuses, or two keys of one team would make every finding false.
	if err := runner.Preflight(ctx, cfg); err != nil {
		return err
	}
	res, err := explore.Run(ctx, explore.Options{
		BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, OtherAPIKey: cfg.OtherAPIKey,
		HTTPClient: &http.Client{Timeout: 60 * time.Second},
		Steps:      o.explore.calls, Duration: o.explore.time, Seed: seed,
		ReadOnly: cfg.ReadOnly, MaxRuns: o.maxRuns, NewestClient: o.newestClient, NoControl: o.noControl,
		ReplayBaseURL: replayBaseURL(o), ReplayFlags: replayKeys(o),
	})
	if werr := writeExploration(o, stdout, res, cfg.BaseURL); werr != nil && err == nil {
		err = werr
	}
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

// writeExploration writes the exploration's report in --format to
// --output (stdout by default): JUnit, the HTML page, or the summary
// (every other format). A report written to a file leaves the summary on
// stdout too.
func writeExploration(o options, stdout io.Writer, res explore.Result, baseURL string) error {
	write := explore.WriteSummary
	switch o.format {
	case "junit":
		write = explore.WriteJUnit
	case "html":
		write = explore.WriteHTML
	}
	out := stdout
	if o.output != "" {
		f, err := os.Create(o.output)
		if err != nil {
			return err
		}
		defer f.Close()
		out = f
	}
	if err := write(out, res, baseURL); err != nil {
		return err
	}
	if out == stdout {
		return nil
	}
	return explore.WriteSummary(stdout, res, baseURL)
}

// replayKeys are the keys a replay of an exploration of the mock the
// command started names: the ones given, written out, since the bundled
// mock takes only its fixture keys, which are no secret (fixtures/); none
// when the command chose them (a replay chooses the same).
func replayKeys(o options) []string {
	if replayBaseURL(o) != "-" {
		return nil
	}
	var flags []string
	if o.apiKey != "" {
		flags = append(flags, "--api-key", o.apiKey)
	}
	if o.otherAPIKey != "" {
		flags = append(flags, "--other-api-key", o.otherAPIKey)
	}
	return flags
}

// replayBaseURL is the base URL a replay names: none when the command
// explored the mock it started itself (a replay starts one again).
func replayBaseURL(o options) string {
	if o.baseURL == "" && os.Getenv("OZ_API_BASE_URL") == "" {
		return "-"
	}
	return ""
}
