package htmlreport

import (
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/agentruns/agentruns/report"
)

// Formatter is a report.Formatter that writes the page when the run ends:
// the suite's feature files as the spec, each scenario heard of marked with
// its outcome, and the scenarios the run's tags left out marked not run.
type Formatter struct {
	out       io.Writer
	features  fs.FS
	scenarios []report.Scenario
}

// New returns a formatter writing the page to out when the run ends.
// features holds every feature file of the suite (as the run read them):
// the page shows them all, whether the run selected them or not.
func New(out io.Writer, features fs.FS) *Formatter {
	return &Formatter{out: out, features: features}
}

// Scenario keeps one scenario's outcome; the page is written by Close.
func (f *Formatter) Scenario(sc report.Scenario) error {
	f.scenarios = append(f.scenarios, sc)
	return nil
}

// Close writes the page of the whole run.
func (f *Formatter) Close(run report.Run) error {
	page, err := f.page(run)
	if err != nil {
		return err
	}
	return write(f.out, page)
}

// page lays the run's outcomes over the spec of the features.
func (f *Formatter) page(run report.Run) (*Page, error) {
	docs, err := parseDocuments(f.features)
	if err != nil {
		return nil, fmt.Errorf("reading the features: %w", err)
	}
	ix := map[string]*index{}
	features := fromDocuments(docs, ix)
	var counts Counts
	for _, sc := range run.Scenarios {
		in := ix[cleanURI(sc.URI)]
		if in == nil {
			continue
		}
		res := result(sc)
		counts.add(res.Status)
		steps := make([]*Step, len(sc.Steps))
		for i, st := range sc.Steps {
			steps[i] = stepAsRun(st, in.stepAt[int64(st.Line)])
		}
		if row := in.rowAt[int64(sc.Line)]; row != nil {
			row.Result, row.Steps = res, steps
			continue
		}
		s := in.scenarioAt[int64(sc.Line)]
		if s == nil {
			continue
		}
		s.Result = res
		// The scenario's own steps get their outcomes; background steps are
		// shared by every scenario, so a failure there is told by the
		// scenario's message.
		for i, st := range sc.Steps {
			for _, own := range s.Steps {
				if own == in.stepAt[int64(st.Line)] {
					own.Status, own.Message = steps[i].Status, steps[i].Message
				}
			}
		}
	}
	// Whatever the run never heard of was left out by its tags.
	for _, ft := range features {
		for _, sc := range ft.Scenarios {
			if len(sc.Examples) == 0 {
				if sc.Status == "" {
					sc.Status = report.NotRun
					counts.add(report.NotRun)
				}
				continue
			}
			for _, ex := range sc.Examples {
				for _, row := range ex.Rows {
					if row.Status == "" {
						row.Status = report.NotRun
						counts.add(report.NotRun)
					}
				}
			}
		}
	}
	return &Page{
		Title:    "Contract report",
		Features: features,
		Run: &Run{
			Server:    run.Target,
			Mode:      run.Mode,
			Tags:      run.Tags,
			Seed:      run.Seed,
			Started:   run.Start.UTC(),
			Duration:  run.Duration,
			Counts:    counts,
			Unchecked: run.Unchecked(),
			Clients:   run.Clients,
			Runs:      run.Runs,
		},
	}, nil
}

func cleanURI(uri string) string { return strings.TrimPrefix(uri, "./") }

// result is the outcome of one scenario as the page shows it: passed,
// failed (the suite's own faults included), or skipped (an interrupted
// scenario too, with the interrupt as its reason).
func result(sc report.Scenario) Result {
	res := Result{Status: sc.Status, Message: sc.Message, Duration: formatDuration(sc.Duration)}
	switch {
	case sc.Status == report.Passed:
		res.Message = ""
	case sc.Status == report.Skipped, sc.Status == report.Interrupted:
		res.Status, res.Duration = report.Skipped, ""
	default:
		res.Status = report.Failed
		if st, ok := sc.FailedStep(); ok {
			res.FailedStep = st.Text
		}
	}
	return res
}

// stepAsRun is a step as it ran, outline parameters filled in; spec is the
// step as written, which gives a doc string its media type.
func stepAsRun(st report.Step, spec *Step) *Step {
	out := &Step{Keyword: strings.TrimSpace(st.Keyword), Text: st.Text, Table: st.Table, Status: st.Status, Message: st.Message}
	if out.Keyword == "" {
		out.Keyword = "*"
	}
	if st.Status == report.Skipped || st.Status == report.Passed {
		out.Message = ""
	}
	if st.DocString != "" || spec != nil && spec.DocString != nil {
		out.DocString = &DocString{Content: st.DocString}
		if spec != nil && spec.DocString != nil {
			out.DocString.MediaType = spec.DocString.MediaType
		}
	}
	return out
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
