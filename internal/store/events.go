package store

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/agentruns/agentruns/fixtures"
)

// The events resource: a mock session's event log, the lifecycle events of
// its runs in the order they were recorded, each numbered by a sequence
// that only grows.
//
// Nothing runs in the background. A run's states follow from its timeline
// and the clock, and so do its events: whenever the log is read, and before
// anything changes a run's timeline, the log catches up with the clock
// (recordEventsLocked), recording every state change that has happened since the
// last catch-up, oldest first. An event is therefore never recorded before
// the state it reports has begun, its occurred_at is the moment that state
// began, and once recorded its sequence and occurred_at never change: they
// are kept in the state file with the log, and a run's timeline is kept
// with how much of it the log has already seen (Run.Logged).

// EventType is a run event's event_type.
type EventType string

// The lifecycle events, one per state a run can be reported in.
const (
	EventInProgress EventType = "run_in_progress"
	EventSucceeded  EventType = "run_succeeded"
	EventFailed     EventType = "run_failed"
	EventErrored    EventType = "run_errored"
	EventBlocked    EventType = "run_blocked"
	EventCancelled  EventType = "run_cancelled"
)

// eventStates maps each event to the state it reports, and back.
var eventStates = map[EventType]State{
	EventInProgress: InProgress, EventSucceeded: Succeeded, EventFailed: Failed,
	EventErrored: Errored, EventBlocked: Blocked, EventCancelled: Cancelled,
}

var stateEvents = func() map[State]EventType {
	m := map[State]EventType{}
	for e, s := range eventStates {
		m[s] = e
	}
	return m
}()

// Valid reports whether e is an event type of the API.
func (e EventType) Valid() bool { _, ok := eventStates[e]; return ok }

// Event is one entry of the event log, the same in memory and in the save.
type Event struct {
	Seq         int64     `json:"sequence"`
	Type        EventType `json:"event_type"`
	RunID       string    `json:"run_id"`
	RefID       string    `json:"ref_id,omitempty"`
	ExecutionID string    `json:"execution_id,omitempty"`
	OccurredAt  time.Time `json:"occurred_at"`
}

// eventLog is the events resource's part of a mock session: the log, and
// the runs whose next events it has still to record.
//
// A catch-up looks only at the runs whose next event has come: those in
// pending (new, re-anchored or restored runs, looked at whatever the clock
// says) and those in due whose instant has passed. A run's history grows
// only at the moments of its timeline (nextEvent), and every change of a
// timeline goes through reanchorLocked, which puts the run in pending; so
// a run looked at is filed in due under its next moment, or left out if it
// has none (it has ended, or waits in BLOCKED for a report). A catch-up
// then costs the runs that moved, not all the runs still going.
type eventLog struct {
	log     []Event
	pending []*Run
	due     movingHeap // may hold a run twice, or one since removed: each catch-up looks at a run once
	// byRun is each run's events' positions in log, oldest first: a poll
	// finds the events after since by a binary search in each run it
	// names, not by a scan of the whole log.
	byRun map[string][]int32
}

// MaxEventsPerRun bounds the events the log keeps for one run. A run's own
// progress records a handful; only reports (BLOCKED and INPROGRESS in turn,
// forever) can add more. Past the bound a report is refused rather than an
// old event dropped: a sequence, once answered, always names the same
// event, so a poller's since never skips what it has not read.
const MaxEventsPerRun = 1000

// savedEvents is the event log's part of the save.
type savedEvents struct {
	Events []Event `json:"events,omitempty"`
}

// reset starts the log again and records the fixtures' past, in the order
// it happened.
func (t *eventLog) reset(ms *Session, now time.Time) {
	t.log, t.byRun = nil, map[string][]int32{}
	t.pending, t.due = append([]*Run(nil), ms.runs.list...), nil
	ms.recordEventsLocked(now)
}

func (t *eventLog) save(ss *savedSession) { ss.Events = t.log }

func (t *eventLog) restore(ms *Session, ss *savedSession, _ *restorer) error {
	for i, e := range ss.Events {
		if e.Seq != int64(i)+1 || !e.Type.Valid() || ms.runs.byID[e.RunID] == nil {
			return fmt.Errorf("event %d: want sequence %d, a known event type and one of the session's runs", i, i+1)
		}
	}
	t.log = ss.Events
	t.indexRuns()
	t.pending, t.due = append([]*Run(nil), ms.runs.list...), nil
	return nil
}

// indexRuns files every event of the log under its run.
func (t *eventLog) indexRuns() {
	t.byRun = map[string][]int32{}
	for i, e := range t.log {
		t.byRun[e.RunID] = append(t.byRun[e.RunID], int32(i))
	}
}

// watch adds a new run to the runs whose events are still to come.
func (t *eventLog) watch(r *Run) { t.pending = append(t.pending, r) }

