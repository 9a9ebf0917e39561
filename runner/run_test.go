package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/report"
	"github.com/agentruns/agentruns/runner"
	"github.com/agentruns/agentruns/suiteconfig"
)

// createdRuns records the ids of the runs a server created, and calls
// onPoll once, at the first GET of one run.
type createdRuns struct {
	mu     sync.Mutex
	ids    []string
	onPoll func()
	once   sync.Once
}

func (c *createdRuns) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		if r.Method == http.MethodPost && (r.URL.Path == "/agent/run" || r.URL.Path == "/agent/runs") && rec.Code == http.StatusOK {
			var created struct {
				RunID string `json:"run_id"`
			}
			if json.Unmarshal(rec.Body.Bytes(), &created) == nil {
				c.mu.Lock()
				c.ids = append(c.ids, created.RunID)
				c.mu.Unlock()
			}
		}
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		// Only a poll of a run the suite created counts: before any
		// scenario the suite asks the newest client's operations of a run
		// the key already has (newest_surface.go).
		if r.Method == http.MethodGet && c.onPoll != nil && c.created(strings.TrimPrefix(r.URL.Path, "/agent/runs/")) {
			c.once.Do(c.onPoll)
		}
	})
}

// created tells whether id is of a run created through the wrapped server.
func (c *createdRuns) created(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.ids, id)
}

// states fetches the state of every recorded run.
func (c *createdRuns) states(t *testing.T, base string) map[string]string {
	t.Helper()
	// A copy: each GET below passes through wrap, which takes c.mu.
	c.mu.Lock()
	ids := slices.Clone(c.ids)
	c.mu.Unlock()
	out := map[string]string{}
	for _, id := range ids {
		req, err := http.NewRequest(http.MethodGet, base+"/agent/runs/"+id, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer wk-mock-alice")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var run struct {
			State string `json:"state"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&run))
		resp.Body.Close()
		out[id] = run.State
	}
	return out
}

// Issue 15, point 6: cancelling the run's context (Ctrl-C) cancels the runs
// the suite started and reports the scenarios as interrupted, not failed.
func TestAnInterruptCancelsTheRunsAndReportsInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	created := &createdRuns{onPoll: cancel}
	// Runs never move on their own: only a cancel ends them.
	srv := newMock(t, mockserver.Options{Step: time.Hour, DisableControl: true}, created.wrap)
	v, err := sharedValidator()
	require.NoError(t, err)
	var out bytes.Buffer
	res, err := runner.Run(ctx, suiteconfig.Config{
		BaseURL: srv.URL, APIKey: "wk-mock-alice", Validator: v,
		Tags: "@creates-runs and not @mock-control", Concurrency: 1,
		Format: "pretty", Output: &out, NoColors: true,
		PollInterval: 20 * time.Millisecond, Spacing: 20 * time.Millisecond,
	})
	require.ErrorIs(t, err, runner.ErrInterrupted, out.String())
	assert.Empty(t, res.Failed(), out.String())
	assert.NotEmpty(t, res.Interrupted())
	assert.False(t, res.Passed())
	for _, s := range res.Interrupted() {
		assert.Contains(t, s.Message, "interrupted", s.Name)
	}
	assert.Contains(t, out.String(), "interrupted: ")
	states := created.states(t, srv.URL)
	require.NotEmpty(t, states)
	for id, st := range states {
		assert.Equal(t, "CANCELLED", st, "run %s was left running", id)
	}
}

// Issue 15, point 4: a Cucumber tag expression selects the same scenarios
// as godog's older spelling of it, and only those.
func TestTagExpressionsSelectScenarios(t *testing.T) {
	srv := newMock(t, mockserver.Options{}, nil)
	names := func(tags string, readOnly bool) []string {
		res, out := runSuite(t, srv.URL, func(c *suiteconfig.Config) { c.Tags, c.ReadOnly = tags, readOnly })
		assertAllPassed(t, res, out)
		var n []string
		for _, s := range res.Scenarios {
			n = append(n, s.Name)
			assert.Contains(t, s.Tags, "@mock-control", s.Name)
			assert.NotContains(t, s.Tags, "@slow", s.Name)
		}
		return n
	}
	cucumber := names("@mock-control and not @slow", false)
	require.NotEmpty(t, cucumber)
	assert.ElementsMatch(t, cucumber, names("@mock-control && ~@slow", false))
	assert.ElementsMatch(t, cucumber, names("(@mock-control) and not (@slow)", false))

	_, err := runner.Run(context.Background(), suiteconfig.Config{BaseURL: srv.URL, APIKey: "k", Tags: "@mock-control or"})
	assert.ErrorContains(t, err, `tag expression "@mock-control or": ends where a tag was expected`)
}

// Issue 15, point 5: each scenario reaches the report whole, in one call,
// even at concurrency 8: the pretty output holds each scenario's block
// uninterrupted, and no Go source location.
func TestPrettyReportPrintsEachScenarioWhole(t *testing.T) {
	srv := newMock(t, mockserver.Options{}, nil)
	var out bytes.Buffer
	res, _ := runSuite(t, srv.URL, func(c *suiteconfig.Config) {
		c.Report = report.NewPretty(&out, report.Options{})
		c.Concurrency = 8
	})
	require.NotEmpty(t, res.Report.Scenarios)
	for _, sc := range res.Report.Scenarios {
		var one bytes.Buffer
		require.NoError(t, report.NewPretty(&one, report.Options{}).Scenario(sc))
		_, block, _ := strings.Cut(one.String(), "\n\n") // after the Feature line
		assert.Contains(t, out.String(), block, "scenario %q is not printed whole", sc.Name)
		assert.NotEmpty(t, sc.Feature)
		assert.Positive(t, sc.Line, sc.Name)
		for _, st := range sc.Steps {
			assert.NotEmpty(t, st.Keyword, "%s: %s", sc.Name, st.Text)
		}
	}
	assert.NotRegexp(t, `\.go:\d+`, out.String())
}
