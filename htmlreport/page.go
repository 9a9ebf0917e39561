package htmlreport

import (
	"bufio"
	"embed"
	"html/template"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentruns/agentruns/report"
)

// The page's template, styles and script are embedded, so the page carries
// them inline and opens from disk with no network.
//
//go:embed assets/report.html.tmpl assets/report.css assets/report.js
var assets embed.FS

var pageTemplate = template.Must(template.New("report.html.tmpl").Funcs(template.FuncMap{
	"paragraphs": paragraphs,
	"segments":   segments,
	"join":       strings.Join,
	"label":      label,
	"icon":       icon,
	"css":        func() template.CSS { return template.CSS(mustAsset("assets/report.css")) },
	"script":     func() template.JS { return template.JS(mustAsset("assets/report.js")) },
	"add":        func(a, b int) int { return a + b },
	"percent": func(n, total int) string {
		if total == 0 {
			return "0"
		}
		return strconv.FormatFloat(float64(n)*100/float64(total), 'f', 2, 64)
	},
}).ParseFS(assets, "assets/report.html.tmpl"))

func mustAsset(name string) string {
	b, err := assets.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Page is everything the page shows.
type Page struct {
	Title    string
	Features []*Feature
	// Run is the run's summary; nil on a spec page, which shows no outcomes.
	Run *Run
	// Generated is when a spec page was made.
	Generated time.Time
}

// Run summarises one run of the suite.
type Run struct {
	Server   string
	Mode     string
	Tags     string
	Seed     int64
	Started  time.Time
	Duration time.Duration
	Counts   Counts
	// Unchecked is what the run skipped for want of an option: a run with
	// such skips did not check everything, and does not say "All passed".
	Unchecked []report.Unchecked
	// Clients is what each released client version made of the answers.
	Clients []report.ClientVersion
	// Runs is what the pass cost the team: the runs it created, by which
	// scenarios, their run time and request_usage.
	Runs report.Runs
	// Drift, when set, is what the traffic showed that the document does
	// not say (the validating proxy's); nil on the suite's pages.
	Drift *Drift
}

// ClientsFailing counts the client versions that break and that the run
// promised (--fail-on-client): the run failed for them.
func (r *Run) ClientsFailing() int {
	n := 0
	for _, c := range r.Clients {
		if c.Failing() {
			n++
		}
	}
	return n
}

// NotChecked counts the scenarios skipped for want of an option.
func (r *Run) NotChecked() int {
	n := 0
	for _, u := range r.Unchecked {
		n += len(u.Scenarios)
	}
	return n
}

// Counts are scenarios by outcome; an outline counts once per examples row.
type Counts struct {
	Passed, Failed, Skipped, NotRun int
}

func (c *Counts) add(status report.Status) {
	switch filterStatus(status) {
	case report.Passed:
		c.Passed++
	case report.Failed:
		c.Failed++
	case report.Skipped:
		c.Skipped++
	case report.NotRun:
		c.NotRun++
	}
}

// Ran is how many scenarios ran (passed, failed or skipped).
func (c Counts) Ran() int { return c.Passed + c.Failed + c.Skipped }

// Total counts every scenario, run or not.
func (c Counts) Total() int { return c.Ran() + c.NotRun }

// WriteSpec writes the spec page of features: the behaviour without results.
func WriteSpec(w io.Writer, title string, features []*Feature) error {
	if title == "" {
		title = "Behaviour specification"
	}
	return write(w, &Page{Title: title, Features: features, Generated: time.Now().UTC()})
}

// Write writes a page built elsewhere: a report of another kind of check
// (the validating proxy's) in the same look as the suite's.
func Write(w io.Writer, p *Page) error { return write(w, p) }

func write(w io.Writer, p *Page) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := pageTemplate.Execute(bw, p); err != nil {
		return err
	}
	return bw.Flush()
}

