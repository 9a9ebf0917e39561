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

// A recording of runs of both kinds, those that replay their timeline and
// those held as last seen, keeps the distances between all their times:
// a run created 0.11 s after another is listed 0.11 s after it on the
// replay, whichever kind each is, however long after the runs the
// recording is written. A run seen QUEUED only in its create's answer and
// ended in a later get was seen moving: it replays.
func TestARecordingKeepsTheDistancesBetweenReplayedAndHeldRuns(t *testing.T) {
	t0 := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	ptr := func(t time.Time) *time.Time { return &t }
	ms := time.Millisecond
	scripted := &scriptedRuns{looks: map[string][]map[string]any{
		"run-a": { // replayed: seen QUEUED, then ended
			runLook("run-a", "QUEUED", at(0), at(0), nil),
			runLook("run-a", "SUCCEEDED", at(0), at(5*time.Second), ptr(at(time.Second))),
		},
		// held: seen once, ended, 0.11 s after run-a
		"run-b": {runLook("run-b", "SUCCEEDED", at(110*ms), at(3*time.Second), ptr(at(time.Second)))},
		// created through the proxy (its answer says QUEUED), then seen ended: replayed
		"run-c": {runLook("run-c", "SUCCEEDED", at(2*time.Second), at(8*time.Second), ptr(at(3*time.Second)))},
		// held: still running when last seen
		"run-d": {runLook("run-d", "INPROGRESS", at(30*time.Second), at(31*time.Second), ptr(at(31*time.Second)))},
		"run-e": { // replayed, the last to begin: it enters QUEUED as the mock starts
			runLook("run-e", "QUEUED", at(40*time.Second), at(40*time.Second), nil),
			runLook("run-e", "SUCCEEDED", at(40*time.Second), at(50*time.Second), ptr(at(42*time.Second))),
		},
	}}
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/agent/runs" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"run_id":"run-c","task_id":"run-c","state":"QUEUED"}`))
			return
		}
		scripted.ServeHTTP(w, r)
	}))
	t.Cleanup(upstream.Close)
	dir, rec, p, proxied := recordingProxy(t, upstream.URL, nil)
	resp, err := http.Post(proxied.URL+"/agent/runs", "application/json", strings.NewReader(`{"prompt":"do run-c"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	for _, id := range []string{"run-a", "run-b", "run-c", "run-d", "run-e", "run-a", "run-e"} {
		resp, err := http.Get(proxied.URL + "/agent/runs/" + id)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, id)
	}
	require.NoError(t, p.Drain(context.Background()))
	sum, err := rec.Write()
	require.NoError(t, err)
	assert.Equal(t, 3, sum.(record.Summary).Replayed, "run-a, run-c (its create's answer a look) and run-e were seen moving to their end")
	assert.Equal(t, 5, sum.(record.Summary).Runs)

	set, err := fixtures.Load(os.DirFS(dir))
	require.NoError(t, err)
	mock, err := mockserver.New(mockserver.Options{Fixtures: set, ClockMode: mockserver.VirtualClock})
	require.NoError(t, err)
	replay := httptest.NewServer(mock)
	t.Cleanup(replay.Close)
	recorded := map[string]struct{ created, started, updated time.Duration }{
		"run-a": {0, time.Second, 5 * time.Second},
		"run-b": {110 * ms, time.Second, 3 * time.Second},
		"run-c": {2 * time.Second, 3 * time.Second, 8 * time.Second},
		"run-d": {30 * time.Second, 31 * time.Second, 31 * time.Second},
		"run-e": {40 * time.Second, 42 * time.Second, 50 * time.Second},
	}
	listed := func(when string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, replay.URL+"/agent/runs?limit=100&sort_by=created_at&sort_order=asc", nil)
		req.Header.Set("Authorization", "Bearer any-key")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var page struct {
			Runs []struct {
				RunID     string     `json:"run_id"`
				State     string     `json:"state"`
				CreatedAt time.Time  `json:"created_at"`
				StartedAt *time.Time `json:"started_at"`
				UpdatedAt time.Time  `json:"updated_at"`
			} `json:"runs"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&page))
		var order []string
		for _, r := range page.Runs {
			order = append(order, r.RunID)
		}
		require.Equal(t, []string{"run-a", "run-b", "run-c", "run-d", "run-e"}, order, "%s: listed in the order they were created", when)
		origin := page.Runs[0].CreatedAt // run-a's creation
		for _, r := range page.Runs {
			want := recorded[r.RunID]
			assert.InDelta(t, float64(want.created), float64(r.CreatedAt.Sub(origin)), float64(ms), "%s: %s created as long after run-a as recorded", when, r.RunID)
			if r.State == "SUCCEEDED" || r.RunID == "run-d" {
				require.NotNil(t, r.StartedAt, "%s: %s", when, r.RunID)
				assert.InDelta(t, float64(want.started), float64(r.StartedAt.Sub(origin)), float64(ms), "%s: %s started as recorded", when, r.RunID)
				assert.InDelta(t, float64(want.updated), float64(r.UpdatedAt.Sub(origin)), float64(ms), "%s: %s updated as recorded", when, r.RunID)
			}
		}
		states := map[string]string{}
		for _, r := range page.Runs {
			states[r.RunID] = r.State
		}
		assert.Equal(t, "INPROGRESS", states["run-d"], "%s: held as last seen", when)
	}
	listed("as the mock starts")
	_, err = mock.DefaultSession().Advance(time.Minute) // run-e replays to its end
	require.NoError(t, err)
	listed("after a minute")
}
