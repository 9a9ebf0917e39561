package clientfacts

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClientFactsNameTheirVersions: every file loads, names the client it
// came from, and holds what that client reads from the runs' answers.
func TestClientFactsNameTheirVersions(t *testing.T) {
	all, err := All()
	require.NoError(t, err)
	var names []string
	for _, f := range all {
		names = append(names, Name(f.Client))
		get := f.Operations["GET /agent/runs/{runId}"]
		require.NotNil(t, get, "%s: no retrieve", Name(f.Client))
		require.NotNil(t, get.Responses["2XX"].Content["application/json"], "%s: retrieve reads nothing", Name(f.Client))
		item := f.Schemas["RunItem"]
		require.NotNil(t, item, "%s: no RunItem", Name(f.Client))
		assert.Subset(t, item.Required, []string{"run_id", "state", "task_id", "title", "prompt", "created_at", "updated_at"}, Name(f.Client))
	}
	assert.Equal(t, []string{"python-0.11.0", "typescript-1.0.0-alpha.8", "typescript-1.4.0-alpha.6"}, names)
}

// TestClientFactsKeepWhatEachVersionDeclares: facts that tell the versions
// apart, as each client's source or package states them.
func TestClientFactsKeepWhatEachVersionDeclares(t *testing.T) {
	byName := map[string]int{}
	all, err := All()
	require.NoError(t, err)
	for i, f := range all {
		byName[Name(f.Client)] = i
	}
	alpha8, newest, python := all[byName["typescript-1.0.0-alpha.8"]], all[byName["typescript-1.4.0-alpha.6"]], all[byName["python-0.11.0"]]
	// alpha.8 posts to /agent/run; the newer clients to /agent/runs.
	assert.Contains(t, alpha8.Operations, "POST /agent/run")
	assert.Contains(t, newest.Operations, "POST /agent/runs")
	assert.Contains(t, python.Operations, "POST /agent/runs")
	// alpha.8 declares the page's page_info required, Python optional.
	assert.Contains(t, alpha8.Schemas["RunListResponse"].Required, "page_info")
	page := python.Operations["GET /agent/runs"].Responses["2XX"].Content["application/json"]
	assert.NotContains(t, page.Required, "page_info")
	assert.Contains(t, page.Required, "runs")
	// Python's source types know fewer values than the newest TypeScript's.
	assert.NotContains(t, python.Schemas["RunSourceType"].Enum, "ORCHESTRATION")
	assert.Contains(t, newest.Schemas["RunSourceType"].Enum, "ORCHESTRATION")
	assert.Equal(t, "date-time", python.Schemas["RunItem"].Properties["created_at"].Format)
	assert.True(t, python.Schemas["RunItem"].Properties["started_at"].Nullable)
}

func TestVersionsSortAsReleased(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"1.0.0-alpha.8", "1.0.0-alpha.10"}, {"1.0.0-alpha.8", "1.0.0"}, {"0.9.0", "0.11.0"}, {"1.4.0-alpha.6", "1.4.0-beta.1"},
	} {
		assert.True(t, lessVersion(tc.a, tc.b), "%s < %s", tc.a, tc.b)
		assert.False(t, lessVersion(tc.b, tc.a), "not %s < %s", tc.b, tc.a)
	}
}
