package refserver

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"
)

// run is one stored run. Its states are laid out in time when it is made
// (phases); what a caller sees depends on the clock, so a run moves in real
// time with no background work.
type run struct {
	id, taskID     string
	title, prompt  string
	source         string
	location       string // execution_location
	createdAt      time.Time
	creator        caller
	config         map[string]any // the resolved agent configuration
	skill          map[string]any // agent_skill, nil for a run without one
	schedule       map[string]any // nil unless a schedule started it
	triggerURL     string
	parentRunID    string
	conversation   string
	phases         []phase
	failure        map[string]any // status_message of a FAILED or ERROR end
	sessionID      string
	cancelledAt    time.Time // zero unless cancelled; may lie ahead (CancelLag)
	cancelAccepted time.Time // when the cancel was accepted
	lateSessions   bool      // shows its session from INPROGRESS only (Options.LateSessions)
	n              int       // which created run it is (plan), 0 for the seeded ones
	metadata       map[string]string
	followups      []followup // in the order sent (followups.go)
}

// phase is a state a run enters at a moment.
type phase struct {
	state string
	at    time.Time
}

// view is what a run looks like at one moment.
type view struct {
	state     string
	updatedAt time.Time
	startedAt time.Time // zero before it is in progress
	claimed   bool
	reached   map[string]time.Time // when each state seen so far began
}

func (r *run) at(now time.Time) view {
	v := view{state: r.phases[0].state, updatedAt: r.phases[0].at, reached: map[string]time.Time{}}
	cancelAt := r.cancelAt()
	for _, p := range r.phases {
		if p.at.After(now) || !cancelAt.IsZero() && p.at.After(r.cancelAccepted) {
			break
		}
		v.state, v.updatedAt = p.state, p.at
		if _, seen := v.reached[p.state]; !seen {
			v.reached[p.state] = p.at
		}
	}
	if !cancelAt.IsZero() && !cancelAt.After(now) {
		v.state, v.updatedAt = "CANCELLED", cancelAt
	}
	_, v.claimed = v.reached["CLAIMED"]
	v.startedAt = v.reached["INPROGRESS"]
	return v
}

// seen is the run's phases up to now, a cancel that has taken effect
// included as a CANCELLED phase: its history as a caller can know it.
func (r *run) seen(now time.Time) []phase {
	var out []phase
	for _, p := range r.phases {
		if p.at.After(now) || !r.cancelledAt.IsZero() && p.at.After(r.cancelAccepted) {
			break
		}
		out = append(out, p)
	}
	if !r.cancelledAt.IsZero() && !r.cancelledAt.After(now) {
		out = append(out, phase{"CANCELLED", r.cancelledAt})
	}
	return out
}

// cancelAt is when the run turns CANCELLED, zero when it was never
// cancelled. From the moment the cancel was accepted the run moves no
// further; with CancelLag it turns CANCELLED a while later.
func (r *run) cancelAt() time.Time { return r.cancelledAt }

// team is the team the run belongs to: its creator's.
func (r *run) team() string {
	if r.creator.team == "" {
		return team
	}
	return r.creator.team
}

func (r *run) selfHosted() bool {
	host, _ := r.config["worker_host"].(string)
	return host != "" && host != "warp"
}

func isTerminal(state string) bool {
	switch state {
	case "SUCCEEDED", "FAILED", "ERROR", "CANCELLED":
		return true
	}
	return false
}

// item is the run as the API shows it (the document's RunItem).
func (r *run) item(now time.Time) map[string]any {
	v := r.at(now)
	m := map[string]any{
		"run_id":             r.id,
		"task_id":            r.taskID,
		"title":              r.title,
		"prompt":             r.prompt,
		"state":              v.state,
		"source":             r.source,
		"execution_location": r.location,
		"created_at":         stamp(r.createdAt),
		"updated_at":         stamp(v.updatedAt),
		"creator":            map[string]any{"type": "user", "uid": r.creator.uid, "display_name": r.creator.name},
		"agent_config":       r.config,
		"scope":              map[string]any{"type": "Team", "uid": r.team()},
		"is_sandbox_running": v.state == "INPROGRESS" || v.state == "BLOCKED",
		"request_usage":      map[string]any{"inference_cost": 0.0, "compute_cost": 0.0},
	}
	if !v.startedAt.IsZero() {
		m["started_at"] = stamp(v.startedAt)
		m["request_usage"] = map[string]any{"inference_cost": 0.042, "compute_cost": 0.013}
	} else {
		m["started_at"] = nil // the document allows an explicit null
	}
	if v.claimed && (!r.lateSessions || !v.startedAt.IsZero()) {
		m["session_id"] = r.sessionID
		m["session_link"] = "https://sessions.example.test/s/" + r.sessionID
		m["conversation_id"] = r.conversation
	}
	// The newest client's fields: the executor (here always the creator)
	// and the metadata given at creation.
	m["executor"] = m["creator"]
	if len(r.metadata) > 0 {
		m["metadata"] = r.metadata
	}
	if arts := r.artifacts(v); len(arts) > 0 {
		m["artifacts"] = arts
	}
	switch v.state {
	case "FAILED", "ERROR":
		m["status_message"] = r.failure
	case "CANCELLED":
		m["status_message"] = map[string]any{"message": "Cancelled through the API."}
	case "BLOCKED":
		m["status_message"] = map[string]any{"message": "Waiting for approval to push a branch."}
	}
	for k, val := range map[string]map[string]any{"agent_skill": r.skill, "schedule": r.schedule} {
		if val != nil {
			m[k] = val
		}
	}
	for k, val := range map[string]string{"trigger_url": r.triggerURL, "parent_run_id": r.parentRunID} {
		if val != "" {
			m[k] = val
		}
	}
	return m
}

