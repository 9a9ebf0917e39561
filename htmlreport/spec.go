// Package htmlreport renders Gherkin features as one self-contained HTML
// page: the features read as a specification, and, after a run, each
// scenario marked passed, failed or skipped with its reason. The page needs
// no network: its styles and script are embedded in it.
//
// Formatter is a report.Formatter that writes the page when a run ends;
// Parse and WriteSpec render the same page from feature files alone, with
// no results, for publishing the behaviour as documentation.
package htmlreport

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	gherkin "github.com/cucumber/gherkin/go/v26"
	messages "github.com/cucumber/messages/go/v21"

	"github.com/agentruns/agentruns/report"
)

// Feature is one feature file as a reader sees it.
type Feature struct {
	Anchor      string
	URI         string
	Keyword     string
	Name        string
	Description string
	Tags        []string
	Background  *Background
	Scenarios   []*Scenario
}

// Background is the steps every scenario of a feature (or rule) starts with.
type Background struct {
	Keyword     string
	Name        string
	Description string
	Steps       []*Step
}

// Scenario is a scenario or a scenario outline. For an outline, each row of
// its examples is one run with its own outcome.
type Scenario struct {
	Anchor      string
	Keyword     string
	Name        string
	Description string
	Rule        string // the name of the rule it sits in, if any
	Line        int64
	Tags        []string // its own tags
	AllTags     []string // with the feature's and its examples' tags: what a tag filter matches
	Steps       []*Step
	Examples    []*Examples

	// Outcome of a plain scenario (one run); the outline's rows carry theirs.
	Result
}

// Result is the outcome of one run of a scenario: a plain scenario, or one
// row of an outline's examples.
type Result struct {
	Status report.Status // "" on a spec page; passed, failed, skipped or not run on a report
	// Message says why the run failed or was skipped.
	Message string
	// FailedStep is the text of the step that failed.
	FailedStep string
	Duration   string
}

// Step is one Given/When/Then line with its doc string or table.
type Step struct {
	Keyword   string
	Text      string
	DocString *DocString
	Table     [][]string
	// Status and Message are this step's outcome in a plain scenario.
	Status  report.Status
	Message string
}

// DocString is a step's block of text.
type DocString struct {
	MediaType string
	Content   string
}

// Examples is one examples table of an outline.
type Examples struct {
	Keyword string
	Name    string
	Tags    []string
	Header  []string
	Rows    []*Row
}

// Row is one row of an examples table: one run of the outline.
type Row struct {
	Anchor string
	Cells  []string
	Result
	// Steps are the outline's steps as this row ran them, placeholders
	// filled in; empty on a spec page.
	Steps []*Step
}

// Parse reads every *.feature file at the root of fsys (and below it) in
// name order, as the spec without results.
func Parse(fsys fs.FS) ([]*Feature, error) {
	docs, err := parseDocuments(fsys)
	if err != nil {
		return nil, err
	}
	return fromDocuments(docs, nil), nil
}

func parseDocuments(fsys fs.FS) ([]*messages.GherkinDocument, error) {
	var names []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".feature") {
			names = append(names, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var docs []*messages.GherkinDocument
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		doc, err := gherkin.ParseGherkinDocument(bytes.NewReader(data), (&messages.Incrementing{}).NewId)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		doc.Uri = name
		docs = append(docs, doc)
	}
	return docs, nil
}

// index finds the model's parts of one feature file by the line a
// report.Scenario or report.Step names.
type index struct {
	scenarioAt map[int64]*Scenario
	rowAt      map[int64]*Row
	stepAt     map[int64]*Step
}

