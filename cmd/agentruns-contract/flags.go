package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/agentruns/agentruns/clientcheck"
	"github.com/agentruns/agentruns/report"
	"github.com/agentruns/agentruns/suiteconfig"
)

// format is one value of --format.
type format struct {
	name  string
	about string
	new   report.New
}

// formats are the values of --format and how each report is made. A report
// of package report (or any report.New) hears of each scenario as it ends;
// a nil new hands the name to godog, whose formatter of that name writes it.
var formats = []format{
	{"pretty", "each scenario whole as it ends, for people (the default)", report.NewPretty},
	{"progress", "a character per scenario, then the ones that did not pass", report.NewProgress},
	{"junit", "JUnit XML, for CI servers (Jenkins, GitLab, GitHub test reporters)", report.NewJUnit},
	{"cucumber", "Cucumber JSON, for CI", nil},
	{"html", "one self-contained HTML page: the features as a spec, each scenario's outcome and reason", nil},
}

// formatNames lists the --format values, for messages.
func formatNames() string {
	var names []string
	for _, f := range formats {
		names = append(names, f.name)
	}
	return strings.Join(names, ", ")
}

// options are the command line.
type options struct {
	baseURL      string
	apiKey       string
	otherAPIKey  string
	failPrompt   string
	waitForTicks bool
	identityPlan int
	tags         string
	readOnly     bool
	allowWrites  bool
	timeout      time.Duration
	pollInterval time.Duration
	format       string
	output       string
	concurrency  int
	seed         int64
	noControl    bool
	exactStamps  bool
	failOnClient string
	newestClient bool
	prompt       string
	maxRuns      int
	maxAtOnce    int
	// explore, when set, explores instead of running the features
	// (explore.go).
	explore exploreBudget

	// baseURLFrom and apiKeyFrom say where baseURL and apiKey came from.
	baseURLFrom string
	apiKeyFrom  string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("agentruns-contract", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: agentruns-contract [flags]

Runs the Cloud Agent Runs API contract suite against a server. Without a base
URL it starts the bundled mock in this process and verifies it.

Commands:
  agentruns-contract docs [--output spec.html]
        write the features as one HTML page, the API's behaviour as a spec,
        without running anything (docs --help for its flags)

Beside the document, every success answer is judged as each released
official client version reads it; the summary's table names the versions
an answer breaks. Those breaks do not change the exit status unless
--fail-on-client names the version.

Exit status: 0 every selected scenario passed or was skipped, and at least
one passed; 1 a scenario failed, the server cannot be tested, or an answer
breaks a client version named by --fail-on-client; 2 the command line is
wrong; 3 nothing was checked (every selected scenario was skipped); 130
interrupted.

Flags:
`)
		fs.PrintDefaults()
	}
	// The environment fills these in after parsing, so that -help never
	// prints a key.
	fs.StringVar(&o.baseURL, "base-url", "", "`URL` of the API under test, e.g. https://app.warp.dev/api/v1 (default $OZ_API_BASE_URL, read-only; neither: the bundled mock)")
	fs.StringVar(&o.apiKey, "api-key", "", "API `key` sent as a bearer token (default $WARP_API_KEY)")
	fs.StringVar(&o.otherAPIKey, "other-api-key", "", "API `key` of another team, for the scenarios checking that one team never sees another's runs (@two-callers, skipped without it)")
	fs.StringVar(&o.failPrompt, "failing-prompt", "", "a `prompt` the server under test ends in FAILED or ERROR, for the scenarios checking a failed run's status message by polling (@failing-prompt, skipped without it)")
	fs.IntVar(&o.identityPlan, "identity-plan", 0, "how many agent identities the `number` of the key's team's plan allows, for the scenario checking the plan's edge (@plan-edge, skipped without it; 3 against the bundled mock)")
	fs.BoolVar(&o.waitForTicks, "wait-for-ticks", false, "let the scenarios that watch schedules fire on the server's clock run (@schedule-ticks): about three minutes of waiting, whatever --timeout, and a run or two each (skipped without it, unless the mock's control API moves the clock)")
	fs.StringVar(&o.tags, "tags", "", "tag `expression` selecting scenarios, e.g. 'not @slow' or '@mock-control and not @creates-runs' (godog's '~@slow && @a' works too)")
	fs.BoolVar(&o.readOnly, "read-only", false, "change nothing on the server: send only GET and HEAD, leaving out the scenarios that create runs or change anything (@creates-runs, @writes)")
	fs.BoolVar(&o.allowWrites, "allow-writes", false, "create runs on a server named only by $OZ_API_BASE_URL (otherwise tested read-only)")
	o.timeout = suiteconfig.DefaultTimeout
	fs.Var((*duration)(&o.timeout), "timeout", "longest wait for one run to progress, a `duration` such as 90s or 10m")
	o.pollInterval = suiteconfig.DefaultPollInterval
	fs.Var((*duration)(&o.pollInterval), "poll-interval", "pause between two looks at a run when polling, a `duration` such as 500ms: shorter sees states a fast server moves through, at one request per look (the mock's control API needs none)")
	fs.StringVar(&o.format, "format", suiteconfig.DefaultFormat, "report `format`: "+formatNames())
	fs.StringVar(&o.output, "output", "", "`file` for the report (default stdout)")
	fs.IntVar(&o.concurrency, "concurrency", suiteconfig.DefaultConcurrency, "scenarios run at once")
	fs.Int64Var(&o.seed, "seed", 0, "`seed` of the random order of the scenarios, or of the calls with --explore, as printed by an earlier run (default: a new one)")
	fs.BoolVar(&o.exactStamps, "exact-timestamps", false, "the server keeps its timestamps exactly as it shows them: judge the time filters at a run's very instant (without it, an instant the shown digits leave undecided is inconclusive; the bundled mock is judged so anyway)")
	fs.BoolVar(&o.noControl, "no-control", false, "ignore the mock's control API: test the mock as if it were a real server (polling; @mock-control scenarios are skipped)")
	fs.BoolVar(&o.newestClient, "newest-client", false, "the server promises what the newest official client calls beyond the published document (@newest-client): judge it, and fail what is missing (default: judged only where the server serves it, which the run asks first)")
	fs.StringVar(&o.failOnClient, "fail-on-client", "", "fail the run when an answer breaks this client `version`: "+clientcheck.Names()+", several separated by commas, or all (default: breaks are reported, the exit status is the document's)")
	fs.StringVar(&o.prompt, "prompt", "", "the `prompt` of every run the suite creates but those of the scenarios about their runs' prompt or title (@runs-as-written) and the failing prompt: the cheapest one your agents finish (default: each scenario's own)")
	fs.IntVar(&o.maxRuns, "max-runs", 0, "create at most this `number` of runs: the scenarios a run past it would serve are NOT CHECKED (budget), never passed (default: no budget; with --explore, 20 on a server without the mock's control API)")
	fs.IntVar(&o.maxAtOnce, "max-runs-at-once", 0, "keep at most this `number` of the suite's runs in flight at once (default: what the server takes at once, as the create answers' at_capacity show it)")
	fs.Var(&o.explore, "explore", "explore instead of running the features: a `number` of calls (e.g. 500) or a duration (e.g. 2m) of generated sequences over every operation the server serves, each answer judged; findings are shrunk to a shortest sequence (--seed replays it)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, errHelp
		}
		return o, errUsage
	}
	// Given at all, it must name a version: an empty value (a CI variable
	// left unset) would otherwise promise nothing without a word.
	failOnGiven := false
	fs.Visit(func(f *flag.Flag) { failOnGiven = failOnGiven || f.Name == "fail-on-client" })
	if failOnGiven {
		versions, err := clientcheck.Load()
		if err == nil {
			_, err = clientcheck.Select(versions, o.failOnClient)
		}
		if err != nil {
			fmt.Fprintf(stderr, "--fail-on-client %s: %v\n", o.failOnClient, err)
			return o, errUsage
		}
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		fs.Usage()
		return o, errUsage
	}
	if o.concurrency < 1 {
		fmt.Fprintf(stderr, "--concurrency %d: want 1 or more\n", o.concurrency)
		return o, errUsage
	}
	if o.maxRuns < 0 || o.maxAtOnce < 0 {
		fmt.Fprintf(stderr, "--max-runs %d, --max-runs-at-once %d: want a positive number, or 0 for no limit\n", o.maxRuns, o.maxAtOnce)
		return o, errUsage
	}
	if o.seed < 0 {
		fmt.Fprintf(stderr, "--seed %d: want a positive number\n", o.seed)
		return o, errUsage
	}
	if _, ok := findFormat(o.format); !ok {
		fmt.Fprintf(stderr, "--format %q: want one of %s\n", o.format, formatNames())
		return o, errUsage
	}
	switch {
	case o.baseURL != "":
		o.baseURLFrom = "--base-url"
	case os.Getenv("OZ_API_BASE_URL") != "":
		o.baseURL, o.baseURLFrom = os.Getenv("OZ_API_BASE_URL"), "$OZ_API_BASE_URL"
	}
	switch {
	case o.apiKey != "":
		o.apiKeyFrom = "--api-key"
	case os.Getenv("WARP_API_KEY") != "":
		o.apiKey, o.apiKeyFrom = os.Getenv("WARP_API_KEY"), "$WARP_API_KEY"
	}
	return o, nil
}

// duration is a flag.Value of a time.Duration that says what it wants
// where the flag package would answer "parse error".
type duration time.Duration

func (d *duration) String() string { return time.Duration(*d).String() }

func (d *duration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration with its unit, such as 30s, 5m or 1h30m")
	}
	if v <= 0 {
		return fmt.Errorf("want a duration above zero, such as 30s")
	}
	*d = duration(v)
	return nil
}

func findFormat(name string) (format, bool) {
	for _, f := range formats {
		if f.name == name {
			return f, true
		}
	}
	return format{}, false
}
