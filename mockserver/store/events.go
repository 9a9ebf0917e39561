package store

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
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

// eventCodes numbers the event types for the log, which keeps a byte
// rather than a string per event; code 0 is none.
var eventCodes = [...]EventType{0: "", 1: EventInProgress, 2: EventSucceeded, 3: EventFailed, 4: EventErrored, 5: EventBlocked, 6: EventCancelled}

type eventCode uint8

func codeOf(e EventType) eventCode {
	for c, t := range eventCodes {
		if c > 0 && t == e {
			return eventCode(c)
		}
	}
	return 0
}

// Event is one entry of the event log as a poll answers it (and as state
// files before version 2 kept it).
type Event struct {
	Seq         int64     `json:"sequence"`
	Type        EventType `json:"event_type"`
	RunID       string    `json:"run_id"`
	RefID       string    `json:"ref_id,omitempty"`
	ExecutionID string    `json:"execution_id,omitempty"`
	OccurredAt  time.Time `json:"occurred_at"`
}

// loggedEvent is an Event as the log keeps it, 24 bytes where an Event
// takes 96: a store of a million runs logs millions of events, and most
// carry nothing but their run, their type and an instant. The sequence is
// the position in the log plus one; the run's id is the run's own string.
type loggedEvent struct {
	run *Run
	at  int64 // occurred_at in Unix microseconds (see rare)
	// prev is the position plus one of the same run's event before this
	// one, 0 if this is its first: each run's events are a chain from
	// Run.lastEvent, so a poll reads the runs it names, not the log.
	prev int32
	code eventCode
	// rare says the event has what few have, kept in eventLog.rare: a
	// reporter's ids, or an instant finer than a microsecond.
	rare bool
}

// rareEvent is the rest of an event whose loggedEvent says rare.
type rareEvent struct {
	ExecutionID, RefID string
	At                 time.Time
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
	log     []loggedEvent
	rare    map[int32]rareEvent // by position in log
	pending []*Run
	due     movingHeap // may hold a run twice, or one since removed: each catch-up looks at a run once
}

// MaxEventsPerRun bounds the events the log keeps for one run. A run's own
// progress records a handful; only reports (BLOCKED and INPROGRESS in turn,
// forever) can add more. Past the bound a report is refused rather than an
// old event dropped: a sequence, once answered, always names the same
// event, so a poller's since never skips what it has not read.
const MaxEventsPerRun = 1000

// savedEvents is the event log's part of the save: EventLog since version
// 2, Events (one object per event, four times the bytes) before.
type savedEvents struct {
	EventLog *savedEventLog `json:"event_log,omitempty"`
	Events   []Event        `json:"events,omitempty"`
}

// reset starts the log again and records the fixtures' past, in the order
// it happened.
func (t *eventLog) reset(ms *Session, now time.Time) {
	t.log, t.rare = nil, nil
	t.pending, t.due = append([]*Run(nil), ms.runs.list...), nil
	ms.recordEventsLocked(now)
}

// eventLetters writes each event type in a saved log as one letter.
const eventLetters = "-PSFEBC" // by eventCode

// savedEventLog is the log as version 2 saves it, in columns with an entry
// per event in sequence order: the run (its Seq), the type (one letter of
// eventLetters) and the instant in Unix microseconds. The few events with
// more (a reporter's ids, an instant finer than a microsecond) are listed
// again in Rare. A poll's JSON for every event would be four times the
// bytes, and a time string per event is what loading spends longest on.
type savedEventLog struct {
	RunSeqs []int64     `json:"run_seqs"`
	Types   string      `json:"types"`
	AtMicro []int64     `json:"at_us"`
	Rare    []savedRare `json:"rare,omitempty"`
}

type savedRare struct {
	Seq         int64     `json:"sequence"`
	ExecutionID string    `json:"execution_id,omitempty"`
	RefID       string    `json:"ref_id,omitempty"`
	OccurredAt  time.Time `json:"occurred_at,omitzero"` // finer than a microsecond
}

