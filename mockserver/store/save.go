package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/agentruns/agentruns/fixtures"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
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

// saveFormat and saveVersion identify the document. Save writes version 2;
// Load reads it and version 1, whose event log was one object per event
// (savedEvents). Before version 2 a mock refuses any other version, so a
// file written now is refused clearly by an older mock, never misread.
const (
	saveFormat  = "agentruns-mock-state"
	saveVersion = 2
)

type saveDoc struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// SavedAt is the wall time of the save; it carries real clocks across
	// the time the mock was down.
	SavedAt  time.Time      `json:"saved_at"`
	Sessions []savedSession `json:"sessions"`
}

// savedSession is one mock session in the save: its name and clock, then
// each table's part (the part types are declared with their tables). The
// parts are embedded, so their fields sit side by side in one JSON object,
// as they always have; a new resource embeds its part here.
type savedSession struct {
	Name  string     `json:"name"`
	Clock savedClock `json:"clock"`
	savedRuns
	savedEnvironments
	savedIdentities
	savedMessages
	savedSchedules
	savedEvents
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

func (ms *Session) saveLocked(name string) *savedSession {
	ss := &savedSession{Name: name, Clock: savedClock{Mode: ms.clock.Mode(), Now: ms.clock.Now()}}
	for _, t := range ms.tables() {
		t.save(ss)
	}
	return ss
}

// loadOptions read a state file as encoding/json, which writes it, would
// (the v1 semantics), but with the JSON v2 prototype's decoder: several
// times faster on a large file, which is most of what a start with one
// costs. Two exceptions: a field no table knows is refused (a file we do
// not understand), and the document is not checked whole before it is
// decoded, which v1 does to leave its target untouched on a syntax error
// and which took longer than the decoding; Load decodes into a document
// of its own and replaces nothing unless all of it is valid.
var loadOptions = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsonv2.RejectUnknownMembers(true),
	jsonv1.ReportErrorsWithLegacySemantics(false))

// ErrBadSave wraps every reason Load refuses a document, so a caller can
// tell a corrupt file from a failure to read it.
var ErrBadSave = errors.New("not a valid agentruns mock state file")

