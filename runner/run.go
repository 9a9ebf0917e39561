// Package runner runs the contract suite: the step definitions of package
// steps over the features, with godog, against one server, and tells what
// came of it. Run runs a pass and returns each scenario's outcome, the
// reports (package report, package htmlreport, or godog's Cucumber JSON)
// fed from one collector of godog's events (collector.go); Summarise tells
// people what ran, what was not checked and why, and what failed
// (summary.go). Command agentruns-contract is its command line.
package runner

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"sort"
	"time"

	"github.com/cucumber/godog"

	"github.com/agentruns/agentruns/clientcheck"
	"github.com/agentruns/agentruns/htmlreport"
	"github.com/agentruns/agentruns/report"
	"github.com/agentruns/agentruns/steps"
	"github.com/agentruns/agentruns/suiteconfig"
)

// Status is the outcome of one scenario, as every report says it.
type Status = report.Status

// The outcomes of a scenario in a Result. A scenario whose step has no
// definition (or two) counts as failed: the suite cannot vouch for the
// server.
const (
	Passed      = report.Passed
	Failed      = report.Failed
	Skipped     = report.Skipped
	Interrupted = report.Interrupted // the run was stopped before it finished
)

// ScenarioResult is the outcome of one scenario (one row, for an outline).
type ScenarioResult struct {
	Feature string // the feature file, e.g. "list_runs.feature"
	Name    string // the scenario's name, outline parameters filled in
	Tags    []string
	Status  Status
	// Message says why the scenario failed or was skipped.
	Message string
	// Needs, on a scenario skipped for want of an option, is that option.
	Needs *report.Need
}

// Result is the outcome of a whole run of the suite.
type Result struct {
	Scenarios []ScenarioResult // sorted by feature, then name
	// Seed reproduces the order of the scenarios (suiteconfig.Config.Seed).
	Seed int64
	// Control tells whether the server offered the mock's control API.
	Control  bool
	Duration time.Duration
	// Report is the run as the report formatters saw it, step by step.
	Report report.Run
	// NewestClient is what the run found of the newest client's surface,
	// and whether it judged it.
	NewestClient steps.NewestSurface
}

// Passed reports whether at least one scenario ran, none failed or was
// interrupted, and no client version named by suiteconfig.Config.FailOnClient
// breaks.
func (r Result) Passed() bool {
	return len(r.Scenarios) > 0 && len(r.Failed()) == 0 && len(r.Interrupted()) == 0 && len(r.ClientsFailing()) == 0
}

// ClientsFailing names the client versions that break and that
// suiteconfig.Config.FailOnClient promised.
func (r Result) ClientsFailing() []string {
	var out []string
	for _, c := range r.Report.Clients {
		if c.Failing() {
			out = append(out, c.Name)
		}
	}
	return out
}

// clientTable turns what the tally found into the report's rows.
func clientTable(counts []clientcheck.Count, failOn map[string]bool) []report.ClientVersion {
	out := make([]report.ClientVersion, 0, len(counts))
	for _, c := range counts {
		row := report.ClientVersion{Name: c.Version, Checked: c.Checked, Broken: c.Broken, Fails: failOn[c.Version]}
		for _, b := range c.First {
			row.First = append(row.First, report.ClientBreak{Operation: b.Operation, Field: b.Field, Expected: b.Expected, Got: b.Got})
		}
		out = append(out, row)
	}
	return out
}

// NothingChecked reports whether scenarios were selected and every one of
// them was skipped: the run vouches for nothing, though nothing failed.
func (r Result) NothingChecked() bool {
	return len(r.Scenarios) > 0 && len(r.Skipped()) == len(r.Scenarios)
}

// Failed lists the scenarios that failed.
func (r Result) Failed() []ScenarioResult { return r.with(Failed) }

// Skipped lists the scenarios that were skipped.
func (r Result) Skipped() []ScenarioResult { return r.with(Skipped) }

// Interrupted lists the scenarios an interrupt stopped or kept from starting.
func (r Result) Interrupted() []ScenarioResult { return r.with(Interrupted) }

func (r Result) with(st Status) []ScenarioResult {
	var out []ScenarioResult
	for _, s := range r.Scenarios {
		if s.Status == st {
			out = append(out, s)
		}
	}
	return out
}

// Find returns the scenario with this name.
func (r Result) Find(name string) (ScenarioResult, bool) {
	for _, s := range r.Scenarios {
		if s.Name == name {
			return s, true
		}
	}
	return ScenarioResult{}, false
}

// Count returns how many scenarios passed, failed and were skipped.
func (r Result) Count() (passed, failed, skipped int) {
	return len(r.with(Passed)), len(r.with(Failed)), len(r.with(Skipped))
}

// ErrInterrupted means the run was stopped (its context cancelled) before
// every scenario finished; the runs the suite had started were cancelled.
var ErrInterrupted = steps.ErrInterrupted

