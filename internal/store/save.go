package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/google/uuid"
)

// Saving: Save writes every mock session's runs and clock as one JSON
// document, Load puts them back, so a mock can keep its runs across restarts
// (agentruns-mock --state-file). A mock session's fate rules and attachment
// (fault rules, request journal) are test scaffolding and are not kept.
//
// A run's state is derived from its timeline and its mock session's clock,
// so saving both faithfully is what makes every run come back in the same
// state. A virtual clock comes back at the instant it showed. A real clock
// keeps its distance from wall time, so time passes while the mock is down,
// as it does for a real service, and the clock never goes back across a
// restart, not even after a crash that lost the latest changes.

// saveFormat and saveVersion identify the document; Load refuses any other.
const (
	saveFormat  = "agentruns-mock-state"
	saveVersion = 1
)

type saveDoc struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// SavedAt is the wall time of the save; it carries real clocks across
	// the time the mock was down.
	SavedAt  time.Time      `json:"saved_at"`
	Sessions []savedSession `json:"sessions"`
}

type savedSession struct {
	Name       string     `json:"name"`
	Clock      savedClock `json:"clock"`
	Generation int64      `json:"generation"`
	NextSeq    int64      `json:"next_seq"`
	Runs       []*Run     `json:"runs"` // in Seq order
	// Added with the catalogue; absent in older files.
	CatalogueAt time.Time   `json:"catalogue_at,omitzero"`
	Agents      []*Identity `json:"agents,omitempty"`
	Messages    []*Message  `json:"messages,omitempty"`
	// Schedules are in creation order; NextScheduleSeq numbers the next.
	Schedules       []*ScheduleRecord `json:"schedules,omitempty"`
	NextScheduleSeq int64             `json:"next_schedule_seq,omitempty"`
	Events          []Event           `json:"events,omitempty"`
}

type savedClock struct {
	Mode ClockMode `json:"mode"`
	Now  time.Time `json:"now"`
}

// Save writes every mock session's runs and clock to w as JSON. Each mock
// session is captured consistently; it is safe to call while serving.
func (s *Store) Save(w io.Writer) error {
	s.mu.Lock()
	names := make([]string, 0, len(s.sessions))
	all := make(map[string]*Session, len(s.sessions))
	for name, ms := range s.sessions {
		names = append(names, name)
		all[name] = ms
	}
	s.mu.Unlock()
	sort.Strings(names) // a stable file is easier to compare and diff
	// The same document as saveDoc, each mock session encoded under its
	// read lock: a run's timeline and messages change under the write lock.
	doc := struct {
		Format   string            `json:"format"`
		Version  int               `json:"version"`
		SavedAt  time.Time         `json:"saved_at"`
		Sessions []json.RawMessage `json:"sessions"`
	}{Format: saveFormat, Version: saveVersion, SavedAt: s.wall(), Sessions: make([]json.RawMessage, 0, len(names))}
	for _, name := range names {
		ms := all[name]
		ms.catchUp() // a save holds the runs due by its instant
		ms.mu.RLock()
		b, err := json.Marshal(ms.saveLocked(name))
		ms.mu.RUnlock()
		if err != nil {
			return err
		}
		doc.Sessions = append(doc.Sessions, b)
	}
	return json.NewEncoder(w).Encode(doc)
}

func (ms *Session) saveLocked(name string) savedSession {
	return savedSession{
		Name:       name,
		Clock:      savedClock{Mode: ms.clock.Mode(), Now: ms.clock.Now()},
		Generation: ms.generation,
		NextSeq:    ms.nextSeq,
		Runs:       ms.runs,
		Schedules:  ms.schedulesInOrderLocked(),

		NextScheduleSeq: ms.nextScheduleSeq,
		Events:          ms.events,
		CatalogueAt:     ms.catalogueAt,
		Agents:          ms.agents,
		Messages:        ms.messages,
	}
}

// ErrBadSave wraps every reason Load refuses a document, so a caller can
// tell a corrupt file from a failure to read it.
var ErrBadSave = errors.New("not a valid agentruns mock state file")