func (t *eventLog) save(ss *savedSession) {
	if len(t.log) == 0 {
		return
	}
	sl := &savedEventLog{RunSeqs: make([]int64, len(t.log)), AtMicro: make([]int64, len(t.log))}
	types := make([]byte, len(t.log))
	for i, e := range t.log {
		sl.RunSeqs[i], sl.AtMicro[i], types[i] = e.run.Seq, e.at, eventLetters[e.code]
		if e.rare {
			x := t.rare[int32(i)]
			sr := savedRare{Seq: int64(i) + 1, ExecutionID: x.ExecutionID, RefID: x.RefID}
			if !x.At.IsZero() {
				sr.OccurredAt = x.At
			}
			sl.Rare = append(sl.Rare, sr)
		}
	}
	sl.Types = string(types)
	ss.EventLog = sl
}

func (t *eventLog) restore(ms *Session, ss *savedSession, _ *restorer) error {
	t.log, t.rare = nil, nil
	switch {
	case ss.EventLog != nil && ss.Events != nil:
		return errors.New("both event_log and events")
	case ss.EventLog != nil:
		if err := t.restoreColumns(ms, ss.EventLog); err != nil {
			return err
		}
	default: // files before version 2
		t.log = make([]loggedEvent, 0, len(ss.Events))
		for i, e := range ss.Events {
			r := ms.runs.byID[e.RunID]
			if e.Seq != int64(i)+1 || !e.Type.Valid() || r == nil {
				return fmt.Errorf("event %d: want sequence %d, a known event type and one of the session's runs", i, i+1)
			}
			t.append(r, e)
		}
	}
	if err := t.checkLimits(); err != nil {
		return err
	}
	if err := t.checkOrder(); err != nil {
		return err
	}
	t.relink()
	t.pending, t.due = append([]*Run(nil), ms.runs.list...), nil
	return nil
}

// MaxEventIDBytes bounds an event's execution_id and ref_id, as the events
// resource does a report's.
const MaxEventIDBytes = 1024

// checkLimits holds a loaded log to what requests are held to: at most
// MaxEventsPerRun events per run, ids of at most MaxEventIDBytes.
func (t *eventLog) checkLimits() error {
	perRun := map[*Run]int{}
	for i, le := range t.log {
		if perRun[le.run]++; perRun[le.run] > MaxEventsPerRun {
			return fmt.Errorf("run %s has more than %d events, the most the mock keeps for one run", le.run.ID, MaxEventsPerRun)
		}
		if x, ok := t.rare[int32(i)]; ok && (len(x.ExecutionID) > MaxEventIDBytes || len(x.RefID) > MaxEventIDBytes) {
			return fmt.Errorf("event %d: execution_id and ref_id are limited to %d bytes each", i+1, MaxEventIDBytes)
		}
	}
	return nil
}

// checkOrder refuses a log whose events are out of time order. The mock
// logs each clock move's events sorted by time, and its clock never goes
// back, so every event it logs is no earlier than the one before; a
// poller reading by sequence would otherwise see a run finish before it
// started, or its events change order between two polls.
func (t *eventLog) checkOrder() error {
	for i := 1; i < len(t.log); i++ {
		if before, e := t.log[i-1], t.log[i]; e.at < before.at {
			return fmt.Errorf("event %d (%s) is before event %d (%s): a session's events are in time order",
				i+1, time.UnixMicro(e.at).UTC().Format(time.RFC3339Nano), i, time.UnixMicro(before.at).UTC().Format(time.RFC3339Nano))
		}
	}
	return nil
}

