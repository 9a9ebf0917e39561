package record_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/proxy/record"
)

// scriptedRuns is an upstream that shows each run as its script says, one
// look per request: the looks a client polling a real server would get.
type scriptedRuns struct {
	mu    sync.Mutex
	looks map[string][]map[string]any
}

func (s *scriptedRuns) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := strings.TrimPrefix(r.URL.Path, "/agent/runs/")
	looks := s.looks[id]
	if len(looks) == 0 {
		http.NotFound(w, r)
		return
	}
	look := looks[0]
	if len(looks) > 1 {
		s.looks[id] = looks[1:]
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(look)
}

// look is a run as the upstream shows it at one moment.
func runLook(id, state string, created, updated time.Time, started *time.Time) map[string]any {
	run := map[string]any{
		"run_id": id, "task_id": id, "title": "Run " + id, "prompt": "do " + id, "state": state, "source": "API",
		"created_at": created.Format(time.RFC3339Nano), "updated_at": updated.Format(time.RFC3339Nano),
		"creator": map[string]any{"type": "user", "uid": "user-1", "display_name": "Ann"},
	}
	if started != nil {
		run["started_at"] = started.Format(time.RFC3339Nano)
	}
	if state == "FAILED" {
		run["status_message"] = map[string]any{"message": "out of credits", "error_code": "insufficient_credits"}
	}
	return run
}

// A recording of runs created a minute apart, each polled from QUEUED to
// its end, replays them with their times as recorded relative to each
// other: created a minute apart in the same order, started as long after
// creation as they were (1.5 s, not a share of the gap between two looks),
// ending as long after.
func TestARecordingReplaysItsRunsAtTheirTimes(t *testing.T) {
	t0 := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	ptr := func(t time.Time) *time.Time { return &t }
	upstream := &scriptedRuns{looks: map[string][]map[string]any{
		"run-a": {
			runLook("run-a", "QUEUED", at(0), at(0), nil),
			runLook("run-a", "SUCCEEDED", at(0), at(5*time.Second), ptr(at(1500*time.Millisecond))),
		},
		"run-b": {
			runLook("run-b", "QUEUED", at(time.Minute), at(time.Minute), nil),
			runLook("run-b", "FAILED", at(time.Minute), at(time.Minute+4*time.Second), ptr(at(time.Minute+2*time.Second))),
		},
	}}
	srv := httptest.NewServer(upstream)
	t.Cleanup(srv.Close)
	dir, rec, p, proxied := recordingProxy(t, srv.URL, nil)
	for _, id := range []string{"run-a", "run-b", "run-a", "run-b"} {
		resp, err := http.Get(proxied.URL + "/agent/runs/" + id)
		require.NoError(t, err)
		resp.Body.Close()
	}
	require.NoError(t, p.Drain(context.Background())) // the proxy checks off the request's path
	sum, err := rec.Write()
	require.NoError(t, err)
	require.Equal(t, 2, sum.(record.Summary).Replayed, "both runs were seen moving to their end")

	set, err := fixtures.Load(os.DirFS(dir))
	require.NoError(t, err)
	mock, err := mockserver.New(mockserver.Options{Fixtures: set, ClockMode: mockserver.VirtualClock})
	require.NoError(t, err)
	show := func(id string) (state string, created, started, updated time.Time) {
		req, _ := http.NewRequest(http.MethodGet, "http://mock/agent/runs/"+id, nil)
		req.Header.Set("Authorization", "Bearer any-key")
		resp, err := mock.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var run struct {
			State                           string
			CreatedAt, StartedAt, UpdatedAt time.Time
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&struct {
			State     *string    `json:"state"`
			CreatedAt *time.Time `json:"created_at"`
			StartedAt *time.Time `json:"started_at"`
			UpdatedAt *time.Time `json:"updated_at"`
		}{&run.State, &run.CreatedAt, &run.StartedAt, &run.UpdatedAt}))
		return run.State, run.CreatedAt, run.StartedAt, run.UpdatedAt
	}
	// At load the later run enters the state it was first seen in; the
	// earlier one, created a minute before, ended as long ago as it did.
	stateB, createdB, _, _ := show("run-b")
	assert.Equal(t, "QUEUED", stateB)
	stateA, createdA, startedA, updatedA := show("run-a")
	assert.Equal(t, "SUCCEEDED", stateA)
	assert.InDelta(t, float64(time.Minute), float64(createdB.Sub(createdA)), float64(time.Millisecond), "created a minute apart, in order")
	assert.InDelta(t, float64(1500*time.Millisecond), float64(startedA.Sub(createdA)), float64(time.Millisecond), "started when it was")
	assert.InDelta(t, float64(5*time.Second), float64(updatedA.Sub(createdA)), float64(time.Millisecond), "ended when it did")

	_, err = mock.DefaultSession().Advance(10 * time.Second)
	require.NoError(t, err)
	stateB, createdB2, startedB, updatedB := show("run-b")
	assert.Equal(t, "FAILED", stateB)
	assert.Equal(t, createdB, createdB2)
	// The mock shows milliseconds of an instant kept finer.
	assert.InDelta(t, float64(2*time.Second), float64(startedB.Sub(createdB)), float64(time.Millisecond), "started when it was")
	assert.InDelta(t, float64(4*time.Second), float64(updatedB.Sub(createdB)), float64(time.Millisecond), "ended when it did")
}
