package report

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFailureGroupsLeadWithCausesThenHeadlines(t *testing.T) {
	missing := &Cause{Operation: "GET /agent/runs/{runId}", Status: 200, Field: "body.updated_at", Message: "is required"}
	otherWords := *missing // the same field of the same answer, met in another scenario
	run := Run{Scenarios: []Scenario{
		{Name: "a", Status: Failed, Message: "run x did not reach SUCCEEDED\n  details"},
		{Name: "b", Status: Failed, Message: "working out {creator of match}: contract violation: …", Cause: missing},
		{Name: "c", Status: Passed},
		{Name: "d", Status: Failed, Message: "after scenario hook failed: re-reading run alpha (1) after it ended: …", Cause: &otherWords},
		{Name: "e", Status: Failed, Message: "page 2: run x did not reach SUCCEEDED\n  other details"},
		{Name: "f", Status: Skipped, Message: "skipped"},
		{Name: "g", Status: Undefined, Message: "no step definition matches this step"},
	}}
	groups := run.FailureGroups()
	require.Len(t, groups, 3)
	assert.Equal(t, missing, groups[0].Cause)
	assert.Equal(t, []string{"b", "d"}, namesOf(groups[0].Scenarios))
	assert.Equal(t, "GET /agent/runs/{runId} 200: body.updated_at: is required", groups[0].Cause.String())
	assert.Nil(t, groups[1].Cause)
	assert.Equal(t, "run x did not reach SUCCEEDED", groups[1].Headline)
	assert.Equal(t, []string{"a", "e"}, namesOf(groups[1].Scenarios))
	assert.Equal(t, []string{"g"}, namesOf(groups[2].Scenarios))
}

func namesOf(scs []Scenario) []string {
	var out []string
	for _, s := range scs {
		out = append(out, s.Name)
	}
	return out
}
