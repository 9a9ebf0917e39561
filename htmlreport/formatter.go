package htmlreport

import (
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cucumber/godog/formatters"
	messages "github.com/cucumber/messages/go/v21"
)

// RunInfo is what a run knows beyond godog's events, asked for once when
// the run ends.
type RunInfo struct {
	// Title heads the page; "Contract report" when empty.
	Title string
	// Server is what was verified, such as its base URL.
	Server string
	// Mode says how, such as "polling the server".
	Mode string
	// Tags is the tag expression that selected the scenarios.
	Tags string
	// Seed reproduces the order of the scenarios; 0 when unknown.
	Seed int64
	// Features, when not nil, holds every feature file of the suite, so that
	// features the run's tags left out entirely still appear, as not run.
	Features fs.FS
	// SkipReason says why the scenario run as the pickle with this id was
	// skipped; godog's events carry no reason for a skip. May be nil.
	SkipReason func(pickleID string) string
}

// Formatter is a godog formatter that collects every scenario's outcome and
// writes the HTML page when the run ends. Its methods are safe for the
// concurrent calls godog makes when scenarios run at once.
type Formatter struct {
	out  io.Writer
	info func() RunInfo
	now  func() time.Time

	mu      sync.Mutex
	started time.Time
	docs    []*messages.GherkinDocument
	seen    map[string]bool // document URIs
	pickles map[string]*pickleRun
	order   []string // pickle ids, in the order they started
	err     error
}

// pickleRun is one run of a scenario as godog reports it.
type pickleRun struct {
	pickle  *messages.Pickle
	started time.Time
	last    time.Time
	steps   map[string]*stepOutcome // by pickle step id
}

type stepOutcome struct {
	status string
	err    error
}

// New returns a formatter writing the page to out when the run ends. info,
// when not nil, adds what godog's events do not carry.
func New(out io.Writer, info func() RunInfo) *Formatter {
	return &Formatter{out: out, info: info, now: time.Now,
		seen: map[string]bool{}, pickles: map[string]*pickleRun{}}
}

// FormatterFunc is New as a godog formatter constructor, for registering
// with godog.Format in suites that have no more to tell than godog does.
func FormatterFunc(_ string, out io.Writer) formatters.Formatter { return New(out, nil) }

// Err is the error of writing the page, if any.
func (f *Formatter) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// TestRunStarted notes when the run began.
func (f *Formatter) TestRunStarted() {
	f.mu.Lock()
	f.started = f.now()
	f.mu.Unlock()
}

// Feature keeps a parsed feature file.
func (f *Formatter) Feature(doc *messages.GherkinDocument, uri string, _ []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if doc == nil || f.seen[uri] {
		return
	}
	f.seen[uri] = true
	d := *doc
	d.Uri = uri
	f.docs = append(f.docs, &d)
}

// Pickle notes that a scenario (or an outline's row) began.
func (f *Formatter) Pickle(p *messages.Pickle) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	f.pickles[p.Id] = &pickleRun{pickle: p, started: now, last: now, steps: map[string]*stepOutcome{}}
	f.order = append(f.order, p.Id)
}

// Defined is called when a step's definition is found; nothing to note.
func (f *Formatter) Defined(*messages.Pickle, *messages.PickleStep, *formatters.StepDefinition) {}

// Failed records a failed step and its error.
func (f *Formatter) Failed(p *messages.Pickle, s *messages.PickleStep, _ *formatters.StepDefinition, err error) {
	f.step(p, s, Failed, err)
}

// Passed records a passed step.
func (f *Formatter) Passed(p *messages.Pickle, s *messages.PickleStep, _ *formatters.StepDefinition) {
	f.step(p, s, Passed, nil)
}

// Skipped records a skipped step.
func (f *Formatter) Skipped(p *messages.Pickle, s *messages.PickleStep, _ *formatters.StepDefinition) {
	f.step(p, s, Skipped, nil)
}

// Undefined records a step no definition matches.
func (f *Formatter) Undefined(p *messages.Pickle, s *messages.PickleStep, _ *formatters.StepDefinition) {
	f.step(p, s, Undefined, fmt.Errorf("no step definition matches %q", s.Text))
}

// Pending records a step marked as pending.
func (f *Formatter) Pending(p *messages.Pickle, s *messages.PickleStep, _ *formatters.StepDefinition) {
	f.step(p, s, Pending, fmt.Errorf("the step %q is pending", s.Text))
}

// Ambiguous records a step more than one definition matches, as a failure.
func (f *Formatter) Ambiguous(p *messages.Pickle, s *messages.PickleStep, _ *formatters.StepDefinition, err error) {
	f.step(p, s, Failed, err)
}

func (f *Formatter) step(p *messages.Pickle, s *messages.PickleStep, status string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pr := f.pickles[p.Id]
	if pr == nil {
		pr = &pickleRun{pickle: p, started: f.now(), steps: map[string]*stepOutcome{}}
		f.pickles[p.Id] = pr
		f.order = append(f.order, p.Id)
	}
	pr.steps[s.Id] = &stepOutcome{status: status, err: err}
	pr.last = f.now()
}

