// Package report writes what a run of the contract suite found: each
// scenario as it ends, then the whole run. Its formatters know nothing of
// godog; the suite (package steps) turns godog's events into the values
// here, so every report says the same thing in its own format.
package report

import (
	"io"
	"time"
)

// Status is the outcome of a step or a scenario.
type Status string

// The outcomes. Undefined, Pending and Ambiguous mean the suite itself is
// incomplete (a step without a definition, or with two); Interrupted means
// the run was stopped (Ctrl-C) before the scenario could finish.
const (
	Passed      Status = "passed"
	Failed      Status = "failed"
	Skipped     Status = "skipped"
	Undefined   Status = "undefined"
	Pending     Status = "pending"
	Ambiguous   Status = "ambiguous"
	Interrupted Status = "interrupted"
)

// NotRun is a scenario of the suite that the run did not select (its tags
// left it out). Only a report that knows every feature file, the HTML page,
// shows such scenarios; no Scenario of a Run carries it.
const NotRun Status = "notrun"

// Incomplete tells whether s means the suite, not the server, is at fault.
func (s Status) Incomplete() bool {
	return s == Undefined || s == Pending || s == Ambiguous
}

// Step is one step of a scenario as it ran.
type Step struct {
	Keyword string // "Given ", "And ", ... as written in the feature
	Text    string // outline parameters filled in
	Line    int
	Status  Status
	// Message is the error of a failed, undefined, pending or ambiguous step.
	Message string
	// Table and DocString are the step's argument, if any.
	Table     [][]string
	DocString string
}

// Scenario is one scenario (one example row, for an outline) as it ran.
type Scenario struct {
	Feature string // the feature's name, e.g. "Listing runs"
	URI     string // the feature file, e.g. "list_runs.feature"
	Line    int    // of the scenario, or of its example row
	Name    string // outline parameters filled in
	Tags    []string
	Status  Status
	// Message says why the scenario did not pass: the failing step's error,
	// or the reason it was skipped or interrupted.
	Message  string
	Steps    []Step
	Start    time.Time
	Duration time.Duration
}

// FailedStep returns the step that decided the scenario's status, if any.
func (s Scenario) FailedStep() (Step, bool) {
	for _, st := range s.Steps {
		if st.Status == Failed || st.Status.Incomplete() {
			return st, true
		}
	}
	return Step{}, false
}

// Run is a whole run of the suite.
type Run struct {
	Name      string // the suite's name, e.g. "agentruns-contract"
	Target    string // the base URL under test
	Mode      string // how, e.g. "polling the server"
	Tags      string // the tag expression that selected the scenarios
	Seed      int64  // replays the order of the scenarios
	Start     time.Time
	Duration  time.Duration
	Scenarios []Scenario // in the order they ended
}

// Count returns how many scenarios ended in each status.
func (r Run) Count() map[Status]int {
	n := map[Status]int{}
	for _, s := range r.Scenarios {
		n[s.Status]++
	}
	return n
}

// A Formatter writes a report. The suite calls Scenario once per scenario as
// it ends, never two at once, then Close once with the whole run.
type Formatter interface {
	Scenario(Scenario) error
	Close(Run) error
}

// Options tune a formatter.
type Options struct {
	// Colors marks statuses with ANSI colours (for a terminal).
	Colors bool
}

// New makes a formatter writing to w.
type New func(w io.Writer, o Options) Formatter

// Builtin are the formatters of this package, by the name --format knows
// them by.
var Builtin = map[string]New{
	"pretty":   NewPretty,
	"progress": NewProgress,
	"junit":    NewJUnit,
}