// Run runs the selected scenarios against cfg.BaseURL and reports each
// scenario's outcome. The error is for a suite that could not run at all
// (a *suiteconfig.ConfigError for a configuration it cannot run, a
// *PreflightError when the server is not one it can test) or was
// interrupted (ErrInterrupted); failing scenarios are in the Result.
func Run(ctx context.Context, cfg suiteconfig.Config) (Result, error) {
	// The configuration is checked, then the server (preflight.go), before
	// the suite is built: a wrong target is told in one sentence.
	checked, err := cfg.WithDefaults()
	if err != nil {
		return Result{}, err
	}
	if _, err := checked.SelectsNewestClient(); err != nil {
		return Result{}, err // features that cannot be read, as NewSuite would say
	}
	if err := checkServer(ctx, checked); err != nil {
		return Result{}, err
	}
	su, err := steps.NewSuite(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	return RunSuite(ctx, su)
}

// RunSuite runs one pass of su's scenarios, as Run does once it has built
// su; the server is not asked Run's pre-flight questions again, so a
// caller that builds su itself goes without them.
func RunSuite(ctx context.Context, su *steps.Suite) (Result, error) {
	start := time.Now()
	cfg := su.Config()
	seed := cfg.Seed
	if seed == 0 {
		seed = NewSeed()
	}
	rep := cfg.Report
	if rep == nil {
		rep = newReport(cfg)
	}
	if cfg.Progress != nil {
		rep = report.Tee(rep, report.NewMarks(cfg.Progress, report.Options{}))
	}
	format := collectorFormat
	if cfg.GodogFormat() {
		format += "," + cfg.Format // one of godog's own formatters
	}
	col := newCollector(rep, func() bool { return ctx.Err() != nil }, su.Avoidable)
	suiteName, unregister := col.register()
	defer unregister()
	versions, err := suiteconfig.ClientVersions()
	if err != nil {
		return Result{}, fmt.Errorf("loading the client versions' facts: %w", err)
	}
	failOn := map[string]bool{}
	if cfg.FailOnClient != "" {
		if failOn, err = clientcheck.Select(versions, cfg.FailOnClient); err != nil {
			return Result{}, &suiteconfig.ConfigError{Err: err}
		}
	}
	clients := clientcheck.NewTally(versions)
	su.Begin(ctx, col, clients)

	opts := godog.Options{
		Format:         format,
		Output:         cfg.Output, // for godog's own formatters
		NoColors:       cfg.NoColors,
		Concurrency:    cfg.Concurrency,
		Tags:           cfg.TagExpression(),
		Randomize:      seed,
		Strict:         true,
		FS:             cfg.Features,
		Paths:          []string{"."},
		DefaultContext: ctx,
	}
	status := godog.TestSuite{
		Name:                suiteName,
		ScenarioInitializer: su.InitializeScenario,
		Options:             &opts,
	}.Run()
	runs := su.End(ctx)

	scenarios, repErr := col.finish()
	run := report.Run{
		Name: "agentruns-contract", Target: cfg.BaseURL, Mode: su.Mode(), Tags: cfg.Tags, Seed: seed,
		Start: start, Duration: time.Since(start), Scenarios: scenarios,
		Clients: clientTable(clients.Counts(), failOn),
		Runs:    runs,
	}
	if err := rep.Close(run); err != nil && repErr == nil {
		repErr = err
	}
	res := Result{Seed: seed, Control: su.Control(), Duration: run.Duration, Report: run, NewestClient: su.NewestClient()}
	for _, sc := range scenarios {
		res.Scenarios = append(res.Scenarios, scenarioResult(sc))
	}
	sort.SliceStable(res.Scenarios, func(i, j int) bool {
		a, b := res.Scenarios[i], res.Scenarios[j]
		if a.Feature != b.Feature {
			return a.Feature < b.Feature
		}
		return a.Name < b.Name
	})
	switch {
	case repErr != nil:
		return res, fmt.Errorf("writing the report: %w", repErr)
	case ctx.Err() != nil:
		return res, fmt.Errorf("%w: %d scenarios did not finish", ErrInterrupted, len(res.Interrupted()))
	case status == 2:
		return res, errors.New("godog could not run the features (see its output)")
	case len(res.Scenarios) == 0:
		return res, fmt.Errorf("no scenario matches the tags %q", cfg.Tags)
	case status != 0 && res.Passed():
		return res, errors.New("godog reported a failure outside the scenarios (see its output)")
	}
	return res, nil
}

// NewSeed picks a random, positive seed for the order of the scenarios.
func NewSeed() int64 { return mrand.Int64N(1<<62) + 1 }

// scenarioResult is the short form of a scenario's report.
func scenarioResult(sc report.Scenario) ScenarioResult {
	r := ScenarioResult{Feature: sc.URI, Name: sc.Name, Tags: sc.Tags, Message: sc.Message, Needs: sc.Needs}
	switch {
	case sc.Status == report.Passed:
		r.Status = Passed
	case sc.Status == report.Skipped:
		r.Status = Skipped
	case sc.Status == report.Interrupted:
		r.Status = Interrupted
	default: // failed, undefined, pending, ambiguous
		r.Status = Failed
		if sc.Status.Incomplete() {
			r.Message = string(sc.Status) + " step: " + sc.Message
		}
	}
	return r
}

// newReport makes the report named by cfg.Format: one of package report's,
// the HTML page, or none when godog's own formatter writes it.
func newReport(cfg suiteconfig.Config) report.Formatter {
	switch {
	case report.Builtin[cfg.Format] != nil:
		return report.Builtin[cfg.Format](cfg.Output, report.Options{Colors: !cfg.NoColors})
	case cfg.Format == "html":
		return htmlreport.New(cfg.Output, cfg.Features)
	}
	return noReport{}
}

// noReport is the formatter of a run reported by one of godog's own
// formatters (cucumber).
type noReport struct{}

func (noReport) Scenario(report.Scenario) error { return nil }
func (noReport) Close(report.Run) error         { return nil }