// Errors of the events resource.
var (
	ErrUnknownEvent = sentinel(Invalid, "event_type: not an event type")
	// ErrEventBackwards refuses an event that would move a run back, or
	// change a finished run. The document gives these operations no 409 or
	// 422: a report that cannot apply is the reporter's bad request.
	ErrEventBackwards = sentinel(Invalid, "event_type: the event would move the run backwards")
	// ErrRunEventsFull: the run has MaxEventsPerRun events; a reset makes room.
	ErrRunEventsFull = sentinel(Exhausted, "the run has the most events the mock keeps for one run")
)

// transition is a moment a run entered a state.
type transition struct {
	State State
	At    time.Time
}

// history lists the timeline's transitions up to now, in order: first, if
// the run had started before the anchor, its start (a fixture run that is
// already past INPROGRESS); then the anchor; then each step after it. The
// list only grows as now moves on, so an index into it (Run.Logged) stays
// valid until the timeline is re-anchored.
func (tl *Timeline) history(now time.Time) []transition {
	var h []transition
	if tl.prelude() {
		h = append(h, transition{InProgress, tl.StartedAt})
	}
	if tl.Anchor.After(now) {
		return h
	}
	h = append(h, transition{tl.AnchorState, tl.Anchor})
	idx := -1
	for i, p := range progression {
		if p == tl.AnchorState {
			idx = i
		}
	}
	at := tl.Anchor
	for idx >= 0 {
		at = at.Add(tl.Steps[idx])
		if now.Before(at) {
			break
		}
		next := tl.Final
		if idx+1 < len(progression) {
			next = progression[idx+1]
			idx++
		} else {
			idx = -1
		}
		h = append(h, transition{next, at})
	}
	return h
}

// prelude reports whether the history starts with the run's start, which
// came before the anchor and is not a step of the timeline.
func (tl *Timeline) prelude() bool {
	return !tl.StartedAt.IsZero() && tl.StartedAt.Before(tl.Anchor) && tl.AnchorState != InProgress
}

// recordEventsLocked records every event that has happened by now and is not in
// the log yet, oldest first; events of the same instant in the order their
// runs were created. It looks only at the runs whose next event has come
// (eventLog), so a catch-up costs the runs that moved.
func (ms *Session) recordEventsLocked(now time.Time) {
	t := &ms.events
	batch := t.pending
	nano := now.UnixNano()
	for len(t.due) > 0 && t.due[0].at <= nano {
		batch = append(batch, heap.Pop(&t.due).(moment).r)
	}
	if len(batch) == 0 {
		return
	}
	// Each live run once, in creation order: among the session's runs a
	// Seq names one run.
	live := batch[:0]
	for _, r := range batch {
		if ms.runs.byID[r.ID] == r { // not dropped by Truncate
			live = append(live, r)
		}
	}
	slices.SortFunc(live, func(a, b *Run) int { return cmp.Compare(a.Seq, b.Seq) })
	live = slices.CompactFunc(live, func(a, b *Run) bool { return a.Seq == b.Seq })
	type pending struct {
		ev  Event
		seq int64 // the run's, to order events of one instant
	}
	var fresh []pending
	for _, r := range live {
		h := r.Timeline.history(now)
		for _, t := range h[min(r.Logged, len(h)):] {
			if e, ok := stateEvents[t.State]; ok {
				fresh = append(fresh, pending{Event{Type: e, RunID: r.ID, OccurredAt: t.At}, r.Seq})
			}
		}
		if len(h) > r.Logged {
			r.Logged = len(h)
		}
		if next, ok := r.Timeline.nextEvent(now); ok {
			heap.Push(&t.due, moment{at: next.UnixNano(), r: r})
		}
	}
	clear(batch[len(live):])
	t.pending = batch[:0]
	if len(fresh) == 0 {
		return
	}
	sort.SliceStable(fresh, func(i, j int) bool {
		a, b := fresh[i], fresh[j]
		if !a.ev.OccurredAt.Equal(b.ev.OccurredAt) {
			return a.ev.OccurredAt.Before(b.ev.OccurredAt)
		}
		return a.seq < b.seq
	})
	for _, p := range fresh {
		ms.appendEventLocked(p.ev)
	}
	ms.changed()
}

// nextEvent is the first instant after now at which the timeline's history
// (history) grows, if it ever does on its own.
func (tl *Timeline) nextEvent(now time.Time) (time.Time, bool) {
	if tl.Anchor.After(now) {
		return tl.Anchor, true
	}
	return tl.nextMoment(now)
}

func (ms *Session) appendEventLocked(e Event) int64 {
	e.Seq = int64(len(ms.events.log)) + 1
	ms.events.byRun[e.RunID] = append(ms.events.byRun[e.RunID], int32(len(ms.events.log)))
	ms.events.log = append(ms.events.log, e)
	return e.Seq
}

