package mockserver_test

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func (c *client) events(query string) []mockserver.RunEvent {
	c.t.Helper()
	r := c.do("GET", "/agent/events?"+query, nil)
	require.Equal(c.t, http.StatusOK, r.status, "events %s: %s", query, r.body)
	var out []mockserver.RunEvent
	r.json(c.t, &out)
	return out
}

func (c *client) report(runID string, body any) response {
	c.t.Helper()
	return c.do("POST", "/agent/events/"+runID, body)
}

func types(evs []mockserver.RunEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.EventType
	}
	return out
}

// Events follow a run's timeline as the clock moves: none while it waits,
// run_in_progress when it starts, its end when it ends; each with the
// moment its state began, numbered in order and the same at every poll.
func TestEventsFollowTheRunAsTheClockMoves(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: 10 * time.Second})
	id := c.create(map[string]any{"prompt": "Fix the build"}).RunID
	q := "run_ids=" + id
	assert.Empty(t, c.events(q), "a queued run has no events yet")
	c.advance(29 * time.Second)
	assert.Empty(t, c.events(q), "nor a claimed one")
	c.advance(time.Second)
	first := c.events(q)
	require.Equal(t, []string{"run_in_progress"}, types(first))
	run := c.get(id)
	assert.Equal(t, *run.StartedAt, first[0].OccurredAt, "occurred_at is when the run began its work")
	assert.Nil(t, first[0].RefID)
	c.advance(time.Hour)
	all := c.events(q)
	require.Equal(t, []string{"run_in_progress", "run_succeeded"}, types(all))
	assert.Equal(t, first[0], all[0], "an event is the same at every poll")
	assert.Equal(t, c.get(id).UpdatedAt, all[1].OccurredAt)
	assert.Greater(t, all[1].Sequence, all[0].Sequence)
	assert.Equal(t, all[1:], c.events(q+"&since="+itoa(all[0].Sequence)), "since skips what was seen")
	assert.Empty(t, c.events(q+"&since="+itoa(all[1].Sequence)))
	assert.Equal(t, all[:1], c.events(q+"&limit=1"))
}

