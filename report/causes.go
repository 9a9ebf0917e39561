package report

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
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
// status of the answer and the field that broke the document.
type Cause struct {
	Operation string // the method and path template, e.g. "GET /agent/runs/{runId}"
	Status    int
	Field     string // e.g. "body.updated_at", "header.Content-Type"
	Message   string // what is wrong with it, e.g. "is required"
}

// String reads as the validator's own line:
// "GET /agent/runs/{runId} 200: body.updated_at: is required".
func (c Cause) String() string {
	s := c.Operation
	if c.Status != 0 {
		s = fmt.Sprintf("%s %d", s, c.Status)
	}
	if c.Field != "" {
		s += ": " + c.Field
	}
	return s + ": " + c.Message
}

// key is what makes two causes one: the same field of the same answer.
func (c Cause) key() string { return fmt.Sprintf("%s %d %s", c.Operation, c.Status, c.Field) }

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
// contract violation, by their headline. Within a group the scenarios keep
// the run's order.
func (r Run) FailureGroups() []FailureGroup {
	var causes, others []FailureGroup
	at := map[string]int{}
	for _, s := range r.Scenarios {
		if !s.failed() {
			continue
		}
		groups, key := &others, "message "+Headline(s.Message)
		if s.Cause != nil {
			groups, key = &causes, "cause "+s.Cause.key()
		}
		i, ok := at[key]
		if !ok {
			i = len(*groups)
			at[key] = i
			*groups = append(*groups, FailureGroup{Cause: s.Cause, Headline: Headline(s.Message)})
		}
		(*groups)[i].Scenarios = append((*groups)[i].Scenarios, s)
	}
	bySize := func(a, b FailureGroup) int { return len(b.Scenarios) - len(a.Scenarios) }
	slices.SortStableFunc(causes, bySize)
	slices.SortStableFunc(others, bySize)
	return append(causes, others...)
}

// wherePrefixes are the openings a failure's message gets from where it
// happened rather than from what went wrong: the hook that re-read a run,
// the placeholder being worked out, the page of a walk.
var wherePrefixes = regexp.MustCompile(`^(after scenario hook failed: |working out \{[^}]*\}: |re-reading run .*? after it ended: |page \d+: )+`)

// Headline is the first line of a failure's message without the prefixes
// that say where it happened, so that one failure met in several places
// reads the same.
func Headline(message string) string {
	first, _, _ := strings.Cut(message, "\n")
	return wherePrefixes.ReplaceAllString(first, "")
}
