package mockserver_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The first day of a client team with the mock: it starts where they are.

// clockNow reads a mock session's clock over HTTP.
func clockNow(t *testing.T, c *client) time.Time {
	t.Helper()
	var clk mockserver.ClockInfo
	c.do("GET", "/__mock/clock", nil).json(t, &clk)
	now, err := time.Parse(time.RFC3339Nano, clk.Now)
	require.NoError(t, err)
	return now
}

// A new mock session and a reset start at the wall time of that moment, not
// at the moment the mock started: after 29 minutes of uptime a new session
// is not 29 minutes behind, and created_after=now-10s finds a run just made.
func TestNewSessionsAndResetsStartAtTheWallTime(t *testing.T) {
	for _, mode := range []mockserver.ClockMode{mockserver.RealClock, mockserver.VirtualClock} {
		t.Run(string(mode), func(t *testing.T) {
			wall := &fakeWall{now: clockStart}
			c := serve(t, newServer(t, mockserver.Options{ClockMode: mode, Wall: wall.Now}))
			assert.Equal(t, clockStart, clockNow(t, c))
			wall.Add(29 * time.Minute)
			later := clockStart.Add(29 * time.Minute)

			fresh := c.in("opened-later")
			require.Equal(t, later, clockNow(t, fresh), "a new session starts now")
			id := fresh.create(map[string]any{"prompt": "just made"}).RunID
			recent := fresh.list("created_after=" + url.QueryEscape(later.Add(-10*time.Second).Format(time.RFC3339)))
			assert.Contains(t, ids(recent.Runs), id)
			// Fixture times are relative to the session's start.
			for _, r := range fresh.list("limit=100").Runs {
				created, err := time.Parse(time.RFC3339Nano, r.CreatedAt)
				require.NoError(t, err)
				assert.False(t, created.After(later), "fixture run %s is not in the future", r.RunID)
			}

			wall.Add(3 * 24 * time.Hour)
			c.do("POST", "/__mock/reset", nil)
			assert.Equal(t, later.Add(3*24*time.Hour), clockNow(t, c), "a reset starts now, days later")
		})
	}
}

// A given virtual start instant is kept: sessions and resets go back to it.
func TestAGivenStartInstantIsWhereEverySessionStarts(t *testing.T) {
	wall := &fakeWall{now: clockStart.Add(48 * time.Hour)}
	c := serve(t, newServer(t, mockserver.Options{ClockMode: mockserver.VirtualClock, ClockStart: clockStart, Wall: wall.Now}))
	c.advance(time.Hour)
	wall.Add(time.Hour)
	assert.Equal(t, clockStart, clockNow(t, c.in("other")))
	c.do("POST", "/__mock/reset", nil)
	assert.Equal(t, clockStart, clockNow(t, c))
}
