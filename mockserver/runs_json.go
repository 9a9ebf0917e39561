package mockserver

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/agentruns/agentruns/fixtures/undeclared"
	"github.com/agentruns/agentruns/mockserver/store"
)

// runs_fields.go: requestFields and appendMembers.
//go:generate go test -run TestRunFieldsAreGenerated -args -generate

// A run's JSON. The answers the API gives most (a run, a page of runs, a
// create) are written by hand, straight from the store's records:
// encoding/json's reflection, and building RunItems to feed it, were most
// of what a GET or a page of runs cost. The output is byte for byte what
// json.Marshal gives for the RunItem, ListRunsResponse and RunAgentResponse
// they stand for (runs_json_test.go holds it to that), but for a recorded
// run's request_usage, written as the recording saw it (store.Recorded),
// which may hold fewer figures than RequestUsage or more. The rare paths that
// want a RunItem value (the Go API) decode this output (runItem), so the
// encoder is the one place a run's shape is written.

// RunItem is the JSON shape of a run, as the API returns it, and the one
// declaration of the answer's members: the mock writes it with
// runJSON.appendJSON, whose members (appendMembers, generated into
// runs_fields.go) follow the show tags. A tag names the field of the
// store.View shown ("Run.ParentRunID", a method's result too), written by
// the line its type asks for, or a show method of runJSON that writes the
// member ("showScope()"); "-" is a member the one before it writes.
// Otherwise this type is for reading the answer.
type RunItem struct {
	RunID          string          `json:"run_id" show:"Run.ID"`
	TaskID         string          `json:"task_id" show:"Run.ID"`
	Title          string          `json:"title" show:"Run.Title"`
	State          State           `json:"state" show:"Snap.State"`
	Location       string          `json:"execution_location,omitempty" show:"Run.ExecutionLocation()"`
	Prompt         string          `json:"prompt" show:"Run.Prompt"`
	CreatedAt      string          `json:"created_at" show:"Run.CreatedAt"`
	UpdatedAt      string          `json:"updated_at" show:"Snap.UpdatedAt"`
	StartedAt      *string         `json:"started_at,omitempty" show:"Snap.StartedAt"`
	StatusMessage  *StatusMessage  `json:"status_message,omitempty" show:"Msg"`
	Source         string          `json:"source,omitempty" show:"Run.Source"`
	SessionID      string          `json:"session_id,omitempty" show:"showSession()"`
	SessionLink    string          `json:"session_link,omitempty" show:"-"` // by showSession
	TriggerURL     string          `json:"trigger_url,omitempty" show:"Run.TriggerURL"`
	Creator        *creatorInfo    `json:"creator,omitempty" show:"Run.Creator"`
	RequestUsage   *RequestUsage   `json:"request_usage,omitempty" show:"showUsage()"`
	AgentConfig    *AgentConfig    `json:"agent_config,omitempty" show:"Run.Config"`
	ConversationID string          `json:"conversation_id,omitempty" show:"showConversation()"`
	ParentRunID    string          `json:"parent_run_id,omitempty" show:"Run.ParentRunID"`
	SandboxRunning bool            `json:"is_sandbox_running" show:"showSandboxRunning()"`
	Schedule       *store.Schedule `json:"schedule,omitempty" show:"Run.Schedule"`
	Scope          *runScope       `json:"scope,omitempty" show:"showScope()"`
	AgentSkill     *agentSkill     `json:"agent_skill,omitempty" show:"showSkill()"`
	Artifacts      []artifact      `json:"artifacts,omitempty" show:"showArtifacts()"`
	// Newer than the published document (oz-agent-sdk 1.4.0-alpha.6).
	Executor             *creatorInfo      `json:"executor,omitempty" show:"showExecutor()"`
	IsRunTypeCancellable bool              `json:"is_run_type_cancellable" show:"showTypeCancellable()"`
	Metadata             map[string]string `json:"metadata,omitempty" show:"Run.Metadata"`
	RunTime              string            `json:"run_time,omitempty" show:"showRunTime()"`
}

type agentSkill struct {
	Name     string `json:"name,omitempty"`
	FullPath string `json:"full_path,omitempty"`
}

// RequestUsage is what a run has cost so far.
type RequestUsage struct {
	InferenceCost float64 `json:"inference_cost"`
	ComputeCost   float64 `json:"compute_cost"`
	// Newer than the published document (oz-agent-sdk 1.4.0-alpha.6).
	PlatformCost     float64 `json:"platform_cost"`
	InferenceCostUSD float64 `json:"inference_cost_usd"`
	ComputeCostUSD   float64 `json:"compute_cost_usd"`
	PlatformCostUSD  float64 `json:"platform_cost_usd"`
	TotalTokens      int64   `json:"total_tokens"`
}

