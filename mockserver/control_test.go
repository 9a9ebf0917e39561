package mockserver_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestControlClock(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	var info mockserver.Info
	c.do("GET", "/__mock/info", nil).json(t, &info)
	assert.Equal(t, "agentruns", info.Mock)
	assert.Equal(t, mockserver.VirtualClock, info.Clock.Mode)
	assert.Equal(t, "2026-03-01T12:00:00.000Z", info.Clock.Now)

	var clock mockserver.ClockInfo
	c.do("POST", "/__mock/clock/advance", map[string]string{"by": "90m"}).json(t, &clock)
	assert.Equal(t, "2026-03-01T13:30:00.000Z", clock.Now)
	c.do("PUT", "/__mock/clock", map[string]string{"now": "2026-03-02T00:00:00Z"}).json(t, &clock)
	assert.Equal(t, "2026-03-02T00:00:00.000Z", clock.Now)

	r := c.do("PUT", "/__mock/clock", map[string]string{"now": "2026-03-01T00:00:00Z"})
	assert.Equal(t, http.StatusConflict, r.status, "the clock never goes back")
	assert.Equal(t, http.StatusBadRequest, c.do("POST", "/__mock/clock/advance", map[string]string{"by": "-1m"}).status)
	assert.Equal(t, http.StatusBadRequest, c.do("POST", "/__mock/clock/advance", map[string]string{"bye": "1m"}).status, "misspelt fields are errors")
	assert.Equal(t, http.StatusBadRequest, c.do("PUT", "/__mock/clock", map[string]string{"mode": "sundial"}).status)

	c.do("PUT", "/__mock/clock", map[string]string{"mode": "real"}).json(t, &clock)
	assert.Equal(t, mockserver.RealClock, clock.Mode)
	assert.Equal(t, "2026-03-02T00:00:00.000Z"[:16], clock.Now[:16], "switching modes does not jump")

	require.Equal(t, http.StatusOK, c.do("POST", "/__mock/reset", nil).status)
	c.do("GET", "/__mock/clock", nil).json(t, &clock)
	assert.Equal(t, "2026-03-01T12:00:00.000Z", clock.Now)
	assert.Equal(t, http.StatusNotFound, c.do("GET", "/__mock/nothing", nil).status)
}

