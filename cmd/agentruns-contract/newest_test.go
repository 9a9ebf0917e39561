package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/report"
	"github.com/agentruns/agentruns/steps"
)

// Issue 47, point 2: what the run found of the newest client's surface is
// said right under the counts, before any cause; the scenarios it skipped
// are not offered as "not all checked" again, since that surface is not
// the server's contract unless it promises it.
func TestTheSummarySaysFirstWhetherTheNewestClientIsServed(t *testing.T) {
	res := steps.Result{NewestClient: steps.NewestSurface{
		Asked:  []steps.SurfaceAnswer{{Operation: "GET /agent/identities/{uid}", Status: 405}},
		Breaks: []steps.ClientCalls{{Version: "typescript-1.4.0-alpha.6", Operations: []string{"GET /agent/identities/{uid}"}}},
	}}
	need := &report.Need{Flag: "--newest-client", What: "what the newest official client calls"}
	for _, sc := range []report.Scenario{
		{URI: "identities.feature", Name: "An identity by its uid", Status: report.Skipped, Message: "does not serve", Needs: need},
		{URI: "get_run.feature", Name: "A run", Status: report.Passed},
	} {
		res.Report.Scenarios = append(res.Report.Scenarios, sc)
		res.Scenarios = append(res.Scenarios, steps.ScenarioResult{Feature: sc.URI, Name: sc.Name, Status: sc.Status, Message: sc.Message, Needs: sc.Needs})
	}
	var out strings.Builder
	summarise(&out, res, steps.Config{})
	lines := strings.Split(strings.TrimPrefix(out.String(), "\n"), "\n")
	require.Greater(t, len(lines), 3, out.String())
	assert.True(t, strings.HasPrefix(lines[0], "2 scenarios: 1 passed, 0 failed, 1 skipped"), out.String())
	assert.Equal(t, "NOT SERVED what oz-agent-sdk 1.4.0-alpha.6 calls beyond the published document (GET /agent/identities/{uid} answered 405): "+
		"the server is judged by the published document alone, and the scenarios of that surface (@newest-client) are skipped", lines[1])
	assert.Equal(t, "        this breaks typescript-1.4.0-alpha.6, which calls GET /agent/identities/{uid}", lines[2])
	assert.NotContains(t, out.String(), "not all checked", "the newest client is not the server's contract unless it promises it")
}

// --newest-client with tags that leave out every scenario of the newest
// client contradicts itself: a usage error, before anything is asked.
func TestNewestClientWithoutItsScenariosIsAUsageError(t *testing.T) {
	srv := newMock(t, mockserver.Options{}, nil)
	_, errOut, err := runCmd(t, "--base-url", srv.URL, "--api-key", "wk-mock-alice", "--newest-client", "--tags", "not @newest-client")
	require.ErrorIs(t, err, errUsage, errOut)
	assert.Contains(t, err.Error(), "the newest client is promised")
}
