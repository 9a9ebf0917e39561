package record_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/proxy/record"
)

// recordThrough records what a client reading each path through a
// recording proxy in front of upstream sees, and returns a mock on the
// recording, its clock virtual.
func recordThrough(t *testing.T, upstream http.Handler, paths ...string) *mockserver.Server {
	t.Helper()
	mock, err := mockserver.New(mockserver.Options{Fixtures: recordedSet(t, upstream, paths...), ClockMode: mockserver.VirtualClock})
	require.NoError(t, err)
	return mock
}

// recordedSet is the recording recordThrough serves, as the mock loads it.
func recordedSet(t *testing.T, upstream http.Handler, paths ...string) *fixtures.Set {
	t.Helper()
	srv := httptest.NewServer(upstream)
	t.Cleanup(srv.Close)
	dir, rec, p, proxied := recordingProxy(t, srv.URL, nil)
	for _, path := range paths {
		resp, err := http.Get(proxied.URL + path)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
	}
	require.NoError(t, p.Drain(context.Background()))
	_, err := rec.Write()
	require.NoError(t, err)
	set, err := fixtures.Load(os.DirFS(dir))
	require.NoError(t, err)
	return set
}

// mockGet is the mock's answer to GET path, decoded.
func mockGet(t *testing.T, mock *mockserver.Server, path string, into any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://mock"+path, nil)
	req.Header.Set("Authorization", "Bearer any-key")
	resp, err := mock.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, path)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(into))
}

// Runs recorded while still QUEUED or INPROGRESS, last updated hours
// before, were never seen to end: the mock keeps them in the state last
// seen, however far its clock goes, rather than end them as it ends its
// own runs.
func TestARunNeverSeenToEndStaysAsLastSeen(t *testing.T) {
	now := time.Now()
	ptr := func(t time.Time) *time.Time { return &t }
	mock := recordThrough(t, &scriptedRuns{looks: map[string][]map[string]any{
		"run-working": {runLook("run-working", "INPROGRESS", now.Add(-3*time.Hour), now.Add(-2*time.Hour), ptr(now.Add(-2*time.Hour)))},
		"run-waiting": {runLook("run-waiting", "QUEUED", now.Add(-5*time.Hour), now.Add(-5*time.Hour), nil)},
	}}, "/agent/runs/run-working", "/agent/runs/run-waiting")
	for _, advance := range []time.Duration{0, 2 * time.Hour, 30 * 24 * time.Hour} {
		_, err := mock.DefaultSession().Advance(advance)
		require.NoError(t, err)
		for id, state := range map[string]string{"run-working": "INPROGRESS", "run-waiting": "QUEUED"} {
			var run struct {
				State string `json:"state"`
			}
			mockGet(t, mock, "/agent/runs/"+id, &run)
			assert.Equal(t, state, run.State, "%s after another %s", id, advance)
		}
	}
}

// A recording that saw no list of models still names, in the mock, every
// model its runs name: the folder lists each one, so GET /agent/models
// answers with it (a later recording into the same folder, whose client
// never listed models, included).
func TestAModelARunNamesIsListedWithoutAListSeen(t *testing.T) {
	now := time.Now()
	run := runLook("run-1", "QUEUED", now.Add(-time.Minute), now.Add(-time.Minute), nil)
	run["agent_config"] = map[string]any{"model_id": "reference-auto"}
	mock := recordThrough(t, &scriptedRuns{looks: map[string][]map[string]any{"run-1": {run}}}, "/agent/runs/run-1")
	var models struct {
		Default string `json:"default_model_id"`
		Models  []struct {
			ID string `json:"id"`
		} `json:"models"`
	}
	mockGet(t, mock, "/agent/models", &models)
	require.Len(t, models.Models, 1)
	assert.Equal(t, "reference-auto", models.Models[0].ID)
	assert.Equal(t, "reference-auto", models.Default)
}