type artifact struct {
	Type      string         `json:"artifact_type"`
	CreatedAt string         `json:"created_at"`
	Data      map[string]any `json:"data"`
}

// ListRunsResponse is one page of runs.
type ListRunsResponse struct {
	Runs     []RunItem `json:"runs"`
	PageInfo PageInfo  `json:"page_info"`
}

// PageInfo says whether another page follows and how to ask for it.
type PageInfo struct {
	HasNextPage bool   `json:"has_next_page"`
	NextCursor  string `json:"next_cursor,omitempty"`
}

var (
	_ jsonAppender = runJSON{}
	_ jsonAppender = runPage{}
	_ jsonAppender = RunAgentResponse{}
)

// runJSON is a run as shown at one instant, with the base of its agent
// session link (without a trailing slash).
type runJSON struct {
	store.View
	linkBase string
}

// runItem is the RunItem the API shows for v: its JSON, decoded.
func runItem(v store.View, linkBase string) RunItem {
	var it RunItem
	if err := json.Unmarshal(runJSON{v, linkBase}.appendJSON(nil), &it); err != nil {
		panic("mockserver: a run's own JSON does not decode: " + err.Error()) // runs_json_test.go rules it out
	}
	return it
}

// appendJSON writes the run's RunItem straight from the record: no RunItem,
// no timestamp strings, no artifact maps. A page of runs costs what its
// bytes cost. The members are written in RunItem's order by appendMembers
// (runs_fields.go), generated from RunItem's show tags: a member shown as a
// field of the view is written by the generated line its type asks for,
// any other by the show method its tag names, below.
func (v runJSON) appendJSON(b []byte) []byte {
	start := len(b)
	o := openObject(b)
	v.appendMembers(&o)
	b = o.close()
	if x := v.Run.Extra; len(x) > 0 {
		// What a real server showed beyond the document (a recorded
		// fixture's): rare, so only such a run pays for it.
		b = undeclared.Insert(b[:start], bytes.Clone(b[start:]), x)
	}
	return b
}

// showSession writes session_id and session_link once a worker has the
// run.
func (v *runJSON) showSession(o *object, k string) {
	if !v.Snap.Claimed {
		return
	}
	var buf [36]byte
	id := buf[:]
	if rec := v.Run.SessionIDText(); rec != "" { // as a recording saw it
		id = append(id[:0], rec...)
	} else {
		hexUUID(&buf, v.Run.AgentSession)
	}
	o.key(k)
	o.b = append(append(append(o.b, '"'), id...), '"')
	o.key("session_link")
	o.b = appendEscaped(append(o.b, '"'), v.linkBase)
	o.b = append(append(append(o.b, '/'), id...), '"')
}

func (v *runJSON) showUsage(o *object, k string) {
	if u := v.Run.RecordedUsage(); u != nil {
		// As a recording saw it, whatever the state: the mock does not
		// grow figures it did not make.
		o.key(k)
		o.b = append(o.b, u...)
		return
	}
	u, ok := usage(v.Snap)
	if !ok {
		return
	}
	o.key(k)
	uo := openObject(o.b)
	uo.key("inference_cost")
	uo.b = appendFloat(uo.b, u.InferenceCost)
	uo.key("compute_cost")
	uo.b = appendFloat(uo.b, u.ComputeCost)
	for _, f := range []struct {
		k string
		v float64
	}{{"platform_cost", u.PlatformCost}, {"inference_cost_usd", u.InferenceCostUSD}, {"compute_cost_usd", u.ComputeCostUSD}, {"platform_cost_usd", u.PlatformCostUSD}} {
		uo.key(f.k)
		uo.b = appendFloat(uo.b, f.v)
	}
	uo.key("total_tokens")
	uo.b = strconv.AppendInt(uo.b, u.TotalTokens, 10)
	o.b = uo.close()
}

// showConversation: a run shows its conversation once it has one
// (conversations.go).
func (v *runJSON) showConversation(o *object, k string) {
	r, snap := v.Run, &v.Snap
	switch {
	case r.ConversationID != "":
		o.str(k, r.ConversationID)
	case snap.Claimed && r.Recorded != nil && r.Recorded.Conversation != "":
		o.str(k, r.Recorded.Conversation) // as recorded
	case snap.Claimed:
		var id [36]byte
		hexUUID(&id, r.BegunConversation())
		o.key(k)
		o.b = append(append(append(o.b, '"'), id[:]...), '"')
	}
}

