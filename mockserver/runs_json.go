package mockserver

import (
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentruns/agentruns/internal/store"
)

// A run's JSON. The answers the API gives most (a run, a page of runs, a
// create) are written by hand, straight from the store's records:
// encoding/json's reflection, and building RunItems to feed it, were most
// of what a GET or a page of runs cost. The output is byte for byte what
// json.Marshal gives for the RunItem, ListRunsResponse and RunAgentResponse
// they stand for (runs_json_test.go holds it to that). The rare paths that
// want a RunItem value (the Go API) decode this output (runItem), so the
// encoder is the one place a run's shape is written.

// RunItem is the JSON shape of a run, as the API returns it. The mock
// writes it with runJSON.appendJSON; this type is for reading it.
type RunItem struct {
	RunID          string          `json:"run_id"`
	TaskID         string          `json:"task_id"`
	Title          string          `json:"title"`
	State          State           `json:"state"`
	Location       string          `json:"execution_location,omitempty"`
	Prompt         string          `json:"prompt"`
	CreatedAt      string          `json:"created_at"`
	UpdatedAt      string          `json:"updated_at"`
	StartedAt      *string         `json:"started_at,omitempty"`
	StatusMessage  *StatusMessage  `json:"status_message,omitempty"`
	Source         string          `json:"source,omitempty"`
	SessionID      string          `json:"session_id,omitempty"`
	SessionLink    string          `json:"session_link,omitempty"`
	TriggerURL     string          `json:"trigger_url,omitempty"`
	Creator        *creatorInfo    `json:"creator,omitempty"`
	RequestUsage   *RequestUsage   `json:"request_usage,omitempty"`
	AgentConfig    *AgentConfig    `json:"agent_config,omitempty"`
	ConversationID string          `json:"conversation_id,omitempty"`
	ParentRunID    string          `json:"parent_run_id,omitempty"`
	SandboxRunning bool            `json:"is_sandbox_running"`
	Schedule       *store.Schedule `json:"schedule,omitempty"`
	Scope          *runScope       `json:"scope,omitempty"`
	AgentSkill     *agentSkill     `json:"agent_skill,omitempty"`
	Artifacts      []artifact      `json:"artifacts,omitempty"`
	// Newer than the published document (oz-agent-sdk 1.4.0-alpha.6).
	Executor             *creatorInfo      `json:"executor,omitempty"`
	IsRunTypeCancellable bool              `json:"is_run_type_cancellable"`
	Metadata             map[string]string `json:"metadata,omitempty"`
	RunTime              string            `json:"run_time,omitempty"`
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

// jsonAppender is a value that appends its own JSON encoding to b.
type jsonAppender interface {
	appendJSON(b []byte) []byte
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

// bodyBuffers keeps the buffers answers are encoded into: a page of 100
// runs is about 100 KB, and growing one each time costs more than the
// encoding.
var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// writeAppended answers status with v's JSON, as response.write does
// with json.Marshal's.
func writeAppended(w http.ResponseWriter, status int, v jsonAppender) {
	var bp *[]byte
	var body []byte
	if p, ok := v.(runPage); ok && p.pooled != nil {
		// fitPage wrote the runs into a buffer of its own: the page is
		// finished there rather than copied into another.
		bp, body = p.pooled, p.finish()
	} else {
		bp = bodyBuffers.Get().(*[]byte)
		body = v.appendJSON((*bp)[:0])
	}
	// Both headers in one allocation, set as they are (without Header.Set's
	// canonicalising); each slice is capped, so an append to one cannot
	// write over the other. Without a length net/http sends a body over
	// 2 KB (a page of runs) chunked, in more writes.
	vals := [2]string{"application/json", strconv.Itoa(len(body))}
	h := w.Header()
	h["Content-Type"], h["Content-Length"] = vals[0:1:1], vals[1:2:2]
	w.WriteHeader(status)
	_, _ = w.Write(body) // a Writer keeps no part of what it is given
	putBodyBuffer(bp, body)
}

// putBodyBuffer gives b, grown from *bp, back to bodyBuffers, unless it
// grew too big to keep.
func putBodyBuffer(bp *[]byte, b []byte) {
	if cap(b) <= 1<<20 {
		*bp = b[:0]
		bodyBuffers.Put(bp)
	}
}

// appendJSON writes the run's RunItem straight from the record: no RunItem,
// no timestamp strings, no artifact maps. A page of runs costs what its
// bytes cost.
func (v runJSON) appendJSON(b []byte) []byte {
	r, snap := v.Run, v.Snap
	o := openObject(b)
	o.str("run_id", r.ID)
	o.str("task_id", r.ID)
	o.str("title", r.Title)
	o.str("state", string(snap.State))
	o.str("execution_location", r.ExecutionLocation())
	o.str("prompt", r.Prompt)
	o.time("created_at", r.CreatedAt)
	o.time("updated_at", snap.UpdatedAt)
	if !snap.StartedAt.IsZero() {
		o.time("started_at", snap.StartedAt)
	}
	if m := v.Msg; m != nil {
		o.key("status_message")
		o.b = appendStatusMessage(o.b, m)
	}
	o.strOmit("source", r.Source)
	if snap.Claimed {
		var id [36]byte
		hexUUID(&id, r.AgentSession)
		o.key("session_id")
		o.b = append(append(append(o.b, '"'), id[:]...), '"')
		o.key("session_link")
		o.b = appendEscaped(append(o.b, '"'), v.linkBase)
		o.b = append(append(append(o.b, '/'), id[:]...), '"')
	}
	o.strOmit("trigger_url", r.TriggerURL)
	c := r.Creator
	o.key("creator")
	co := openObject(o.b)
	co.strOmit("type", c.Type)
	co.strOmit("uid", c.UID)
	co.strOmit("display_name", c.DisplayName)
	co.strOmit("email", c.Email)
	co.strOmit("photo_url", c.PhotoURL)
	o.b = co.close()
	if u, ok := usage(snap); ok {
		o.key("request_usage")
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
	if r.Config != nil {
		o.key("agent_config")
		o.b = appendAgentConfig(o.b, r.Config)
	}
	switch { // a run shows its conversation once it has one (conversations.go)
	case r.ConversationID != "":
		o.str("conversation_id", r.ConversationID)
	case snap.Claimed:
		var id [36]byte
		hexUUID(&id, r.BegunConversation())
		o.key("conversation_id")
		o.b = append(append(append(o.b, '"'), id[:]...), '"')
	}
	o.strOmit("parent_run_id", r.ParentRunID)
	o.key("is_sandbox_running")
	o.b = strconv.AppendBool(o.b, sandboxRunning(snap))
	if s := r.Schedule; s != nil {
		o.key("schedule")
		o.b = appendSchedule(o.b, s)
	}
	o.key("scope")
	so := openObject(o.b)
	if r.TeamScope {
		so.str("type", "Team")
		so.strOmit("uid", r.Team)
	} else {
		so.str("type", "User")
		so.strOmit("uid", c.UID)
	}
	o.b = so.close()
	if r.ShowsSkill() {
		o.key("agent_skill")
		ko := openObject(o.b)
		ko.strOmit("name", store.SkillName(r.Config.SkillSpec))
		ko.strOmit("full_path", r.Config.SkillSpec)
		o.b = ko.close()
	}
	if v.ShowsArtifacts() {
		// Each kind's data, with its keys in the sorted order encoding/json
		// writes maps in.
		o.key("artifacts")
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
			case store.ArtifactPullRequest:
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
	o.key("executor")
	eo := openObject(o.b)
	ex := c
	if r.Executor != nil && r.Executor.Principal != nil {
		ex = *r.Executor
	}
	eo.strOmit("type", ex.Type)
	eo.strOmit("uid", ex.UID)
	eo.strOmit("display_name", ex.DisplayName)
	eo.strOmit("email", ex.Email)
	eo.strOmit("photo_url", ex.PhotoURL)
	o.b = eo.close()
	o.key("is_run_type_cancellable")
	o.b = strconv.AppendBool(o.b, r.TypeCancellable())
	if len(r.Metadata) > 0 {
		o.key("metadata")
		o.b = appendStringMap(o.b, r.Metadata)
	}
	if d, ok := runTime(r, snap); ok {
		o.key("run_time")
		o.b = append(appendISODuration(append(o.b, '"'), d), '"')
	}
	return o.close()
}

// runTime is how long the run has executed, every execution together, as
// an ISO 8601 duration: shown once it has started or ended.
func runTime(r *store.Run, snap store.Snapshot) (time.Duration, bool) {
	if snap.StartedAt.IsZero() && !snap.State.Terminal() && r.Timeline.Execution == 0 {
		return 0, false
	}
	return snap.RunTime, true
}

// isoDuration writes d as an ISO 8601 duration to the millisecond:
// PT2M30S, PT1H0M0.25S, PT0S.
func isoDuration(d time.Duration) string { return string(appendISODuration(nil, d)) }

// appendISODuration appends isoDuration(d), which needs no escaping.
func appendISODuration(b []byte, d time.Duration) []byte {
	ms := d.Milliseconds()
	b = append(b, 'P', 'T')
	if h := ms / 3_600_000; h > 0 {
		b = strconv.AppendInt(b, h, 10)
		b = append(b, 'H')
	}
	if m := ms / 60_000 % 60; m > 0 || ms >= 3_600_000 {
		b = strconv.AppendInt(b, m, 10)
		b = append(b, 'M')
	}
	b = strconv.AppendInt(b, ms/1000%60, 10)
	if frac := ms % 1000; frac > 0 {
		// Three digits, without the trailing zeros: .25, not .250.
		digits := [3]byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
		n := 3
		for digits[n-1] == '0' {
			n--
		}
		b = append(append(b, '.'), digits[:n]...)
	}
	return append(b, 'S')
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

// appendFloat writes a float64 as encoding/json does: the shortest form
// that reads back the same, in exponent form only below 1e-6 or from 1e21
// on, with a two-digit exponent shortened to one ("1e-7", not "1e-07").
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

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

// hexUUID writes u in its canonical 36-character form, as u.String() does.
func hexUUID(dst *[36]byte, u [16]byte) {
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst[j] = '-'
			j++
		}
		dst[j], dst[j+1] = hexDigits[c>>4], hexDigits[c&0xF]
		j += 2
	}
}

// object appends the members of one JSON object, minding the commas.
type object struct {
	b     []byte
	first bool
}

func openObject(b []byte) object { return object{b: append(b, '{'), first: true} }

func (o *object) key(k string) {
	if !o.first {
		o.b = append(o.b, ',')
	}
	o.first = false
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':')
}

// anyKey is a key that may need escaping (a map's).
func (o *object) anyKey(k string) {
	if !o.first {
		o.b = append(o.b, ',')
	}
	o.first = false
	o.b = appendJSONString(o.b, k)
	o.b = append(o.b, ':')
}

func (o *object) str(k, v string) {
	o.key(k)
	o.b = appendJSONString(o.b, v)
}

// strOmit is a string field with omitempty.
func (o *object) strOmit(k, v string) {
	if v != "" {
		o.str(k, v)
	}
}

func (o *object) boolPtrOmit(k string, v *bool) {
	if v != nil {
		o.key(k)
		o.b = strconv.AppendBool(o.b, *v)
	}
}

// prefixed is a string field of value prefix+v, without building it;
// prefix needs no escaping.
func (o *object) prefixed(k, prefix, v string) {
	o.key(k)
	o.b = append(appendEscaped(append(append(o.b, '"'), prefix...), v), '"')
}

// time is a timestamp field; timestamps need no escaping.
func (o *object) time(k string, t time.Time) {
	o.key(k)
	o.b = append(appendTime(append(o.b, '"'), t), '"')
}

func (o *object) close() []byte { return append(o.b, '}') }

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

// appendStringMap is a map[string]string as encoding/json writes it: null
// when nil, keys sorted.
func appendStringMap(b []byte, m map[string]string) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, m[k])
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// plain8 reports whether all eight bytes of s are ASCII that a JSON string
// holds as they are (jsonSafe), testing them at once: a byte below 0x20 or
// with its top bit set, or equal to one of the five escaped characters, makes
// it false. The tests are the classic "has a zero byte" bit trick, which is
// exact about whether some byte matches.
func plain8(s string) bool {
	_ = s[7]
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	has := func(c uint64) uint64 { y := x ^ (ones * c); return (y - ones) &^ y }
	below := (x - ones*0x20) &^ x // some byte < 0x20, for bytes without the top bit
	return (x|below|has('"')|has('\\')|has('<')|has('>')|has('&'))&highs == 0
}

// jsonSafe marks the ASCII bytes a JSON string holds as they are: not the
// control characters, '"', '\\', nor the HTML-significant '<', '>' and '&'.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// appendJSONString is encoding/json's string encoding with HTML escaping,
// as json.Marshal does it: <, > and & as \u003c, \u003e and \u0026, invalid
// UTF-8 as \ufffd, and U+2028 and U+2029 escaped.
func appendJSONString(dst []byte, src string) []byte {
	return append(appendEscaped(append(dst, '"'), src), '"')
}

// appendEscaped is appendJSONString without the quotes.
func appendEscaped(dst []byte, src string) []byte {
	start := 0
	for i := 0; i < len(src); {
		// Most text needs no escaping: skip it eight bytes at a time.
		if i+8 <= len(src) && plain8(src[i:i+8]) {
			i += 8
			continue
		}
		if b := src[i]; b < utf8.RuneSelf {
			if jsonSafe[b] {
				i++
				continue
			}
			dst = append(dst, src[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(src[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, src[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, src[start:]...)
}