// Every way a run ends has its event; a poll names its runs and sees only those.
func TestEventsOfEveryEnding(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: 10 * time.Second})
	failed := c.create(map[string]any{"prompt": "a"}, mockserver.FateHeader, "state=FAILED").RunID
	errored := c.create(map[string]any{"prompt": "b"}, mockserver.FateHeader, "state=ERROR").RunID
	cancelled := c.create(map[string]any{"prompt": "c"}).RunID
	blocked := c.create(map[string]any{"prompt": "d"}).RunID
	require.Equal(t, http.StatusOK, c.do("POST", "/agent/runs/"+cancelled+"/cancel", nil).status)
	r := c.do("POST", "/__mock/runs/"+blocked+"/state", map[string]any{"state": "BLOCKED"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	c.advance(time.Minute)
	for id, want := range map[string][]string{
		failed:    {"run_in_progress", "run_failed"},
		errored:   {"run_in_progress", "run_errored"},
		cancelled: {"run_cancelled"},
		blocked:   {"run_blocked"},
	} {
		assert.Equal(t, want, types(c.events("run_ids="+id)), id)
	}
	both := c.events(url.Values{"run_ids": {failed, cancelled}}.Encode())
	require.Len(t, both, 3)
	for i := 1; i < len(both); i++ {
		assert.Greater(t, both[i].Sequence, both[i-1].Sequence, "oldest first")
		assert.GreaterOrEqual(t, both[i].OccurredAt, both[i-1].OccurredAt)
	}
}

// A reported event moves its run forward and answers its sequence; the
// same report again is harmless; a report that would move the run back is
// a 400 that changes nothing.
func TestReportedEventsMoveRunsForwardOnly(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: time.Hour})
	id := c.create(map[string]any{"prompt": "Fix the build"}).RunID
	r := c.report(id, map[string]string{"event_type": "run_in_progress", "execution_id": "exec-1"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var got mockserver.ReportEventResponse
	r.json(t, &got)
	assert.Equal(t, mockserver.InProgress, c.get(id).State)
	evs := c.events("run_ids=" + id)
	require.Len(t, evs, 1)
	assert.Equal(t, got.Sequence, evs[0].Sequence)
	require.NotNil(t, evs[0].ExecutionID)
	assert.Equal(t, "exec-1", *evs[0].ExecutionID)

	var again mockserver.ReportEventResponse
	c.report(id, map[string]string{"event_type": "run_in_progress"}).json(t, &again)
	assert.Equal(t, got, again, "reporting the state the run is in answers the event that recorded it")

	r = c.report(id, map[string]string{"event_type": "run_blocked", "ref_id": "question-1"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, mockserver.Blocked, c.get(id).State)
	r = c.report(id, map[string]string{"event_type": "run_in_progress"})
	require.Equal(t, http.StatusOK, r.status, "BLOCKED goes back to INPROGRESS when answered: %s", r.body)
	r = c.report(id, map[string]string{"event_type": "run_failed"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	run := c.get(id)
	assert.Equal(t, mockserver.Failed, run.State)
	require.NotNil(t, run.StatusMessage)
	assert.NotEmpty(t, run.StatusMessage.ErrorCode)

	for _, back := range []string{"run_in_progress", "run_succeeded", "run_blocked", "run_cancelled"} {
		r = c.report(id, map[string]string{"event_type": back})
		p := r.problem(t)
		assert.Equal(t, http.StatusBadRequest, p.Status, back)
		assert.Contains(t, p.Detail, "event_type", back)
	}
	assert.Equal(t, mockserver.Failed, c.get(id).State)
	assert.Equal(t, []string{"run_in_progress", "run_blocked", "run_in_progress", "run_failed"}, types(c.events("run_ids="+id)))
}

func TestEventsBadRequestsAndVisibility(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	id := c.create(map[string]any{"prompt": "mine"}).RunID
	for query, field := range map[string]string{
		"":                                  "run_ids",
		"run_ids=" + id + "&limit=0":        "limit",
		"run_ids=" + id + "&limit=501":      "limit",
		"run_ids=" + id + "&since=-1":       "since",
		"run_ids=" + id + "&since=abc":      "since",
		"run_ids=" + url.QueryEscape("a/b"): "run_ids",
	} {
		p := c.do("GET", "/agent/events?"+query, nil).problem(t)
		assert.Equal(t, http.StatusBadRequest, p.Status, query)
		assert.Contains(t, p.Detail, field, query)
	}
	for body, field := range map[string]string{
		`{}`:                             "event_type",
		`{"event_type": "run_exploded"}`: "event_type",
		`{"event_type": 3}`:              "event_type",
		`[]`:                             "",
	} {
		p := c.do("POST", "/agent/events/"+id, body).problem(t)
		assert.Equal(t, http.StatusBadRequest, p.Status, body)
		assert.Contains(t, p.Detail, field, body)
	}
	assert.Equal(t, http.StatusBadRequest, c.do("POST", "/agent/events/"+id, "").problem(t).Status)

	assert.Equal(t, http.StatusNotFound, c.do("GET", "/agent/events?run_ids=no-such-run", nil).problem(t).Status)
	assert.Equal(t, http.StatusNotFound, c.report("no-such-run", map[string]string{"event_type": "run_succeeded"}).problem(t).Status)
	carol := c.as("wk-mock-carol")
	assert.Equal(t, http.StatusForbidden, carol.do("GET", "/agent/events?run_ids="+id, nil).problem(t).Status)
	assert.Equal(t, http.StatusForbidden, carol.report(id, map[string]string{"event_type": "run_succeeded"}).problem(t).Status)
	assert.Equal(t, http.StatusUnauthorized, c.as("").do("GET", "/agent/events?run_ids="+id, nil).problem(t).Status)
	assert.Equal(t, http.StatusUnauthorized, c.as("").report(id, map[string]string{"event_type": "run_succeeded"}).problem(t).Status)

	// Isolated per mock session, and gone after a reset.
	other := c.in("job-x")
	assert.Equal(t, http.StatusNotFound, other.do("GET", "/agent/events?run_ids="+id, nil).problem(t).Status)
	require.Equal(t, http.StatusOK, c.report(id, map[string]string{"event_type": "run_cancelled"}).status)
	require.Equal(t, http.StatusOK, c.do("POST", "/__mock/reset", nil).status)
	assert.Equal(t, http.StatusNotFound, c.do("GET", "/agent/events?run_ids="+id, nil).problem(t).Status)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// The Go API sees the same log as pollers.
func TestSessionEventsIsThePolledLog(t *testing.T) {
	s := newServer(t, mockserver.Options{Step: time.Second})
	c := serve(t, s)
	id := c.create(map[string]any{"prompt": "x"}).RunID
	_, err := s.DefaultSession().Advance(time.Minute)
	require.NoError(t, err)
	polled := c.events("run_ids=" + id)
	var mine []mockserver.RunEvent
	for _, e := range s.DefaultSession().Events() {
		if e.RunID == id {
			mine = append(mine, e)
		}
	}
	assert.Equal(t, polled, mine)
}