// Load replaces every mock session with those Save wrote to r. Nothing is
// replaced unless the whole document is valid: a truncated, corrupt or
// foreign document is an error wrapping ErrBadSave, never a partial or
// empty store. Call it before serving.
func (s *Store) Load(r io.Reader) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields() // a field we do not know is a file we do not understand
	var doc saveDoc
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%w: the document is empty", ErrBadSave)
		}
		return fmt.Errorf("%w: %v", ErrBadSave, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: data after the document", ErrBadSave)
	}
	if doc.Format != saveFormat || doc.Version != saveVersion {
		return fmt.Errorf("%w: format %q version %d, want %q version %d", ErrBadSave, doc.Format, doc.Version, saveFormat, saveVersion)
	}
	// Mock sessions sharing a creator share one principal, as they do at runtime.
	creators := map[string]*fixtures.Principal{}
	sessions := make(map[string]*Session, len(doc.Sessions))
	for _, ss := range doc.Sessions {
		if _, dup := sessions[ss.Name]; dup {
			return fmt.Errorf("%w: session %q appears twice", ErrBadSave, ss.Name)
		}
		ms, err := s.restoreSession(ss, doc.SavedAt, creators)
		if err != nil {
			return fmt.Errorf("%w: session %q: %v", ErrBadSave, ss.Name, err)
		}
		sessions[ss.Name] = ms
	}
	if _, ok := sessions[""]; !ok {
		sessions[""] = s.newSession()
	}
	s.mu.Lock()
	s.sessions = sessions
	s.mu.Unlock()
	s.changed()
	return nil
}

func (s *Store) restoreSession(ss savedSession, savedAt time.Time, creators map[string]*fixtures.Principal) (*Session, error) {
	if ss.Clock.Now.IsZero() {
		return nil, errors.New("the clock has no time")
	}
	now := ss.Clock.Now
	switch ss.Clock.Mode {
	case VirtualClock:
	case RealClock:
		// Keep the clock's distance from wall time; if wall time went back
		// since the save, stand still rather than go back.
		if away := s.wall().Sub(savedAt); !savedAt.IsZero() && away > 0 {
			now = now.Add(away)
		}
	default:
		return nil, fmt.Errorf("clock mode %q: want real or virtual", ss.Clock.Mode)
	}
	seen := make(map[string]bool, len(ss.Runs))
	var lastSeq int64
	for i, r := range ss.Runs {
		if r == nil {
			return nil, fmt.Errorf("run %d is null", i)
		}
		if err := r.check(); err != nil {
			return nil, fmt.Errorf("run %d (%q): %v", i, r.ID, err)
		}
		if seen[r.ID] {
			return nil, fmt.Errorf("run %q appears twice", r.ID)
		}
		seen[r.ID] = true
		if r.Seq <= lastSeq {
			return nil, fmt.Errorf("run %q: seq %d does not follow %d", r.ID, r.Seq, lastSeq)
		}
		lastSeq = r.Seq
		r.Creator.Principal = s.restoreCreator(r.Creator.Principal, creators)
		r.packStrings()
	}
	for i, e := range ss.Events {
		if e.Seq != int64(i)+1 || !e.Type.Valid() || !seen[e.RunID] {
			return nil, fmt.Errorf("event %d: want sequence %d, a known event type and one of the session's runs", i, i+1)
		}
	}
	if ss.NextSeq < lastSeq {
		return nil, fmt.Errorf("next_seq %d is below the last run's seq %d", ss.NextSeq, lastSeq)
	}
	ms := s.newSession()
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.clock = newClock(ss.Clock.Mode, now, s.wall)
	ms.runs, ms.byID, ms.byName, ms.createdBy = nil, map[string]*Run{}, map[string][]*Run{}, map[string]int{}
	ms.artifactByUID = map[uuid.UUID]artifactRef{}
	ms.events, ms.watched = ss.Events, nil
	ms.generation = ss.Generation
	for _, r := range ss.Runs {
		// insertLocked numbers runs itself and keeps every index; set the
		// counter so it hands out the saved Seq.
		ms.nextSeq = r.Seq - 1
		ms.insertLocked(r)
	}
	ms.nextSeq = ss.NextSeq
	// Schedules come back with their next tick: ticks that fell while the
	// mock was down (a real clock moves on across a restart) are started
	// on the next use, like those of any clock move.
	for i, sc := range ss.Schedules {
		if sc == nil {
			return nil, fmt.Errorf("schedule %d is null", i)
		}
		if err := sc.check(); err != nil {
			return nil, fmt.Errorf("schedule %d (%q): %v", i, sc.ID, err)
		}
		if _, dup := ms.schedules[sc.ID]; dup {
			return nil, fmt.Errorf("schedule %q appears twice", sc.ID)
		}
		sc.Owner.Principal = s.restoreCreator(sc.Owner.Principal, creators)
		sc.UpdatedBy.Principal = s.restoreCreator(sc.UpdatedBy.Principal, creators)
		ms.schedules[sc.ID] = sc
		ms.nextScheduleSeq = max(ms.nextScheduleSeq, sc.Seq)
	}
	ms.nextScheduleSeq = max(ms.nextScheduleSeq, ss.NextScheduleSeq)
	ms.refreshDueLocked()
	if err := ms.restoreCatalogueLocked(ss); err != nil {
		return nil, err
	}
	return ms, nil
}

