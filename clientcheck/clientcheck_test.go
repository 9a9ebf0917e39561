package clientcheck

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func versions(t *testing.T) map[string]*Version {
	t.Helper()
	all, err := Load()
	require.NoError(t, err)
	byName := map[string]*Version{}
	for _, v := range all {
		byName[v.Name] = v
	}
	require.Len(t, byName, 3)
	return byName
}

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	return v
}

const run = `{"run_id":"r1","task_id":"r1","title":"t","state":"QUEUED","prompt":"p",
  "created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}`

func TestAWellFormedRunBreaksNoVersion(t *testing.T) {
	for name, v := range versions(t) {
		checked, breaks := v.Judge("GET", "/agent/runs/r1", 200, decode(t, run))
		assert.True(t, checked, name)
		assert.Empty(t, breaks, name)
	}
}

func TestEachKindOfBreak(t *testing.T) {
	vs := versions(t)
	for _, tc := range []struct {
		name, version, method, path, body string
		want                              Break
	}{
		{"a required field missing", "typescript-1.0.0-alpha.8", "GET", "/agent/runs/r1",
			`{"run_id":"r1","title":"t","state":"QUEUED","prompt":"p","created_at":"x","updated_at":"x"}`,
			Break{"GET /agent/runs/{runId}", "task_id", "required string", "missing"}},
		{"a type it would not read", "python-0.11.0", "GET", "/agent/runs/r1",
			`{"run_id":"r1","task_id":"r1","title":7,"state":"QUEUED","prompt":"p","created_at":"x","updated_at":"x"}`,
			Break{"GET /agent/runs/{runId}", "title", "string", "number 7"}},
		{"a value outside its set", "python-0.11.0", "GET", "/agent/runs/r1",
			`{"run_id":"r1","task_id":"r1","title":"t","state":"QUEUED","prompt":"p","created_at":"x","updated_at":"x","source":"ORCHESTRATION"}`,
			Break{"GET /agent/runs/{runId}", "source", "one of API, CLI, CLOUD_MODE, GITHUB_ACTION, LINEAR, LOCAL, SCHEDULED_AGENT, SLACK, WEB_APP", `string "ORCHESTRATION"`}},
		{"a list's item", "typescript-1.0.0-alpha.8", "GET", "/agent/runs",
			`{"runs":[` + run + `,{"run_id":"r2"}],"page_info":{"has_next_page":false}}`,
			Break{"GET /agent/runs", "runs[].created_at", "required string", "missing"}},
		{"null where not nullable", "typescript-1.4.0-alpha.6", "GET", "/agent/runs/r1",
			`{"run_id":"r1","task_id":"r1","title":"t","state":"QUEUED","prompt":"p","created_at":"x","updated_at":"x","session_link":null}`,
			Break{"GET /agent/runs/{runId}", "session_link", "string", "null"}},
		{"an artifact kind it does not know", "typescript-1.0.0-alpha.8", "GET", "/agent/runs/r1",
			`{"run_id":"r1","task_id":"r1","title":"t","state":"QUEUED","prompt":"p","created_at":"x","updated_at":"x",
			  "artifacts":[{"artifact_type":"SCREENSHOT","created_at":"x","data":{"artifact_uid":"a","mime_type":"image/png"}}]}`,
			Break{"GET /agent/runs/{runId}", "artifacts[].artifact_type", "one of PLAN, PULL_REQUEST", `string "SCREENSHOT"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checked, breaks := vs[tc.version].Judge(tc.method, tc.path, 200, decode(t, tc.body))
			require.True(t, checked)
			assert.Contains(t, breaks, tc.want)
		})
	}
}

func TestOnlyOperationsTheVersionCallsAreJudged(t *testing.T) {
	vs := versions(t)
	// alpha.8 posts creates to /agent/run, never to /agent/runs.
	checked, _ := vs["typescript-1.0.0-alpha.8"].Judge("POST", "/agent/runs", 200, decode(t, `{}`))
	assert.False(t, checked)
	checked, breaks := vs["typescript-1.4.0-alpha.6"].Judge("POST", "/agent/runs", 200, decode(t, `{}`))
	assert.True(t, checked)
	assert.NotEmpty(t, breaks)
	// Errors are not what the facts describe.
	checked, _ = vs["python-0.11.0"].Judge("GET", "/agent/runs/r1", 404, decode(t, `{}`))
	assert.False(t, checked)
	// A literal segment is not a run id.
	op, ok := vs["typescript-1.4.0-alpha.6"].Calls("GET", "/agent/runs/r1/handoff/attachments")
	assert.True(t, ok)
	assert.Equal(t, "GET /agent/runs/{runId}/handoff/attachments", op)
}

func TestTallyCountsAnswersPerVersion(t *testing.T) {
	all, err := Load()
	require.NoError(t, err)
	tally := NewTally(all)
	h := http.Header{"Content-Type": {"application/json"}}
	tally.Answer("GET", "/agent/runs/r1", 200, h, []byte(run))
	tally.Answer("GET", "/agent/runs/r1", 200, h, []byte(`{"run_id":"r1"}`))
	tally.Answer("GET", "/agent/runs/r1", 200, http.Header{"Content-Type": {"text/plain"}}, []byte(`x`))
	for _, c := range tally.Counts() {
		assert.Equal(t, 2, c.Checked, c.Version)
		assert.Equal(t, 1, c.Broken, c.Version)
		assert.LessOrEqual(t, len(c.First), FirstBreaks)
		assert.NotEmpty(t, c.First)
	}
}

func TestSelectRefusesAnUnknownVersionNamingTheKnownOnes(t *testing.T) {
	all, err := Load()
	require.NoError(t, err)
	got, err := Select(all, "all")
	require.NoError(t, err)
	assert.Len(t, got, 3)
	got, err = Select(all, "python-0.11.0")
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"python-0.11.0": true}, got)
	_, err = Select(all, "typescript-9")
	assert.EqualError(t, err, `no client version "typescript-9": the known ones are python-0.11.0, typescript-1.0.0-alpha.8, typescript-1.4.0-alpha.6, or all`)
}
