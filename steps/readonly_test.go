package steps_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/refserver"
	"github.com/agentruns/agentruns/runner"
	"github.com/agentruns/agentruns/suiteconfig"
)

// requestLog records every request a server receives, as "METHOD /path".
type requestLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *requestLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.seen = append(l.seen, r.Method+" "+r.URL.Path)
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// changing lists the requests received with a method other than GET and
// HEAD, each once.
func (l *requestLog) changing() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.seen {
		if !strings.HasPrefix(r, "GET ") && !strings.HasPrefix(r, "HEAD ") && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// Issue 34, point 3: a read-only run of the whole suite sends nothing but
// GET and HEAD, to the reference server as to the mock (whose control API
// it leaves alone), and passes.
func TestAReadOnlyRunSendsOnlyGetAndHead(t *testing.T) {
	for _, tc := range []struct {
		name  string
		serve func(*requestLog) string
		tune  func(*suiteconfig.Config)
	}{
		{"reference server", func(l *requestLog) string {
			srv := httptest.NewServer(l.wrap(refserver.New(refserver.Options{})))
			t.Cleanup(srv.Close)
			return srv.URL + "/api/v1"
		}, func(c *suiteconfig.Config) { oneCaller(c); runFeaturesOnly(c) }},
		{"mock with its control API", func(l *requestLog) string {
			return newMock(t, mockserver.Options{}, l.wrap).URL
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var log requestLog
			res, out := runSuite(t, tc.serve(&log), func(c *suiteconfig.Config) {
				if tc.tune != nil {
					tc.tune(c)
				}
				c.ReadOnly = true
			})
			assert.Empty(t, log.changing(), "a read-only run sent these")
			assertAllPassed(t, res, out)
			passed, _, _ := res.Count()
			assert.Greater(t, passed, 10)
			for _, s := range res.Scenarios {
				assert.False(t, hasAnyTag(s.Tags, "@creates-runs", "@writes"), "%s ran in a read-only run", s.Name)
			}
		})
	}
}

// A scenario that would write without saying so (no @creates-runs, no
// @writes) cannot slip its request through a read-only run: the suite's
// client refuses it, naming the scenario, and the server hears nothing.
func TestAReadOnlyRunRefusesAnUntaggedWrite(t *testing.T) {
	var log requestLog
	srv := httptest.NewServer(log.wrap(refserver.New(refserver.Options{})))
	t.Cleanup(srv.Close)
	res, out := runSuite(t, srv.URL+"/api/v1", func(c *suiteconfig.Config) {
		oneCaller(c)
		c.ReadOnly = true
		c.Features = fstest.MapFS{"sneaky.feature": {Data: []byte(`Feature: Sneaky
  Scenario: An identity is made without a tag that says so
    When I create an identity named "Sneaky {label}"
    Then the identity is created, available, with the name "Sneaky {label}"
`)}}
	})
	assert.Empty(t, log.changing(), "the untagged write reached the server")
	s, ok := res.Find("An identity is made without a tag that says so")
	require.True(t, ok, out)
	assert.Equal(t, runner.Failed, s.Status, out)
	assert.Contains(t, s.Message, `read-only: scenario "An identity is made without a tag that says so" tried to send POST /api/v1/agent/identities`)
}

// Issue 34, point 3: what a scenario created is undone when it fails
// midway, on a server without the mock's control API: its identity and
// its schedule are deleted, its run (which would wait an hour for a
// worker) is cancelled.
func TestAScenarioThatFailsMidwayUndoesWhatItCreated(t *testing.T) {
	ref := refserver.New(refserver.Options{Step: time.Hour})
	var mu sync.Mutex
	var runIDs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/v1/agent/run" {
			ref.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		ref.ServeHTTP(rec, r)
		var made struct {
			RunID string `json:"run_id"`
		}
		if json.Unmarshal(rec.Body.Bytes(), &made) == nil && made.RunID != "" {
			mu.Lock()
			runIDs = append(runIDs, made.RunID)
			mu.Unlock()
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(srv.Close)
	base := srv.URL + "/api/v1"

	res, out := runSuite(t, base, func(c *suiteconfig.Config) {
		oneCaller(c)
		c.Features = fstest.MapFS{"midway.feature": {Data: []byte(`Feature: Failing midway
  Scenario: Things are made, then a step fails
    When I create an identity named "Left behind {label}"
    And I create a schedule "nightly" with the cron "0 3 * * *"
    And I create a run with the prompt "Left running"
    Then the identity is now named "Something else"
`)}}
	})
	s, ok := res.Find("Things are made, then a step fails")
	require.True(t, ok, out)
	require.Equal(t, runner.Failed, s.Status, "the scenario was meant to fail midway\n%s", out)

	get := func(path string) []byte {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("Authorization", "Bearer wk-mock-alice")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(resp.Body)
		return buf.Bytes()
	}
	assert.NotContains(t, string(get("/agent/identities")), "Left behind", "the identity was left on the server")
	assert.NotContains(t, string(get("/agent/schedules")), "nightly", "the schedule was left on the server")
	require.Len(t, runIDs, 1)
	var run struct {
		State string `json:"state"`
	}
	require.NoError(t, json.Unmarshal(get("/agent/runs/"+runIDs[0]), &run))
	assert.Equal(t, "CANCELLED", run.State, "the run was left running")
}