func TestControlForcesStatesOnlyForward(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	id := c.create(map[string]any{"prompt": "x"}).RunID
	r := c.do("POST", "/__mock/runs/"+id+"/state", map[string]any{"state": "INPROGRESS"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	run := c.get(id)
	assert.Equal(t, mockserver.InProgress, run.State)
	assert.NotNil(t, run.StartedAt)
	assert.NotEmpty(t, run.SessionLink)

	r = c.do("POST", "/__mock/runs/"+id+"/state", map[string]any{"state": "QUEUED"})
	assert.Equal(t, http.StatusConflict, r.status, "backwards is refused")

	r = c.do("POST", "/__mock/runs/"+id+"/state", map[string]any{"state": "FAILED", "error_code": "budget_exceeded", "message": "Over budget"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	run = c.get(id)
	assert.Equal(t, mockserver.Failed, run.State)
	assert.Equal(t, "budget_exceeded", run.StatusMessage.ErrorCode)
	assert.Equal(t, "Over budget", run.StatusMessage.Message)
	assert.Equal(t, http.StatusConflict, c.do("POST", "/__mock/runs/"+id+"/state", map[string]any{"state": "SUCCEEDED"}).status, "terminal states never change")
	c.advance(24 * time.Hour)
	assert.Equal(t, mockserver.Failed, c.get(id).State)

	assert.Equal(t, http.StatusNotFound, c.do("POST", "/__mock/runs/nope/state", map[string]any{"state": "FAILED"}).status)
	assert.Equal(t, http.StatusBadRequest, c.do("POST", "/__mock/runs/"+id+"/state", map[string]any{"state": "DONE"}).status)
}

func TestSessionsAreIsolated(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	a, b := c.in("job-a"), c.in("job-b")
	id := a.create(map[string]any{"prompt": "only in a"}).RunID
	assert.Equal(t, http.StatusNotFound, b.do("GET", "/agent/runs/"+id, nil).status)
	assert.Equal(t, http.StatusNotFound, c.do("GET", "/agent/runs/"+id, nil).status)
	a.advance(time.Hour)
	var ca, cb mockserver.ClockInfo
	a.do("GET", "/__mock/clock", nil).json(t, &ca)
	b.do("GET", "/__mock/clock", nil).json(t, &cb)
	assert.NotEqual(t, ca.Now, cb.Now, "each session has its own clock")
	assert.Equal(t, len(c.list("limit=500").Runs), len(b.list("limit=500").Runs), "a new session starts from the fixtures")
	assert.Equal(t, mockserver.Succeeded, a.get(id).State)
}

func TestControlTokenAndDisabledControl(t *testing.T) {
	c := newMock(t, mockserver.Options{ControlToken: "s3cret"})
	assert.Equal(t, http.StatusUnauthorized, c.do("GET", "/__mock/info", nil).status)
	assert.Equal(t, http.StatusOK, c.as("s3cret").do("GET", "/__mock/info", nil).status)
	off := newMock(t, mockserver.Options{DisableControl: true})
	assert.Equal(t, http.StatusNotFound, off.do("GET", "/__mock/info", nil).status)
	assert.Equal(t, http.StatusOK, off.do("GET", "/agent/runs", nil).status)
}

func TestSessionFateRulesDecideNewRuns(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: time.Minute})
	r := c.do("POST", "/__mock/fates", map[string]any{"prompt_pattern": "(?i)deploy", "state": "ERROR", "error_code": "environment_setup_failed"})
	require.Equal(t, http.StatusBadRequest, r.status, "a failed setup is the caller's side: FAILED, never ERROR: %s", r.body)
	assert.Contains(t, r.problem(t).Detail, "environment_setup_failed ends a run in FAILED")
	r = c.do("POST", "/__mock/fates", map[string]any{"prompt_pattern": "(?i)deploy", "state": "FAILED", "error_code": "environment_setup_failed", "step": "1s", "times": 1})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	first := c.create(map[string]any{"prompt": "Deploy the app"}).RunID
	second := c.create(map[string]any{"prompt": "Deploy again"}).RunID
	other := c.create(map[string]any{"prompt": "Write docs"}).RunID
	header := c.create(map[string]any{"prompt": "x"}, mockserver.FateHeader, "state=FAILED; step=1s").RunID
	c.advance(5 * time.Second)
	run := c.get(first)
	assert.Equal(t, mockserver.Failed, run.State)
	assert.Equal(t, "environment_setup_failed", run.StatusMessage.ErrorCode)
	assert.Equal(t, mockserver.Queued, c.get(second).State, "the rule was for one run only")
	assert.Equal(t, mockserver.Queued, c.get(other).State)
	assert.Equal(t, mockserver.Failed, c.get(header).State)

	var rules []mockserver.FateRule
	c.do("GET", "/__mock/fates", nil).json(t, &rules)
	require.Len(t, rules, 1)
	assert.Equal(t, 1, rules[0].Used)
	assert.Equal(t, http.StatusBadRequest, c.do("POST", "/__mock/fates", map[string]any{"state": "DONE"}).status)
	assert.Equal(t, http.StatusBadRequest, c.do("POST", "/__mock/fates", map[string]any{"prompt_pattern": "("}).status)
	c.do("DELETE", "/__mock/fates", nil).json(t, &rules)
	assert.Empty(t, rules)
}

func TestSessionsCanBeClosedAndTheOldestMakesRoom(t *testing.T) {
	c := newMock(t, mockserver.Options{MaxSessions: 2})
	a := c.in("a").create(map[string]any{"prompt": "in a"}).RunID
	b := c.in("b").create(map[string]any{"prompt": "in b"}).RunID
	c.in("a").get(a) // a is now used more recently than b
	c.in("c").create(map[string]any{"prompt": "in c"})
	assert.Equal(t, http.StatusOK, c.in("a").do("GET", "/agent/runs/"+a, nil).status, "a was used recently and stays")
	assert.Equal(t, http.StatusNotFound, c.in("b").do("GET", "/agent/runs/"+b, nil).status, "the least recently used session, b, made room")

	require.Equal(t, http.StatusOK, c.in("a").do("DELETE", "/__mock/session", nil).status)
	assert.Equal(t, http.StatusNotFound, c.in("a").do("GET", "/agent/runs/"+a, nil).status, "a closed session starts again from the fixtures")
}
