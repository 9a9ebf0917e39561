package steps_test

import (
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/features"
	"github.com/agentruns/agentruns/refserver"
	"github.com/agentruns/agentruns/runner"
	"github.com/agentruns/agentruns/suiteconfig"
)

// fakeClock is the reference server's time, moved by the suite's waits:
// runs move exactly as fast as the suite lets time pass, whatever the
// machine's load.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) wait(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return nil
}

// atCapacityServer is the reference server on a clock of the test's, whose
// team runs one run at once, already taken by runs created before the
// suite starts: the suite's first run waits in QUEUED behind them.
func atCapacityServer(t *testing.T, step time.Duration, before int) (base string, clock *fakeClock) {
	t.Helper()
	clock = &fakeClock{now: time.Now()}
	srv := httptest.NewServer(refserver.New(refserver.Options{Step: step, Capacity: 1, Clock: clock.Now}))
	t.Cleanup(srv.Close)
	base = srv.URL + "/api/v1"
	for range before {
		req, err := http.NewRequest(http.MethodPost, base+"/agent/run", strings.NewReader(`{"prompt":"A run of the team's own, ahead in the queue"}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer a-colleague")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	return base, clock
}

// Issue 46, point 3: a run the team's capacity keeps in QUEUED longer than
// --timeout is not late: the timeout counts from the moment it leaves
// QUEUED, and the wait is reported, not judged.
func TestARunQueuedBehindTheTeamsCapacityIsNotLate(t *testing.T) {
	const scenario = "A run moves only forward until it reaches a terminal state"
	data, err := fs.ReadFile(features.FS, "state_progression.feature")
	require.NoError(t, err)
	// Three runs of 40 s each ahead, one at a time: the suite's run waits
	// about two minutes in QUEUED, then takes 40 s; the timeout is 45 s.
	base, clock := atCapacityServer(t, 10*time.Second, 3)
	res, out := runSuite(t, base, func(c *suiteconfig.Config) {
		oneCaller(c)
		c.Features = fstest.MapFS{"state_progression.feature": {Data: data}}
		c.Tags, c.Concurrency, c.Timeout, c.PollInterval = "@slow", 1, 45*time.Second, time.Second
		c.LetTimePass = clock.wait
	})
	s, ok := res.Find(scenario)
	require.True(t, ok, out)
	assert.Equal(t, runner.Passed, s.Status, out)
	runs := res.Report.Runs
	assert.Greater(t, runs.QueuedBehindCapacity, 45*time.Second, "the wait behind capacity, reported")
	assert.Contains(t, runs.Cost(), "behind the team's capacity (not judged)")
}
