package mockserver

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/google/uuid"
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

type runSchedule struct {
	ID   string `json:"schedule_id"`
	Name string `json:"schedule_name"`
	Cron string `json:"cron_schedule"`
}

// run is one stored run. Its state, updated_at, started_at and session are
// not stored: they are derived from the timeline whenever the run is shown.
type run struct {
	id        string
	seq       int64
	title     string
	prompt    string
	source    string
	creator   *fixtures.Principal
	team      string // the team that may see the run
	teamScope bool
	createdAt time.Time
	config    *AgentConfig
	fromSkill bool // started from a skill, so agent_skill is shown

	conversationID string
	schedule       *runSchedule
	artifactTypes  []string
	notCancellable bool

	// session is the session id the run shows once claimed, derived from
	// its id (sessionNamespace) when it is stored.
	session uuid.UUID

	tl timeline
	// fateMsg is shown once the run reaches its final state; forcedMsg while
	// it is in forcedState (set by a cancel or the control API).
	fateMsg     *StatusMessage
	forcedMsg   *StatusMessage
	forcedState State
}

// RunItem is the JSON shape of a run, as the API returns it.
type RunItem struct {
	RunID          string         `json:"run_id"`
	TaskID         string         `json:"task_id"`
	Title          string         `json:"title"`
	State          State          `json:"state"`
	Prompt         string         `json:"prompt"`
	CreatedAt      string         `json:"created_at"`
	UpdatedAt      string         `json:"updated_at"`
	StartedAt      *string        `json:"started_at,omitempty"`
	StatusMessage  *StatusMessage `json:"status_message,omitempty"`
	Source         string         `json:"source,omitempty"`
	SessionID      string         `json:"session_id,omitempty"`
	SessionLink    string         `json:"session_link,omitempty"`
	Creator        *creatorInfo   `json:"creator,omitempty"`
	AgentConfig    *AgentConfig   `json:"agent_config,omitempty"`
	ConversationID string         `json:"conversation_id,omitempty"`
	Schedule       *runSchedule   `json:"schedule,omitempty"`
	Scope          *runScope      `json:"scope,omitempty"`
	AgentSkill     *agentSkill    `json:"agent_skill,omitempty"`
	Artifacts      []artifact     `json:"artifacts,omitempty"`
}

type creatorInfo struct {
	Type        string `json:"type,omitempty"`
	UID         string `json:"uid,omitempty"`
	DisplayName string `json:"display_name,omitempty"`
	Email       string `json:"email,omitempty"`
	PhotoURL    string `json:"photo_url,omitempty"`
}

type runScope struct {
	Type string `json:"type"`
	UID  string `json:"uid,omitempty"`
}

type agentSkill struct {
	Name     string `json:"name,omitempty"`
	FullPath string `json:"full_path,omitempty"`
}

type artifact struct {
	Type      string            `json:"artifact_type"`
	CreatedAt string            `json:"created_at"`
	Data      map[string]string `json:"data"`
}

// timeFormat has a fixed width, so timestamps also sort as strings.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

func formatTime(t time.Time) string { return string(appendTime(nil, t)) }

// appendTime appends what t.UTC().Format(timeFormat) gives, without parsing
// the layout each time: that is a good part of the cost of a page of runs.
func appendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, timeFormat)
	}
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / int(time.Millisecond) // Format truncates, too
	d := [24]byte{0: '0', 4: '-', 7: '-', 10: 'T', 13: ':', 16: ':', 19: '.', 23: 'Z'}
	put := func(at, v, width int) {
		for i := at + width - 1; i >= at; i-- {
			d[i] = byte('0' + v%10)
			v /= 10
		}
	}
	put(0, year, 4)
	put(5, int(month), 2)
	put(8, day, 2)
	put(11, hour, 2)
	put(14, minute, 2)
	put(17, sec, 2)
	put(20, ms, 3)
	return append(b, d[:]...)
}

// sessionNamespace makes session ids derive from run ids, so a run shows the
// same session every time without storing it.
var sessionNamespace = uuid.MustParse("6f1d2c3b-9a8e-4d7c-b6a5-0f1e2d3c4b5a")

// packStrings moves the run's own strings (its id, prompt, title and the
// config's plain strings) into one allocation. Decoding a request gives each
// its own, and a store of a million runs then holds millions of small
// objects that every GC cycle has to visit; one per run is cheaper to keep
// and to mark. A title cut from the prompt stays a part of it.
func (r *run) packStrings() {
	fields := []*string{&r.id, &r.prompt, &r.conversationID}
	if c := r.config; c != nil {
		fields = append(fields, &c.Name, &c.ModelID, &c.BasePrompt, &c.EnvironmentID, &c.SkillSpec, &c.WorkerHost)
	}
	titleInPrompt := strings.HasPrefix(r.prompt, r.title)
	if !titleInPrompt {
		fields = append(fields, &r.title)
	}
	size := 0
	for _, f := range fields {
		size += len(*f)
	}
	var b strings.Builder
	b.Grow(size)
	for _, f := range fields {
		b.WriteString(*f)
	}
	all := b.String()
	for _, f := range fields {
		n := len(*f)
		*f, all = all[:n], all[n:]
	}
	if titleInPrompt {
		r.title = r.prompt[:len(r.title)]
	}
}

