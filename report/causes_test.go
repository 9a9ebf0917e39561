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

// A server whose runs show updated_at before created_at breaks one rule of
// the suite's invariants in every scenario that reads a run, each time
// with its own run, times and place: that is one cause, not one failure
// per scenario.
func TestOneBrokenRuleIsOneCause(t *testing.T) {
	broken := func(id, created, updated string) string {
		return "run " + id + ": expected updated_at not before created_at " + created + ", got " + updated + " [timestamps-ordered]"
	}
	note := "[@newest-client: this scenario checks what the official client calls; leave it out with --tags 'not @newest-client']"
	run := Run{Scenarios: []Scenario{
		{Name: "a", Status: Failed, Message: broken("0b7c4f7e-2a51-4c59-9d1e-8f9a6f1c2d3e", "2026-05-01T10:00:00Z", "2026-05-01T09:59:59Z")},
		{Name: "b", Status: Failed, Message: "page 1: " + broken("1c8d5a8f-3b62-4d6a-8e2f-9a0b7a2d3e4f", "2026-05-01T10:00:03.5Z", "2026-05-01T10:00:02.5Z")},
		{Name: "c", Status: Failed, Message: "cancelling run alpha: " + broken("2d9e6b90-4c73-4e7b-9f30-0b1c8b3e4f50", "2026-05-01T11:00:00+02:00", "2026-05-01T10:59:59+02:00")},
		{Name: "d", Status: Failed, Message: "working out {creator of match}: " + broken("3eaf7ca1-5d84-4f8c-a041-1c2d9c4f5061", "2026-05-01T10:00:00Z", "2026-05-01T09:59:59Z")},
		{Name: "e", Status: Failed, Message: note + ", " + broken("4fb08db2-6e95-409d-b152-2d3e0d506172", "2026-05-01T10:00:00Z", "2026-05-01T09:59:59Z") + "\n  details"},
		{Name: "f", Status: Failed, Message: "run 5ac19ec3-7fa6-41ae-8263-3e4f1e617283 did not reach SUCCEEDED by 2026-05-01T10:00:00Z"},
		{Name: "g", Status: Failed, Message: "page 2: run 6bd2afd4-80b7-42bf-9374-4f502f728394 did not reach SUCCEEDED by 2026-05-02T10:00:00Z"},
	}}
	groups := run.FailureGroups()
	require.Len(t, groups, 2)
	require.NotNil(t, groups[0].Cause)
	assert.Equal(t, []string{"a", "b", "c", "d", "e"}, namesOf(groups[0].Scenarios))
	assert.Equal(t, "rule timestamps-ordered: updated_at: A run's updated_at and started_at are never before its created_at", groups[0].Cause.String())
	assert.Nil(t, groups[1].Cause)
	assert.Equal(t, "run <id> did not reach SUCCEEDED by <time>", groups[1].Headline)
	assert.Equal(t, []string{"f", "g"}, namesOf(groups[1].Scenarios))
}
