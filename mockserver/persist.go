package mockserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/agentruns/agentruns/fixtures"
)

// Persistence: Save writes every session's runs and clock as one JSON
// document, Load puts them back, so a mock can keep its runs across restarts
// (agentruns-mock --state-file). A session's fault rules, fate rules and
// request journal are test scaffolding and are not kept; neither is the
// cursor secret, so a cursor issued before a restart is refused after it,
// with a clear 400.
//
// A run's state is derived from its timeline and its session's clock, so
// saving both faithfully is what makes every run come back in the same
// state. A virtual clock comes back at the instant it showed. A real clock
// keeps its distance from wall time, so time passes while the mock is down,
// as it does for a real service, and the clock never goes back across a
// restart, not even after a crash that lost the latest changes.

// stateFormat and stateVersion identify the document; Load refuses any other.
const (
	stateFormat  = "agentruns-mock-state"
	stateVersion = 1
)

type stateDoc struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// SavedAt is the wall time of the save; it carries real clocks across
	// the time the mock was down.
	SavedAt  time.Time      `json:"saved_at"`
	Sessions []sessionState `json:"sessions"`
}

type sessionState struct {
	Name       string     `json:"name"`
	Clock      clockState `json:"clock"`
	Generation int64      `json:"generation"`
	NextSeq    int64      `json:"next_seq"`
	Runs       []runState `json:"runs"` // in seq order
}

type clockState struct {
	Mode ClockMode `json:"mode"`
	Now  time.Time `json:"now"`
}

// principalState is a run's creator. The API key is never written: the
// file holds prompts, not credentials.
type principalState struct {
	UID         string `json:"uid"`
	Type        string `json:"type,omitempty"`
	DisplayName string `json:"display_name,omitempty"`
	Email       string `json:"email,omitempty"`
	PhotoURL    string `json:"photo_url,omitempty"`
	Team        string `json:"team"`
}

type runState struct {
	ID             string         `json:"id"`
	Seq            int64          `json:"seq"`
	Title          string         `json:"title"`
	Prompt         string         `json:"prompt"`
	Source         string         `json:"source"`
	Creator        principalState `json:"creator"`
	Team           string         `json:"team"`
	TeamScope      bool           `json:"team_scope,omitempty"`
	CreatedAt      time.Time      `json:"created_at"`
	Config         *AgentConfig   `json:"config,omitempty"`
	FromSkill      bool           `json:"from_skill,omitempty"`
	ConversationID string         `json:"conversation_id,omitempty"`
	Schedule       *runSchedule   `json:"schedule,omitempty"`
	ArtifactTypes  []string       `json:"artifact_types,omitempty"`
	NotCancellable bool           `json:"not_cancellable,omitempty"`
	Timeline       timelineState  `json:"timeline"`
	FateMsg        *StatusMessage `json:"fate_message,omitempty"`
	ForcedMsg      *StatusMessage `json:"forced_message,omitempty"`
	ForcedState    State          `json:"forced_state,omitempty"`
}

type timelineState struct {
	Anchor      time.Time `json:"anchor"`
	AnchorState State     `json:"anchor_state"`
	// StepsNS are the durations of QUEUED, PENDING, CLAIMED and INPROGRESS
	// in nanoseconds, exact where a duration string could round.
	StepsNS    [len(progression)]int64 `json:"steps_ns"`
	Final      State                   `json:"final"`
	StartedAt  time.Time               `json:"started_at,omitzero"`
	WasClaimed bool                    `json:"was_claimed,omitempty"`
}

// changed notes that the world's contents or clock changed.
func (w *world) changed() { w.cfg.changes.Add(1) }

// Changes counts the changes made to the mock's sessions through its HTTP
// API: creates, cancels, forced states, resets, clock moves and new
// sessions. A saver compares it with the count at its last save to skip
// writing a file that would not change. (The in-process Session API does
// not count; Save always writes everything regardless.)
func (s *Server) Changes() uint64 { return s.cfg.changes.Load() }

// Save writes every session's runs and clock to w as JSON. Each session is
// captured consistently; it is safe to call while the server is serving.
func (s *Server) Save(w io.Writer) error {
	s.mu.Lock()
	names := make([]string, 0, len(s.sessions))
	worlds := make(map[string]*world, len(s.sessions))
	for name, wd := range s.sessions {
		names = append(names, name)
		worlds[name] = wd
	}
	s.mu.Unlock()
	sort.Strings(names) // a stable file is easier to compare and diff
	doc := stateDoc{Format: stateFormat, Version: stateVersion, SavedAt: s.cfg.wall(), Sessions: make([]sessionState, 0, len(names))}
	for _, name := range names {
		doc.Sessions = append(doc.Sessions, worlds[name].snapshotState(name))
	}
	enc := json.NewEncoder(w)
	return enc.Encode(doc)
}

