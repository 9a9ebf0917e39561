package runner_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/report"
	"github.com/agentruns/agentruns/runner"
	"github.com/agentruns/agentruns/steps"
	"github.com/agentruns/agentruns/suiteconfig"
)

// One mistake of a server fails many scenarios with one message (its
// details, such as the body naming each scenario's run, aside): the summary
// says it once, with how many scenarios, the first few names and the first
// one's details.
func TestSummaryGroupsIdenticalFailures(t *testing.T) {
	const created = "contract violation: POST /agent/run 201: status: 201 is not documented for this operation"
	var res runner.Result
	for _, name := range []string{"A", "B", "C", "D", "E"} {
		res.Report.Scenarios = append(res.Report.Scenarios, report.Scenario{URI: "create_run.feature", Name: "Create " + name, Status: report.Failed,
			Message: created + "\n  body: {\"run_id\":\"" + name + "\"}"})
	}
	res.Report.Scenarios = append(res.Report.Scenarios,
		report.Scenario{URI: "get_run.feature", Name: "An unknown run is not found", Status: report.Failed, Message: "want application/problem+json"},
		report.Scenario{URI: "list_runs.feature", Name: "Listing", Status: report.Passed})
	for _, sc := range res.Report.Scenarios {
		res.Scenarios = append(res.Scenarios, runner.ScenarioResult{Feature: sc.URI, Name: sc.Name, Status: sc.Status, Message: sc.Message})
	}
	var out strings.Builder
	runner.Summarise(&out, res, suiteconfig.Config{})
	assert.Contains(t, out.String(), "FAILED  5 scenarios with the same failure: create_run.feature: Create A; create_run.feature: Create B; create_run.feature: Create C; and 2 more\n"+
		"        "+created+"\n          body: {\"run_id\":\"A\"}\n")
	assert.Equal(t, 1, strings.Count(out.String(), created), out.String())
	assert.Contains(t, out.String(), "FAILED  get_run.feature: An unknown run is not found\n        want application/problem+json\n")
	assert.NotContains(t, out.String(), "not all checked")
}

// Issue 47, point 2: what the run found of the newest client's surface is
// said right under the counts, before any cause; the scenarios it skipped
// are not offered as "not all checked" again, since that surface is not
// the server's contract unless it promises it.
func TestTheSummarySaysFirstWhetherTheNewestClientIsServed(t *testing.T) {
	res := runner.Result{NewestClient: steps.NewestSurface{
		Asked:  []steps.SurfaceAnswer{{Operation: "GET /agent/identities/{uid}", Status: 405}},
		Breaks: []steps.ClientCalls{{Version: "typescript-1.4.0-alpha.6", Operations: []string{"GET /agent/identities/{uid}"}}},
	}}
	need := &report.Need{Flag: "--newest-client", What: "what the newest official client calls"}
	for _, sc := range []report.Scenario{
		{URI: "identities.feature", Name: "An identity by its uid", Status: report.Skipped, Message: "does not serve", Needs: need},
		{URI: "get_run.feature", Name: "A run", Status: report.Passed},
	} {
		res.Report.Scenarios = append(res.Report.Scenarios, sc)
		res.Scenarios = append(res.Scenarios, runner.ScenarioResult{Feature: sc.URI, Name: sc.Name, Status: sc.Status, Message: sc.Message, Needs: sc.Needs})
	}
	var out strings.Builder
	runner.Summarise(&out, res, suiteconfig.Config{})
	lines := strings.Split(strings.TrimPrefix(out.String(), "\n"), "\n")
	require.Greater(t, len(lines), 3, out.String())
	assert.True(t, strings.HasPrefix(lines[0], "2 scenarios: 1 passed, 0 failed, 1 skipped"), out.String())
	assert.Equal(t, "NOT SERVED what oz-agent-sdk 1.4.0-alpha.6 calls beyond the published document (GET /agent/identities/{uid} answered 405): "+
		"the server is judged by the published document alone, and the scenarios of that surface (@newest-client) are skipped", lines[1])
	assert.Equal(t, "        this breaks typescript-1.4.0-alpha.6, which calls GET /agent/identities/{uid}", lines[2])
	assert.NotContains(t, out.String(), "not all checked", "the newest client is not the server's contract unless it promises it")
}

// Issue 47, point 6: one mistake met by a scenario tagged @newest-client
// (whose failures open with the tag's note) and by others is told in one
// wording, whatever order the scenarios ran in.
func TestTheFirstCauseReadsTheSameInAnyOrder(t *testing.T) {
	cause := &report.Cause{Operation: "GET /agent/runs/{runId}", Status: 200, Field: "body.updated_at", Message: "is required"}
	violation := "contract violation: GET /agent/runs/{runId} 200: body.updated_at: is required"
	scenarios := []report.Scenario{
		{URI: "followups.feature", Line: 17, Name: "A follow-up to a running run joins its conversation", Tags: []string{"@newest-client"},
			Status: report.Failed, Cause: cause, Message: steps.NewestClientNote + ", " + violation},
		{URI: "get_run.feature", Line: 8, Name: "A run is fetched by its id", Status: report.Failed, Cause: cause, Message: violation},
		{URI: "list_runs.feature", Line: 30, Name: "Runs are listed", Status: report.Failed, Cause: cause, Message: "page 1: " + violation},
		{URI: "errors.feature", Line: 5, Name: "An unknown path is a 404", Status: report.Failed, Message: "expected status 404, got 200"},
		{URI: "events.feature", Line: 5, Name: "Events are polled", Status: report.Failed, Message: "expected an event, got none"},
	}
	summary := func(order []int) string {
		var res runner.Result
		for _, i := range order {
			sc := scenarios[i]
			res.Report.Scenarios = append(res.Report.Scenarios, sc)
			res.Scenarios = append(res.Scenarios, runner.ScenarioResult{Feature: sc.URI, Name: sc.Name, Tags: sc.Tags, Status: sc.Status, Message: sc.Message})
		}
		var out strings.Builder
		runner.Summarise(&out, res, suiteconfig.Config{})
		return out.String()
	}
	first := summary([]int{0, 1, 2, 3, 4})
	assert.Contains(t, first, "CAUSE   3 scenarios failed from GET /agent/runs/{runId} 200: body.updated_at: is required\n"+
		"        followups.feature: A follow-up to a running run joins its conversation; get_run.feature: A run is fetched by its id; list_runs.feature: Runs are listed\n"+
		"        "+violation+"\n")
	for _, order := range [][]int{{1, 0, 2, 4, 3}, {2, 1, 0, 3, 4}, {4, 3, 2, 1, 0}} {
		assert.Equal(t, first, summary(order), "order %v", order)
	}
}
