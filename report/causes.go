package report

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/agentruns/agentruns/rules"
)

// One mistake of a server fails every scenario that meets it, often in
// other words than the mistake's own: a field missing from one answer
// fails the scenarios that read that answer, the ones that work out a
// value from it ("working out {creator of match}: ..."), and the ones that
// re-read a run after it ended ("expected updated_at to stay ..."). The
// suite notes, for each scenario, the first answer it met that breaks the
// API's document, its Cause; failures are grouped by it, and a report leads
// with the causes, each with how many scenarios failed from it.

// Cause is the first contract violation a scenario met: the operation, the
// status of the answer and the field that broke the document; or the
// first rule of the suite's invariants a server's answers broke (package
// rules), whatever answer it was met in.
type Cause struct {
	Operation string // the method and path template, e.g. "GET /agent/runs/{runId}"
	Status    int
	Field     string // e.g. "body.updated_at", "header.Content-Type"
	Message   string // what is wrong with it, e.g. "is required"
	Rule      string // the rule broken, e.g. "timestamps-ordered"; empty for the document
}

// String reads as the validator's own line:
// "GET /agent/runs/{runId} 200: body.updated_at: is required", or for a
// rule "rule timestamps-ordered: updated_at: <the rule's title>".
func (c Cause) String() string {
	if c.Rule != "" {
		s := "rule " + c.Rule
		if c.Field != "" {
			s += ": " + c.Field
		}
		return s + ": " + c.Message
	}
	s := c.Operation
	if c.Status != 0 {
		s = fmt.Sprintf("%s %d", s, c.Status)
	}
	if c.Field != "" {
		s += ": " + c.Field
	}
	return s + ": " + c.Message
}

// key is what makes two causes one: the same field of the same answer, or
// the same rule broken in the same field, in whichever answer.
func (c Cause) key() string {
	if c.Rule != "" {
		return "rule " + c.Rule + " " + c.Field
	}
	return fmt.Sprintf("%s %d %s", c.Operation, c.Status, c.Field)
}

// FailureGroup is failed scenarios that share a root cause or, for those
// that met no contract violation, the same first line of their message.
type FailureGroup struct {
	Cause     *Cause // nil for a group by message
	Headline  string // the shared first line, prefixes of where it happened removed
	Scenarios []Scenario
}

// failed tells whether a scenario counts as failed in a summary.
func (s Scenario) failed() bool { return s.Status == Failed || s.Status.Incomplete() }

// FailureGroups groups the run's failed scenarios: first by their cause,
// the groups with most scenarios first; then the failures that met no
// contract violation, by their headline. Within a group the scenarios are
// in the features' order (file, then line), and groups of one size in the
// order of their first scenarios, so that one run's summary reads the same
// whatever order its scenarios ran in.
func (r Run) FailureGroups() []FailureGroup {
	var causes, others []FailureGroup
	at := map[string]int{}
	for _, s := range r.Scenarios {
		if !s.failed() {
			continue
		}
		headline := Headline(s.Message)
		cause := s.Cause
		if cause == nil {
			cause = ruleCause(headline)
		}
		groups, key := &others, "message "+headline
		if cause != nil {
			groups, key = &causes, "cause "+cause.key()
		}
		i, ok := at[key]
		if !ok {
			i = len(*groups)
			at[key] = i
			*groups = append(*groups, FailureGroup{Cause: cause, Headline: headline})
		}
		(*groups)[i].Scenarios = append((*groups)[i].Scenarios, s)
	}
	for _, g := range slices.Concat(causes, others) {
		slices.SortStableFunc(g.Scenarios, byPlace)
	}
	bySize := func(a, b FailureGroup) int {
		if d := len(b.Scenarios) - len(a.Scenarios); d != 0 {
			return d
		}
		return byPlace(a.Scenarios[0], b.Scenarios[0])
	}
	slices.SortStableFunc(causes, bySize)
	slices.SortStableFunc(others, bySize)
	return append(causes, others...)
}

// byPlace orders scenarios as the features list them: by file, then line,
// then name (the rows of an outline share no line with another scenario).
func byPlace(a, b Scenario) int {
	if c := strings.Compare(a.URI, b.URI); c != 0 {
		return c
	}
	if a.Line != b.Line {
		return a.Line - b.Line
	}
	return strings.Compare(a.Name, b.Name)
}

// Example is the message a summary shows for the group: its first
// scenario's, without the note that opens every failure of a scenario
// tagged @newest-client, which the group's other scenarios may lack. A
// group reads the same whatever order its scenarios ran in.
func (g FailureGroup) Example() string {
	if len(g.Scenarios) == 0 {
		return ""
	}
	return newestClientNote.ReplaceAllString(g.Scenarios[0].Message, "")
}

// newestClientNote is the note a failure of a scenario tagged
// @newest-client opens with (steps.NewestClientNote), and how godog joins
// it to the step's own message.
var newestClientNote = regexp.MustCompile(`^\[@newest-client: [^\]]*\](, )?`)

// wherePrefixes are the openings a failure's message gets from where it
// happened rather than from what went wrong: the hook that re-read a run,
// the placeholder being worked out, the page of a walk, the run being
// cancelled or looked at, the note of a scenario tagged @newest-client
// (which godog puts before the step's own message).
var wherePrefixes = regexp.MustCompile(`^(after scenario hook failed: |working out \{[^}]*\}: |re-reading run .*? after it ended: |page \d+: |` +
	`cancelling run \S+: |look \d+ at run \S+ \([A-Z]+\): |listing by the state run \S+ ended in, [A-Z]+: |` +
	`creating a run with the other team's key: |\[@newest-client: [^\]]*\](, )?)+`)

// What differs from one failure to the next of one mistake: the run and
// the times it was met at.
var (
	uuid    = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	rfc3339 = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})`)
)

// Headline is the first line of a failure's message without the prefixes
// that say where it happened, and with run ids and timestamps standing as
// <id> and <time>, so that one failure met in several places, runs and
// moments reads the same.
func Headline(message string) string {
	first, _, _ := strings.Cut(message, "\n")
	first = wherePrefixes.ReplaceAllString(first, "")
	first = uuid.ReplaceAllString(first, "<id>")
	return rfc3339.ReplaceAllString(first, "<time>")
}

// ruleAtEnd is the rule id the suite ends a broken invariant's message with:
// "run <id>: expected updated_at not before created_at <time>, got <time> [timestamps-ordered]".
var ruleAtEnd = regexp.MustCompile(`^(?:.*?: )?expected (\S+) .*\[([a-z0-9]+(?:-[a-z0-9]+)+)\]$`)

// ruleCause is the cause a headline names when it tells a broken rule of
// the suite's invariants and no contract violation came before it: the
// rule and the field, nil for any other headline.
func ruleCause(headline string) *Cause {
	m := ruleAtEnd.FindStringSubmatch(headline)
	if m == nil {
		return nil
	}
	c := &Cause{Rule: m[2], Field: m[1], Message: headline}
	if r, ok := rules.RuleByID(c.Rule); ok {
		c.Message = r.Title
	}
	return c
}