func (w *world) snapshotState(name string) sessionState {
	w.mu.RLock()
	defer w.mu.RUnlock()
	ss := sessionState{
		Name:       name,
		Clock:      clockState{Mode: w.clock.Mode(), Now: w.clock.Now()},
		Generation: w.generation,
		NextSeq:    w.nextSeq,
		Runs:       make([]runState, 0, len(w.runs)),
	}
	for _, r := range w.runs {
		rs := runState{
			ID: r.id, Seq: r.seq, Title: r.title, Prompt: r.prompt, Source: r.source,
			Creator: principalState{UID: r.creator.UID, Type: r.creator.Type, DisplayName: r.creator.DisplayName,
				Email: r.creator.Email, PhotoURL: r.creator.PhotoURL, Team: r.creator.Team},
			Team: r.team, TeamScope: r.teamScope, CreatedAt: r.createdAt, Config: r.config, FromSkill: r.fromSkill,
			ConversationID: r.conversationID, Schedule: r.schedule, ArtifactTypes: r.artifactTypes,
			NotCancellable: r.notCancellable,
			Timeline: timelineState{Anchor: r.tl.anchor, AnchorState: r.tl.anchorState, Final: r.tl.final,
				StartedAt: r.tl.startedAt, WasClaimed: r.tl.wasClaimed},
			FateMsg: r.fateMsg, ForcedMsg: r.forcedMsg, ForcedState: r.forcedState,
		}
		for i, d := range r.tl.steps {
			rs.Timeline.StepsNS[i] = int64(d)
		}
		ss.Runs = append(ss.Runs, rs)
	}
	return ss
}

// ErrBadState wraps every reason Load refuses a document, so a caller can
// tell a corrupt file from a failure to read it.
var ErrBadState = errors.New("not a valid agentruns mock state")

// Load replaces every session with those Save wrote to r. Nothing is
// replaced unless the whole document is valid: a truncated, corrupt or
// foreign document is an error wrapping ErrBadState, never a partial or
// empty store. Call it before serving.
func (s *Server) Load(r io.Reader) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields() // a field we do not know is a file we do not understand
	var doc stateDoc
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%w: the document is empty", ErrBadState)
		}
		return fmt.Errorf("%w: %v", ErrBadState, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: data after the document", ErrBadState)
	}
	if doc.Format != stateFormat || doc.Version != stateVersion {
		return fmt.Errorf("%w: format %q version %d, want %q version %d", ErrBadState, doc.Format, doc.Version, stateFormat, stateVersion)
	}
	// Sessions sharing a creator share one principal, as they do at runtime.
	creators := map[string]*fixtures.Principal{}
	sessions := make(map[string]*world, len(doc.Sessions))
	for _, ss := range doc.Sessions {
		if _, dup := sessions[ss.Name]; dup {
			return fmt.Errorf("%w: session %q appears twice", ErrBadState, ss.Name)
		}
		w, err := s.restoreWorld(ss, doc.SavedAt, creators)
		if err != nil {
			return fmt.Errorf("%w: session %q: %v", ErrBadState, ss.Name, err)
		}
		sessions[ss.Name] = w
	}
	if _, ok := sessions[""]; !ok {
		sessions[""] = newWorld(s.cfg)
	}
	s.mu.Lock()
	s.sessions = sessions
	s.mu.Unlock()
	s.cfg.changes.Add(1)
	return nil
}