// fromDocuments builds the model of docs; when ix is not nil it is filled
// so that results can be attached.
func fromDocuments(docs []*messages.GherkinDocument, ix map[string]*index) []*Feature {
	anchors := map[string]int{}
	unique := func(a string) string {
		anchors[a]++
		if n := anchors[a]; n > 1 {
			return a + "-" + strconv.Itoa(n)
		}
		return a
	}
	var out []*Feature
	for _, doc := range docs {
		if doc == nil || doc.Feature == nil {
			continue
		}
		in := &index{scenarioAt: map[int64]*Scenario{}, rowAt: map[int64]*Row{}, stepAt: map[int64]*Step{}}
		if ix != nil {
			ix[cleanURI(doc.Uri)] = in
		}
		ft := doc.Feature
		f := &Feature{
			Anchor:      unique(slug(strings.TrimSuffix(path.Base(doc.Uri), ".feature"))),
			URI:         cleanURI(doc.Uri),
			Keyword:     ft.Keyword,
			Name:        ft.Name,
			Description: trimDescription(ft.Description),
			Tags:        tagNames(ft.Tags),
		}
		addScenario := func(sc *messages.Scenario, rule string, ruleTags []string) {
			s := &Scenario{
				Anchor:      unique(f.Anchor + "--" + slug(sc.Name)),
				Keyword:     sc.Keyword,
				Name:        sc.Name,
				Description: trimDescription(sc.Description),
				Rule:        rule,
				Line:        sc.Location.Line,
				Tags:        tagNames(sc.Tags),
			}
			s.AllTags = append(append(append([]string(nil), f.Tags...), ruleTags...), s.Tags...)
			for _, st := range sc.Steps {
				step := newStep(st)
				in.stepAt[st.Location.Line] = step
				s.Steps = append(s.Steps, step)
			}
			for _, ex := range sc.Examples {
				e := &Examples{Keyword: ex.Keyword, Name: ex.Name, Tags: tagNames(ex.Tags)}
				s.AllTags = append(s.AllTags, e.Tags...)
				if ex.TableHeader != nil {
					e.Header = cells(ex.TableHeader)
				}
				for _, tr := range ex.TableBody {
					row := &Row{Cells: cells(tr)}
					row.Anchor = unique(s.Anchor + "--" + slug(strings.Join(row.Cells, " ")))
					in.rowAt[tr.Location.Line] = row
					e.Rows = append(e.Rows, row)
				}
				s.Examples = append(s.Examples, e)
			}
			s.AllTags = dedupe(s.AllTags)
			in.scenarioAt[sc.Location.Line] = s
			f.Scenarios = append(f.Scenarios, s)
		}
		for _, child := range ft.Children {
			switch {
			case child.Background != nil:
				f.Background = newBackground(child.Background, in)
			case child.Scenario != nil:
				addScenario(child.Scenario, "", nil)
			case child.Rule != nil:
				rt := tagNames(child.Rule.Tags)
				for _, rc := range child.Rule.Children {
					if rc.Scenario != nil {
						addScenario(rc.Scenario, child.Rule.Name, rt)
					}
					// A rule's background steps still get results through
					// the index; the page shows the feature's background only.
					if rc.Background != nil {
						newBackground(rc.Background, in)
					}
				}
			}
		}
		out = append(out, f)
	}
	return out
}

func newBackground(bg *messages.Background, in *index) *Background {
	b := &Background{Keyword: bg.Keyword, Name: bg.Name, Description: trimDescription(bg.Description)}
	for _, st := range bg.Steps {
		step := newStep(st)
		in.stepAt[st.Location.Line] = step
		b.Steps = append(b.Steps, step)
	}
	return b
}

func newStep(st *messages.Step) *Step {
	s := &Step{Keyword: strings.TrimSpace(st.Keyword), Text: st.Text}
	if ds := st.DocString; ds != nil {
		s.DocString = &DocString{MediaType: ds.MediaType, Content: ds.Content}
	}
	if dt := st.DataTable; dt != nil {
		for _, r := range dt.Rows {
			s.Table = append(s.Table, cells(r))
		}
	}
	return s
}

func cells(r *messages.TableRow) []string {
	out := make([]string, len(r.Cells))
	for i, c := range r.Cells {
		out[i] = c.Value
	}
	return out
}

func tagNames(tags []*messages.Tag) []string {
	var out []string
	for _, t := range tags {
		out = append(out, t.Name)
	}
	return out
}

func dedupe(tags []string) []string {
	seen := map[string]bool{}
	out := tags[:0]
	for _, t := range tags {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// trimDescription removes the indentation Gherkin descriptions carry, so
// paragraphs read as written.
func trimDescription(d string) string {
	lines := strings.Split(d, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// slug makes a stable anchor from a name: lower case letters and digits
// joined by single dashes, so a CI job can link to a scenario across runs.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		default:
			dash = true
		}
	}
	if b.Len() == 0 {
		return "x"
	}
	out := b.String()
	if len(out) > 80 {
		out = strings.TrimRight(out[:80], "-")
	}
	return out
}
