package steps_test

import (
	"bytes"
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/features"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/runner"
	"github.com/agentruns/agentruns/suiteconfig"
)

// claimedShownAsQueued is a server whose runs move backwards: the mock, on a
// virtual clock, with 500 ms in each state, showing CLAIMED as QUEUED. Its
// control API is hidden, so the suite polls it as a real server; the
// returned wait moves the mock's clock by the time the suite lets pass, so
// that the run's pace against the poll interval is exact, whatever the
// machine's load.
func claimedShownAsQueued(t *testing.T) (url string, wait func(context.Context, time.Duration) error) {
	t.Helper()
	m, err := mockserver.New(mockserver.Options{ClockMode: mockserver.VirtualClock, Step: 500 * time.Millisecond})
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/__mock") {
			http.NotFound(w, r)
			return
		}
		rec := httptest.NewRecorder()
		m.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		body := bytes.ReplaceAll(rec.Body.Bytes(), []byte(`"state":"CLAIMED"`), []byte(`"state":"QUEUED"`))
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	clock := m.DefaultSession()
	return srv.URL, func(ctx context.Context, d time.Duration) error {
		_, err := clock.Advance(d)
		return err
	}
}

// Issue 34, point 6: at 500 ms a state, the default poll interval (2 s)
// looks before and after the run's stay in CLAIMED and misses it shown as
// QUEUED; an interval under the time a state lasts catches it. The
// scenarios of state_progression.feature that poll run one at a time.
func TestAFinePollIntervalCatchesARunMovingBackwards(t *testing.T) {
	const scenario = "A run moves only forward until it reaches a terminal state"
	data, err := fs.ReadFile(features.FS, "state_progression.feature")
	require.NoError(t, err)
	for _, tc := range []struct {
		interval time.Duration
		caught   bool
	}{
		{suiteconfig.DefaultPollInterval, false},
		{200 * time.Millisecond, true},
	} {
		t.Run(tc.interval.String(), func(t *testing.T) {
			t.Parallel()
			base, wait := claimedShownAsQueued(t)
			res, out := runSuite(t, base, func(c *suiteconfig.Config) {
				oneCaller(c)
				c.Features = fstest.MapFS{"state_progression.feature": {Data: data}}
				c.Tags, c.Concurrency, c.PollInterval = "@slow", 1, tc.interval
				c.LetTimePass = wait
			})
			s, ok := res.Find(scenario)
			require.True(t, ok, out)
			assert.Contains(t, res.Report.Mode, "a look at a run every "+tc.interval.String())
			if !tc.caught {
				assert.Equal(t, runner.Passed, s.Status, "at %s the suite was expected to look past CLAIMED\n%s", tc.interval, out)
				return
			}
			require.Equal(t, runner.Failed, s.Status, out)
			assert.Contains(t, s.Message, "QUEUED", out)
			assert.Regexp(t, `back`, s.Message, out)
		})
	}
}
