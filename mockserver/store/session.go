package store

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentruns/agentruns/mockserver/numbered"
)

// Session is one mock session: an isolated world with its own runs, clock
// and fate rules. (A run's agent session is Run.AgentSession.)
type Session struct {
	st *Store
	// lastUsed (unix nanoseconds) picks the mock session to close when too many are open.
	lastUsed   atomic.Int64
	fates      numbered.Set[FateRule]
	attachment Attachment

	mu sync.RWMutex
	// clock is replaced by a reset, so it is read under mu; it has its own lock.
	clock *clock
	// The resources: a table each, in the file named after it, read and
	// changed under mu.
	environments environmentTable // environments.go
	identities   identityTable    // identities.go
	messages     messageTable     // messages.go
	schedules    scheduleTable    // schedules.go
	runs         runTable         // runs.go
	artifacts    artifactIndex    // artifacts.go
	events       eventLog         // events.go
}

// table is one resource's part of a mock session: its records and indexes,
// how it starts (from the fixtures), and how it is saved and loaded back.
type table interface {
	// reset empties the table and seeds it from the fixtures, at now; the
	// tables before it in Session.tables are reset already.
	reset(ms *Session, now time.Time)
	// save writes the table into its part of the mock session's save.
	save(ss *savedSession)
	// restore fills the empty table from a save, refusing what would make
	// it misbehave later; the tables before it are restored already.
	restore(ms *Session, ss *savedSession, rs *restorer) error
}

// tables lists the mock session's tables in the order they are reset and
// restored: a table derived from others (the artifacts and events of the
// runs) after those it derives from.
func (ms *Session) tables() []table {
	return []table{&ms.environments, &ms.identities, &ms.messages, &ms.schedules, &ms.runs, &ms.artifacts, &ms.events}
}

func (s *Store) newSession() *Session {
	ms := s.emptySession()
	ms.mu.Lock()
	ms.resetLocked()
	ms.mu.Unlock()
	return ms
}

// emptySession is a mock session with no clock and empty tables, for
// resetLocked or a restore to fill.
func (s *Store) emptySession() *Session {
	ms := &Session{st: s}
	if s.opts.Attach != nil {
		ms.attachment = s.opts.Attach()
	}
	return ms
}

// changed counts a mutation for the saver.
func (ms *Session) changed() { ms.st.changed() }

// Attachment is what another layer keeps with this mock session (Options.Attach).
func (ms *Session) Attachment() Attachment { return ms.attachment }

// Reset puts the fixtures back and the clock at its start (the given start
// instant, or else the wall time now), and forgets the
// fate rules and whatever is attached.
func (ms *Session) Reset() {
	ms.fates.Clear()
	if ms.attachment != nil {
		ms.attachment.Reset()
	}
	ms.mu.Lock()
	ms.resetLocked()
	ms.mu.Unlock()
	ms.changed()
}

func (ms *Session) resetLocked() {
	o := ms.st.opts
	// A clock with no given start starts at the wall time (truncated like
	// every instant the clock shows); fixture times are relative to it.
	start := o.ClockStart
	if start.IsZero() {
		start = ms.st.wall().Truncate(time.Millisecond)
	}
	ms.clock = newClock(o.ClockMode, start, ms.st.wall)
	now := ms.clock.Now()
	for _, t := range ms.tables() {
		t.reset(ms, now)
	}
}

// insertLocked stores a run in the runs table and in the tables derived
// from it.
func (ms *Session) insertLocked(r *Run) {
	ms.fileLocked(r)
	ms.runs.index.add(r, ms.clock.Now())
}

// fileLocked is insertLocked but for the listing's orders (runIndex), which
// a load builds for all its runs at once (runIndex.addAll).
func (ms *Session) fileLocked(r *Run) {
	ms.runs.insert(r, ms.st.fixtureIDs[r.ID])
	ms.events.watch(r)
	ms.artifacts.index(r)
}

// theClock is the clock; the pointer changes only on reset, under mu.
func (ms *Session) theClock() *clock {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	return ms.clock
}

// ClockInfo is a mock session clock's reading.
type ClockInfo struct {
	Now  time.Time
	Mode ClockMode
}

// Now is the mock session's current instant.
func (ms *Session) Now() time.Time { return ms.theClock().Now() }

// Clock reads the clock: its instant and mode.
func (ms *Session) Clock() ClockInfo {
	c := ms.theClock()
	return ClockInfo{Now: c.Now(), Mode: c.Mode()}
}

// Advance moves the clock forward by d and returns the new now.
func (ms *Session) Advance(d time.Duration) (time.Time, error) {
	t, err := ms.theClock().Advance(d)
	if err == nil {
		ms.changed()
		ms.catchUp()
	}
	return t, err
}

// SetNow jumps the clock forward to t; ErrClockBackwards if t is before now.
func (ms *Session) SetNow(t time.Time) (time.Time, error) {
	t, err := ms.theClock().Set(t)
	if err == nil {
		ms.changed()
		ms.catchUp()
	}
	return t, err
}

// SetClockMode freezes the clock (VirtualClock) or lets it run (RealClock)
// from the current instant.
func (ms *Session) SetClockMode(m ClockMode) time.Time {
	t := ms.theClock().SetMode(m)
	ms.changed()
	ms.catchUp()
	return t
}
