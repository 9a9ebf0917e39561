package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentruns/agentruns/fixtures"
)

// Options configure a Store. Durations and limits are already resolved:
// the store applies no defaults of its own but the clock's.
type Options struct {
	// Fixtures every mock session starts from (and goes back to on reset).
	Fixtures *fixtures.Set
	// ClockMode and ClockStart are every new mock session's clock. A zero
	// ClockStart means the wall time when the mock session opens or is
	// reset, so a mock left up for days still starts new work at now.
	ClockMode  ClockMode
	ClockStart time.Time
	// Wall is the source of real time; nil means time.Now.
	Wall func() time.Time
	// Steps is how long a new run stays in each state before its end.
	Steps Steps
	// MaxRuns caps the runs each team may create in one mock session; the
	// fixtures' runs do not count, and a reset makes room again. Per team,
	// so one team filling a shared mock session locks no other team out.
	// 0 means no cap.
	MaxRuns int
	// MaxSessions caps the isolated mock sessions; the default one is extra.
	MaxSessions int
	// Attach makes what another layer keeps per mock session (the HTTP
	// layer's fault rules and request journal). The store creates, resets
	// and drops it with its mock session and never looks inside. nil: none.
	Attach func() Attachment
}

// Attachment is what another layer keeps per mock session.
type Attachment interface{ Reset() }

// Store holds every mock session. The default one is named "".
type Store struct {
	opts  Options
	byUID map[string]*fixtures.Principal
	// fixtureIDs are the fixtures' run ids, which MaxRuns does not count.
	fixtureIDs map[string]bool
	dflt       *fixtures.Principal
	fates      []fixtures.FateRule // checked once, at start
	wall       func() time.Time
	// changes counts changes to any mock session, so a saver knows when to write.
	changes atomic.Uint64

	mu       sync.Mutex
	sessions map[string]*Session
}

// ErrTooManySessions is Open's answer when MaxSessions are open and none
// can be closed to make room.
var ErrTooManySessions = sentinel(Unavailable, "too many isolated sessions are open; reset or reuse one")

// New builds a store whose default mock session holds the fixtures. A
// fixture that cannot be used (a run config that does not fit AgentConfig,
// a fate rule that does not parse) is an error naming its file, never a run
// that silently lost its configuration or a request blamed for it later.
func New(opts Options) (*Store, error) {
	if opts.Fixtures == nil {
		return nil, errors.New("store: no fixtures")
	}
	s := &Store{opts: opts, byUID: map[string]*fixtures.Principal{}, wall: opts.Wall}
	if s.wall == nil {
		// Wall time read through the monotonic clock, so it never steps back.
		start := time.Now()
		s.wall = func() time.Time { return start.Add(time.Since(start)) }
	}
	s.opts.ClockStart = s.opts.ClockStart.Truncate(time.Millisecond)
	if !s.opts.ClockStart.IsZero() && !InRange(s.opts.ClockStart) {
		return nil, fmt.Errorf("clock start %s: %w", s.opts.ClockStart.Format(time.RFC3339Nano), ErrClockRange)
	}
	if err := CheckSteps(opts.Steps); err != nil {
		return nil, err
	}
	set := opts.Fixtures
	for _, f := range set.Runs {
		if err := checkFixtureSteps(f); err != nil {
			return nil, fmt.Errorf("fixtures: runs.json: run %s: %w", f.ID, err)
		}
		if len(f.Config) > 0 {
			dec := json.NewDecoder(bytes.NewReader(f.Config))
			dec.DisallowUnknownFields() // a misspelt field would be lost
			if err := dec.Decode(new(AgentConfig)); err != nil {
				return nil, fmt.Errorf("fixtures: runs.json: run %s: agent_config: %w", f.ID, err)
			}
		}
	}
	for i, rule := range set.Fates {
		f := Fate{Final: Succeeded}
		if err := errors.Join(f.applyFixture(rule.Fate), f.Check()); err != nil {
			return nil, fmt.Errorf("fixtures: fates.json: rule %d (prompt_pattern %q): %w", i, rule.Pattern, err)
		}
		s.fates = append(s.fates, rule)
	}
	for i := range set.Principals {
		p := &set.Principals[i]
		s.byUID[p.UID] = p
	}
	for _, f := range set.Schedules {
		if _, err := ParseCron(f.Cron); err != nil {
			return nil, fmt.Errorf("fixtures: schedules.json: schedule %s: %w", f.ID, err)
		}
		if len(f.Config) > 0 {
			dec := json.NewDecoder(bytes.NewReader(f.Config))
			dec.DisallowUnknownFields() // a misspelt field would be lost
			if err := dec.Decode(new(AgentConfig)); err != nil {
				return nil, fmt.Errorf("fixtures: schedules.json: schedule %s: agent_config: %w", f.ID, err)
			}
		}
	}
	s.fixtureIDs = make(map[string]bool, len(set.Runs))
	for _, f := range set.Runs {
		s.fixtureIDs[f.ID] = true
	}
	s.dflt = &set.DefaultPrincipal
	s.byUID[s.dflt.UID] = s.dflt
	s.sessions = map[string]*Session{"": s.newSession()}
	return s, nil
}

// Principal is the fixtures' principal with uid, or the default user.
func (s *Store) Principal(uid string) *fixtures.Principal {
	if p, ok := s.byUID[uid]; ok {
		return p
	}
	return s.dflt
}

// Changes counts the changes made to the store: creates, cancels, forced
// states, resets, clock moves, mock sessions opened and closed, loads. A
// saver compares it with the count at its last save to skip writing a file
// that would not change.
func (s *Store) Changes() uint64 { return s.changes.Load() }

func (s *Store) changed() { s.changes.Add(1) }

// Open finds or opens the mock session name, which CheckSessionName must
// accept (ErrBadSessionName otherwise). When MaxSessions are open,
// the one unused for longest makes room: test jobs that never close their
// mock sessions must not lock a long-running mock up.
func (s *Store) Open(name string) (*Session, error) {
	if err := CheckSessionName(name); err != nil {
		return nil, err
	}
	ms, err := s.open(name)
	if err == nil {
		ms.catchUp() // the ticks due by now become runs before anyone looks
	}
	return ms, err
}

func (s *Store) open(name string) (*Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ms, ok := s.sessions[name]
	if !ok {
		if len(s.sessions)-1 >= s.opts.MaxSessions && !s.evictLocked() {
			return nil, ErrTooManySessions
		}
		ms = s.newSession()
		s.sessions[name] = ms
		s.changed()
	}
	ms.lastUsed.Store(time.Now().UnixNano())
	return ms, nil
}

// evictLocked closes the least recently used isolated mock session.
func (s *Store) evictLocked() bool {
	oldest, at := "", int64(0)
	for name, ms := range s.sessions {
		if t := ms.lastUsed.Load(); name != "" && (oldest == "" || t < at) {
			oldest, at = name, t
		}
	}
	if oldest == "" {
		return false
	}
	delete(s.sessions, oldest)
	s.changed()
	return true
}

// Close forgets an isolated mock session; the default one is reset instead.
func (s *Store) Close(name string) {
	s.mu.Lock()
	ms, ok := s.sessions[name]
	if ok && name != "" {
		delete(s.sessions, name)
		s.changed()
	}
	s.mu.Unlock()
	if ok && name == "" {
		ms.Reset()
	}
}

// Lookup finds a mock session without opening one: for a download link,
// which must not create the mock session it names.
func (s *Store) Lookup(name string) (*Session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ms, ok := s.sessions[name]
	return ms, ok
}
