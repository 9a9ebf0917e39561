// Package suiteconfig is the contract suite's configuration: where the
// suite runs and how (Config), its defaults, and the checks that refuse a
// configuration that cannot run (ConfigError) before anything is asked of
// the server, the tag expression that selects the scenarios among them.
// The step definitions (package steps) read it, and so does the runner
// (package runner) that runs and reports them, and the command that fills
// it from its flags.
package suiteconfig

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/agentruns/agentruns/clientcheck"
	"github.com/agentruns/agentruns/features"
	"github.com/agentruns/agentruns/report"
)

// Defaults of Config.
const (
	DefaultTimeout      = 10 * time.Minute
	DefaultPollInterval = 2 * time.Second
	DefaultSpacing      = 1100 * time.Millisecond
	DefaultConcurrency  = 4
	DefaultFormat       = "pretty"
)

// ResponseValidator checks one response against the API contract, returning
// nil or an error that names the operation, the status and the offending
// field. *openapi.Validator implements it.
type ResponseValidator interface {
	ValidateResponse(req *http.Request, resp *http.Response) error
}

// Config says where the suite runs and how: what the steps are given (the
// server, its keys, the waits, the budget), and how package runner runs
// and reports them (Tags, Report, Format, Output, Concurrency, Seed,
// FailOnClient...). Only BaseURL and APIKey are needed; everything else has
// a default.
type Config struct {
	// BaseURL is where the API lives, such as https://app.warp.dev/api/v1.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <APIKey>" on every API call.
	APIKey string
	// OtherAPIKey is a key of another team, for the scenarios tagged
	// @two-callers (another team's runs are never shown nor cancellable);
	// they are skipped, saying so, when it is empty.
	OtherAPIKey string
	// FailingPrompt is a prompt the server under test ends in FAILED or
	// ERROR, for the scenarios tagged @failing-prompt (a failed run, seen by
	// polling, carries a status message); they are skipped, saying so, when
	// it is empty. The bundled mock fails any prompt holding "[mock:fail]".
	FailingPrompt string
	// WaitForTicks lets the scenarios tagged @schedule-ticks run against a
	// server without the mock's control API: they wait for schedules to fire
	// on the server's clock, about three minutes whatever Timeout (each
	// tick is waited for until a minute past it), and start a run or two.
	// Without it they are skipped, saying so; with the control API they
	// move the mock's clock and need no waiting.
	WaitForTicks bool
	// IdentityPlan is how many agent identities the plan of APIKey's team
	// allows, as its operator knows it, for the scenario tagged @plan-edge
	// (the plan's edge is where it says); skipped, saying so, when 0. The
	// bundled mock's plan for its fixture key wk-mock-alice is 3.
	IdentityPlan int
	// HTTPClient makes every request; http.DefaultClient when nil.
	HTTPClient *http.Client

	// Tags is a tag expression selecting scenarios, in Cucumber's syntax
	// ("not @slow and (@a or @b)") or godog's older one ("~@slow && @a,@b").
	Tags string
	// ReadOnly changes nothing on the server: it leaves out every scenario
	// tagged @creates-runs or @writes, leaves the mock's control API alone,
	// and its HTTP client refuses any method but GET and HEAD
	// (steps/readonly.go).
	ReadOnly bool
	// Timeout bounds each wait for a run to progress (wall time when polling,
	// server time when driving the mock's clock). Default 10 minutes.
	Timeout time.Duration
	// PollInterval is the pause between two looks at a run when polling.
	// Default 2 s. A run that stays in a state for less than it may be
	// seen to skip that state, so a move backwards through it goes
	// unseen; a shorter interval sees more and costs one request per look
	// (docs/contract-suite-runner.md, "How often the suite looks").
	PollInterval time.Duration
	// Spacing is the pause between runs created "one after another" when the
	// suite cannot move the server's clock. The default, 1.1 s, keeps their
	// creation times apart even on a server with one-second timestamps.
	Spacing time.Duration
	// ExactTimestamps says the server keeps its instants exactly as it
	// shows them (the bundled mock, milliseconds). Without it, a time
	// filter at an instant that the digits shown leave undecided (a run
	// shown created at 10:00:01, kept to the nanosecond, and
	// created_after=10:00:01) is judged inconclusive, not failed; with it,
	// the suite holds the server to the instants as shown. The bundled
	// mock, found by its control API, is held so without it.
	ExactTimestamps bool
	// NoControl ignores the mock's control API even where it is offered, so
	// the suite behaves as against a real server.
	NoControl bool
	// NewestClient promises that the server serves what the newest
	// official client calls beyond the published document (the scenarios
	// tagged @newest-client): they are judged, and what is missing fails.
	// Without it the suite asks the server whether it serves that surface
	// and judges it only where it does (steps/newest_surface.go).
	NewestClient bool

	// Prompt, when set, is the prompt of every run the suite creates but
	// those of the scenarios about their prompt (@runs-as-written) and
	// the failing prompt's: the cheapest prompt the team's agents finish.
	Prompt string
	// MaxRuns, when set, is the most runs the suite creates: a create that
	// would pass it is not sent, and its scenario is NOT CHECKED (budget),
	// never passed (steps/runbook.go).
	MaxRuns int
	// MaxRunsAtOnce, when set, is the most of its runs the suite keeps in
	// flight at once; without it the suite keeps to what the server takes
	// at once, as the create answer's at_capacity first shows it.
	MaxRunsAtOnce int

	// Report receives each scenario as it ends, then the whole run. When
	// nil, Format names the report.
	Report report.Formatter
	// Format names a report written to Output: pretty (default), progress
	// or junit (package report), html (package htmlreport), or cucumber
	// (godog's Cucumber JSON).
	Format string
	// Output receives the report named by Format; os.Stdout when nil.
	Output io.Writer
	// NoColors strips ANSI colours from the output.
	NoColors bool
	// Progress, when set, receives a character per scenario as it ends (as
	// the progress format prints them) and the count: a sign of life while
	// the report goes to a file, or is not for people.
	Progress io.Writer
	// Concurrency is how many scenarios run at once. Default 4.
	Concurrency int
	// Seed orders the scenarios (within each feature, in the order they
	// start); 0 picks a random seed (reported in runner.Result). The same seed gives
	// the same order.
	Seed int64
	// Log receives notes for people, such as why a scenario was skipped;
	// discarded when nil.
	Log io.Writer

	// FailOnClient names the released client versions whose breaks fail
	// the run: "all", or names such as "typescript-1.0.0-alpha.8"
	// separated by commas. Beside the document, every success answer is
	// judged as each known client version reads it (package clientcheck)
	// and runner.Result.Report.Clients tells what each made of them; by default a
	// break is reported only, since the document is the contract.
	FailOnClient string

	// Validator checks every response. When nil, the project's OpenAPI
	// document (openapi.NewValidator) if the run judges the newest
	// client's surface (NewestClient, or a server found serving it), and
	// otherwise its published view (openapi.NewPublishedValidator), which
	// requires no field of the newest client's of an answer.
	Validator ResponseValidator
	// Features holds the feature files at its root; the embedded
	// features.FS when nil.
	Features fs.FS

	// LetTimePass lets time pass where the suite cannot move the server's
	// clock (between two looks at a run, say); the suite sleeps when it is
	// nil. Tests set it to move a mock's virtual clock instead, so that a
	// run's pace against the poll interval does not hang on the machine's
	// load.
	LetTimePass func(ctx context.Context, d time.Duration) error
}