// A run recorded FAILED, ERROR or BLOCKED with artifacts shows them in the
// mock, as a run recorded SUCCEEDED does: one seen only stopped, and one
// whose replay ends FAILED, once it has.
func TestARecordedStoppedRunShowsItsArtifacts(t *testing.T) {
	now := time.Now()
	withPlan := func(run map[string]any) map[string]any {
		run["artifacts"] = []any{map[string]any{"artifact_type": "PLAN", "created_at": now.Format(time.RFC3339Nano),
			"data": map[string]any{"document_uid": "doc-1", "title": "The plan"}}}
		return run
	}
	blocked := runLook("run-blocked", "BLOCKED", now.Add(-time.Hour), now.Add(-time.Minute), nil)
	blocked["status_message"] = map[string]any{"message": "waiting for approval"}
	errored := runLook("run-error", "ERROR", now.Add(-time.Hour), now.Add(-time.Minute), nil)
	errored["status_message"] = map[string]any{"message": "the worker died", "error_code": "internal_error"}
	mock := recordThrough(t, &scriptedRuns{looks: map[string][]map[string]any{
		"run-failed":  {withPlan(runLook("run-failed", "FAILED", now.Add(-time.Hour), now.Add(-time.Minute), nil))},
		"run-error":   {withPlan(errored)},
		"run-blocked": {withPlan(blocked)},
		"run-replayed": {
			runLook("run-replayed", "QUEUED", now.Add(-time.Minute), now.Add(-time.Minute), nil),
			withPlan(runLook("run-replayed", "FAILED", now.Add(-time.Minute), now.Add(-30*time.Second), nil)),
		},
	}}, "/agent/runs/run-failed", "/agent/runs/run-error", "/agent/runs/run-blocked", "/agent/runs/run-replayed", "/agent/runs/run-replayed")
	_, err := mock.DefaultSession().Advance(time.Minute) // the replayed run reaches its end
	require.NoError(t, err)
	for _, id := range []string{"run-failed", "run-error", "run-blocked", "run-replayed"} {
		var run struct {
			State     string `json:"state"`
			Artifacts []struct {
				Type string `json:"artifact_type"`
			} `json:"artifacts"`
		}
		mockGet(t, mock, "/agent/runs/"+id, &run)
		require.Len(t, run.Artifacts, 1, "%s, %s, shows the artifact recorded", id, run.State)
		assert.Equal(t, "PLAN", run.Artifacts[0].Type)
	}
	var listed struct {
		Runs []struct {
			ID string `json:"run_id"`
		} `json:"runs"`
	}
	mockGet(t, mock, "/agent/runs?artifact_type=PLAN&limit=100", &listed)
	assert.Len(t, listed.Runs, 4, "the filter by artifact finds each")
}

// A schedule's agent_config is recorded and replayed: the mock shows the
// model and environment its runs start with, and the members beyond the
// document inside it where they were seen.
func TestAScheduleKeepsItsAgentConfig(t *testing.T) {
	sc := schedule("sch_nightly", "Nightly", true)
	sc["agent_config"] = map[string]any{"model_id": "reference-auto", "environment_id": "env-1", "rollout_ring": "canary"}
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"schedules": []any{sc}})
	})
	srv := httptest.NewServer(upstream)
	t.Cleanup(srv.Close)
	dir, rec, p, proxied := recordingProxy(t, srv.URL, nil)
	resp, err := http.Get(proxied.URL + "/agent/schedules")
	require.NoError(t, err)
	resp.Body.Close()
	require.NoError(t, p.Drain(context.Background()))
	written, err := rec.Write()
	require.NoError(t, err)
	sum := written.(record.Summary)
	assert.Equal(t, 1, sum.Extras, "agent_config.rollout_ring")
	assert.Zero(t, sum.ExtrasLeftOut)

	set, err := fixtures.Load(os.DirFS(dir))
	require.NoError(t, err)
	mock, err := mockserver.New(mockserver.Options{Fixtures: set, ClockMode: mockserver.VirtualClock})
	require.NoError(t, err)
	var got struct {
		AgentConfig map[string]any `json:"agent_config"`
	}
	mockGet(t, mock, "/agent/schedules/sch_nightly", &got)
	assert.Equal(t, "reference-auto", got.AgentConfig["model_id"])
	assert.Equal(t, "env-1", got.AgentConfig["environment_id"])
	assert.Equal(t, "canary", got.AgentConfig["rollout_ring"], "the member beyond the document, where it was seen")
}
