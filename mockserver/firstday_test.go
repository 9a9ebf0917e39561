package mockserver_test

import (
	"bytes"
	"net/url"
	"os"
	"strings"
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

// The control API's 409s are conflicts (not invalid requests), and say that
// retrying will not help.
func TestControlConflictsAreTypedConflict(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	for _, r := range []response{
		c.do("PUT", "/__mock/clock", map[string]any{"now": clockStart.Add(-time.Hour).Format(time.RFC3339)}),
		func() response {
			id := c.create(map[string]any{"prompt": "x"}).RunID
			c.do("POST", "/__mock/runs/"+id+"/state", map[string]any{"state": "SUCCEEDED"})
			return c.do("POST", "/__mock/runs/"+id+"/state", map[string]any{"state": "QUEUED"})
		}(),
	} {
		require.Equal(t, 409, r.status, "%s", r.body)
		p := r.problem(t)
		assert.Equal(t, mockserver.ProblemTypeBase+"conflict", p.Type)
		assert.False(t, p.Retryable)
	}
}

// BLOCKED (the agent waits for a person) can be forced, like every state.
func TestBlockedCanBeForced(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	id := c.create(map[string]any{"prompt": "x"}).RunID
	r := c.do("POST", "/__mock/runs/"+id+"/state", map[string]any{"state": "BLOCKED", "message": "waiting for approval"})
	require.Equal(t, 200, r.status, "%s", r.body)
	run := c.get(id)
	assert.Equal(t, mockserver.State("BLOCKED"), run.State)
	require.NotNil(t, run.StatusMessage)
	assert.Equal(t, "waiting for approval", run.StatusMessage.Message)

	// And the control API's page says so, on the state route's line.
	doc, err := os.ReadFile("../docs/control-api.md")
	require.NoError(t, err)
	line := ""
	for _, l := range strings.Split(string(doc), "\n") {
		if strings.Contains(l, "POST /__mock/runs/{runId}/state") {
			line = l
		}
	}
	assert.Contains(t, line, "`BLOCKED`", "docs/control-api.md: the state route's line names BLOCKED")
}

// A fault rule's path may be written with the /api/v1 prefix; it then
// matches the path at both places the mock serves it.
func TestFaultRulePathWithVersionPrefixMatches(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	r := c.do("POST", "/__mock/faults", map[string]any{"path": "/api/v1/agent/runs", "method": "GET", "status": 503})
	require.Equal(t, 200, r.status, "%s", r.body)
	var rule mockserver.FaultRule
	r.json(t, &rule)
	assert.Equal(t, "/agent/runs", rule.Path)
	assert.Equal(t, 503, c.do("GET", "/api/v1/agent/runs", nil).status)
	assert.Equal(t, 503, c.do("GET", "/agent/runs", nil).status)
}

// A fate message may hold commas and semicolons, in double quotes.
func TestFateMessagesMayHoldCommas(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	id := c.create(map[string]any{"prompt": "x"}, mockserver.FateHeader,
		`state=FAILED, message="Disk full, on /dev/sda1; free \"some\" space", error_code=insufficient_credits`).RunID
	c.advance(time.Hour)
	run := c.get(id)
	assert.Equal(t, mockserver.Failed, run.State)
	require.NotNil(t, run.StatusMessage)
	assert.Equal(t, `Disk full, on /dev/sda1; free "some" space`, run.StatusMessage.Message)
	bad := c.do("POST", "/agent/runs", map[string]any{"prompt": "x"}, mockserver.FateHeader, `state=FAILED; message="not closed`)
	assert.Equal(t, 400, bad.status)
	assert.Contains(t, bad.problem(t).Detail, "closing quote")
}

// A cursor issued before the mock restarted is refused as such, not as one
// that was altered.
func TestCursorFromBeforeARestartSaysSo(t *testing.T) {
	before := newServer(t, mockserver.Options{})
	c := serve(t, before)
	cursor := c.list("limit=2").PageInfo.NextCursor
	require.NotEmpty(t, cursor)
	var save bytes.Buffer
	require.NoError(t, before.Save(&save))
	after := newServer(t, mockserver.Options{})
	require.NoError(t, after.Load(&save))
	r := serve(t, after).do("GET", "/agent/runs?limit=2&cursor="+url.QueryEscape(cursor), nil)
	require.Equal(t, 400, r.status, "%s", r.body)
	detail := r.problem(t).Detail
	assert.Contains(t, detail, "before the mock restarted")
	assert.NotContains(t, detail, "use page_info.next_cursor unchanged")
	// An altered cursor is still called that.
	r = c.do("GET", "/agent/runs?limit=2&cursor="+url.QueryEscape(cursor[:len(cursor)-2]+"xx"), nil)
	assert.Contains(t, r.problem(t).Detail, "unchanged")
}
