package runner

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cucumber/godog"
	"github.com/cucumber/godog/formatters"
	messages "github.com/cucumber/messages/go/v21"

	"github.com/agentruns/agentruns/report"
	"github.com/agentruns/agentruns/steps"
)

// The suite writes its reports itself (packages report and htmlreport) from
// godog's events, collected here: godog hands its formatters the parsed
// features, each scenario, and each step's outcome. The collector joins them
// with what the scenario hooks of package steps know (steps.Observer) (when a scenario began and ended, why it
// was skipped, whether the run was interrupted) into one report.Scenario per
// scenario, handed whole to the report formatter as the scenario ends. Every
// report, the HTML page included, is fed from this one collector.

// collectorFormat is the name of the collector among godog's formatters.
const collectorFormat = "agentruns-collector"

// collectors are the collectors of the runs under way, by the suite name
// each run gives godog: godog's formatter registry is global, so the one
// registered formatter finds its run's collector by that name.
var (
	collectors   sync.Map // suite name -> *collector
	collectorSeq atomic.Int64
)

func init() {
	godog.Format(collectorFormat, "the contract suite's reports", func(suite string, _ io.Writer) formatters.Formatter {
		if c, ok := collectors.Load(suite); ok {
			return c.(*collector)
		}
		panic("runner: no collector for the godog suite " + suite)
	})
}

// register gives c a unique godog suite name; unregister forgets it.
func (c *collector) register() (suiteName string, unregister func()) {
	suiteName = fmt.Sprintf("agentruns-contract#%d", collectorSeq.Add(1))
	collectors.Store(suiteName, c)
	return suiteName, func() { collectors.Delete(suiteName) }
}

// collector is a godog formatter that builds report.Scenarios.
type collector struct {
	report      report.Formatter
	interrupted func() bool
	// avoidable names the option that would have run a skipped scenario
	// with these tags, nil when none would.
	avoidable func(tags []string) *report.Need

	mu       sync.Mutex
	features map[string]*featureIndex // by URI
	running  map[string]*scenarioRun  // by pickle id
	done     []report.Scenario
	err      error // the report formatter's first error
}

// scenarioRun is what is known of a scenario before it ends.
type scenarioRun struct {
	pickle *messages.Pickle
	steps  []report.Step
	seen   int

	start, end  time.Time
	hooked      bool // the after-scenario hook has run
	skipReason  string
	need        *report.Need  // what the scenario needed and was not given (the run budget)
	budget      bool          // the run budget refused a run the scenario needed
	cause       *report.Cause // the first contract violation met
	interrupted bool
}

// featureIndex finds a step's keyword and line, and a scenario's line, from
// the ids godog's pickles point at.
type featureIndex struct {
	name  string
	lines map[string]int64
	kws   map[string]string
}

func newCollector(rep report.Formatter, interrupted func() bool, avoidable func([]string) *report.Need) *collector {
	return &collector{
		report: rep, interrupted: interrupted, avoidable: avoidable,
		features: map[string]*featureIndex{},
		running:  map[string]*scenarioRun{},
	}
}

// scenario returns the record of pickle, making it on first sight; c.mu held.
func (c *collector) scenario(p *messages.Pickle) *scenarioRun {
	r, ok := c.running[p.Id]
	if !ok {
		r = &scenarioRun{pickle: p, steps: make([]report.Step, len(p.Steps))}
		for i, st := range p.Steps {
			r.steps[i] = report.Step{Text: st.Text, Status: report.Skipped}
			if a := st.Argument; a != nil && a.DataTable != nil {
				for _, row := range a.DataTable.Rows {
					var cells []string
					for _, cell := range row.Cells {
						cells = append(cells, cell.Value)
					}
					r.steps[i].Table = append(r.steps[i].Table, cells)
				}
			} else if a != nil && a.DocString != nil {
				r.steps[i].DocString = a.DocString.Content
			}
		}
		c.running[p.Id] = r
	}
	return r
}

// ScenarioStarted is the before-scenario hook's note (steps.Observer).
func (c *collector) ScenarioStarted(p *messages.Pickle) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.scenario(p).start = time.Now()
}

// ScenarioEnded is the after-scenario hook's note (steps.Observer).
func (c *collector) ScenarioEnded(p *messages.Pickle, end steps.Ending) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.scenario(p)
	r.end, r.hooked, r.skipReason, r.need, r.budget, r.cause = time.Now(), true, end.SkipReason, end.Need, end.Budget, end.Cause
	r.interrupted = c.interrupted()
	c.finishIfDone(r)
}

// step records one step's outcome.
func (c *collector) step(p *messages.Pickle, st *messages.PickleStep, status report.Status, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.scenario(p)
	for i, ps := range p.Steps {
		if ps.Id != st.Id {
			continue
		}
		r.steps[i].Status = status
		if err != nil && status != report.Skipped {
			r.steps[i].Message = err.Error()
		}
		r.seen++
	}
	c.finishIfDone(r)
}

// finishIfDone hands the scenario to the report once every step and the
// after hook have been heard of, in whichever order godog sends them.
func (c *collector) finishIfDone(r *scenarioRun) {
	if r.seen < len(r.steps) || !r.hooked {
		return
	}
	delete(c.running, r.pickle.Id)
	sc := c.build(r)
	c.done = append(c.done, sc)
	if err := c.report.Scenario(sc); err != nil && c.err == nil {
		c.err = err
	}
}

