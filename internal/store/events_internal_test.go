package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEventsRefuseWithTheirErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(t *testing.T, st *Store, ms *Session) error
		want error
		kind Kind
	}{
		{name: "poll an unknown run", want: ErrRunNotFound, kind: NotFound,
			do: func(t *testing.T, st *Store, ms *Session) error {
				_, err := ms.Events(alice(st), EventQuery{RunIDs: []string{"nope"}, Limit: 5})
				return err
			}},
		{name: "poll another team's run", want: ErrOtherTeam, kind: Forbidden,
			do: func(t *testing.T, st *Store, ms *Session) error {
				_, err := ms.Events(carol(st), EventQuery{RunIDs: []string{fixtureRun(t, ms, "team-acme", Succeeded, "").ID}, Limit: 5})
				return err
			}},
		{name: "report an event that is none", want: ErrUnknownEvent, kind: Invalid,
			do: func(t *testing.T, st *Store, ms *Session) error {
				_, err := ms.Report(alice(st), create(t, ms, alice(st), "x").ID, ReportedEvent{Type: "run_exploded"})
				return err
			}},
		{name: "report a finished run in progress", want: ErrEventBackwards, kind: Invalid,
			do: func(t *testing.T, st *Store, ms *Session) error {
				_, err := ms.Report(alice(st), fixtureRun(t, ms, "team-acme", Succeeded, "").ID, ReportedEvent{Type: EventInProgress})
				return err
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newTestStore(t)
			failsWith(t, tc.do(t, st, open(t, st, "")), tc.want, tc.kind)
		})
	}
}

// TestEventsFollowTheClock: the log records each state a run enters, in
// order, once; a report moves the run and a repeated report is answered
// with the same sequence.
func TestEventsFollowTheClock(t *testing.T) {
	st := newTestStore(t)
	ms := open(t, st, "")
	r := create(t, ms, alice(st), "Fix the flaky login test")
	poll := func() []EventType {
		evs, err := ms.Events(alice(st), EventQuery{RunIDs: []string{r.ID}, Limit: 10})
		require.NoError(t, err)
		var out []EventType
		for _, e := range evs {
			out = append(out, e.Type)
		}
		return out
	}
	assert.Empty(t, poll())
	_, err := ms.Advance(4 * time.Second)
	require.NoError(t, err)
	assert.Equal(t, []EventType{EventInProgress}, poll())
	seq, err := ms.Report(alice(st), r.ID, ReportedEvent{Type: EventBlocked, ExecutionID: "exec-1"})
	require.NoError(t, err)
	again, err := ms.Report(alice(st), r.ID, ReportedEvent{Type: EventBlocked})
	require.NoError(t, err)
	assert.Equal(t, seq, again, "a repeated report is the same event")
	_, err = ms.Advance(time.Hour)
	require.NoError(t, err)
	assert.Equal(t, []EventType{EventInProgress, EventBlocked}, poll(), "a blocked run waits")
	_, err = ms.Report(alice(st), r.ID, ReportedEvent{Type: EventFailed})
	require.NoError(t, err)
	assert.Equal(t, []EventType{EventInProgress, EventBlocked, EventFailed}, poll())
	log := ms.EventLog()
	for i, e := range log {
		assert.Equal(t, int64(i+1), e.Seq, "the log is numbered in order")
	}
}