// Tags lists every tag of the page's scenarios, for the tag filter.
func (p *Page) Tags() []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range p.Features {
		for _, s := range f.Scenarios {
			for _, t := range s.AllTags {
				if !seen[t] {
					seen[t] = true
					out = append(out, t)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// Scenarios counts the page's scenarios and outlines.
func (p *Page) Scenarios() int {
	n := 0
	for _, f := range p.Features {
		n += len(f.Scenarios)
	}
	return n
}

// Cases counts the page's scenarios, an outline once per examples row.
func (p *Page) Cases() int {
	n := 0
	for _, f := range p.Features {
		n += f.Count().Total()
	}
	return n
}

// Count is the feature's scenarios by outcome.
func (f *Feature) Count() Counts {
	var c Counts
	for _, s := range f.Scenarios {
		for _, st := range s.statuses() {
			if st == "" {
				st = report.NotRun // a spec page: each counts as one scenario
			}
			c.add(st)
		}
	}
	return c
}

// statuses lists the outcome of each run of the scenario: one for a plain
// scenario, one per examples row for an outline.
func (s *Scenario) statuses() []report.Status {
	if len(s.Examples) == 0 {
		return []report.Status{s.Status}
	}
	var out []report.Status
	for _, e := range s.Examples {
		for _, r := range e.Rows {
			out = append(out, r.Status)
		}
	}
	return out
}

// Statuses is the set of outcomes among the scenario's runs, space
// separated, for the status filter.
func (s *Scenario) Statuses() string {
	seen := map[report.Status]bool{}
	var out []string
	for _, st := range s.statuses() {
		st = filterStatus(st)
		if st != "" && !seen[st] {
			seen[st] = true
			out = append(out, string(st))
		}
	}
	return strings.Join(out, " ")
}

// Overall is the scenario's outcome as one word: failed if any run failed,
// then passed, skipped, not run.
func (s *Scenario) Overall() report.Status {
	set := " " + s.Statuses() + " "
	for _, st := range []report.Status{report.Failed, report.Passed, report.Skipped, report.NotRun} {
		if strings.Contains(set, " "+string(st)+" ") {
			return st
		}
	}
	return ""
}

// FailureShownOnStep tells whether the failure's message stands under one
// of the scenario's own steps (and so needs no repeating above them).
func (s *Scenario) FailureShownOnStep() bool {
	for _, st := range s.Steps {
		if st.Message != "" && filterStatus(st.Status) == report.Failed {
			return true
		}
	}
	return false
}

// SharedSkip is the reason when every row of an outline was skipped for
// the same reason, to be said once rather than on every row.
func (s *Scenario) SharedSkip() string {
	reason, n := "", 0
	for _, e := range s.Examples {
		for _, r := range e.Rows {
			if r.Status != report.Skipped || (n > 0 && r.Message != reason) {
				return ""
			}
			reason, n = r.Message, n+1
		}
	}
	return reason
}

// IsOutline tells a scenario outline from a plain scenario.
func (s *Scenario) IsOutline() bool { return len(s.Examples) > 0 }

// Overall is the feature's outcome as one word.
func (f *Feature) Overall() report.Status {
	c := f.Count()
	switch {
	case c.Failed > 0:
		return report.Failed
	case c.Passed > 0:
		return report.Passed
	case c.Skipped > 0:
		return report.Skipped
	case c.NotRun > 0 && c.NotRun == c.Total():
		return report.NotRun
	}
	return ""
}

// filterStatus folds the outcomes the page does not tell apart: a step
// the suite could not run counts as failed, an interrupted scenario as
// skipped.
func filterStatus(st report.Status) report.Status {
	switch {
	case st.Incomplete():
		return report.Failed
	case st == report.Interrupted:
		return report.Skipped
	}
	return st
}

func label(st report.Status) string {
	switch filterStatus(st) {
	case report.Passed:
		return "passed"
	case report.Failed:
		return "failed"
	case report.Skipped:
		return "skipped"
	case report.NotRun:
		return "not run"
	}
	return ""
}

func icon(st report.Status) string {
	switch filterStatus(st) {
	case report.Passed:
		return "✓"
	case report.Failed:
		return "✗"
	case report.Skipped:
		return "↷"
	case report.NotRun:
		return "–"
	}
	return ""
}

// paragraphs splits a description at blank lines.
func paragraphs(s string) []string {
	var out []string
	for _, p := range strings.Split(s, "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, strings.ReplaceAll(p, "\n", " "))
		}
	}
	return out
}

// Segment is a piece of a step's text; Arg marks a quoted value or an
// outline's <placeholder>, which the page sets apart.
type Segment struct {
	Text string
	Arg  bool
}

// segments splits a step's text into plain text and its arguments: "quoted"
// values and <placeholders>.
func segments(s string) []Segment {
	var out []Segment
	for len(s) > 0 {
		i := strings.IndexAny(s, "\"<")
		if i < 0 {
			break
		}
		closer := "\""
		if s[i] == '<' {
			closer = ">"
		}
		j := strings.Index(s[i+1:], closer)
		if j < 0 {
			break
		}
		if i > 0 {
			out = append(out, Segment{Text: s[:i]})
		}
		out = append(out, Segment{Text: s[i : i+j+2], Arg: true})
		s = s[i+j+2:]
	}
	if s != "" {
		out = append(out, Segment{Text: s})
	}
	return out
}
