package rules

import (
	"reflect"
	"time"
)

// What the published document promises of a run, and so what is held:
//   - a FAILED or ERROR run carries a status_message with a message and an
//     error_code ("for terminal error states, includes structured error
//     code");
//   - started_at ("when the agent started working") is null or absent while
//     the run is QUEUED or PENDING, set while it is INPROGRESS or BLOCKED,
//     and never before created_at; created_at is not after updated_at;
//   - a run seen in a terminal state never changes afterwards, and the
//     states seen over time only move forward.
//
// session_link is not promised at any state of an arbitrary run; for a run
// created through the API the suite holds it once the run is claimed, and
// so does CreatedRunRules, once the run shows its session.

// RunAlone checks what holds for a run in any single look. field is where
// the run sits in the answer ("body", "body.runs[3]").
func RunAlone(field string, run map[string]any) []Violation {
	var out []Violation
	id, state := Str(run["run_id"]), Str(run["state"])
	if state == "FAILED" || state == "ERROR" {
		msg, _ := Lookup(run, "status_message.message")
		code, _ := Lookup(run, "status_message.error_code")
		switch {
		case Str(msg) == "":
			out = append(out, Violation{Rule: EndedRunSaysWhy, Field: field + ".status_message.message", RunID: id,
				Expected: "a message on a " + state + " run", Got: Show(run["status_message"])})
		case Str(code) == "":
			out = append(out, Violation{Rule: EndedRunSaysWhy, Field: field + ".status_message.error_code", RunID: id,
				Expected: "an error_code on a " + state + " run", Got: Show(run["status_message"])})
		}
	}
	started := run["started_at"]
	switch {
	case (state == "QUEUED" || state == "PENDING") && started != nil:
		out = append(out, Violation{Rule: StartedAtFitsState, Field: field + ".started_at", RunID: id,
			Expected: "no started_at while the run is " + state, Got: Show(started)})
	case (state == "INPROGRESS" || state == "BLOCKED") && started == nil:
		out = append(out, Violation{Rule: StartedAtFitsState, Field: field + ".started_at", RunID: id,
			Expected: "a started_at while the run is " + state, Got: "none"})
	}
	created, ok := timeOf(run, "created_at")
	if !ok {
		return out
	}
	for _, f := range []string{"updated_at", "started_at"} {
		if t, ok := timeOf(run, f); ok && t.Before(created) {
			out = append(out, Violation{Rule: TimestampsOrdered, Field: field + "." + f, RunID: id,
				Expected: "not before created_at " + Str(run["created_at"]), Got: Str(run[f])})
		}
	}
	return out
}

// Look is one look at a run: the fields that change as it moves, and when
// the look was asked for and answered, so that two looks whose requests
// overlapped in time are not ordered.
type Look struct {
	State         string
	UpdatedAt     any
	StartedAt     any
	StatusMessage any
	// What a run keeps and accumulates (rules of newest.go).
	CreatedAt, Creator, Prompt, Metadata, Conversation any
	RunTime, Usage, Executor, Cancellable              any
	Sent                                               time.Time
	Received                                           time.Time
	Request                                            string // "GET /agent/runs/{id}", for messages
}

// LookAt takes a look from a run as answered.
func LookAt(run map[string]any, sent, received time.Time, request string) Look {
	return Look{
		State: Str(run["state"]), UpdatedAt: run["updated_at"], StartedAt: run["started_at"],
		StatusMessage: run["status_message"], Sent: sent, Received: received, Request: request,
		CreatedAt: run["created_at"], Creator: run["creator"], Prompt: run["prompt"], Metadata: run["metadata"],
		Conversation: run["conversation_id"], RunTime: run["run_time"], Usage: run["request_usage"],
		Executor: run["executor"], Cancellable: run["is_run_type_cancellable"],
	}
}

// Before tells whether l was answered before later was asked: only then is
// it earlier for sure.
func (l Look) Before(later Look) bool { return l.Received.Before(later.Sent) }

// MovedOn checks a later look at a run against an earlier one: forward
// only, and nothing changes once the run has ended. The caller makes sure
// before.Before(now).
func MovedOn(field, id string, before, now Look) []Violation {
	if IsTerminal(before.State) {
		fields := []struct {
			name string
			a, b any
		}{
			{"state", before.State, now.State},
			{"updated_at", before.UpdatedAt, now.UpdatedAt},
			{"started_at", before.StartedAt, now.StartedAt},
			{"status_message", before.StatusMessage, now.StatusMessage},
		}
		for _, f := range fields {
			if !reflect.DeepEqual(f.a, f.b) {
				return []Violation{{Rule: TerminalRunNeverChanges, Field: field + "." + f.name, RunID: id,
					Expected: Show(f.a) + " as when the run was seen " + before.State + " (" + before.Request + ")",
					Got:      Show(f.b)}}
			}
		}
		return nil
	}
	if r, ok := rank[now.State]; ok && r < rank[before.State] {
		return []Violation{{Rule: StatesMoveForward, Field: field + ".state", RunID: id,
			Expected: "a state at least as far as " + before.State + " (seen by " + before.Request + ")",
			Got:      now.State}}
	}
	return nil
}

// CreatedRunRules checks what holds for a run created through the API, in
// any look: its task is itself, and once claimed or later, a run that
// shows its session (session_id) links to it (session_link), and keeps the
// link once shown. When a session shows is the server's choice ("if
// available"): the mock shows it from CLAIMED on, another server from
// INPROGRESS on. wasLinked says the run was seen with a session link
// before.
func CreatedRunRules(field string, run map[string]any, wasLinked bool) []Violation {
	var out []Violation
	id := Str(run["run_id"])
	if task, ok := run["task_id"]; ok && task != nil && Str(task) != id {
		out = append(out, Violation{Rule: CreatedRunIsItsTask, Field: field + ".task_id", RunID: id,
			Expected: "the run's run_id " + Show(id), Got: Show(task)})
	}
	switch Str(run["state"]) {
	case "CLAIMED", "INPROGRESS", "BLOCKED", "SUCCEEDED":
		if Str(run["session_link"]) != "" {
			break
		}
		switch {
		case Str(run["session_id"]) != "":
			out = append(out, Violation{Rule: ClaimedRunLinksSession, Field: field + ".session_link", RunID: id,
				Expected: "a session_link, since the run shows its session_id " + Show(run["session_id"]), Got: Show(run["session_link"])})
		case wasLinked:
			out = append(out, Violation{Rule: ClaimedRunLinksSession, Field: field + ".session_link", RunID: id,
				Expected: "the session_link the run showed before, now that it is " + Str(run["state"]), Got: Show(run["session_link"])})
		}
	}
	return out
}