// item is the run as the API shows it at now.
func (r *run) item(now time.Time, linkBase string) RunItem { return r.view(now, linkBase).item() }

// runView is a run as shown at one instant. What can change about a run (its
// timeline and messages) is read when the view is taken, under the store's
// lock; the rest of a run never changes once stored. So a view can be shown
// after the lock is released.
type runView struct {
	r        *run
	snap     snapshot
	msg      *StatusMessage
	linkBase string // without a trailing slash
}

func (r *run) view(now time.Time, linkBase string) runView {
	v := runView{r: r, snap: r.tl.at(now), linkBase: linkBase}
	switch {
	case r.forcedMsg != nil && v.snap.state == r.forcedState:
		v.msg = r.forcedMsg
	case r.fateMsg != nil && v.snap.state == r.tl.final:
		v.msg = r.fateMsg
	}
	return v
}

// showsSkill reports whether the run shows agent_skill: it was started from
// a skill.
func (r *run) showsSkill() bool { return r.fromSkill && r.config != nil }

// item builds the RunItem; the HTTP answers write the same JSON straight
// from the view (runView.appendJSON).
func (v runView) item() RunItem {
	r, snap := v.r, v.snap
	it := RunItem{
		RunID:          r.id,
		TaskID:         r.id,
		Title:          r.title,
		State:          snap.state,
		Prompt:         r.prompt,
		CreatedAt:      formatTime(r.createdAt),
		UpdatedAt:      formatTime(snap.updatedAt),
		StatusMessage:  v.msg,
		Source:         r.source,
		AgentConfig:    r.config,
		ConversationID: r.conversationID,
		Schedule:       r.schedule,
		Creator: &creatorInfo{
			Type: r.creator.Type, UID: r.creator.UID, DisplayName: r.creator.DisplayName,
			Email: r.creator.Email, PhotoURL: r.creator.PhotoURL,
		},
		Scope: &runScope{Type: "User", UID: r.creator.UID},
	}
	if r.teamScope {
		it.Scope = &runScope{Type: "Team", UID: r.team}
	}
	if !snap.startedAt.IsZero() {
		s := formatTime(snap.startedAt)
		it.StartedAt = &s
	}
	if snap.claimed {
		it.SessionID = r.session.String()
		it.SessionLink = v.linkBase + "/" + it.SessionID
	}
	if r.showsSkill() {
		it.AgentSkill = &agentSkill{Name: skillName(r.config.SkillSpec), FullPath: r.config.SkillSpec}
	}
	// Artifacts are what a finished run produced, so they appear at the end.
	if snap.state == Succeeded {
		for _, t := range r.artifactTypes {
			it.Artifacts = append(it.Artifacts, makeArtifact(t, r, snap.updatedAt))
		}
	}
	return it
}

func makeArtifact(kind string, r *run, at time.Time) artifact {
	a := artifact{Type: kind, CreatedAt: formatTime(at)}
	if kind == "PLAN" {
		a.Data = map[string]string{"document_uid": "doc-" + r.id[:8], "title": "Plan: " + r.title}
	} else {
		a.Data = map[string]string{"branch": "agent/" + r.id[:8], "url": "https://git.example.com/pulls/" + r.id[:8]}
	}
	return a
}

// skillName is the name a skill spec gives a run: the part after the colon,
// or the folder holding SKILL.md.
func skillName(spec string) string {
	_, path, ok := strings.Cut(spec, ":")
	if !ok {
		return spec
	}
	path = strings.TrimSuffix(path, "/SKILL.md")
	if i := strings.LastIndex(path, "/"); i >= 0 {
		path = path[i+1:]
	}
	return path
}

// titleFrom makes a title from a prompt the way a person would skim it: the
// first line, cut at a word boundary.
func titleFrom(prompt string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	if !singleSpaced(line) {
		line = strings.Join(strings.Fields(line), " ")
	}
	const max = 60
	if !utf8.ValidString(line) { // []rune turns bad bytes into U+FFFD
		if len([]rune(line)) <= max {
			return line
		}
		line = string([]rune(line)[:max+1])
	}
	// A title that is a part of the prompt shares its memory.
	end, n := 0, 0
	for end < len(line) && n < max {
		_, size := utf8.DecodeRuneInString(line[end:])
		end += size
		n++
	}
	if end == len(line) {
		return line
	}
	cut := line[:end]
	if i := strings.LastIndex(cut, " "); i > max/2 {
		cut = cut[:i]
	}
	return cut + "…"
}

// singleSpaced reports whether strings.Join(strings.Fields(s), " ") is s:
// no space but single ' ' between words.
func singleSpaced(s string) bool {
	prevSpace := true // no leading space
	for _, r := range s {
		switch {
		case r == ' ':
			if prevSpace {
				return false
			}
			prevSpace = true
		case unicode.IsSpace(r):
			return false
		default:
			prevSpace = false
		}
	}
	return !prevSpace || s == ""
}