// artifacts grow as the run works: a plan once it is in progress, then a
// pull request, a screenshot and a file when it succeeds.
func (r *run) artifacts(v view) []any {
	var out []any
	if t, ok := v.reached["INPROGRESS"]; ok {
		out = append(out, map[string]any{"artifact_type": "PLAN", "created_at": stamp(t), "data": map[string]any{
			"artifact_uid": "art-plan-" + r.id[:8], "document_uid": "doc-" + r.id[:8], "title": "Plan for " + r.title,
			"url": "https://drive.example.test/plans/" + r.id[:8],
		}})
	}
	if t, ok := v.reached["SUCCEEDED"]; ok {
		out = append(out,
			map[string]any{"artifact_type": "PULL_REQUEST", "created_at": stamp(t), "data": map[string]any{
				"url": "https://git.example.test/acme/app/pull/" + r.id[:4], "branch": "agent/" + r.id[:8],
			}},
			map[string]any{"artifact_type": "SCREENSHOT", "created_at": stamp(t), "data": map[string]any{
				"artifact_uid": "art-shot-" + r.id[:8], "mime_type": "image/png", "description": "The page after the change",
			}},
			map[string]any{"artifact_type": "FILE", "created_at": stamp(t), "data": map[string]any{
				"artifact_uid": "art-file-" + r.id[:8], "filepath": "out/report.md", "filename": "report.md",
				"mime_type": "text/markdown", "size_bytes": 2048,
			}},
		)
	}
	return out
}

// stamp writes a time as RFC 3339 with nanoseconds, in UTC.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// newID returns a random UUID (version 4).
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return fmt.Sprintf("%s-%s-%s-%s-%s", h[0:8], h[8:12], h[12:16], h[16:20], h[20:])
}

// seededRuns are older runs from other sources, present before any caller
// creates one: every state and source the document names, fields the mock
// never sends, and task ids that differ from their run ids (the document
// says they only "typically" match).
func seededRuns(now time.Time) []*run {
	day := 24 * time.Hour
	other := caller{uid: "user-colleague", name: "A colleague"}
	mk := func(age time.Duration, source, title string, states ...string) *run {
		created := now.Add(-age)
		r := &run{
			id: newID(), title: title, prompt: title + ", please.", source: source, location: "REMOTE",
			createdAt: created, creator: other, sessionID: newID(), conversation: newID(),
			config: map[string]any{"name": "nightly-" + source, "model_id": "claude-4-sonnet"},
		}
		r.taskID = "task-" + r.id
		for i, st := range states {
			r.phases = append(r.phases, phase{st, created.Add(time.Duration(i) * time.Minute)})
		}
		return r
	}
	slack := mk(30*day, "SLACK", "Answer the on-call question", "QUEUED", "PENDING", "CLAIMED", "INPROGRESS", "SUCCEEDED")
	slack.triggerURL = "https://chat.example.test/archives/C1/p1"
	local := mk(20*day, "LOCAL", "Tidy the local branch", "QUEUED", "PENDING", "CLAIMED", "INPROGRESS")
	local.location = "LOCAL"
	action := mk(15*day, "GITHUB_ACTION", "Fix the lint job", "QUEUED", "PENDING", "CLAIMED", "INPROGRESS", "FAILED")
	action.failure = map[string]any{"message": "The repository could not be cloned.", "error_code": "environment_setup_failed", "retryable": false}
	scheduled := mk(10*day, "SCHEDULED_AGENT", "Weekly dependency check", "QUEUED", "PENDING", "CLAIMED", "INPROGRESS", "ERROR")
	scheduled.failure = map[string]any{"message": "The worker went away.", "error_code": "internal_error", "retryable": true}
	scheduled.schedule = map[string]any{"schedule_id": "sched-weekly", "schedule_name": "Weekly dependencies", "cron_schedule": "0 6 * * 1"}
	web := mk(5*day, "WEB_APP", "Draft the migration", "QUEUED", "PENDING", "CLAIMED", "INPROGRESS", "BLOCKED")
	cli := mk(4*day, "CLI", "Rename the flag", "QUEUED", "PENDING", "CANCELLED")
	linear := mk(3*day, "LINEAR", "Close the stale issue", "QUEUED")
	linear.config["worker_host"] = "build-box-7"
	linear.triggerURL = "https://issues.example.test/ACME-12"
	child := mk(2*day, "CLOUD_MODE", "Split the follow-up", "QUEUED", "PENDING", "CLAIMED", "INPROGRESS", "SUCCEEDED")
	child.parentRunID = web.id
	child.skill = map[string]any{"name": "follow-ups", "full_path": "acme/skills:follow-ups/SKILL.md"}
	child.config["skill_spec"] = "acme/skills:follow-ups/SKILL.md"
	return []*run{slack, local, action, scheduled, web, cli, linear, child}
}