// reanchorLocked puts a run into state at now, recording the event that
// reports it (with the reporter's ids, if any). The log first catches up,
// so every earlier state of every run keeps its place before this one.
// It returns the event's sequence, 0 if the state has no event.
func (ms *Session) reanchorLocked(r *Run, now time.Time, state State, executionID, refID string) int64 {
	ms.recordEventsLocked(now)
	r.Timeline.reanchor(now, state)
	ms.runs.index.moved(r, now)
	r.Logged = 0
	if r.Timeline.prelude() {
		r.Logged = 1 // the start was recorded under the old timeline
	}
	ms.events.pending = append(ms.events.pending, r) // its next events follow the new timeline
	e, ok := stateEvents[state]
	if !ok {
		return 0
	}
	r.Logged++ // the anchor: recorded here, with the reporter's ids
	return ms.appendEventLocked(Event{Type: e, RunID: r.ID, OccurredAt: now, ExecutionID: executionID, RefID: refID})
}

// EventQuery is a poll of the event log.
type EventQuery struct {
	RunIDs []string
	Since  int64 // only events with a greater sequence
	Limit  int
}

// Events answers a poll: the events of the given runs after Since, oldest
// first, at most Limit. Every run must exist and be visible to p's team.
func (ms *Session) Events(p *fixtures.Principal, q EventQuery) ([]Event, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	want := make(map[string]bool, len(q.RunIDs))
	for _, id := range q.RunIDs {
		if _, err := ms.visibleLocked(p, id); err != nil {
			return nil, fmt.Errorf("run %s: %w", id, err)
		}
		want[id] = true
	}
	ms.recordEventsLocked(ms.clock.Now())
	// Each run's next events after since, at most Limit of each, merged in
	// log order: the cost follows the page, not the log.
	var at []int32
	for id := range want {
		pos := ms.events.byRun[id]
		i := sort.Search(len(pos), func(i int) bool { return int64(pos[i]) >= q.Since }) // sequence = position + 1
		at = append(at, pos[i:min(len(pos), i+q.Limit)]...)
	}
	slices.Sort(at)
	out := make([]Event, 0, min(len(at), q.Limit))
	for _, i := range at[:min(len(at), q.Limit)] {
		out = append(out, ms.events.log[i])
	}
	return out, nil
}

// ReportedEvent is an event a run's reporter sends.
type ReportedEvent struct {
	Type        EventType
	ExecutionID string
	RefID       string
}

// Report records an event of a run and moves the run into the state it
// reports. Only forward: an event that would move the run back, or change
// a finished run, is ErrEventBackwards. Reporting the state the run is
// already in changes nothing and answers the sequence of the event that
// recorded it, so a reporter may safely send an event again.
func (ms *Session) Report(p *fixtures.Principal, id string, ev ReportedEvent) (int64, error) {
	state, ok := eventStates[ev.Type]
	if !ok {
		return 0, ErrUnknownEvent.because("event_type: not an event type: %q", ev.Type)
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	r, err := ms.visibleLocked(p, id)
	if err != nil {
		return 0, err
	}
	now := ms.clock.Now()
	ms.recordEventsLocked(now)
	cur := r.Timeline.At(now).State
	if cur == state {
		if pos := ms.events.byRun[id]; len(pos) > 0 {
			if e := ms.events.log[pos[len(pos)-1]]; e.Type == ev.Type {
				return e.Seq, nil
			}
		}
	}
	// BLOCKED and INPROGRESS share a rank: a run goes from one to the other
	// and back while a person answers it.
	if cur.Terminal() || rank[state] < rank[cur] {
		return 0, ErrEventBackwards.because("event_type: the event would move the run backwards: the run is %s; %s would report %s", cur, ev.Type, state)
	}
	if n := len(ms.events.byRun[id]); n >= MaxEventsPerRun {
		return 0, ErrRunEventsFull.because("the run has %d events in the log, the most the mock keeps for one run (old events are never dropped, so every sequence a poll answered stays true); retrying will not help: reset the session (POST /__mock/reset)", n)
	}
	seq := ms.reanchorLocked(r, now, state, ev.ExecutionID, ev.RefID)
	switch state {
	case Failed, Errored:
		r.ForcedState, r.ForcedMsg = state, Fate{Final: state}.StatusMessage()
	case Cancelled:
		r.ForcedState, r.ForcedMsg = state, &StatusMessage{Message: "Cancelled by the agent's reporter."}
	}
	ms.changed()
	return seq, nil
}

// EventLog returns the whole event log as it is now, whatever the teams, for
// tests.
func (ms *Session) EventLog() []Event {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.recordEventsLocked(ms.clock.Now())
	return append([]Event(nil), ms.events.log...)
}
