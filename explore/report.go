package explore

import (
	"cmp"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"

	"github.com/agentruns/agentruns/report"
)

// The reports of an exploration, as the suite's: a plain summary, JUnit
// XML for CI and a page of HTML. Each groups the findings by cause and
// gives each its scenario, ready to paste, and the curl lines of its
// exchanges; each says the seed that replays the exploration and what it
// created on the server. baseURL is the API's base the calls went to, for
// the curl lines.

// printedFinding is a finding as the reports show it.
type printedFinding struct {
	Finding
	Operation string   // its last call, ids by name: "GET /agent/runs/{run 1}"
	Feature   string   // the scenario to paste (Scenario)
	Missing   []string // the steps the suite lacks to say it
	Curls     []string // one per call
}

// Summary is the first line of the finding's detail.
func (p printedFinding) Summary() string {
	first, _, _ := strings.Cut(strings.TrimSpace(p.Detail), "\n")
	if first == "" {
		return p.Cause
	}
	return first
}

// causeGroup is the findings of one cause.
type causeGroup struct {
	Cause    string
	Findings []printedFinding
}

// byCause groups the findings by cause, the cause with the most findings
// first, then by name.
func byCause(r Result, baseURL string) []causeGroup {
	index := map[string]int{}
	var groups []causeGroup
	for _, f := range r.Findings {
		feature, missing := Scenario(f)
		p := printedFinding{Finding: f, Feature: feature, Missing: missing,
			Operation: (&printer{carried: carriedValues(f.Calls)}).operation(f.Calls)}
		for _, c := range f.Calls {
			p.Curls = append(p.Curls, Curl(c, baseURL))
		}
		i, ok := index[f.Cause]
		if !ok {
			i = len(groups)
			index[f.Cause] = i
			groups = append(groups, causeGroup{Cause: f.Cause})
		}
		groups[i].Findings = append(groups[i].Findings, p)
	}
	sort.SliceStable(groups, func(a, b int) bool {
		if len(groups[a].Findings) != len(groups[b].Findings) {
			return len(groups[a].Findings) > len(groups[b].Findings)
		}
		return groups[a].Cause < groups[b].Cause
	})
	return groups
}

// created says what the exploration created, "nothing" when it created
// nothing: "3 runs, 1 schedule".
func created(r Result) string {
	kinds := make([]string, 0, len(r.Created))
	for k, n := range r.Created {
		if n > 0 {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		return "nothing"
	}
	sort.Strings(kinds)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = plural(r.Created[k], cmp.Or(oneOf[k], k), k)
	}
	return strings.Join(parts, ", ")
}

// oneOf is the singular of the kinds Created counts.
var oneOf = map[string]string{"runs": "run", "follow-ups": "follow-up", "schedules": "schedule",
	"agent identities": "agent identity", "messages": "message"}

// calls says how many calls were sent, and how many with the other
// team's key when one was given.
func calls(r Result) string {
	s := plural(r.Calls, "call", "calls")
	if r.OtherTeam {
		s += fmt.Sprintf(" (%d with the other team's key)", r.OtherTeamCalls)
	}
	return s
}

// runBudget says the run budget that applied, "" for none.
func runBudget(r Result) string {
	switch {
	case r.ReadOnly:
		return ""
	case r.RunBudget == 0:
		return "none (on a server with the mock's control API its runs cost nothing; --max-runs to set one)"
	case r.RunBudgetDefault:
		return plural(r.RunBudget, "run", "runs") + " (the default off the mock; --max-runs to change it)"
	}
	return plural(r.RunBudget, "run", "runs") + " (--max-runs)"
}

// tenancyUnexplored says why tenancy went unexplored though another
// team's key was given, "" when it was explored.
func tenancyUnexplored(r Result) string {
	if !r.OtherTeam || r.OtherTeamCalls > 0 {
		return ""
	}
	return "the other team's key made no call, so tenancy was not explored: each sequence ended at a finding before the other team acted, or held nothing of the first team's to call (explore longer, or fix what was found first)"
}

