package store

import (
	"crypto/rand"
	"crypto/sha1"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/mockserver/errcode"
	"github.com/google/uuid"
)

// Errors of the runs resource.
var (
	ErrRunNotFound = sentinel(NotFound, "no run with this id")
	ErrOtherTeam   = sentinel(Forbidden, "the run belongs to another team")
	// ErrStoreFull: the team has created the most runs Options.MaxRuns
	// allows in this mock session. Waiting frees nothing: only a reset does.
	ErrStoreFull = sentinel(Exhausted, "the team has created the most runs this mock session allows")
	ErrTerminal  = sentinel(Invalid, "the run cannot be cancelled: it has already finished")
	// ErrPending: the run is being handed to a worker, which takes a moment.
	ErrPending       = sentinel(Conflict, "the run is being handed to a worker; try again shortly")
	ErrBlocked       = sentinel(Invalid, "the run cannot be cancelled: it is BLOCKED, waiting for a person to answer")
	ErrNotCancelable = sentinel(Unsupported, "the run cannot be cancelled through the API")
	ErrNoParent      = sentinel(Invalid, "parent_run_id: no run that you may see")
	ErrBackwards     = sentinel(Final, "a run's state only moves forward")
	ErrUnknownState  = sentinel(Invalid, "not a run state")
)

// AgentConfig is an AmbientAgentConfig, as sent by a caller and as resolved
// onto a run.
type AgentConfig struct {
	Name               string               `json:"name,omitempty"`
	ModelID            string               `json:"model_id,omitempty"`
	BasePrompt         string               `json:"base_prompt,omitempty"`
	EnvironmentID      string               `json:"environment_id,omitempty"`
	SkillSpec          string               `json:"skill_spec,omitempty"`
	MCPServers         map[string]MCPServer `json:"mcp_servers,omitempty"`
	ComputerUseEnabled *bool                `json:"computer_use_enabled,omitempty"`
	WorkerHost         string               `json:"worker_host,omitempty"`
	IdleTimeoutMinutes *int                 `json:"idle_timeout_minutes,omitempty"`
	Harness            *Harness             `json:"harness,omitempty"`
	HarnessAuthSecrets *HarnessAuthSecrets  `json:"harness_auth_secrets,omitempty"`
	// Newer than the published document (oz-agent-sdk 1.4.0-alpha.6).
	ComputerUseModelID string              `json:"computer_use_model_id,omitempty"`
	CredentialStrategy string              `json:"credential_strategy,omitempty"` // CREATOR or EXECUTOR
	InferenceProviders *InferenceProviders `json:"inference_providers,omitempty"`
	MemoryStores       []MemoryStoreAccess `json:"memory_stores,omitempty"`
	RunnerID           string              `json:"runner_id,omitempty"`
	SessionSharing     *SessionSharing     `json:"session_sharing,omitempty"`
	Skills             []string            `json:"skills,omitempty"`
}

// InferenceProviders are a team's own model providers.
type InferenceProviders struct {
	AWS *AWSInference `json:"aws,omitempty"`
}

// AWSInference is Amazon Bedrock, reached by assuming a role.
type AWSInference struct {
	Disabled *bool  `json:"disabled,omitempty"`
	Region   string `json:"region,omitempty"`
	RoleARN  string `json:"role_arn,omitempty"`
}

// MemoryStoreAccess is a memory store an agent may use, and how.
type MemoryStoreAccess struct {
	UID          string `json:"uid"`
	Access       string `json:"access"`
	Instructions string `json:"instructions"`
}

// SessionSharing is who may open a run's live session.
type SessionSharing struct {
	PublicAccess string `json:"public_access,omitempty"`
}

// SelfHosted reports whether the config sends the run to a self-hosted
// worker: a worker_host other than the service's own ("warp").
func (c *AgentConfig) SelfHosted() bool {
	return c != nil && c.WorkerHost != "" && c.WorkerHost != "warp"
}

// Harness is the program that drives the agent.
type Harness struct {
	Type           string `json:"type,omitempty"` // oz, claude, codex or gemini
	ModelID        string `json:"model_id,omitempty"`
	ReasoningLevel string `json:"reasoning_level,omitempty"`
}

// HarnessAuthSecrets names the secrets a third-party harness logs in with.
type HarnessAuthSecrets struct {
	ClaudeAuthSecretName string `json:"claude_auth_secret_name,omitempty"`
	CodexAuthSecretName  string `json:"codex_auth_secret_name,omitempty"`
}

