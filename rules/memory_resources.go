package rules

import (
	"net/http"
	"strings"
	"time"
)

// The rules across answers beyond runs, listings and events: an
// environment follows the runs created in it, a deleted identity stays
// gone, a message's times are set once, a finished run takes no message,
// and a conversation holds every run that ended in it. Memory keeps what
// they need, bounded like the rest.

// envRun is the newest run seen in an environment.
type envRun struct {
	runID     string
	createdAt time.Time // zero while only its creation was seen
	by        string
	at        time.Time // when the answer that showed it arrived
}

// sighting is a fact one answer established, and when it arrived.
type sighting struct {
	value string
	by    string
	at    time.Time
}

// convRun is a run that ended in a conversation, with its prompt.
type convRun struct {
	runID, prompt, by string
	at                time.Time
}

// Bounds of what is kept per item.
const (
	keptPromptBytes = 200 // of a run's prompt, matched as a prefix
	maxRunsPerConv  = 100
)

// resourceLocked checks a 2xx answer of the resources beyond runs; handled
// is false for the answers Observe checks itself.
func (m *Memory) resourceLocked(scope string, ex Exchange, doc any) (out []Violation, handled bool) {
	obj, _ := doc.(map[string]any)
	segs := strings.Split(strings.Trim(ex.Path, "/"), "/")
	get, post := ex.Method == http.MethodGet, ex.Method == http.MethodPost
	switch {
	case get && ex.Path == "/agent/models" && obj != nil:
		return DefaultModelIn(obj), true
	case get && ex.Path == "/agent/environments" && obj != nil:
		envs := objects(obj["environments"])
		return append(EnvironmentsInOrder(ex.Query, envs), m.environmentsLocked(scope, ex, envs)...), true
	case get && ex.Path == "/agent" && obj != nil:
		return SkillsInOrder(ex.Query, objects(obj["agents"])), true
	case ex.Method == http.MethodDelete && len(segs) == 3 && segs[1] == "identities":
		uid := lastSegment(ex.Path)
		m.deleted.put(scope+"/"+uid, sighting{value: uid, by: ex.Request, at: ex.Received})
		return nil, true
	case get && ex.Path == "/agent/identities" && obj != nil:
		for i, a := range objects(obj["agents"]) {
			out = append(out, m.stillThereLocked(scope, ex, at("body.agents", i)+".uid", Str(a["uid"]))...)
		}
		return out, true
	case get && len(segs) == 3 && segs[1] == "identities":
		return m.stillThereLocked(scope, ex, "status", lastSegment(ex.Path)), true
	case post && ex.Path == "/agent/messages":
		return m.messageSentLocked(scope, ex), true
	case post && len(segs) == 4 && segs[1] == "messages" && segs[3] == "read" && obj != nil:
		return m.messageTimesLocked(scope, ex, "body", lastSegment("/"+segs[2]), obj), true
	case get && len(segs) == 3 && segs[1] == "messages":
		list, _ := doc.([]any)
		for i, item := range objects(list) {
			out = append(out, m.messageTimesLocked(scope, ex, at("body", i), Str(item["message_id"]), item)...)
		}
		return out, true
	case get && obj != nil && (len(segs) == 3 && segs[1] == "conversations" || len(segs) == 4 && segs[1] == "runs" && segs[3] == "conversation"):
		return append(ConversationInOrder(obj), m.conversationLocked(scope, ex, obj)...), true
	}
	return nil, false
}

// objects picks the objects of a JSON list.
func objects(v any) []map[string]any {
	list, _ := v.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, e := range list {
		if o, ok := e.(map[string]any); ok {
			out = append(out, o)
		}
	}
	return out
}

// createdLocked notes what a run's creation says of it: its prompt, and
// the environment it was created in.
func (m *Memory) createdLocked(scope string, ex Exchange, id string) {
	body, ok := ex.request()
	if !ok {
		return
	}
	var req struct {
		Prompt, OnBehalfOf, Parent string
		Metadata                   map[string]any
		Config                     struct{ EnvironmentID string }
	}
	read := membersOf(body)
	req.Prompt, req.Metadata = read.str("prompt"), read.mapOf("metadata")
	req.OnBehalfOf, req.Parent = read.str("on_behalf_of"), read.str("parent_run_id")
	config := read.object("config")
	req.Config.EnvironmentID = config.str("environment_id")
	if !read.ok || !config.ok {
		return
	}
	f := m.factsLocked(scope, id)
	if len(req.Prompt) > keptPromptBytes {
		req.Prompt = req.Prompt[:keptPromptBytes]
	}
	f.prompt = req.Prompt
	if len(req.Metadata) > 0 {
		m.createdWithLocked(f, ex, req.Metadata)
	}
	if req.OnBehalfOf != "" {
		f.newestFacts().onBehalfOf = req.OnBehalfOf
	}
	m.parents.put(scope+"/"+id, req.Parent) // the creation says it: a run created without a parent has none
	if env := req.Config.EnvironmentID; env != "" {
		m.envNewest.put(scope+"/"+env, envRun{runID: id, by: ex.Request, at: ex.Received})
	}
}