// unreached is the operations never called, and why, in order.
func unreached(r Result) [][2]string {
	ops := make([]string, 0, len(r.Unreached))
	for op := range r.Unreached {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	out := make([][2]string, len(ops))
	for i, op := range ops {
		out[i] = [2]string{op, r.Unreached[op]}
	}
	return out
}

// replay is the command line that replays the exploration.
func replay(r Result) string {
	if r.Replay != "" {
		return r.Replay
	}
	return fmt.Sprintf("agentruns-contract --explore --seed %d", r.Seed)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// WriteSummary writes the plain summary of an exploration: what it sent
// and created, then the findings by cause, each with its scenario and its
// curl lines.
func WriteSummary(w io.Writer, r Result, baseURL string) error {
	var b strings.Builder
	mode := "reads and writes"
	if r.ReadOnly {
		mode = "reads only (--read-only)"
	}
	fmt.Fprintf(&b, "Exploration of %s: %s, %s\n", baseURL, calls(r), mode)
	fmt.Fprintf(&b, "Created: %s\n", created(r))
	if budget := runBudget(r); budget != "" {
		fmt.Fprintf(&b, "Run budget: %s\n", budget)
	}
	if why := tenancyUnexplored(r); why != "" {
		fmt.Fprintf(&b, "Tenancy: %s\n", why)
	}
	fmt.Fprintf(&b, "Replay: %s\n", replay(r))
	if u := unreached(r); len(u) > 0 {
		b.WriteString("Not called:\n")
		for _, op := range u {
			fmt.Fprintf(&b, "  %s: %s\n", op[0], op[1])
		}
	}
	groups := byCause(r, baseURL)
	if len(groups) == 0 {
		b.WriteString("\nNo finding.\n")
	} else {
		fmt.Fprintf(&b, "\n%s, by cause:\n", plural(len(r.Findings), "finding", "findings"))
	}
	for _, g := range groups {
		fmt.Fprintf(&b, "\n%s (%d)\n", g.Cause, len(g.Findings))
		for i, p := range g.Findings {
			fmt.Fprintf(&b, "\n  %d. %s\n", i+1, p.Operation)
			for _, line := range strings.Split(strings.TrimSpace(p.Detail), "\n") {
				fmt.Fprintf(&b, "     %s\n", strings.TrimSpace(line))
			}
			b.WriteString("\n     Scenario (paste into a .feature file):\n\n")
			for _, line := range strings.Split(strings.TrimRight(p.Feature, "\n"), "\n") {
				if line == "" {
					b.WriteString("\n")
					continue
				}
				fmt.Fprintf(&b, "       %s\n", line)
			}
			if len(p.Missing) > 0 {
				fmt.Fprintf(&b, "\n     The suite has no step for: %s\n", strings.Join(p.Missing, "; "))
			}
			b.WriteString("\n     Reproduce with curl:\n\n")
			for _, c := range p.Curls {
				fmt.Fprintf(&b, "       %s\n", c)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// The JUnit report has the shape of the suite's (package report, and its
// schema report.JUnitSchema): a testsuite "exploration" whose one test
// case says what was sent, then a testsuite per cause, one failed test
// case per finding, its failure's text the scenario and the curl lines.

// WriteJUnit writes the JUnit XML report of an exploration.
func WriteJUnit(w io.Writer, r Result, baseURL string) error {
	const noTime = "0.000" // an exploration's findings are not timed one by one
	doc := report.JUnitTestsuites{JUnitCounts: report.JUnitCounts{Name: "agentruns-contract --explore", Time: noTime}}
	props := []report.JUnitProperty{
		{Name: "base_url", Value: baseURL},
		{Name: "seed", Value: fmt.Sprint(r.Seed)},
		{Name: "replay", Value: replay(r)},
		{Name: "calls", Value: fmt.Sprint(r.Calls)},
		{Name: "read_only", Value: fmt.Sprint(r.ReadOnly)},
		{Name: "created", Value: created(r)},
		{Name: "other_team_calls", Value: fmt.Sprint(r.OtherTeamCalls)},
		{Name: "run_budget", Value: runBudget(r)},
	}
	var out strings.Builder
	fmt.Fprintf(&out, "%s sent, created %s\n", calls(r), created(r))
	if why := tenancyUnexplored(r); why != "" {
		fmt.Fprintf(&out, "tenancy: %s\n", why)
	}
	for _, op := range unreached(r) {
		fmt.Fprintf(&out, "not called: %s: %s\n", op[0], op[1])
	}
	explored := report.JUnitTestsuite{
		JUnitCounts: report.JUnitCounts{Name: "exploration", Tests: 1, Time: noTime},
		Properties:  &report.JUnitProperties{Property: props},
		Cases:       []report.JUnitTestcase{{Name: fmt.Sprintf("%s explored", baseURL), Classname: "exploration", Time: noTime, SystemOut: out.String()}},
	}
	doc.Suites = append(doc.Suites, explored)
	for _, g := range byCause(r, baseURL) {
		suite := report.JUnitTestsuite{JUnitCounts: report.JUnitCounts{Name: g.Cause, Time: noTime}}
		for i, p := range g.Findings {
			var text strings.Builder
			text.WriteString(p.Feature)
			if len(p.Missing) > 0 {
				fmt.Fprintf(&text, "\nThe suite has no step for: %s\n", strings.Join(p.Missing, "; "))
			}
			text.WriteString("\nReproduce with curl:\n")
			for _, c := range p.Curls {
				fmt.Fprintf(&text, "%s\n", c)
			}
			suite.Cases = append(suite.Cases, report.JUnitTestcase{
				Name:      fmt.Sprintf("%d. %s: %s", i+1, p.Operation, p.Summary()),
				Classname: g.Cause,
				Time:      noTime,
				Failure:   &report.JUnitProblem{Message: oneLine(p.Detail), Type: g.Cause, Text: text.String()},
			})
			suite.Tests++
			suite.Failures++
		}
		doc.Suites = append(doc.Suites, suite)
	}
	for _, s := range doc.Suites {
		doc.Tests += s.Tests
		doc.Failures += s.Failures
	}
	return report.WriteJUnitXML(w, doc)
}

// htmlPage is what the page shows.
type htmlPage struct {
	BaseURL   string
	Result    Result
	Mode      string
	Created   string
	Calls     string
	RunBudget string
	Tenancy   string
	Replay    string
	Unreached [][2]string
	Groups    []causeGroup
}

// WriteHTML writes a page of HTML, whole in itself, of an exploration:
// what it sent and created, then the findings by cause, each scenario and
// its curl lines in a <pre> to copy.
func WriteHTML(w io.Writer, r Result, baseURL string) error {
	p := htmlPage{BaseURL: baseURL, Result: r, Mode: "reads and writes", Created: created(r), Calls: calls(r), RunBudget: runBudget(r), Tenancy: tenancyUnexplored(r), Replay: replay(r), Unreached: unreached(r), Groups: byCause(r, baseURL)}
	if r.ReadOnly {
		p.Mode = "reads only (--read-only)"
	}
	return pageTemplate.Execute(w, p)
}

var pageTemplate = template.Must(template.New("explore").Funcs(template.FuncMap{
	"anchor": func(s string) string {
		return "cause-" + strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
		}), "-")
	},
	"join": strings.Join,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Exploration of {{.BaseURL}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 72rem; padding: 0 1rem; color: #1d1d1f; }
h1 { font-size: 1.5rem; }
h2 { font-size: 1.2rem; border-bottom: 1px solid #ccc; padding-bottom: .3rem; margin-top: 2rem; }
dl { display: grid; grid-template-columns: max-content auto; gap: .2rem 1rem; }
dt { font-weight: 600; }
dd { margin: 0; }
.finding { border-left: 4px solid #c0392b; padding: .2rem 1rem; margin: 1rem 0; background: #fdf6f5; }
.none { border-left: 4px solid #27ae60; padding: .5rem 1rem; background: #f3fbf6; }
pre { background: #f4f4f6; padding: .8rem; overflow-x: auto; white-space: pre; }
.detail { white-space: pre-line; }
.missing { color: #8a5300; }
nav li { margin: .2rem 0; }
</style>
</head>
<body>
<h1>Exploration of <code>{{.BaseURL}}</code></h1>
<dl class="summary">
<dt>Calls</dt><dd id="calls">{{.Calls}}</dd>
<dt>Mode</dt><dd>{{.Mode}}</dd>
<dt>Created</dt><dd id="created">{{.Created}}</dd>
{{- if .RunBudget}}
<dt>Run budget</dt><dd id="run-budget">{{.RunBudget}}</dd>
{{- end}}
{{- if .Tenancy}}
<dt>Tenancy</dt><dd id="tenancy">{{.Tenancy}}</dd>
{{- end}}
<dt>Replay</dt><dd><code id="replay">{{.Replay}}</code></dd>
{{- range .Unreached}}
<dt>Not called</dt><dd class="unreached">{{index . 0}}: {{index . 1}}</dd>
{{- end}}
</dl>
{{- if not .Groups}}
<p class="none" id="no-finding">No finding.</p>
{{- else}}
<nav><ul>
{{- range .Groups}}
<li><a href="#{{anchor .Cause}}">{{.Cause}}</a> ({{len .Findings}})</li>
{{- end}}
</ul></nav>
{{- end}}
{{- range .Groups}}
<section class="cause" id="{{anchor .Cause}}">
<h2>{{.Cause}} ({{len .Findings}})</h2>
{{- range .Findings}}
<article class="finding">
<h3>{{.Operation}}</h3>
<p class="detail">{{.Detail}}</p>
<p>Scenario, to paste into a <code>.feature</code> file:</p>
<pre class="scenario">{{.Feature}}</pre>
{{- if .Missing}}
<p class="missing">The suite has no step for: {{join .Missing "; "}}</p>
{{- end}}
<p>Reproduce with curl:</p>
<pre class="curl">{{range .Curls}}{{.}}
{{end}}</pre>
</article>
{{- end}}
</section>
{{- end}}
</body>
</html>
`))