func (v *runJSON) showSandboxRunning(o *object, k string) {
	o.key(k)
	o.b = strconv.AppendBool(o.b, sandboxRunning(v.Snap))
}

func (v *runJSON) showScope(o *object, k string) {
	o.key(k)
	so := openObject(o.b)
	if v.Run.TeamScope {
		so.str("type", "Team")
		so.strOmit("uid", v.Run.Team)
	} else {
		so.str("type", "User")
		so.strOmit("uid", v.Run.Creator.UID)
	}
	o.b = so.close()
}

func (v *runJSON) showSkill(o *object, k string) {
	if !v.Run.ShowsSkill() {
		return
	}
	o.key(k)
	ko := openObject(o.b)
	ko.strOmit("name", store.SkillName(v.Run.Config.SkillSpec))
	ko.strOmit("full_path", v.Run.Config.SkillSpec)
	o.b = ko.close()
}

// showArtifacts writes each kind's data, with its keys in the sorted order
// encoding/json writes maps in.
func (v *runJSON) showArtifacts(o *object, k string) {
	if !v.ShowsArtifacts() {
		return
	}
	r, snap := v.Run, &v.Snap
	o.key(k)
	o.b = append(o.b, '[')
	short := r.Short()
	for i, kind := range r.ArtifactTypes {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		ao := openObject(o.b)
		ao.str("artifact_type", kind)
		ao.time("created_at", snap.UpdatedAt)
		ao.key("data")
		do := openObject(ao.b)
		var uid [36]byte
		hexUUID(&uid, r.ArtifactUID(i))
		// What GET /agent/artifacts/{artifactUid} answers shares these
		// values (artifacts_handlers.go).
		switch kind {
		case store.ArtifactPlan:
			do.prefixed("artifact_uid", "", string(uid[:]))
			do.prefixed("document_uid", store.PlanDocumentPrefix, short)
			do.prefixed("notebook_uid", store.PlanNotebookPrefix, short)
			do.prefixed("title", store.PlanTitlePrefix, r.Title)
			if rec := r.Recorded; rec != nil && rec.PlanURL != "" {
				do.str("url", rec.PlanURL) // as recorded; the mock's own plans have none
			}
		case store.ArtifactPullRequest:
			if rec := r.Recorded; rec != nil && rec.PullRequestURL != "" { // as recorded
				do.str("branch", rec.PullRequestBranch)
				do.str("url", rec.PullRequestURL)
				break
			}
			do.prefixed("branch", store.PullRequestBranch, short)
			do.prefixed("url", store.PullRequestURL, short)
		case store.ArtifactScreenshot:
			do.prefixed("artifact_uid", "", string(uid[:]))
			do.str("description", store.ScreenshotDesc)
			do.str("mime_type", store.ScreenshotMIMEType)
		default: // FILE
			do.prefixed("artifact_uid", "", string(uid[:]))
			do.str("description", store.FileArtifactDesc)
			do.str("filename", store.FileArtifactName)
			do.str("filepath", store.FileArtifactPath)
			do.str("mime_type", store.FileArtifactMIMEType)
			do.key("size_bytes")
			do.b = strconv.AppendInt(do.b, fileSize(r), 10)
		}
		ao.b = do.close()
		o.b = ao.close()
	}
	o.b = append(o.b, ']')
}

// showExecutor: a recorded run shows its executor as its recording saw
// it, or not at all when it never saw one.
func (v *runJSON) showExecutor(o *object, k string) {
	r := v.Run
	switch rec := r.Recorded; {
	case !r.ShowsMember(k):
	case rec != nil && rec.Executor != nil:
		o.key(k)
		o.b = append(o.b, rec.Executor...)
	default:
		ex := r.Creator
		if r.Executor != nil && r.Executor.Principal != nil {
			ex = *r.Executor
		}
		o.principal(k, ex)
	}
}

// showTypeCancellable: as showExecutor, as recorded.
func (v *runJSON) showTypeCancellable(o *object, k string) {
	r := v.Run
	switch rec := r.Recorded; {
	case !r.ShowsMember(k):
	case rec != nil && rec.TypeCancellable != nil:
		o.key(k)
		o.b = strconv.AppendBool(o.b, *rec.TypeCancellable)
	default:
		o.key(k)
		o.b = strconv.AppendBool(o.b, r.TypeCancellable())
	}
}