// MCPServer is an MCPServerConfig: exactly one of WarpID, Command or URL.
type MCPServer struct {
	WarpID  string            `json:"warp_id,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	URL     string            `json:"url,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// StatusMessage is a RunStatusMessage.
type StatusMessage struct {
	Message   string `json:"message"`
	ErrorCode string `json:"error_code,omitempty"`
	Retryable *bool  `json:"retryable,omitempty"`
}

// Schedule is the scheduled agent that started a run.
type Schedule struct {
	ID   string `json:"schedule_id"`
	Name string `json:"schedule_name"`
	Cron string `json:"cron_schedule"`
}

// Run is one stored run, the same record in memory and in the save. Its
// state, updated_at and started_at are not stored: they are derived from
// the Timeline whenever the run is shown. Once stored, only the Timeline
// and the messages change, under the mock session's lock; read a run
// through a View.
//
// A store may hold a million runs, so the record is kept small: what most
// runs do not have is in Details, which runs without any share, and the
// small fields sit together.
type Run struct {
	ID        string       `json:"id"`
	Seq       int64        `json:"seq"`
	Title     string       `json:"title"`
	Prompt    string       `json:"prompt"`
	Creator   Creator      `json:"creator"`
	Team      string       `json:"team" load:"readTeam"` // the team that may see the run
	CreatedAt time.Time    `json:"created_at"`
	Config    *AgentConfig `json:"config,omitempty" load:"readConfig"`
	// Details is never nil once the run is stored (runTable.insert); its
	// fields read as the run's own.
	*Details

	TeamScope bool `json:"team_scope,omitempty"`
	FromSkill bool `json:"from_skill,omitempty"` // started from a skill, so agent_skill is shown
	// Logged is how many transitions of the timeline's history the event
	// log has recorded (events.go); lastEvent is the position plus one of
	// the run's newest event in the log, 0 before its first.
	Logged    int16 `json:"logged,omitempty"`
	lastEvent int32 `json:"-"`

	// Followups are the messages its user sent after the prompt, oldest
	// first (followups.go), nil until the first: few runs have any, and a
	// pointer is a third of a slice's size. Read them with FollowupList.
	Followups *[]Followup `json:"followups,omitempty"`

	// AgentSession is the agent session the run shows as session_id once
	// claimed, derived from its id (agentSessionNamespace) when stored.
	AgentSession uuid.UUID `json:"-"`

	Timeline Timeline `json:"timeline" load:"readTimeline"`
	// FateMsg is shown once the run reaches its final state; ForcedMsg while
	// it is in ForcedState (set by a cancel or the control API).
	FateMsg     *StatusMessage `json:"fate_message,omitempty"`
	ForcedMsg   *StatusMessage `json:"forced_message,omitempty"`
	ForcedState State          `json:"forced_state,omitempty"`

	// Kept by the runs index (runs_index.go): the updated_at key, in
	// milliseconds, the run is filed under, and the instant (Unix ns) that
	// key next changes, 0 if it never does.
	indexedAt int64 `json:"-"`
	nextAt    int64 `json:"-"`
}

// Details are what a run was started with beyond its prompt and config,
// and what its fate gives it. They never change once the run is stored,
// and a run created through the API mostly has none of them (source API,
// the rest empty): such runs share one Details (sharedDetails) rather than
// each keeping 200 bytes of empty fields.
type Details struct {
	Source         string    `json:"source" load:"readSource"`
	ConversationID string    `json:"conversation_id,omitempty"`
	Schedule       *Schedule `json:"schedule,omitempty"`
	// ArtifactTypes are the kinds of artifact the run shows once it has
	// SUCCEEDED, one each, in this order (PLAN, PULL_REQUEST, SCREENSHOT,
	// FILE).
	ArtifactTypes []string `json:"artifact_types,omitempty" load:"readArtifactTypes"`
	// ArtifactsWhenStopped has a fixture run show its artifacts also while
	// FAILED, ERROR or BLOCKED: a recording lists the artifacts a real
	// server showed such a run, and the replay shows what was recorded.
	ArtifactsWhenStopped bool   `json:"artifacts_when_stopped,omitempty"`
	TriggerURL           string `json:"trigger_url,omitempty"`
	// ParentRunID is the run that started this one (orchestration).
	ParentRunID      string `json:"parent_run_id,omitempty"`
	AgentIdentityUID string `json:"agent_identity_uid,omitempty"`
	Interactive      bool   `json:"interactive,omitempty"`
	// Metadata is the run's key/value labels, fixed at creation; Mode how
	// the agent treats the prompt (normal, plan, orchestrate; empty is
	// normal); OnBehalfOf what the request named the creator by when an
	// agent created the run for a team member.
	Metadata   map[string]string `json:"metadata,omitempty"`
	Mode       string            `json:"mode,omitempty"`
	OnBehalfOf string            `json:"on_behalf_of,omitempty"`
	// Executor is who executes the run when not its creator: the agent
	// that created it on a member's behalf.
	Executor *Creator `json:"executor,omitempty"`
	// Handoff are the files each ended execution leaves for whoever
	// continues the work (handoff.go).
	Handoff []string `json:"handoff,omitempty"`
	// Extra are members a real server showed the run with that the API's
	// document does not declare (a recorded fixture's): every answer that
	// shows the run carries them (fixtures.Extra).
	Extra fixtures.Extra `json:"extra,omitempty"`
	// Recorded are the values a recording saw the run with, which the mock
	// shows in place of those it makes up for its own runs; nil for a run
	// of the mock's own.
	Recorded *Recorded `json:"recorded,omitempty"`
}

// Recorded are what a recording saw of a run that the mock would otherwise
// make up (fixtures.Run's fields of the same names). Each is shown exactly
// as recorded; an empty one leaves the mock's own value in place.
type Recorded struct {
	// Usage is the run's request_usage, a JSON object: shown whatever the
	// run's state, and never grown.
	Usage json.RawMessage `json:"request_usage,omitempty"`
	// SessionID is the run's session_id (a UUID): its agent session, shown
	// once a worker has claimed the run.
	SessionID string `json:"session_id,omitempty"`
	// Conversation is the id of the conversation the run begins (one it
	// continues is Details.ConversationID).
	Conversation string `json:"conversation_id,omitempty"`
	// PullRequestURL and PullRequestBranch are its PULL_REQUEST artifact's
	// url and branch; PlanURL its PLAN artifact's url.
	PullRequestURL    string `json:"pull_request_url,omitempty"`
	PullRequestBranch string `json:"pull_request_branch,omitempty"`
	PlanURL           string `json:"plan_url,omitempty"`
	// Executor is the run's executor, a JSON object; TypeCancellable its
	// is_run_type_cancellable. Without names the members it is shown
	// without (fixtures.Omittable).
	Executor        json.RawMessage `json:"executor,omitempty"`
	TypeCancellable *bool           `json:"is_run_type_cancellable,omitempty"`
	Without         []string        `json:"without,omitempty"`
}

// ShowsMember reports whether the run shows the optional member name
// (fixtures.Omittable): a recorded run does not show one its recording
// never saw.
func (r *Run) ShowsMember(name string) bool {
	return r.Recorded == nil || !slices.Contains(r.Recorded.Without, name)
}

// RecordedUsage is the request_usage a recording saw the run with, nil
// when there is none (the mock's own figures are shown).
func (r *Run) RecordedUsage() json.RawMessage {
	if r.Recorded == nil {
		return nil
	}
	return r.Recorded.Usage
}

// SessionIDText is the session_id the run shows once claimed, as recorded,
// or "" when the mock's own (AgentSession) is shown.
func (r *Run) SessionIDText() string {
	if r.Recorded == nil {
		return ""
	}
	return r.Recorded.SessionID
}

// sharedDetails are the Details of every run that has a source and
// nothing else, one per source.
var sharedDetails = map[string]*Details{}

func init() {
	for _, source := range []string{"", "API", "SCHEDULED_AGENT", "LOCAL", "GITHUB_ACTION", "LINEAR", "SLACK", "CLI", "WEB_APP"} {
		sharedDetails[source] = &Details{Source: source}
	}
}

// share is d, or the shared Details equal to it; nil is a run with no
// source. The map is only read after init, so runs of every mock session
// may share its records.
func (d *Details) share() *Details {
	if d == nil {
		return sharedDetails[""]
	}
	if shared := d.shared(); shared != nil {
		return shared
	}
	return d
}

// shared is the shared record equal to d, nil if there is none.
func (d *Details) shared() *Details {
	if d.holdsMoreThanSource() { // runs_fields.go, from Details' fields
		return nil
	}
	return sharedDetails[d.Source]
}

// newDetails is d as a new run keeps it: the shared record equal to it, or
// a copy of its own (so a create makes none when it can share).
func newDetails(d Details) *Details {
	if shared := d.shared(); shared != nil {
		return shared
	}
	p := new(Details)
	*p = d
	return p
}

// FollowupList is the run's follow-ups, oldest first.
func (r *Run) FollowupList() []Followup {
	if r.Followups == nil {
		return nil
	}
	return *r.Followups
}

// Creator is who started a run: a fixtures principal, shared with the keys
// that map to it. In the save it is written without its API key: the file
// holds prompts, not credentials.
type Creator struct{ *fixtures.Principal }

type savedCreator struct {
	UID         string `json:"uid"`
	Type        string `json:"type,omitempty"`
	DisplayName string `json:"display_name,omitempty"`
	Email       string `json:"email,omitempty"`
	PhotoURL    string `json:"photo_url,omitempty"`
	Team        string `json:"team"`
}

// MarshalJSON writes the creator without its API key.
func (c Creator) MarshalJSON() ([]byte, error) {
	p := c.Principal
	if p == nil {
		p = &fixtures.Principal{}
	}
	return json.Marshal(savedCreator{UID: p.UID, Type: p.Type, DisplayName: p.DisplayName, Email: p.Email, PhotoURL: p.PhotoURL, Team: p.Team})
}

// UnmarshalJSON reads a creator as a principal without a key; Load then
// puts the fixtures' principal with the same uid in its place.
func (c *Creator) UnmarshalJSON(b []byte) error {
	var sc savedCreator
	if err := json.Unmarshal(b, &sc); err != nil {
		return err
	}
	c.fromSaved(sc)
	return nil
}

func (c *Creator) fromSaved(sc savedCreator) {
	c.Principal = &fixtures.Principal{UID: sc.UID, Type: sc.Type, DisplayName: sc.DisplayName, Email: sc.Email, PhotoURL: sc.PhotoURL, Team: sc.Team}
}

// newRunID is uuid.NewString(), a random (version 4) UUID, made on the
// stack: the library's form allocates the UUID it reads randomness into.
func newRunID() string {
	var u uuid.UUID
	_, _ = rand.Read(u[:])  // crypto/rand.Read never fails
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // the RFC 4122 variant
	return u.String()
}

// agentSessionNamespace makes agent session ids derive from run ids, so a
// run shows the same agent session every time without storing it.
var agentSessionNamespace = uuid.MustParse("6f1d2c3b-9a8e-4d7c-b6a5-0f1e2d3c4b5a")

// nameUUID is uuid.NewSHA1(space, []byte(name)), the version 5 UUID of
// name, computed on the stack: every run stored or loaded makes one, and
// NewSHA1 makes four small allocations for it.
func nameUUID(space uuid.UUID, name string) uuid.UUID {
	var buf [64]byte
	sum := sha1.Sum(append(append(buf[:0], space[:]...), name...))
	var u uuid.UUID
	copy(u[:], sum[:])
	u[6] = u[6]&0x0f | 0x50 // version 5
	u[8] = u[8]&0x3f | 0x80 // the RFC 4122 variant
	return u
}

// View is a run as shown at one instant. What can change about a run (its
// timeline and messages) is read when the view is taken, under the mock
// session's lock; the rest of a run never changes once stored. So a view can
// be shown after the lock is released.
type View struct {
	Run  *Run
	Snap Snapshot
	// Msg is the status message the run shows now, if any.
	Msg *StatusMessage
}

func (r *Run) view(now time.Time) View {
	v := View{Run: r, Snap: r.Timeline.At(now)}
	switch {
	case r.ForcedMsg != nil && v.Snap.State == r.ForcedState:
		v.Msg = r.ForcedMsg
	case r.FateMsg != nil && v.Snap.State == r.Timeline.Final:
		v.Msg = r.FateMsg
	}
	return v
}

// TypeCancellable reports whether runs of this kind can be cancelled
// through the API at all, as the newest client's is_run_type_cancellable
// defines it: not LOCAL or GITHUB_ACTION runs. Unlike Cancellable it
// says nothing of self-hosted workers (whose runs a cancel still refuses).
func (r *Run) TypeCancellable() bool {
	return r.Source != "LOCAL" && r.Source != "GITHUB_ACTION"
}

// Cancellable reports whether the API can cancel the run at all: not a run
// started on someone's own machine (LOCAL), by a GitHub Action, or sent to
// a self-hosted worker, which the service does not drive itself.
func (r *Run) Cancellable() bool {
	return r.Source != "LOCAL" && r.Source != "GITHUB_ACTION" && !r.Config.SelfHosted()
}

func (r *Run) notCancellableWhy() string {
	if r.Config.SelfHosted() {
		return "it runs on the self-hosted worker " + r.Config.WorkerHost
	}
	return "it was started from " + r.Source
}

// ExecutionLocation is where the run executes: LOCAL for a run started on
// someone's own machine, REMOTE for every run on a worker.
func (r *Run) ExecutionLocation() string {
	if r.Source == "LOCAL" {
		return "LOCAL"
	}
	return "REMOTE"
}

// ArtifactUID is the id of the run's i-th artifact, derived from the run's
// id so it needs no storing: the id GET /agent/artifacts/{artifactUid}
// finds it by.
//
// It is uuid.NewSHA1(artifactNamespace, id+"/"+i), hashed from a buffer on
// the stack: every run with artifacts that a page or a get shows derives
// its ids anew, and the library's form allocates four times per id.
func (r *Run) ArtifactUID(i int) uuid.UUID {
	var buf [16 + 128 + 1 + 20]byte // a run id is at most 128 bytes
	name := append(append(buf[:0], artifactNamespace[:]...), r.ID...)
	name = strconv.AppendInt(append(name, '/'), int64(i), 10)
	sum := sha1.Sum(name)
	var u uuid.UUID
	copy(u[:], sum[:])
	u[6] = u[6]&0x0f | 0x50 // version 5 (name-based, SHA-1)
	u[8] = u[8]&0x3f | 0x80 // the RFC 4122 variant
	return u
}

var artifactNamespace = uuid.MustParse("0b6f3e3a-5d52-4c1e-9a3d-2f8e7c6b5a49")

// ShowsSkill reports whether the run shows agent_skill: it was started from
// a skill.
func (r *Run) ShowsSkill() bool { return r.FromSkill && r.Config != nil }

// runTable is the runs resource's part of a mock session.
type runTable struct {
	list []*Run          // in creation order, which is also Seq order
	byID map[string]*Run //
	// byKey lists, in creation order, the runs with each value of each
	// field a listing filters on by equality (filterKey), so a filter
	// that matches few runs reads those runs only (runs_list.go).
	byKey map[filterKey][]*Run
	// generation is bumped by reset, so positions from before are refused.
	generation int64
	// cursorKey signs this incarnation's list cursors: new when the mock
	// session opens or is reset, kept by a save, so a cursor is good in
	// its own mock session only, and across a restart with a state file.
	cursorKey []byte
	nextSeq   int64
	// createdBy counts, by team, the runs this mock session created (not
	// the fixtures' runs), which Options.MaxRuns caps. An index: rebuilt
	// by insert, never saved.
	createdBy map[string]int
	// index keeps the other orders a listing has (runs_index.go).
	index *runIndex
	// sortedAll counts the listings in those orders that the index could
	// not serve and that sorted every match instead (List): only a clock
	// set back should make one.
	sortedAll atomic.Int64
	// configs shares equal agent configs among runs (text.go).
	configs configTable
}

// savedRuns is the runs table's part of the save.
type savedRuns struct {
	Generation int64 `json:"generation"`
	// CursorKey keeps the mock session's cursors good across a restart.
	CursorKey []byte `json:"cursor_key,omitempty"`
	NextSeq   int64  `json:"next_seq"`
	Runs      []*Run `json:"runs"` // in Seq order
}

func (t *runTable) empty() {
	t.list, t.byID, t.byKey, t.createdBy = nil, map[string]*Run{}, map[filterKey][]*Run{}, map[string]int{}
	t.index = newRunIndex()
	t.configs = configTable{}
	t.nextSeq = 0
}

// reset seeds the fixtures' runs, the oldest first, with a new cursor key
// and generation.
func (t *runTable) reset(ms *Session, now time.Time) {
	t.empty()
	t.generation++
	t.cursorKey = newCursorKey()
	seeds := append([]fixtures.Run(nil), ms.st.opts.Fixtures.Runs...)
	sort.SliceStable(seeds, func(i, j int) bool { return seeds[i].CreatedAgo > seeds[j].CreatedAgo })
	begun := map[string]bool{} // the conversations a run listed before begins
	for _, f := range seeds {
		r := ms.st.fixtureRun(f, now)
		// A later run of a recorded conversation continues it, as a run
		// created with its conversation_id does; so does one recorded
		// before a worker claimed it, which showed a conversation it had
		// not begun.
		unclaimed := f.Replay == nil && (f.State == string(Queued) || f.State == string(Pending))
		if c := f.ConversationID; c != "" && (begun[c] || unclaimed) {
			r.Recorded.Conversation, r.ConversationID = "", c
		} else if c != "" {
			begun[c] = true
		}
		ms.insertLocked(r)
	}
}

func (t *runTable) save(ss *savedSession) {
	ss.savedRuns = savedRuns{Generation: t.generation, CursorKey: t.cursorKey, NextSeq: t.nextSeq, Runs: t.list}
}

func (t *runTable) restore(ms *Session, ss *savedSession, rs *restorer) error {
	seen := make(map[string]*Run, len(ss.Runs)) // the table's byID once all are good
	var lastSeq int64
	for i, r := range ss.Runs {
		if r == nil {
			return fmt.Errorf("run %d is null", i)
		}
		if err := r.check(); err != nil {
			return fmt.Errorf("run %d (%q): %v", i, r.ID, err)
		}
		if seen[r.ID] != nil {
			return fmt.Errorf("run %q appears twice", r.ID)
		}
		seen[r.ID] = r
		if r.Seq <= lastSeq {
			return fmt.Errorf("run %q: seq %d does not follow %d", r.ID, r.Seq, lastSeq)
		}
		lastSeq = r.Seq
	}
	if ss.NextSeq < lastSeq {
		return fmt.Errorf("next_seq %d is below the last run's seq %d", ss.NextSeq, lastSeq)
	}
	t.empty()
	t.list, t.byID = make([]*Run, 0, len(ss.Runs)), seen
	t.generation = ss.Generation
	t.cursorKey = ss.CursorKey
	if len(t.cursorKey) != cursorKeyLen { // older files have none: a new key
		t.cursorKey = newCursorKey()
	}
	// Each run's creator is already the shared principal (restorer.creator).
	for _, r := range ss.Runs {
		if r.Team == r.Creator.Team {
			r.Team = r.Creator.Team // one string, as a run created now has
		}
		r.packStrings()
		// insert numbers runs itself and keeps every index; set the
		// counter so it hands out the saved Seq.
		t.nextSeq = r.Seq - 1
		ms.fileLocked(r)
	}
	t.nextSeq = ss.NextSeq
	t.index.addAll(t.list, ms.clock.Now())
	return nil
}

// insert numbers a run and indexes it; fixture says it is one of the
// fixtures' runs, which MaxRuns does not count.
func (t *runTable) insert(r *Run, fixture bool) {
	t.nextSeq++
	r.Seq = t.nextSeq
	r.AgentSession = nameUUID(agentSessionNamespace, r.ID)
	r.Config = t.configs.intern(r.Config)
	r.Details = r.Details.share()
	if id := r.SessionIDText(); id != "" {
		// The recorded session, so that its redirect finds the run.
		if u, err := uuid.Parse(id); err == nil {
			r.AgentSession = u
		}
	}
	t.list = append(t.list, r)
	t.byID[r.ID] = r
	for _, k := range r.filterKeys(&[maxFilterKeys]filterKey{}) {
		t.byKey[k] = append(t.byKey[k], r)
	}
	if !fixture {
		t.createdBy[r.Team]++
	}
}

// cursorKeyLen is the size of a mock session's cursor key.
const cursorKeyLen = 16

func newCursorKey() []byte {
	k := make([]byte, cursorKeyLen)
	_, _ = rand.Read(k) // crypto/rand.Read never fails
	return k
}

// CursorKey is the key this incarnation of the mock session signs its list
// cursors with; it changes on reset and when the mock session is closed
// and opened again, and survives a save and load.
func (ms *Session) CursorKey() []byte {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	return ms.runs.cursorKey
}

// checkFixtureSteps holds a fixture run's step and replayed steps to
// MaxStep, as every other way of giving a run its steps is.
func checkFixtureSteps(f fixtures.Run) error {
	if d := time.Duration(f.Step); d > MaxStep {
		return fmt.Errorf("step %s: it must be from 0 to %s", d, maxStepText)
	}
	if f.Replay != nil {
		for s, d := range f.Replay.Steps {
			if time.Duration(d) > MaxStep {
				return fmt.Errorf("replay.steps.%s %s: it must be from 0 to %s", s, time.Duration(d), maxStepText)
			}
		}
	}
	return nil
}

func (s *Store) fixtureRun(f fixtures.Run, now time.Time) *Run {
	creator := s.Principal(f.Creator)
	r := &Run{
		ID: f.ID, Title: f.Title, Prompt: f.Prompt,
		Creator: Creator{creator}, Team: creator.Team, TeamScope: f.Team,
		CreatedAt: now.Add(-time.Duration(f.CreatedAgo)),
		Details: &Details{
			Source:        f.Source,
			ArtifactTypes: f.ArtifactTypes,
			// A run of runs.json names the artifacts it shows; in whichever
			// state it stops, it shows them, as a recording saw them.
			ArtifactsWhenStopped: len(f.ArtifactTypes) > 0,
			TriggerURL:           f.TriggerURL,
			ParentRunID:          f.ParentRunID,
			Metadata:             f.Metadata,
			Handoff:              f.Handoff,
			Extra:                f.Extra,
		},
	}
	if f.RequestUsage != nil || f.SessionID != "" || f.ConversationID != "" || f.PullRequest != nil || f.PlanURL != "" ||
		f.Executor != nil || f.RunTypeCancellable != nil || len(f.Without) > 0 {
		r.Recorded = &Recorded{Usage: f.RequestUsage, SessionID: f.SessionID, Conversation: f.ConversationID, PlanURL: f.PlanURL,
			Executor: f.Executor, TypeCancellable: f.RunTypeCancellable, Without: f.Without}
		if pr := f.PullRequest; pr != nil {
			r.Recorded.PullRequestURL, r.Recorded.PullRequestBranch = pr.URL, pr.Branch
		}
	}
	if len(f.Config) > 0 {
		var c AgentConfig
		// New has checked that every fixture config decodes.
		_ = json.Unmarshal(f.Config, &c)
		r.Config = &c
		r.FromSkill = c.SkillSpec != "" // shows agent_skill, as a run started from a skill does
	}
	if f.ScheduleID != "" {
		r.Schedule = &Schedule{ID: f.ScheduleID, Name: f.ScheduleName, Cron: f.CronSchedule}
	}
	step := time.Duration(f.Step)
	if step == 0 {
		step = time.Hour
	}
	state := State(f.State)
	updated := now.Add(-time.Duration(f.UpdatedAgo))
	r.Timeline = Timeline{Anchor: updated, AnchorState: state, Final: Succeeded, Steps: Steps{step, step, step, step}}
	if state.FinalFate() {
		r.Timeline.Final = state
	}
	if p := f.Replay; p != nil { // a recorded run, replaying what was seen of it
		for i, s := range progression {
			if d, ok := p.Steps[string(s)]; ok {
				r.Timeline.Steps[i] = time.Duration(d)
			}
		}
		r.Timeline.Final = State(p.Final)
		if m := p.FinalMessage; m != nil {
			r.FateMsg = &StatusMessage{Message: m.Message, ErrorCode: m.ErrorCode, Retryable: m.Retryable}
			if m.Retryable == nil && m.ErrorCode != "" {
				r.FateMsg.Retryable = boolPtr(errcode.Retryable(m.ErrorCode))
			}
		}
	}
	if rank[state] >= rank[InProgress] && state != Cancelled {
		r.Timeline.StartedAt = r.CreatedAt.Add(updated.Sub(r.CreatedAt) / 4)
		if f.StartedAgo != nil { // as recorded
			r.Timeline.StartedAt = now.Add(-time.Duration(*f.StartedAgo))
		}
	}
	// A cancelled run was claimed if a recording saw it with a session.
	r.Timeline.WasClaimed = rank[state] >= rank[Claimed] && (state != Cancelled || f.SessionID != "")
	if m := f.StatusMessage; m != nil {
		r.ForcedState = state
		r.ForcedMsg = &StatusMessage{Message: m.Message, ErrorCode: m.ErrorCode, Retryable: m.Retryable}
		if m.Retryable == nil && m.ErrorCode != "" {
			r.ForcedMsg.Retryable = boolPtr(errcode.Retryable(m.ErrorCode))
		}
	}
	return r
}

func boolPtr(b bool) *bool { return &b }

// NewRun is what a create asks for, already validated and resolved.
type NewRun struct {
	Title, Prompt string
	Config        *AgentConfig
	FromSkill     bool
	TeamScope     bool
	// Details are what the request gives the run's record, kept as they
	// are: Create sets only its source (API) and what the fate decides
	// (the artifacts and the hand-off files). So a field the request
	// carries into the record is set here by the mock's resolve and nowhere
	// else. Its ParentRunID is checked by Create (a run the caller may
	// see); its Executor is who executes the run when not its creator.
	Details
	Fate Fate
}

// Create stores a new run for p and returns it as it is now.
func (ms *Session) Create(p *fixtures.Principal, n NewRun) (View, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if err := ms.roomForLocked(p.Team); err != nil {
		return View{}, err
	}
	if err := ms.mayStartRunsLocked(p); err != nil {
		return View{}, err
	}
	if n.ParentRunID != "" {
		parent, err := ms.visibleLocked(p, n.ParentRunID)
		if err != nil {
			return View{}, ErrNoParent.because("parent_run_id: no run %q that you may see", n.ParentRunID)
		}
		n.Metadata = inheritMetadata(parent.Metadata, n.Metadata)
		if len(n.Metadata) > MaxMetadataKeys {
			return View{}, ErrMetadataTooMany.because("metadata: with the keys inherited from parent run %s the run would have %d, the limit is %d", n.ParentRunID, len(n.Metadata), MaxMetadataKeys)
		}
	}
	if n.ConversationID != "" { // conversations.go
		if err := ms.checkContinuedLocked(p, n.ConversationID, ms.clock.Now()); err != nil {
			return View{}, err
		}
	}
	now := ms.clock.Now()
	ms.catchUpLocked(now) // scheduled runs due before this one come first
	d := n.Details
	d.Source = "API"
	d.ArtifactTypes, d.Handoff = n.Fate.Artifacts, n.Fate.Handoff
	r := &Run{
		ID:    newRunID(),
		Title: n.Title, Prompt: n.Prompt,
		Creator: Creator{p}, Team: p.Team, TeamScope: n.TeamScope,
		CreatedAt: now, Config: n.Config, FromSkill: n.FromSkill,
		Details:  newDetails(d),
		Timeline: Timeline{Anchor: now, AnchorState: Queued, Steps: n.Fate.Steps, Final: n.Fate.Final},
	}
	if n.Fate.Final != Succeeded {
		r.FateMsg = n.Fate.StatusMessage()
	}
	r.packStrings()
	ms.insertLocked(r)
	ms.changed()
	return r.view(now), nil
}

// roomForLocked is the one --max-runs rule, for a create and for a run a
// schedule starts alike: a team may create Options.MaxRuns runs in a mock
// session, the fixtures' runs and other teams' runs not counted.
func (ms *Session) roomForLocked(team string) error {
	if max := ms.st.opts.MaxRuns; max > 0 && ms.runs.createdBy[team] >= max {
		return ErrStoreFull.because("team %s has created %d runs in this mock session, the most --max-runs allows; retrying will not help: reset the session (POST /__mock/reset) or start the mock with a higher --max-runs", team, max)
	}
	return nil
}

// visibleLocked finds a run the principal's team may see.
func (ms *Session) visibleLocked(p *fixtures.Principal, id string) (*Run, error) {
	r, ok := ms.runs.byID[id]
	if !ok {
		return nil, ErrRunNotFound
	}
	if r.Team != p.Team {
		return nil, ErrOtherTeam
	}
	return r, nil
}

// Get returns a run p's team may see, as it is now.
func (ms *Session) Get(p *fixtures.Principal, id string) (View, error) {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	r, err := ms.visibleLocked(p, id)
	if err != nil {
		return View{}, err
	}
	return r.view(ms.clock.Now()), nil
}

// Cancel follows the real service: active runs are cancelled (scheduled
// ones too); finished ones are ErrTerminal and one waiting for a person
// ErrBlocked; a run being handed to a worker is ErrPending (retry); and a
// run the platform does not drive itself (see Cancellable) is
// ErrNotCancelable.
func (ms *Session) Cancel(p *fixtures.Principal, id string) error {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	r, err := ms.visibleLocked(p, id)
	if err != nil {
		return err
	}
	now := ms.clock.Now()
	switch s := r.Timeline.At(now).State; {
	case s.Terminal():
		return ErrTerminal.because("the run cannot be cancelled: it has already finished: it is %s", s)
	case s == Blocked:
		return ErrBlocked
	case s == Pending:
		return ErrPending
	case !r.Cancellable():
		return ErrNotCancelable.because("the run cannot be cancelled through the API: %s", r.notCancellableWhy())
	}
	ms.reanchorLocked(r, now, Cancelled, "", "")
	r.ForcedState = Cancelled
	r.ForcedMsg = &StatusMessage{Message: "Cancelled by " + p.DisplayName + "."}
	ms.changed()
	return nil
}

// Force puts a run, whatever its team, into state now, for the control API.
// Like every change it only moves forward, and a finished run stays
// finished. A nil msg on FAILED or ERROR gets what a real failure says.
func (ms *Session) Force(id string, state State, msg *StatusMessage) (View, error) {
	if !state.Valid() {
		return View{}, ErrUnknownState.because("state: %q is not a run state", state)
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	r, ok := ms.runs.byID[id]
	if !ok {
		return View{}, ErrRunNotFound.because("no run with id %q in this session", id)
	}
	now := ms.clock.Now()
	cur := r.Timeline.At(now).State
	if cur.Terminal() && cur != state || rank[state] < rank[cur] {
		return View{}, ErrBackwards.because("a run's state only moves forward: it is %s, %s would go back", cur, state)
	}
	if cur == state && msg == nil {
		return r.view(now), nil // already there; keep its message
	}
	if cur != state {
		// A forced state is an event like a reported one, and counts
		// towards the same bound.
		ms.recordEventsLocked(now)
		if err := ms.eventsFullLocked(r); err != nil {
			return View{}, err
		}
		ms.reanchorLocked(r, now, state, "", "")
	}
	if msg == nil && (state == Failed || state == Errored) {
		msg = Fate{Final: state}.StatusMessage()
	}
	r.ForcedState, r.ForcedMsg = state, msg
	ms.changed()
	return r.view(now), nil
}

// Run returns a run whatever its team, for the control API.
func (ms *Session) Run(id string) (View, error) {
	ms.catchUp()
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	r, ok := ms.runs.byID[id]
	if !ok {
		return View{}, ErrRunNotFound
	}
	return r.view(ms.clock.Now()), nil
}

// Len is how many runs the mock session holds.
func (ms *Session) Len() int {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	return len(ms.runs.list)
}

// Truncate drops every run after the first n, as if they had never been
// created; benchmarks use it to keep a mock session near the size they
// are named after.
func (ms *Session) Truncate(n int) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if n >= len(ms.runs.list) {
		return
	}
	cut := ms.runs.list[n].Seq // runs from this Seq on go
	var keys [maxFilterKeys]filterKey
	for _, r := range ms.runs.list[n:] {
		delete(ms.runs.byID, r.ID)
		ms.runs.index.remove(r)
		for _, key := range r.filterKeys(&keys) {
			list := ms.runs.byKey[key]
			k := len(list)
			for k > 0 && list[k-1].Seq >= cut {
				k--
			}
			clear(list[k:])
			if k == 0 {
				delete(ms.runs.byKey, key)
			} else {
				ms.runs.byKey[key] = list[:k]
			}
		}
	}
	clear(ms.runs.list[n:])
	ms.runs.list = ms.runs.list[:n]
	ms.events.cut(ms.runs.byID)
	ms.changed()
}

// Adopt stores a record made elsewhere as it is, without checks, numbering
// it like a new run. It is for tests of the layers above that need runs no
// request can make (odd strings, every optional part at once).
func (ms *Session) Adopt(r *Run) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.insertLocked(r)
	ms.changed()
}