// godogFormats are godog's own formatters the suite passes on.
var godogFormats = map[string]bool{"cucumber": true}

// GodogFormat tells whether godog's own formatter named by Format writes
// the report (cucumber), rather than package report's or the HTML page.
func (c Config) GodogFormat() bool { return c.Report == nil && godogFormats[c.Format] }

// WithDefaults checks c and fills in its defaults; the error is a
// *ConfigError.
func (c Config) WithDefaults() (Config, error) {
	var errs []error
	u, err := url.Parse(c.BaseURL)
	switch {
	case c.BaseURL == "":
		errs = append(errs, errors.New("no base URL"))
	case !strings.Contains(c.BaseURL, "://"):
		// Go's URL parser would answer "first path segment in URL cannot
		// contain colon" for host:port, which helps no one.
		errs = append(errs, fmt.Errorf("base URL %q has no scheme: write it as http://%s (or https://)", c.BaseURL, c.BaseURL))
	case err != nil:
		errs = append(errs, fmt.Errorf("base URL: %w", err))
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		errs = append(errs, fmt.Errorf("base URL %q: want http(s)://host[/path]", c.BaseURL))
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	if c.APIKey == "" {
		errs = append(errs, errors.New("no API key"))
	}
	if c.HTTPClient == nil {
		c.HTTPClient = http.DefaultClient
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.Spacing <= 0 {
		c.Spacing = DefaultSpacing
	}
	if c.Format == "" {
		c.Format = DefaultFormat
	}
	if c.Report == nil && report.Builtin[c.Format] == nil && c.Format != "html" && !godogFormats[c.Format] {
		errs = append(errs, fmt.Errorf("format %q: want pretty, progress, junit, cucumber or html", c.Format))
	}
	if c.Features == nil {
		c.Features = features.FS
	}
	if _, err := c.tags(); err != nil {
		errs = append(errs, err)
	} else if err := c.knownTags(); err != nil {
		errs = append(errs, err)
	} else if selects, err := c.SelectsNewestClient(); err == nil && c.NewestClient && !selects {
		errs = append(errs, fmt.Errorf("the newest client is promised, and the tags %q select none of its scenarios (%s)", c.Tags, NewestClientTag))
	}
	if c.Output == nil {
		c.Output = os.Stdout
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.MaxRuns < 0 {
		errs = append(errs, fmt.Errorf("max runs %d: want a positive number, or 0 for no budget", c.MaxRuns))
	}
	if c.MaxRunsAtOnce < 0 {
		errs = append(errs, fmt.Errorf("max runs at once %d: want a positive number, or 0 to keep to what the server takes", c.MaxRunsAtOnce))
	}
	if c.FailOnClient != "" {
		versions, err := ClientVersions()
		if err == nil {
			_, err = clientcheck.Select(versions, c.FailOnClient)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("fail on client: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return c, &ConfigError{Err: err}
	}
	return c, nil
}

// ConfigError means a Config cannot be run as it is (no base URL, no key,
// a malformed tag expression, a tag no feature carries...); nothing was
// asked of the server.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Check reports what is wrong with c, as a *ConfigError, or nil.
func (c Config) Check() error {
	_, err := c.WithDefaults()
	return err
}

// ClientVersions are the released client versions' facts (the names
// FailOnClient may give), read once per process for the configuration's
// check, the steps and the runner alike; a Version is immutable.
var ClientVersions = sync.OnceValues(clientcheck.Load)
