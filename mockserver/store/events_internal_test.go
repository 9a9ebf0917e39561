package store

import (
	"math/rand/v2"
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

// A catch-up looks only at the runs whose next event has come; the log
// must be what looking at every run each time gives. Two sessions take
// the same random creates, cancels, follow-ups, forced states, reports,
// polls and clock moves; before each step the second is made to look at
// all its runs, as a plain scan would.
func TestEventCatchUpEqualsScan(t *testing.T) {
	stFast, stScan := newTestStore(t), newTestStore(t)
	fast, scan := open(t, stFast, ""), open(t, stScan, "")
	lookAtAll := func() {
		scan.mu.Lock()
		scan.events.pending = append(scan.events.pending, scan.runs.list...)
		scan.mu.Unlock()
	}
	rng := rand.New(rand.NewPCG(23, 24))
	finals := []State{Succeeded, Succeeded, Failed, Errored}
	var fastIDs, scanIDs []string
	same := map[string]string{} // a run of scan's, by the id of fast's
	for step := 0; step < 1500; step++ {
		lookAtAll()
		k, pick := rng.IntN(12), rng.IntN(1<<30)
		switch {
		case k < 4 || len(fastIDs) == 0:
			var steps Steps
			for i := range steps {
				steps[i] = time.Duration(rng.IntN(4)) * 500 * time.Millisecond
			}
			n := NewRun{Prompt: "run", Fate: Fate{Final: finals[rng.IntN(len(finals))], Steps: steps}}
			a, err := fast.Create(alice(stFast), n)
			require.NoError(t, err)
			b, err := scan.Create(alice(stScan), n)
			require.NoError(t, err)
			fastIDs, scanIDs = append(fastIDs, a.Run.ID), append(scanIDs, b.Run.ID)
			same[a.Run.ID] = b.Run.ID
		case k < 6:
			i := pick % len(fastIDs)
			assert.Equal(t, fast.Cancel(alice(stFast), fastIDs[i]) == nil, scan.Cancel(alice(stScan), scanIDs[i]) == nil)
		case k < 7:
			i := pick % len(fastIDs)
			_, errA := fast.Followup(alice(stFast), fastIDs[i], "and more", "")
			_, errB := scan.Followup(alice(stScan), scanIDs[i], "and more", "")
			assert.Equal(t, errA == nil, errB == nil)
		case k < 8:
			i, state := pick%len(fastIDs), []State{InProgress, Blocked, Failed, Succeeded}[pick%4]
			_, errA := fast.Force(fastIDs[i], state, nil)
			_, errB := scan.Force(scanIDs[i], state, nil)
			assert.Equal(t, errA == nil, errB == nil)
		case k < 9:
			i, ev := pick%len(fastIDs), ReportedEvent{Type: []EventType{EventInProgress, EventBlocked, EventSucceeded}[pick%3], ExecutionID: "exec"}
			_, errA := fast.Report(alice(stFast), fastIDs[i], ev)
			_, errB := scan.Report(alice(stScan), scanIDs[i], ev)
			assert.Equal(t, errA == nil, errB == nil)
		case k < 10:
			i := pick % len(fastIDs)
			q := EventQuery{RunIDs: []string{fastIDs[i]}, Limit: 100}
			_, errA := fast.Events(alice(stFast), q)
			q.RunIDs = []string{scanIDs[i]}
			_, errB := scan.Events(alice(stScan), q)
			require.NoError(t, errA)
			require.NoError(t, errB)
		default:
			d := time.Duration(rng.IntN(2500)) * time.Millisecond
			_, err := fast.Advance(d)
			require.NoError(t, err)
			_, err = scan.Advance(d)
			require.NoError(t, err)
		}
		if step%100 != 99 {
			continue
		}
		lookAtAll()
		fast.mu.Lock()
		fast.recordEventsLocked(fast.clock.Now())
		got := loggedEvents(&fast.events)
		fast.mu.Unlock()
		scan.mu.Lock()
		scan.recordEventsLocked(scan.clock.Now())
		want := loggedEvents(&scan.events)
		scan.mu.Unlock()
		require.Equal(t, len(want), len(got), "events logged by step %d", step)
		for i := range got {
			if id, ok := same[got[i].RunID]; ok {
				got[i].RunID = id
			}
		}
		require.Equal(t, want, got, "the log by step %d", step)
	}
	t.Logf("%d runs, %d events", len(fastIDs), len(fast.events.log))
}

// loggedEvents is every event of t, as polls answer them.
func loggedEvents(t *eventLog) []Event {
	events := make([]Event, len(t.log))
	for i := range events {
		events[i] = t.event(int32(i))
	}
	return events
}