// check refuses what would make a run misbehave later rather than now.
func (r *Run) check() error {
	switch {
	case r.ID == "":
		return errors.New("no id")
	case r.CreatedAt.IsZero() || r.Timeline.Anchor.IsZero():
		return errors.New("no creation or anchor time")
	case r.Creator.Principal == nil || r.Creator.UID == "" || r.Team == "":
		return errors.New("no creator or team")
	case !r.Timeline.AnchorState.Valid():
		return fmt.Errorf("anchor_state %q is not a run state", r.Timeline.AnchorState)
	case !r.Timeline.Final.FinalFate():
		return fmt.Errorf("final %q is not SUCCEEDED, FAILED or ERROR", r.Timeline.Final)
	case r.ForcedState != "" && !r.ForcedState.Valid():
		return fmt.Errorf("forced_state %q is not a run state", r.ForcedState)
	}
	for _, d := range r.Timeline.Steps {
		if d < 0 {
			return errors.New("a negative step")
		}
	}
	for _, t := range r.ArtifactTypes {
		if !ArtifactTypes[t] {
			return fmt.Errorf("artifact type %q", t)
		}
		if len(r.ID) < 8 { // artifacts are named after the id's first 8 characters
			return errors.New("an id too short for artifacts")
		}
	}
	return nil
}

// restoreCreator is the fixtures' principal with the saved uid, so runs stay
// tied to the keys that map to it; a principal the fixtures no longer have
// is the one read from the file, without a key, shared by its runs.
func (s *Store) restoreCreator(saved *fixtures.Principal, creators map[string]*fixtures.Principal) *fixtures.Principal {
	if p, ok := s.byUID[saved.UID]; ok {
		return p
	}
	if p, ok := creators[saved.UID]; ok {
		return p
	}
	creators[saved.UID] = saved
	return saved
}

// restoreCatalogueLocked puts back the agents and messages. A file written
// before they were saved keeps the fixtures' agents, counted from the
// saved clock.
func (ms *Session) restoreCatalogueLocked(ss savedSession) error {
	ms.catalogueAt = ss.CatalogueAt
	if ms.catalogueAt.IsZero() {
		ms.catalogueAt = ss.Clock.Now
		ms.seedAgentsLocked(ms.catalogueAt)
	} else {
		ms.agents, ms.agentByUID, ms.agentByKey = nil, map[string]*Identity{}, map[string]*Identity{}
		for i, a := range ss.Agents {
			if a == nil || a.UID == "" || a.Team == "" || ms.agentByUID[a.UID] != nil {
				return fmt.Errorf("agent %d is null, without uid or team, or repeated", i)
			}
			ms.insertAgentLocked(a)
		}
	}
	ms.messages, ms.messageByID = nil, map[string]*Message{}
	for i, m := range ss.Messages {
		if m == nil || m.ID == "" || m.Team == "" || ms.messageByID[m.ID] != nil {
			return fmt.Errorf("message %d is null, without id or team, or repeated", i)
		}
		ms.messages = append(ms.messages, m)
		ms.messageByID[m.ID] = m
	}
	return nil
}
