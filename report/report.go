// Package report writes what a run of the contract suite found: each
// scenario as it ends, then the whole run. Its formatters know nothing of
// godog; the suite (package steps) turns godog's events into the values
// here, so every report says the same thing in its own format.
package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
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
	Message string
	// Needs, on a scenario skipped only for want of an option the run was
	// not given, is that option: the skip was avoidable.
	Needs *Need
	// Cause, on a failed scenario, is the first contract violation it met:
	// the root cause its failure is grouped by (causes.go), whatever the
	// words of its message.
	Cause    *Cause
	Steps    []Step
	Start    time.Time
	Duration time.Duration
}

// Need is an option of the suite without which some scenarios are skipped:
// given it, they would have checked What.
type Need struct {
	Flag string // the command line's flag, e.g. "--other-api-key"
	What string // what those scenarios check, e.g. "one team never sees nor cancels another team's runs"
}

// Unchecked is what a run did not check for want of one option.
type Unchecked struct {
	Need
	Scenarios []Scenario
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
	// Clients is what each released client version made of the answers
	// (clients.go), in the order of the versions.
	Clients []ClientVersion
	// Runs is what the run cost the team: the runs the suite created, by
	// which scenarios, and what the server said they cost.
	Runs Runs
}

// Runs is the account of the runs a suite run created: on a real server
// each is an agent's execution the team pays for.
type Runs struct {
	Created int // runs created, the other team's included
	Budget  int // --max-runs; 0: none
	// AtOnce is the most of its runs the suite had in flight at once
	// (created and not yet seen to end); Capacity what it kept to:
	// --max-runs-at-once (CapacityGiven), or what at_capacity showed; 0:
	// no limit known.
	AtOnce, Capacity int
	CapacityGiven    bool
	ByScenario       []ScenarioRuns // most runs first
	// Refused are the scenarios the budget left NOT CHECKED.
	Refused []string
	// RunTime is the run_time the runs showed, summed over the WithRunTime
	// runs that showed one; Usage sums each request_usage cost over the
	// WithUsage runs that showed one.
	RunTime     time.Duration
	WithRunTime int
	Usage       map[string]float64
	WithUsage   int
	// Marker says how the runs are marked, for a team to find them.
	Marker string
	// QueuedBehindCapacity is how long the suite saw its runs wait in
	// QUEUED while the team was at capacity: a wait it judged nothing of.
	QueuedBehindCapacity time.Duration
}

// ScenarioRuns is how many runs one scenario created.
type ScenarioRuns struct {
	Scenario string
	Runs     int
}

// CreatedBy says how many runs scs created, and which of them: "3: 2 by
// A, 1 by B"; "0" for none.
func (r Runs) CreatedBy(scs []Scenario) string {
	names := map[string]bool{}
	for _, s := range scs {
		names[s.Name] = true
	}
	total := 0
	var parts []string
	for _, s := range r.ByScenario {
		if names[s.Scenario] {
			total += s.Runs
			parts = append(parts, fmt.Sprintf("%d by %s", s.Runs, s.Scenario))
		}
	}
	if total == 0 {
		return "0"
	}
	return fmt.Sprintf("%d: %s", total, strings.Join(parts, "; "))
}

// Cost says what the runs cost in one line: "12 runs created (budget
// 40); run_time 3m0s over 12 runs; request_usage inference_cost 1.2, ...".
func (r Runs) Cost() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s created", r.Created, plural(r.Created, "run", "runs"))
	if r.Budget > 0 {
		fmt.Fprintf(&b, " (--max-runs %d)", r.Budget)
	}
	switch {
	case r.Capacity > 0 && r.CapacityGiven:
		fmt.Fprintf(&b, ", at most %d in flight at once (--max-runs-at-once %d)", r.AtOnce, r.Capacity)
	case r.Capacity > 0:
		fmt.Fprintf(&b, ", at most %d in flight at once (the team takes %d)", r.AtOnce, r.Capacity)
	case r.AtOnce > 0:
		fmt.Fprintf(&b, ", at most %d in flight at once (no at_capacity seen)", r.AtOnce)
	}
	if r.WithRunTime > 0 {
		fmt.Fprintf(&b, "; run_time %s over %d %s", r.RunTime.Round(time.Second), r.WithRunTime, plural(r.WithRunTime, "run", "runs"))
	}
	if r.WithUsage > 0 {
		keys := make([]string, 0, len(r.Usage))
		for k := range r.Usage {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s %.4g", k, r.Usage[k])
		}
		fmt.Fprintf(&b, "; request_usage over %d %s: %s", r.WithUsage, plural(r.WithUsage, "run", "runs"), strings.Join(parts, ", "))
	}
	if r.QueuedBehindCapacity > 0 {
		fmt.Fprintf(&b, "; runs waited %s in QUEUED behind the team's capacity (not judged)", r.QueuedBehindCapacity.Round(time.Second))
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count returns how many scenarios ended in each status.
func (r Run) Count() map[Status]int {
	n := map[Status]int{}
	for _, s := range r.Scenarios {
		n[s.Status]++
	}
	return n
}

// Unchecked lists what the run did not check for want of an option, one
// entry per option, in the order of their flags.
func (r Run) Unchecked() []Unchecked {
	var out []Unchecked
	for _, s := range r.Scenarios {
		if s.Status != Skipped || s.Needs == nil {
			continue
		}
		i := slices.IndexFunc(out, func(u Unchecked) bool { return u.Flag == s.Needs.Flag })
		if i < 0 {
			out = append(out, Unchecked{Need: *s.Needs})
			i = len(out) - 1
		}
		out[i].Scenarios = append(out[i].Scenarios, s)
	}
	slices.SortFunc(out, func(a, b Unchecked) int { return strings.Compare(a.Flag, b.Flag) })
	return out
}

// NotChecked says in one sentence what the run did not check and which
// flags would check it; "" when nothing was skipped for want of an option.
func (r Run) NotChecked() string {
	var parts []string
	n := 0
	for _, u := range r.Unchecked() {
		n += len(u.Scenarios)
		parts = append(parts, fmt.Sprintf("%s would run %s (%s)", u.Flag, scenarios(len(u.Scenarios)), u.What))
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("not checked: %s skipped for want of an option: %s", scenarios(n), strings.Join(parts, "; "))
}

func scenarios(n int) string {
	if n == 1 {
		return "1 scenario"
	}
	return fmt.Sprintf("%d scenarios", n)
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

// Tee hands every scenario and the run to each formatter in turn, and
// returns the first error.
func Tee(fs ...Formatter) Formatter { return tee(fs) }

type tee []Formatter

func (t tee) Scenario(sc Scenario) error {
	var first error
	for _, f := range t {
		if err := f.Scenario(sc); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (t tee) Close(r Run) error {
	var first error
	for _, f := range t {
		if err := f.Close(r); err != nil && first == nil {
			first = err
		}
	}
	return first
}
