package steps_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/runner"
	"github.com/agentruns/agentruns/suiteconfig"
)

// Issue 47, point 7: with --wait-for-ticks and --timeout 1m, a replaced or
// paused schedule's tick two or three minutes away is waited for: the
// ticks' patience follows the tick, and the scenarios end passed, not
// inconclusive. The mock's control API is hidden, so the suite polls it as
// a real server; its clock is virtual, moved by the time the suite lets
// pass, so that nothing hangs on the machine's load. (With the patience
// --timeout alone, as before, both scenarios end inconclusive here.)
func TestTheTicksPatienceFollowsTheTick(t *testing.T) {
	m, err := mockserver.New(mockserver.Options{ClockMode: mockserver.VirtualClock, Step: 20 * time.Millisecond})
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/__mock") {
			http.NotFound(w, r)
			return
		}
		m.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	clock := m.DefaultSession()
	res, out := runSuite(t, srv.URL, func(c *suiteconfig.Config) {
		c.Features = someFeatures(t, "schedules.feature")
		c.Tags, c.Concurrency = "@schedule-ticks", 1
		c.WaitForTicks, c.Timeout, c.PollInterval = true, time.Minute, 5*time.Second
		c.LetTimePass = func(_ context.Context, d time.Duration) error {
			_, err := clock.Advance(d)
			return err
		}
	})
	require.Len(t, res.Scenarios, 2, out)
	for _, s := range res.Scenarios {
		assert.Equal(t, runner.Passed, s.Status, "%s: %s\n%s", s.Name, s.Message, out)
	}
}