// build turns what was heard of a scenario into its report.
func (c *collector) build(r *scenarioRun) report.Scenario {
	p := r.pickle
	uri := strings.TrimPrefix(p.Uri, "./")
	sc := report.Scenario{URI: uri, Name: p.Name, Status: report.Passed, Start: r.start, Steps: r.steps}
	if !r.start.IsZero() {
		sc.Duration = r.end.Sub(r.start)
	}
	for _, t := range p.Tags {
		sc.Tags = append(sc.Tags, t.Name)
	}
	if f := c.features[p.Uri]; f != nil {
		sc.Feature = f.name
		for _, id := range p.AstNodeIds { // the scenario, then its example row
			if l, ok := f.lines[id]; ok {
				sc.Line = int(l)
			}
		}
		for i, st := range p.Steps {
			if len(st.AstNodeIds) > 0 {
				sc.Steps[i].Keyword = f.kws[st.AstNodeIds[0]]
				sc.Steps[i].Line = int(f.lines[st.AstNodeIds[0]])
			}
		}
	}
	if sc.Feature == "" {
		sc.Feature = uri
	}
	if r.budget {
		// The budget refused a run the scenario needed: whatever its step
		// made of the refusal, nothing was judged (steps/runbook.go).
		for i := range sc.Steps {
			if sc.Steps[i].Status == report.Failed {
				sc.Steps[i].Status = report.Skipped
			}
		}
		sc.Status, sc.Message, sc.Needs = report.Skipped, r.skipReason, r.need
	} else if st, ok := sc.FailedStep(); ok {
		sc.Status, sc.Message = st.Status, st.Message
		if st.Status == report.Failed {
			sc.Cause = r.cause
		}
	} else if r.skipReason != "" || allSkipped(sc.Steps) { // skipped before it began, or by a step that found it cannot apply
		sc.Status, sc.Message = report.Skipped, r.skipReason
		if sc.Message == "" {
			sc.Message = "skipped"
		}
		if r.need != nil {
			sc.Needs = r.need
		} else if c.avoidable != nil {
			sc.Needs = c.avoidable(sc.Tags)
		}
	}
	if r.interrupted && sc.Status != report.Passed {
		sc.Status, sc.Message = report.Interrupted, "the run was interrupted before this scenario could finish"
	}
	return sc
}

func allSkipped(steps []report.Step) bool {
	for _, st := range steps {
		if st.Status != report.Skipped {
			return false
		}
	}
	return true
}

// finish returns every scenario heard of, those godog never finished
// included (as interrupted), in the order they ended.
func (c *collector) finish() ([]report.Scenario, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.running {
		r.interrupted, r.hooked, r.seen = true, true, len(r.steps)
		c.finishIfDone(r)
	}
	return c.done, c.err
}

// Feature indexes a parsed feature file.
func (c *collector) Feature(doc *messages.GherkinDocument, uri string, _ []byte) {
	if doc == nil || doc.Feature == nil {
		return
	}
	f := &featureIndex{name: doc.Feature.Name, lines: map[string]int64{}, kws: map[string]string{}}
	addSteps := func(steps []*messages.Step) {
		for _, st := range steps {
			f.lines[st.Id], f.kws[st.Id] = st.Location.Line, st.Keyword
		}
	}
	addScenario := func(s *messages.Scenario) {
		f.lines[s.Id] = s.Location.Line
		addSteps(s.Steps)
		for _, ex := range s.Examples {
			for _, row := range ex.TableBody {
				f.lines[row.Id] = row.Location.Line
			}
		}
	}
	for _, ch := range doc.Feature.Children {
		switch {
		case ch.Background != nil:
			addSteps(ch.Background.Steps)
		case ch.Scenario != nil:
			addScenario(ch.Scenario)
		case ch.Rule != nil:
			for _, rc := range ch.Rule.Children {
				if rc.Background != nil {
					addSteps(rc.Background.Steps)
				}
				if rc.Scenario != nil {
					addScenario(rc.Scenario)
				}
			}
		}
	}
	c.mu.Lock()
	c.features[uri] = f
	c.mu.Unlock()
}

// The step events of godog's formatter interface.

func (c *collector) Passed(p *messages.Pickle, st *messages.PickleStep, _ *formatters.StepDefinition) {
	c.step(p, st, report.Passed, nil)
}

func (c *collector) Failed(p *messages.Pickle, st *messages.PickleStep, _ *formatters.StepDefinition, err error) {
	c.step(p, st, report.Failed, err)
}

func (c *collector) Skipped(p *messages.Pickle, st *messages.PickleStep, _ *formatters.StepDefinition) {
	c.step(p, st, report.Skipped, nil)
}

func (c *collector) Undefined(p *messages.Pickle, st *messages.PickleStep, _ *formatters.StepDefinition) {
	c.step(p, st, report.Undefined, errors.New("no step definition matches this step"))
}

func (c *collector) Pending(p *messages.Pickle, st *messages.PickleStep, _ *formatters.StepDefinition) {
	c.step(p, st, report.Pending, errors.New("the step's definition is pending"))
}

func (c *collector) Ambiguous(p *messages.Pickle, st *messages.PickleStep, _ *formatters.StepDefinition, err error) {
	c.step(p, st, report.Ambiguous, err)
}

// The rest of godog's formatter interface carries nothing the reports need.

func (c *collector) TestRunStarted()                                                            {}
func (c *collector) Pickle(*messages.Pickle)                                                    {}
func (c *collector) Defined(*messages.Pickle, *messages.PickleStep, *formatters.StepDefinition) {}
func (c *collector) Summary()                                                                   {}