// sawRunLocked notes what a look at a run says of the environment it
// was created in and of the conversation it ended in.
func (m *Memory) sawRunLocked(scope string, ex Exchange, f *runFacts, run map[string]any) {
	id := Str(run["run_id"])
	if env, _ := Lookup(run, "agent_config.environment_id"); Str(env) != "" {
		if created, ok := timeOf(run, "created_at"); ok {
			// A run whose creation was seen but not yet its time stays the
			// newest: it was created after everything seen before it.
			key := scope + "/" + Str(env)
			newest, known := m.envNewest.get(key)
			if !known || newest.runID == id || !newest.createdAt.IsZero() && created.After(newest.createdAt) {
				m.envNewest.put(key, envRun{runID: id, createdAt: created, by: ex.Request, at: ex.Received})
			}
		}
	}
	conv := Str(run["conversation_id"])
	if f.prompt == "" || conv == "" || !IsTerminal(Str(run["state"])) {
		return
	}
	key := scope + "/" + conv
	runs, _ := m.convRuns.get(key)
	for _, r := range runs {
		if r.runID == id {
			return
		}
	}
	if len(runs) < maxRunsPerConv {
		m.convRuns.put(key, append(runs, convRun{runID: id, prompt: f.prompt, by: ex.Request, at: ex.Received}))
	}
}

// environmentsLocked checks each environment listed against the newest
// run seen created in it before the listing was asked for: the run it
// shows as its last task, when it shows one (the document makes that
// optional), is no older.
func (m *Memory) environmentsLocked(scope string, ex Exchange, envs []map[string]any) []Violation {
	var out []Violation
	for i, e := range envs {
		newest, ok := m.envNewest.get(scope + "/" + Str(e["uid"]))
		if !ok || !newest.at.Before(ex.Sent) {
			continue
		}
		field := at("body.environments", i) + ".last_task_created"
		last, _ := e["last_task_created"].(map[string]any)
		if last == nil {
			continue // optional: a server may not show it at all
		}
		if t, ok := timeOf(last, "created_at"); ok && !newest.createdAt.IsZero() && t.Before(newest.createdAt) {
			out = append(out, Violation{Rule: EnvironmentShowsNewestRun, Field: field + ".id", RunID: newest.runID,
				Expected: "run " + newest.runID + " (created " + newest.createdAt.Format(time.RFC3339Nano) + ", seen by " + newest.by + ") or a newer one",
				Got:      Str(last["id"]) + ", created " + Str(last["created_at"])})
		}
	}
	return out
}

// stillThereLocked reports an identity shown after its delete was
// accepted.
func (m *Memory) stillThereLocked(scope string, ex Exchange, field, uid string) []Violation {
	d, ok := m.deleted.get(scope + "/" + uid)
	if !ok || !d.at.Before(ex.Sent) {
		return nil
	}
	got := uid
	if field == "status" {
		got = "200 with the identity"
	}
	return []Violation{{Rule: DeletedIdentityGone, Field: field,
		Expected: "no identity " + uid + ", deleted by " + d.by, Got: got}}
}

// messageSentLocked checks an accepted send against the recipients seen
// finished before it was asked for.
func (m *Memory) messageSentLocked(scope string, ex Exchange) []Violation {
	body, ok := ex.request()
	if !ok {
		return nil
	}
	var req struct{ To []string }
	read := membersOf(body)
	if req.To = read.strs("to"); !read.ok {
		return nil
	}
	for i, id := range req.To {
		f, ok := m.runs.get(scope + "/" + id)
		if ok && f.hasLast && IsTerminal(f.look.State) && f.look.Before(Look{Sent: ex.Sent}) {
			return []Violation{{Rule: FinishedRunTakesNoMessage, Field: "status", RunID: id,
				Expected: "a 422 refusing a message to request.to[" + num(float64(i)) + "], a run that had ended " + f.look.State + " (seen by " + f.look.Request + ")",
				Got:      num(float64(ex.Status))}}
		}
	}
	return nil
}

// messageTimesLocked checks a message's delivered_at and read_at against
// the values seen before: once set, each stays.
func (m *Memory) messageTimesLocked(scope string, ex Exchange, field, id string, msg map[string]any) []Violation {
	if id == "" {
		return nil
	}
	var out []Violation
	for _, name := range []string{"delivered_at", "read_at"} {
		key := scope + "/" + id + "/" + name
		before, seen := m.msgTimes.get(key)
		now := Str(msg[name])
		if seen && before.at.Before(ex.Sent) && now != before.value {
			out = append(out, Violation{Rule: MessageTimesSetOnce, Field: field + "." + name,
				Expected: before.value + ", as message " + id + " showed it to " + before.by, Got: Show(msg[name])})
			continue
		}
		if !seen && now != "" {
			m.msgTimes.put(key, sighting{value: now, by: ex.Request, at: ex.Received})
		}
	}
	return out
}

// conversationLocked checks a conversation holds the prompt of every run
// seen ended in it before it was asked for.
func (m *Memory) conversationLocked(scope string, ex Exchange, conv map[string]any) []Violation {
	runs, _ := m.convRuns.get(scope + "/" + Str(conv["conversation_id"]))
	for _, r := range runs {
		if r.at.Before(ex.Sent) && !ConversationHolds(conv, r.prompt) {
			return []Violation{{Rule: ConversationKeepsItsRuns, Field: "body.steps", RunID: r.runID,
				Expected: "the prompt of run " + r.runID + ", which ended in this conversation (seen by " + r.by + "): " + Show(r.prompt),
				Got:      "no user message or step holding it"}}
		}
	}
	return nil
}