func (t *eventLog) restoreColumns(ms *Session, sl *savedEventLog) error {
	n := len(sl.RunSeqs)
	if len(sl.Types) != n || len(sl.AtMicro) != n {
		return fmt.Errorf("event_log: %d run_seqs, %d types and %d at_us: want one of each per event", n, len(sl.Types), len(sl.AtMicro))
	}
	rare := make(map[int64]*savedRare, len(sl.Rare))
	for i := range sl.Rare {
		x := &sl.Rare[i]
		if x.Seq < 1 || x.Seq > int64(n) || rare[x.Seq] != nil {
			return fmt.Errorf("event_log: rare entry %d: sequence %d is not one of the log's or appears twice", i, x.Seq)
		}
		if !x.OccurredAt.IsZero() && x.OccurredAt.UnixMicro() != sl.AtMicro[x.Seq-1] {
			return fmt.Errorf("event_log: event %d: occurred_at %s is not at_us %d", x.Seq, x.OccurredAt.Format(time.RFC3339Nano), sl.AtMicro[x.Seq-1])
		}
		rare[x.Seq] = x
	}
	runs := ms.runs.list // in Seq order
	t.log = make([]loggedEvent, 0, n)
	for i, seq := range sl.RunSeqs {
		k, found := slices.BinarySearchFunc(runs, seq, func(r *Run, seq int64) int { return cmp.Compare(r.Seq, seq) })
		code := strings.IndexByte(eventLetters, sl.Types[i])
		if !found || code < 1 || !InRange(time.UnixMicro(sl.AtMicro[i])) {
			return fmt.Errorf("event_log: event %d: want a run of the session, a type among %q and an instant a clock may show", i+1, eventLetters[1:])
		}
		e := Event{Seq: int64(i) + 1, Type: eventCodes[code], OccurredAt: time.UnixMicro(sl.AtMicro[i]).UTC()}
		if x := rare[int64(i)+1]; x != nil {
			e.ExecutionID, e.RefID = x.ExecutionID, x.RefID
			if !x.OccurredAt.IsZero() {
				e.OccurredAt = x.OccurredAt
			}
		}
		t.append(runs[k], e)
	}
	return nil
}

// append adds e, an event of r, at the end of the log (its Seq is the
// log's next); the caller links it into r's chain.
func (t *eventLog) append(r *Run, e Event) {
	le := loggedEvent{run: r, at: e.OccurredAt.UnixMicro(), code: codeOf(e.Type)}
	var x rareEvent
	if e.OccurredAt.Nanosecond()%1000 != 0 {
		x.At = e.OccurredAt
	}
	x.ExecutionID, x.RefID = e.ExecutionID, e.RefID
	if x != (rareEvent{}) {
		if t.rare == nil {
			t.rare = map[int32]rareEvent{}
		}
		t.rare[int32(len(t.log))] = x
		le.rare = true
	}
	t.log = append(t.log, le)
}

// event is the event at position i of the log, as a poll answers it.
func (t *eventLog) event(i int32) Event {
	le := &t.log[i]
	e := Event{Seq: int64(i) + 1, Type: eventCodes[le.code], RunID: le.run.ID, OccurredAt: time.UnixMicro(le.at).UTC()}
	if le.rare {
		x := t.rare[i]
		e.ExecutionID, e.RefID = x.ExecutionID, x.RefID
		if !x.At.IsZero() {
			e.OccurredAt = x.At
		}
	}
	return e
}

// relink makes each run's chain of events anew, after the log was read
// or cut.
func (t *eventLog) relink() {
	for _, e := range t.log {
		e.run.lastEvent = 0
	}
	for i := range t.log {
		le := &t.log[i]
		le.prev, le.run.lastEvent = le.run.lastEvent, int32(i)+1
	}
}

// cut drops the events of runs no longer stored (Truncate), numbering the
// rest again.
func (t *eventLog) cut(byID map[string]*Run) {
	kept, rare := t.log[:0], map[int32]rareEvent(nil)
	for i, e := range t.log {
		if byID[e.run.ID] != e.run {
			continue
		}
		if e.rare {
			if rare == nil {
				rare = map[int32]rareEvent{}
			}
			rare[int32(len(kept))] = t.rare[int32(i)]
		}
		kept = append(kept, e)
	}
	clear(t.log[len(kept):])
	t.log, t.rare = kept, rare
	t.relink()
}

