package record_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A recording of a server that never showed a run's executor or
// is_run_type_cancellable (optional members only the newest client's
// document declares) replays its runs without them, held or replayed, in
// a get and a listing, before and after the clock moves; a run seen with
// them shows them as recorded, also where the mock would have derived
// another value.
func TestARecordingShowsTheNewestMembersOnlyAsSeen(t *testing.T) {
	now := time.Now()
	ptr := func(t time.Time) *time.Time { return &t }
	agent := map[string]any{"type": "service_account", "uid": "agent-7", "display_name": "Release bot"}
	withNewest := func(run map[string]any) map[string]any {
		run["executor"], run["is_run_type_cancellable"] = agent, false
		return run
	}
	upstream := &scriptedRuns{looks: map[string][]map[string]any{
		"run-held": {runLook("run-held", "SUCCEEDED", now.Add(-time.Hour), now.Add(-50*time.Minute), ptr(now.Add(-59*time.Minute)))},
		"run-moving": {
			runLook("run-moving", "QUEUED", now.Add(-2*time.Minute), now.Add(-2*time.Minute), nil),
			runLook("run-moving", "SUCCEEDED", now.Add(-2*time.Minute), now.Add(-time.Minute), ptr(now.Add(-90*time.Second))),
		},
		"run-agent": {withNewest(runLook("run-agent", "SUCCEEDED", now.Add(-3*time.Hour), now.Add(-2*time.Hour), ptr(now.Add(-3*time.Hour))))},
	}}
	mock := recordThrough(t, upstream, "/agent/runs/run-held", "/agent/runs/run-moving", "/agent/runs/run-moving", "/agent/runs/run-agent")
	replay := httptest.NewServer(mock)
	t.Cleanup(replay.Close)
	get := func(path string) map[string]any {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, replay.URL+path, nil)
		req.Header.Set("Authorization", "Bearer any-key")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		var out map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		return out
	}
	check := func(when string, run map[string]any) {
		t.Helper()
		id := run["run_id"]
		if id == "run-agent" {
			assert.Equal(t, agent, run["executor"], "%s, %s: the executor as recorded", when, id)
			assert.Equal(t, false, run["is_run_type_cancellable"], "%s, %s: as recorded", when, id)
			return
		}
		assert.NotContains(t, run, "executor", "%s, %s: never shown by the server", when, id)
		assert.NotContains(t, run, "is_run_type_cancellable", "%s, %s: never shown by the server", when, id)
	}
	for _, advance := range []time.Duration{0, time.Hour} {
		_, err := mock.DefaultSession().Advance(advance)
		require.NoError(t, err)
		when := "after " + advance.String()
		for _, id := range []string{"run-held", "run-moving", "run-agent"} {
			check(when, get("/agent/runs/"+id))
		}
		runs := get("/agent/runs?limit=100")["runs"].([]any)
		require.Len(t, runs, 3)
		for _, r := range runs {
			check(when+", listed", r.(map[string]any))
		}
	}
	assert.Equal(t, "SUCCEEDED", get("/agent/runs/run-moving")["state"])
}