func (s *Server) restoreWorld(ss sessionState, savedAt time.Time, creators map[string]*fixtures.Principal) (*world, error) {
	if ss.Clock.Now.IsZero() {
		return nil, errors.New("the clock has no time")
	}
	now := ss.Clock.Now
	switch ss.Clock.Mode {
	case VirtualClock:
	case RealClock:
		// Keep the clock's distance from wall time; if wall time went back
		// since the save, stand still rather than go back.
		if away := s.cfg.wall().Sub(savedAt); !savedAt.IsZero() && away > 0 {
			now = now.Add(away)
		}
	default:
		return nil, fmt.Errorf("clock mode %q: want real or virtual", ss.Clock.Mode)
	}
	runs := make([]*run, 0, len(ss.Runs))
	seen := make(map[string]bool, len(ss.Runs))
	var lastSeq int64
	for i, rs := range ss.Runs {
		if err := rs.check(); err != nil {
			return nil, fmt.Errorf("run %d (%q): %v", i, rs.ID, err)
		}
		if seen[rs.ID] {
			return nil, fmt.Errorf("run %q appears twice", rs.ID)
		}
		seen[rs.ID] = true
		if rs.Seq <= lastSeq {
			return nil, fmt.Errorf("run %q: seq %d does not follow %d", rs.ID, rs.Seq, lastSeq)
		}
		lastSeq = rs.Seq
		runs = append(runs, s.restoreRun(rs, creators))
	}
	if ss.NextSeq < lastSeq {
		return nil, fmt.Errorf("next_seq %d is below the last run's seq %d", ss.NextSeq, lastSeq)
	}
	w := newWorld(s.cfg)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.clock = newClock(ss.Clock.Mode, now, s.cfg.wall)
	w.runs, w.byID, w.byName = nil, map[string]*run{}, map[string][]*run{}
	w.generation = ss.Generation
	for _, r := range runs {
		// insertLocked numbers runs itself and keeps every index; set the
		// counter so it hands out the saved seq.
		w.nextSeq = r.seq - 1
		w.insertLocked(r)
	}
	w.nextSeq = ss.NextSeq
	return w, nil
}

// check refuses what would make a run misbehave later rather than now.
func (rs *runState) check() error {
	switch {
	case rs.ID == "":
		return errors.New("no id")
	case rs.CreatedAt.IsZero() || rs.Timeline.Anchor.IsZero():
		return errors.New("no creation or anchor time")
	case rs.Creator.UID == "" || rs.Team == "":
		return errors.New("no creator or team")
	case !rs.Timeline.AnchorState.valid():
		return fmt.Errorf("anchor_state %q is not a run state", rs.Timeline.AnchorState)
	case !rs.Timeline.Final.finalFate():
		return fmt.Errorf("final %q is not SUCCEEDED, FAILED or ERROR", rs.Timeline.Final)
	case rs.ForcedState != "" && !rs.ForcedState.valid():
		return fmt.Errorf("forced_state %q is not a run state", rs.ForcedState)
	}
	for _, d := range rs.Timeline.StepsNS {
		if d < 0 {
			return errors.New("a negative step")
		}
	}
	for _, t := range rs.ArtifactTypes {
		if t != "PLAN" && t != "PULL_REQUEST" {
			return fmt.Errorf("artifact type %q", t)
		}
		if len(rs.ID) < 8 { // artifacts are named after the id's first 8 characters
			return errors.New("an id too short for artifacts")
		}
	}
	return nil
}

func (s *Server) restoreRun(rs runState, creators map[string]*fixtures.Principal) *run {
	r := &run{
		id: rs.ID, seq: rs.Seq, title: rs.Title, prompt: rs.Prompt, source: rs.Source,
		creator: s.restoreCreator(rs.Creator, creators), team: rs.Team, teamScope: rs.TeamScope,
		createdAt: rs.CreatedAt, config: rs.Config, fromSkill: rs.FromSkill,
		conversationID: rs.ConversationID, schedule: rs.Schedule, artifactTypes: rs.ArtifactTypes,
		notCancellable: rs.NotCancellable,
		tl: timeline{anchor: rs.Timeline.Anchor, anchorState: rs.Timeline.AnchorState, final: rs.Timeline.Final,
			startedAt: rs.Timeline.StartedAt, wasClaimed: rs.Timeline.WasClaimed},
		fateMsg: rs.FateMsg, forcedMsg: rs.ForcedMsg, forcedState: rs.ForcedState,
	}
	for i, d := range rs.Timeline.StepsNS {
		r.tl.steps[i] = time.Duration(d)
	}
	r.packStrings()
	return r
}

// restoreCreator is the fixtures' principal with the saved uid, so runs stay
// tied to the keys that map to it; a principal the fixtures no longer have
// is rebuilt from the file, without a key.
func (s *Server) restoreCreator(ps principalState, creators map[string]*fixtures.Principal) *fixtures.Principal {
	if p, ok := s.cfg.byUID[ps.UID]; ok {
		return p
	}
	if p, ok := creators[ps.UID]; ok {
		return p
	}
	p := &fixtures.Principal{UID: ps.UID, Type: ps.Type, DisplayName: ps.DisplayName, Email: ps.Email, PhotoURL: ps.PhotoURL, Team: ps.Team}
	creators[ps.UID] = p
	return p
}
