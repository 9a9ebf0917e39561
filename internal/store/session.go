package store

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/internal/ruleset"
	"github.com/google/uuid"
)

// Session is one mock session: an isolated world with its own runs, clock
// and fate rules. (A run's agent session is Run.AgentSession.)
type Session struct {
	st *Store
	// lastUsed (unix nanoseconds) picks the mock session to close when too many are open.
	lastUsed   atomic.Int64
	fates      ruleset.Set[FateRule]
	attachment Attachment

	mu sync.RWMutex
	// clock is replaced by a reset, so it is read under mu; it has its own lock.
	clock *clock
	// The runs resource (runs.go).
	runs       []*Run            // in creation order, which is also Seq order
	byID       map[string]*Run   //
	byName     map[string][]*Run // by agent_config.name, in creation order
	generation int64             // bumped by reset, so positions from before are refused
	nextSeq    int64
	// catalogueAt is the instant the fixtures' catalogue times count back
	// from (environments.go).
	catalogueAt time.Time
	// The agent identities resource (identities.go).
	agents     []*Identity
	agentByUID map[string]*Identity
	agentByKey map[string]*Identity // by the digest of an API key
	// The messages resource (messages.go).
	messages    []*Message // in the order sent
	messageByID map[string]*Message
	// The schedules resource (schedules.go).
	schedules       map[string]*ScheduleRecord
	nextScheduleSeq int64
	// dueAt is the earliest next tick of an enabled schedule (unix
	// nanoseconds; MaxInt64: none), so catchUp costs one load when none is due.
	dueAt atomic.Int64
	// The events resource (events.go): the log, and the runs whose next
	// events it has still to record.
	events  []Event
	watched []*Run
	// createdBy counts, by team, the runs this mock session created (not
	// the fixtures' runs), which Options.MaxRuns caps. An index: rebuilt
	// by insertLocked, never saved.
	createdBy map[string]int
	// artifactByUID finds a run's artifact by its uid (artifacts.go). An
	// index: rebuilt by insertLocked, never saved.
	artifactByUID map[uuid.UUID]artifactRef
}

func (s *Store) newSession() *Session {
	ms := &Session{st: s}
	if s.opts.Attach != nil {
		ms.attachment = s.opts.Attach()
	}
	ms.mu.Lock()
	ms.resetLocked()
	ms.mu.Unlock()
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
	ms.runs = nil
	ms.byID = map[string]*Run{}
	ms.byName = map[string][]*Run{}
	ms.createdBy = map[string]int{}
	ms.artifactByUID = map[uuid.UUID]artifactRef{}
	ms.generation++
	ms.nextSeq = 0
	ms.schedules = map[string]*ScheduleRecord{}
	ms.nextScheduleSeq = 0
	ms.refreshDueLocked()
	ms.events, ms.watched = nil, nil
	now := ms.clock.Now()
	ms.catalogueAt = now
	ms.seedAgentsLocked(now)
	ms.messages, ms.messageByID = nil, map[string]*Message{}
	seeds := append([]fixtures.Run(nil), o.Fixtures.Runs...)
	sort.SliceStable(seeds, func(i, j int) bool { return seeds[i].CreatedAgo > seeds[j].CreatedAgo })
	for _, f := range seeds {
		ms.insertLocked(ms.st.fixtureRun(f, now))
	}
	ms.recordEventsLocked(now) // the fixtures' past, recorded in the order it happened
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