// Load replaces every mock session with those Save wrote to r. Nothing is
// replaced unless the whole document is valid: a truncated, corrupt or
// foreign document is an error wrapping ErrBadSave, never a partial or
// empty store. Call it before serving.
func (s *Store) Load(r io.Reader) error {
	// Mock sessions sharing a creator share one principal, as they do at runtime.
	rs := newRestorer(s)
	dec := jsontext.NewDecoder(r, loadOptions, jsonv2.WithUnmarshalers(jsonv2.JoinUnmarshalers(
		jsonv2.UnmarshalFromFunc(rs.readRuns), jsonv2.UnmarshalFromFunc(rs.readCreator),
		jsonv2.UnmarshalFromFunc(rs.readConfig))))
	if dec.PeekKind() == 0 {
		if _, err := dec.ReadToken(); errors.Is(err, io.EOF) {
			return fmt.Errorf("%w: the document is empty", ErrBadSave)
		}
	}
	var doc saveDoc
	if err := jsonv2.UnmarshalDecode(dec, &doc); err != nil {
		return fmt.Errorf("%w: %v", ErrBadSave, err)
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: data after the document", ErrBadSave)
	}
	if doc.Format != saveFormat || doc.Version < 1 || doc.Version > saveVersion {
		return fmt.Errorf("%w: format %q version %d, want %q version 1 to %d", ErrBadSave, doc.Format, doc.Version, saveFormat, saveVersion)
	}
	sessions := make(map[string]*Session, len(doc.Sessions))
	for i := range doc.Sessions {
		ss := &doc.Sessions[i]
		// Save writes only names Open accepted; anything else was not
		// written by this mock and is not guessed at.
		if err := CheckSessionName(ss.Name); err != nil {
			return fmt.Errorf("%w: session %q: %v", ErrBadSave, ss.Name, err)
		}
		if _, dup := sessions[ss.Name]; dup {
			return fmt.Errorf("%w: session %q appears twice", ErrBadSave, ss.Name)
		}
		if doc.Version == 1 && ss.EventLog != nil {
			return fmt.Errorf("%w: session %q: event_log in a version 1 file", ErrBadSave, ss.Name)
		}
		ms, err := s.restoreSession(ss, doc.SavedAt, rs)
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

func (s *Store) restoreSession(ss *savedSession, savedAt time.Time, rs *restorer) (*Session, error) {
	if ss.Clock.Now.IsZero() {
		return nil, errors.New("the clock has no time")
	}
	if !InRange(ss.Clock.Now) {
		return nil, ErrClockRange
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
	ms := s.emptySession()
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.clock = newClock(ss.Clock.Mode, now, s.wall)
	for _, t := range ms.tables() {
		if err := t.restore(ms, ss, rs); err != nil {
			return nil, err
		}
	}
	return ms, nil
}

// restorer is what the tables share while a save is loaded.
type restorer struct {
	st *Store
	// principals are the principals read from the file that the fixtures
	// no longer have, shared by every reader of the file.
	principals *principalSet
	// creatorsByJSON and configsByJSON are the creators and configs read
	// so far, by their JSON as the file has it. A file repeats a few of
	// each a hundred thousand times; one read of each, and a look-up by
	// bytes for the rest, is most of what makes a large file quick to
	// load. Configs are still shared per mock session by its configTable.
	// Each reader of runs (readRuns) has its own.
	creatorsByJSON map[string]*fixtures.Principal
	configsByJSON  map[string]*AgentConfig
	// general are the options of the general decoder, for what quickRun
	// leaves to it.
	general jsonv2.Options
}

// principalSet is one principal per uid across every mock session, as at
// runtime: those the file names that the fixtures no longer have.
type principalSet struct {
	mu    sync.Mutex
	byUID map[string]*fixtures.Principal
}

func newRestorer(s *Store) *restorer {
	return (&restorer{st: s, principals: &principalSet{byUID: map[string]*fixtures.Principal{}}}).worker()
}

// worker is a restorer sharing rs's principals, with caches of its own.
func (rs *restorer) worker() *restorer {
	w := &restorer{st: rs.st, principals: rs.principals,
		creatorsByJSON: map[string]*fixtures.Principal{}, configsByJSON: map[string]*AgentConfig{}}
	w.general = jsonv2.JoinOptions(loadOptions, jsonv2.WithUnmarshalers(jsonv2.JoinUnmarshalers(
		jsonv2.UnmarshalFromFunc(w.readCreator), jsonv2.UnmarshalFromFunc(w.readConfig))))
	return w
}

// maxCachedJSON bounds each of the restorer's caches, so a file whose
// records all differ costs no more than reading each.
const maxCachedJSON = 4096

// readCreator reads a run's creator or executor (Creator.UnmarshalJSON)
// as the principal it names (principal).
func (rs *restorer) readCreator(dec *jsontext.Decoder, c *Creator) error {
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	c.Principal, err = rs.creator(raw)
	return err
}

// creator is the principal a creator's JSON names, read once per distinct
// JSON.
func (rs *restorer) creator(raw []byte) (*fixtures.Principal, error) {
	if p, ok := rs.creatorsByJSON[string(raw)]; ok {
		return p, nil
	}
	var c Creator
	if err := c.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	p := rs.principal(c.Principal)
	if len(rs.creatorsByJSON) < maxCachedJSON {
		rs.creatorsByJSON[string(raw)] = p
	}
	return p, nil
}

// readConfig reads a run's agent config; equal configs are one record.
func (rs *restorer) readConfig(dec *jsontext.Decoder, c **AgentConfig) error {
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	*c, err = rs.config(raw)
	return err
}

func (rs *restorer) config(raw []byte) (*AgentConfig, error) {
	if shared, ok := rs.configsByJSON[string(raw)]; ok {
		return shared, nil
	}
	var cfg *AgentConfig
	if err := jsonv2.Unmarshal(raw, &cfg, loadOptions); err != nil {
		return nil, err
	}
	if len(rs.configsByJSON) < maxCachedJSON {
		rs.configsByJSON[string(raw)] = cfg
	}
	return cfg, nil
}

// principal is the fixtures' principal with the saved uid, so records stay
// tied to the keys that map to it; a principal the fixtures no longer have
// is the one read from the file, without a key, shared by its records.
func (rs *restorer) principal(saved *fixtures.Principal) *fixtures.Principal {
	if p, ok := rs.st.byUID[saved.UID]; ok {
		return p
	}
	rs.principals.mu.Lock()
	defer rs.principals.mu.Unlock()
	if p, ok := rs.principals.byUID[saved.UID]; ok {
		return p
	}
	rs.principals.byUID[saved.UID] = saved
	return saved
}