// Runs returns every run as it is now, in creation order, whatever its team.
// For tests and benchmarks; the API lists through List.
func (ms *Session) Runs() []View {
	ms.catchUp()
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	now := ms.clock.Now()
	out := make([]View, 0, len(ms.runs.list))
	for _, r := range ms.runs.list {
		out = append(out, r.view(now))
	}
	return out
}

// ArtifactTypes are the kinds of artifact a run can show.
var ArtifactTypes = map[string]bool{"PLAN": true, "PULL_REQUEST": true, "SCREENSHOT": true, "FILE": true}

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
	if err := CheckSteps(r.Timeline.Steps); err != nil {
		return err
	}
	if d := r.Details; d != nil && (len(d.Metadata) > MaxMetadataKeys || len(d.Handoff) > MaxHandoffFiles) {
		return fmt.Errorf("%d metadata keys and %d handoff files; a run may have at most %d and %d", len(d.Metadata), len(d.Handoff), MaxMetadataKeys, MaxHandoffFiles)
	}
	if n := len(r.FollowupList()); n > MaxFollowups {
		return fmt.Errorf("%d follow-ups; a run takes at most %d", n, MaxFollowups)
	}
	if r.Timeline.PriorRun < 0 || r.Timeline.PriorRun > MaxRunTime {
		return fmt.Errorf("prior_run_ns %d: it must be from 0 to %d (%s)", r.Timeline.PriorRun, MaxRunTime, MaxRunTime)
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