// runEvents is where r's events are in the log, oldest first; only those
// from position from on.
func (t *eventLog) runEvents(r *Run, from int32) []int32 {
	var at []int32
	for p := r.lastEvent; p > 0 && p-1 >= from; p = t.log[p-1].prev {
		at = append(at, p-1)
	}
	slices.Reverse(at)
	return at
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
	at := tl.Anchor
	// One pass over progression at most, as in At.
	for idx := progressionIndex(tl.AnchorState); idx >= 0 && idx < len(progression); idx++ {
		at = at.Add(tl.Steps[idx])
		if now.Before(at) {
			break
		}
		next := tl.Final
		if idx+1 < len(progression) {
			next = progression[idx+1]
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
	key := now.UnixMilli()
	for len(t.due) > 0 && t.due[0].at <= key {
		batch = append(batch, t.due.pop().r)
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
		r  *Run // its Seq orders events of one instant
		ev Event
	}
	var fresh []pending
	for _, r := range live {
		h := r.Timeline.history(now)
		for _, tr := range h[min(int(r.Logged), len(h)):] {
			if e, ok := stateEvents[tr.State]; ok {
				fresh = append(fresh, pending{r, Event{Type: e, OccurredAt: tr.At}})
			}
		}
		if len(h) > int(r.Logged) {
			r.Logged = int16(len(h))
		}
		if next, ok := r.Timeline.nextEvent(now); ok && !next.After(MaxInstant) {
			t.due.push(moment{at: momentKey(next), r: r})
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
		return a.r.Seq < b.r.Seq
	})
	for _, p := range fresh {
		ms.appendEventLocked(p.r, p.ev)
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

// appendEventLocked logs e as r's newest event and returns its sequence.
func (ms *Session) appendEventLocked(r *Run, e Event) int64 {
	t := &ms.events
	t.append(r, e)
	le := &t.log[len(t.log)-1]
	le.prev, r.lastEvent = r.lastEvent, int32(len(t.log))
	return int64(len(t.log))
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
	return ms.appendEventLocked(r, Event{Type: e, OccurredAt: now, ExecutionID: executionID, RefID: refID})
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
	want := make(map[*Run]bool, len(q.RunIDs))
	for _, id := range q.RunIDs {
		r, err := ms.visibleLocked(p, id)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", id, err)
		}
		want[r] = true
	}
	ms.recordEventsLocked(ms.clock.Now())
	// Each run's next events after since, at most Limit of each, merged in
	// log order: the cost follows the page, not the log.
	var at []int32
	from := int32(min(max(q.Since, 0), int64(len(ms.events.log)))) // sequence = position + 1
	for r := range want {
		pos := ms.events.runEvents(r, from)
		at = append(at, pos[:min(len(pos), q.Limit)]...)
	}
	slices.Sort(at)
	out := make([]Event, 0, min(len(at), q.Limit))
	for _, i := range at[:min(len(at), q.Limit)] {
		out = append(out, ms.events.event(i))
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
		if last := r.lastEvent; last > 0 && eventCodes[ms.events.log[last-1].code] == ev.Type {
			return int64(last), nil
		}
	}
	// BLOCKED and INPROGRESS share a rank: a run goes from one to the other
	// and back while a person answers it.
	if cur.Terminal() || rank[state] < rank[cur] {
		return 0, ErrEventBackwards.because("event_type: the event would move the run backwards: the run is %s; %s would report %s", cur, ev.Type, state)
	}
	if err := ms.eventsFullLocked(r); err != nil {
		return 0, err
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

// eventsFullLocked refuses to add an event to a run that has
// MaxEventsPerRun, whoever adds it: a reporter or the control API forcing
// a state. The log must have caught up (recordEventsLocked).
func (ms *Session) eventsFullLocked(r *Run) error {
	if n := len(ms.events.runEvents(r, 0)); n >= MaxEventsPerRun {
		return ErrRunEventsFull.because("the run has %d events in the log, the most the mock keeps for one run (old events are never dropped, so every sequence a poll answered stays true); retrying will not help: reset the session (POST /__mock/reset)", n)
	}
	return nil
}

// EventLog returns the whole event log as it is now, whatever the teams, for
// tests.
func (ms *Session) EventLog() []Event {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.recordEventsLocked(ms.clock.Now())
	out := make([]Event, len(ms.events.log))
	for i := range out {
		out[i] = ms.events.event(int32(i))
	}
	return out
}