func (v *runJSON) showRunTime(o *object, k string) {
	if d, ok := runTime(v.Run, v.Snap); ok {
		o.key(k)
		o.b = append(appendISODuration(append(o.b, '"'), d), '"')
	}
}

// runTime is how long the run has executed, every execution together, as
// an ISO 8601 duration: shown once it has started or ended.
func runTime(r *store.Run, snap store.Snapshot) (time.Duration, bool) {
	if snap.StartedAt.IsZero() && !snap.State.Terminal() && r.Timeline.Execution == 0 {
		return 0, false
	}
	return snap.RunTime, true
}

// sandboxRunning: a run's sandbox is up from the moment a worker has it
// until the run stops.
func sandboxRunning(snap store.Snapshot) bool {
	return snap.Claimed && !snap.State.Terminal()
}

// usage is what a run has cost, once it has started: a price per second
// of work, up to its latest change, so the figures only grow and stay the
// same between changes.
//
// Per second of run time: 2500 tokens, 0.0025 credits of inference, 0.0004
// of compute and 0.0001 of platform, a credit at 5 cents.
func usage(snap store.Snapshot) (RequestUsage, bool) {
	if snap.StartedAt.IsZero() {
		return RequestUsage{}, false
	}
	secs := max(0, snap.RunTime.Milliseconds()/1000)
	return RequestUsage{
		InferenceCost: float64(secs*25) / 10000, ComputeCost: float64(secs*4) / 10000, PlatformCost: float64(secs) / 10000,
		InferenceCostUSD: float64(secs*125) / 1e6, ComputeCostUSD: float64(secs*20) / 1e6, PlatformCostUSD: float64(secs*5) / 1e6,
		TotalTokens: secs * 2500,
	}, true
}

// fileSize is the size a run's FILE artifact reports: that of the bytes
// its download serves.
func fileSize(r *store.Run) int64 { return int64(store.FileContentLen(r)) }

// runPage is one page of runs as views; its JSON is a ListRunsResponse's.
type runPage struct {
	runs     []store.View
	linkBase string
	info     PageInfo
	// cache, when set, holds the JSON of runs shown before (runs_cache.go).
	cache *runCache
	// encoded, when set, is the start of the page's JSON, up to its last run
	// (fitPage), in pooled, a buffer of bodyBuffers that writeAppended gives
	// back.
	encoded []byte
	pooled  *[]byte
}

// maxPageBytes is the budget of one page of runs. A page whose runs would
// take more ends early, with has_next_page and a cursor to the rest, so one
// answer costs the mock at most this plus one run (a single run is always
// sent, however large), whatever limit was asked for.
const maxPageBytes = 2 << 20

// pageStart is how a page's JSON begins, before its first run.
const pageStart = `{"runs":[`

// fitPage writes the page's runs until the byte budget is spent and says
// how many it kept. The budget counts the runs' JSON and the commas between
// them.
func (p *runPage) fitPage(budget int) int {
	p.pooled = bodyBuffers.Get().(*[]byte)
	b := append((*p.pooled)[:0], pageStart...)
	budget += len(pageStart)
	for i := range p.runs {
		start := len(b)
		if i > 0 {
			b = append(b, ',')
		}
		b = p.appendRun(b, p.runs[i])
		if len(b) > budget && i > 0 {
			p.encoded, p.runs = b[:start], p.runs[:i]
			return i
		}
	}
	p.encoded = b
	return len(p.runs)
}

func (p *runPage) appendRun(b []byte, v store.View) []byte {
	if p.cache != nil {
		return p.cache.appendRun(b, v, p.linkBase)
	}
	return runJSON{v, p.linkBase}.appendJSON(b)
}

// finish completes the JSON fitPage began, in its buffer.
func (p runPage) finish() []byte { return p.appendEnd(p.encoded) }

func (p runPage) appendJSON(b []byte) []byte {
	if p.encoded != nil {
		return p.appendEnd(append(b, p.encoded...))
	}
	b = append(b, pageStart...)
	for i := range p.runs {
		if i > 0 {
			b = append(b, ',')
		}
		b = p.appendRun(b, p.runs[i])
	}
	return p.appendEnd(b)
}

// appendEnd closes the list of runs and writes page_info.
func (p runPage) appendEnd(b []byte) []byte {
	b = append(b, `],"page_info":{"has_next_page":`...)
	b = strconv.AppendBool(b, p.info.HasNextPage)
	if p.info.NextCursor != "" {
		b = append(b, `,"next_cursor":`...)
		b = appendJSONString(b, p.info.NextCursor)
	}
	return append(b, '}', '}')
}