// Summary writes the page.
func (f *Formatter) Summary() {
	var info RunInfo
	if f.info != nil {
		info = f.info()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	page := f.page(info)
	f.err = write(f.out, page)
}

// page builds the report from what was collected; f.mu is held.
func (f *Formatter) page(info RunInfo) *Page {
	ix := map[string]*index{}
	docs := f.docs
	if info.Features != nil {
		docs = append(docs, f.unseen(info.Features)...)
	}
	sort.SliceStable(docs, func(i, j int) bool { return cleanURI(docs[i].Uri) < cleanURI(docs[j].Uri) })
	features := fromDocuments(docs, ix)
	var counts Counts
	for _, id := range f.order {
		pr := f.pickles[id]
		in := ix[pr.pickle.Uri]
		if in == nil {
			continue
		}
		res := pr.result(info.SkipReason)
		counts.add(res.Status)
		var steps []*Step
		for _, ps := range pr.pickle.Steps {
			st := pickleStep(ps)
			if len(ps.AstNodeIds) > 0 && in.steps[ps.AstNodeIds[0]] != nil {
				st.Keyword = in.steps[ps.AstNodeIds[0]].Keyword // "And" reads as written
			}
			if o := pr.steps[ps.Id]; o != nil {
				st.Status = o.status
				if o.err != nil {
					st.Message = o.err.Error()
				}
			}
			steps = append(steps, st)
		}
		ids := pr.pickle.AstNodeIds
		switch {
		case len(ids) >= 2 && in.rows[ids[len(ids)-1]] != nil:
			row := in.rows[ids[len(ids)-1]]
			row.Result, row.Steps = res, steps
		case len(ids) >= 1 && in.scenarios[ids[0]] != nil:
			sc := in.scenarios[ids[0]]
			sc.Result = res
			// The scenario's own steps get their outcomes; background
			// steps are shared by every scenario, so a failure there is
			// told by the scenario's message.
			for i, ps := range pr.pickle.Steps {
				if len(ps.AstNodeIds) == 0 {
					continue
				}
				for _, own := range sc.Steps {
					if in.steps[ps.AstNodeIds[0]] == own {
						own.Status, own.Message = steps[i].Status, steps[i].Message
					}
				}
			}
		}
	}
	// Whatever godog never started was left out by the run's tags.
	for _, ft := range features {
		for _, sc := range ft.Scenarios {
			if len(sc.Examples) == 0 {
				if sc.Status == "" {
					sc.Status = NotRun
					counts.add(NotRun)
				}
				continue
			}
			for _, ex := range sc.Examples {
				for _, row := range ex.Rows {
					if row.Status == "" {
						row.Status = NotRun
						counts.add(NotRun)
					}
				}
			}
		}
	}
	title := info.Title
	if title == "" {
		title = "Contract report"
	}
	end := f.now()
	started := f.started
	if started.IsZero() {
		started = end
	}
	return &Page{
		Title:    title,
		Features: features,
		Run: &Run{
			Server:   info.Server,
			Mode:     info.Mode,
			Tags:     info.Tags,
			Seed:     info.Seed,
			Started:  started.UTC(),
			Duration: end.Sub(started),
			Counts:   counts,
		},
	}
}

// unseen parses the feature files of fsys that godog did not report because
// no scenario of theirs was selected; f.mu is held.
func (f *Formatter) unseen(fsys fs.FS) []*messages.GherkinDocument {
	seen := map[string]bool{}
	for uri := range f.seen {
		seen[cleanURI(uri)] = true
	}
	docs, err := parseDocuments(fsys)
	if err != nil {
		return nil // the run itself has read these files; nothing to add
	}
	var out []*messages.GherkinDocument
	for _, d := range docs {
		if !seen[cleanURI(d.Uri)] {
			out = append(out, d)
		}
	}
	return out
}

func cleanURI(uri string) string { return strings.TrimPrefix(uri, "./") }

// result is the outcome of one pickle: the first failed step decides it,
// else a skip (with the suite's reason), else passed.
func (pr *pickleRun) result(skipReason func(string) string) Result {
	res := Result{Status: Passed, Duration: formatDuration(pr.last.Sub(pr.started))}
	skipped := len(pr.steps) == 0
	for _, ps := range pr.pickle.Steps {
		o := pr.steps[ps.Id]
		if o == nil {
			continue
		}
		switch o.status {
		case Failed, Undefined, Pending:
			if res.Status != Failed {
				res.Status, res.FailedStep = Failed, ps.Text
				if o.err != nil {
					res.Message = o.err.Error()
				}
			}
		case Skipped:
			skipped = true
		}
	}
	if res.Status == Passed && skipped {
		res.Status, res.Duration = Skipped, ""
		if skipReason != nil {
			res.Message = skipReason(pr.pickle.Id)
		}
	}
	return res
}

func pickleStep(ps *messages.PickleStep) *Step {
	st := &Step{Text: ps.Text}
	switch ps.Type {
	case messages.PickleStepType_CONTEXT:
		st.Keyword = "Given"
	case messages.PickleStepType_ACTION:
		st.Keyword = "When"
	case messages.PickleStepType_OUTCOME:
		st.Keyword = "Then"
	default:
		st.Keyword = "*"
	}
	if a := ps.Argument; a != nil {
		if ds := a.DocString; ds != nil {
			st.DocString = &DocString{MediaType: ds.MediaType, Content: ds.Content}
		}
		if dt := a.DataTable; dt != nil {
			for _, r := range dt.Rows {
				var row []string
				for _, c := range r.Cells {
					row = append(row, c.Value)
				}
				st.Table = append(st.Table, row)
			}
		}
	}
	return st
}

func formatDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return ""
	case d < time.Millisecond:
		return "<1 ms"
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	default:
		return d.Round(10 * time.Millisecond).String()
	}
}