func (a RunAgentResponse) appendJSON(b []byte) []byte {
	o := openObject(b)
	o.str("run_id", a.RunID)
	o.str("task_id", a.TaskID)
	o.str("state", string(a.State))
	return o.close()
}

func appendStatusMessage(b []byte, m *store.StatusMessage) []byte {
	o := openObject(b)
	o.str("message", m.Message)
	o.strOmit("error_code", m.ErrorCode)
	o.boolPtrOmit("retryable", m.Retryable)
	return o.close()
}

func appendSchedule(b []byte, s *store.Schedule) []byte {
	o := openObject(b)
	o.str("schedule_id", s.ID)
	o.str("schedule_name", s.Name)
	o.str("cron_schedule", s.Cron)
	return o.close()
}

func appendAgentConfig(b []byte, c *store.AgentConfig) []byte {
	o := openObject(b)
	o.strOmit("name", c.Name)
	o.strOmit("model_id", c.ModelID)
	o.strOmit("base_prompt", c.BasePrompt)
	o.strOmit("environment_id", c.EnvironmentID)
	o.strOmit("skill_spec", c.SkillSpec)
	if len(c.MCPServers) > 0 {
		o.key("mcp_servers")
		keys := make([]string, 0, len(c.MCPServers))
		for k := range c.MCPServers {
			keys = append(keys, k)
		}
		slices.Sort(keys) // encoding/json sorts map keys
		mo := openObject(o.b)
		for _, k := range keys {
			m := c.MCPServers[k]
			mo.anyKey(k)
			so := openObject(mo.b)
			so.strOmit("warp_id", m.WarpID)
			so.strOmit("command", m.Command)
			if len(m.Args) > 0 {
				so.key("args")
				so.b = append(so.b, '[')
				for i, a := range m.Args {
					if i > 0 {
						so.b = append(so.b, ',')
					}
					so.b = appendJSONString(so.b, a)
				}
				so.b = append(so.b, ']')
			}
			so.strOmit("url", m.URL)
			if len(m.Env) > 0 {
				so.key("env")
				so.b = appendStringMap(so.b, m.Env)
			}
			if len(m.Headers) > 0 {
				so.key("headers")
				so.b = appendStringMap(so.b, m.Headers)
			}
			mo.b = so.close()
		}
		o.b = mo.close()
	}
	o.boolPtrOmit("computer_use_enabled", c.ComputerUseEnabled)
	o.strOmit("worker_host", c.WorkerHost)
	if c.IdleTimeoutMinutes != nil {
		o.key("idle_timeout_minutes")
		o.b = strconv.AppendInt(o.b, int64(*c.IdleTimeoutMinutes), 10)
	}
	if h := c.Harness; h != nil {
		o.key("harness")
		ho := openObject(o.b)
		ho.strOmit("type", h.Type)
		ho.strOmit("model_id", h.ModelID)
		ho.strOmit("reasoning_level", h.ReasoningLevel)
		o.b = ho.close()
	}
	if h := c.HarnessAuthSecrets; h != nil {
		o.key("harness_auth_secrets")
		ho := openObject(o.b)
		ho.strOmit("claude_auth_secret_name", h.ClaudeAuthSecretName)
		ho.strOmit("codex_auth_secret_name", h.CodexAuthSecretName)
		o.b = ho.close()
	}
	o.strOmit("computer_use_model_id", c.ComputerUseModelID)
	o.strOmit("credential_strategy", c.CredentialStrategy)
	// The rarer, newer parts are written by encoding/json: they hold no
	// more than a few values.
	marshalOmit := func(k string, v any, present bool) {
		if !present {
			return
		}
		o.key(k)
		js, _ := json.Marshal(v) // structs of strings and bools always marshal
		o.b = append(o.b, js...)
	}
	marshalOmit("inference_providers", c.InferenceProviders, c.InferenceProviders != nil)
	marshalOmit("memory_stores", c.MemoryStores, len(c.MemoryStores) > 0)
	o.strOmit("runner_id", c.RunnerID)
	marshalOmit("session_sharing", c.SessionSharing, c.SessionSharing != nil)
	marshalOmit("skills", c.Skills, len(c.Skills) > 0)
	return o.close()
}

// principal writes a creator or an executor under k.
func (o *object) principal(k string, p store.Creator) {
	o.key(k)
	po := openObject(o.b)
	po.strOmit("type", p.Type)
	po.strOmit("uid", p.UID)
	po.strOmit("display_name", p.DisplayName)
	po.strOmit("email", p.Email)
	po.strOmit("photo_url", p.PhotoURL)
	o.b = po.close()
}
