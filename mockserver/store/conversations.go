package store

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/google/uuid"
)

// The conversations resource: what an agent and the person who prompted it
// said and did, run by run.
//
// Nothing of it is stored. A run's part of a conversation (its Exchange)
// is derived from the run record and the run's entries in the event log
// (events.go), which say when it was in progress, when it waited for a
// person and how it ended; both are in the state file already. So a
// conversation is the same from poll to poll and after a restart, grows
// only as the clock moves, and never shows more than the run's state:
//
//   - the conversation begins when a worker claims the run (the moment the
//     run shows its agent session); before that the run has none;
//   - the prompt comes first, stamped with the run's creation;
//   - while the run is in progress the agent takes a fixed plan of actions
//     (derived from the run's id and prompt), spread evenly over the time
//     the run's timeline gives INPROGRESS; time spent BLOCKED does not
//     count, and the wait shows as an event;
//   - the end shows how the run ended: a summary for SUCCEEDED (the actions
//     the time did not reach are taken at that moment), the failure for
//     FAILED and ERROR, the cancellation for CANCELLED. A run that stops
//     early shows only the actions taken before it stopped.
//
// A run that began a conversation has its id, derived from the run's id
// (ConversationOf). A run created with conversation_id continues that
// conversation: its exchanges follow those of the runs before it.

// Errors of the conversations resource.
var (
	// ErrNoConversation is a visible run whose conversation has not begun:
	// no worker has claimed it yet, or it was cancelled before one did.
	ErrNoConversation = sentinel(NotFound, "the run has no conversation")
	// ErrConversationNotFound is a conversation id no run of the mock
	// session has begun.
	ErrConversationNotFound = sentinel(NotFound, "no conversation with this id")
	// ErrConversationOtherTeam is a conversation begun by another team's run.
	ErrConversationOtherTeam = sentinel(Forbidden, "the conversation belongs to another team")
	// ErrOtherHarness is a conversation with a run on a third-party
	// harness, whose conversations are in a format of their own.
	ErrOtherHarness = sentinel(Unsupported, "the conversation is in a third-party harness's own format")
)

// conversationMask turns a run's id into the id of the conversation it
// begins, and back, so the id needs no storing and finds its run at once.
// Its version and variant bits are zero, so the result is a UUID of the
// same version as the run's id.
var conversationMask = uuid.UUID{0x5c, 0x0d, 0x3e, 0x71, 0xa2, 0x94, 0x0b, 0x6e, 0x1f, 0x28, 0x47, 0xd3, 0x90, 0xe5, 0x6a, 0xc1}

// conversationNamespace derives the conversation id of a run whose id is
// not a UUID (runs adopted by tests).
var conversationNamespace = uuid.MustParse("a3c1d7e2-4f5b-4c8a-9e6d-2b7f0a1c3d5e")

// BegunConversation is the id of the conversation the run begins when it
// names none, and whether that id is the XOR form (findable at once).
func (r *Run) BegunConversation() uuid.UUID {
	// Parse takes other forms too (upper case, braces, a urn: prefix);
	// only the canonical one, 36 characters in lower case, is XORed.
	u, err := uuid.Parse(r.ID)
	if err != nil || len(r.ID) != 36 || strings.ToLower(r.ID) != r.ID {
		return uuid.NewSHA1(conversationNamespace, []byte(r.ID))
	}
	for i := range u {
		u[i] ^= conversationMask[i]
	}
	return u
}

// BegunConversationID is the id of the conversation the run begins when
// it continues none: the one a recording saw it begin, or else the
// mock's own (BegunConversation).
func (r *Run) BegunConversationID() string {
	if c := r.recordedConversation(); c != "" {
		return c
	}
	return r.BegunConversation().String()
}

// recordedConversation is the conversation a recording saw the run begin,
// "" for any other run.
func (r *Run) recordedConversation() string {
	if r.Recorded == nil {
		return ""
	}
	return r.Recorded.Conversation
}

// ConversationOf is the id of the conversation the run belongs to: the
// one it was created to continue, or else the one it begins.
func (r *Run) ConversationOf() string {
	if r.ConversationID != "" {
		return r.ConversationID
	}
	return r.BegunConversationID()
}

// conversationLocked finds the runs of a conversation in creation order:
// the run that began it, then the runs that continue it. It does not check
// that the conversation has begun.
func (ms *Session) conversationLocked(id string) []*Run {
	var out []*Run
	if u, err := uuid.Parse(id); err == nil && u.String() == id {
		for i := range u {
			u[i] ^= conversationMask[i]
		}
		if r, ok := ms.runs.byID[u.String()]; ok && r.ConversationID == "" && r.recordedConversation() == "" {
			out = append(out, r)
		}
	}
	if len(out) == 0 { // a run whose id is not a UUID, a recorded one, or none
		for _, r := range ms.runs.list {
			if r.ConversationID == "" && r.BegunConversationID() == id {
				out = append(out, r)
				break
			}
		}
	}
	for _, r := range ms.runs.list {
		if r.ConversationID == id && (len(out) == 0 || r.Seq > out[0].Seq) {
			out = append(out, r)
		}
	}
	return out
}

// openConversationLocked finds a conversation p's team may see and that
// has begun.
func (ms *Session) openConversationLocked(p *fixtures.Principal, id string, now time.Time) ([]*Run, error) {
	runs := ms.conversationLocked(id)
	if len(runs) == 0 {
		return nil, ErrConversationNotFound
	}
	if runs[0].Team != p.Team {
		return nil, ErrConversationOtherTeam
	}
	if !runs[0].Timeline.At(now).Claimed {
		return nil, ErrConversationNotFound
	}
	return runs, nil
}

// checkContinuedLocked is Create's check of a conversation_id: the
// conversation must exist, have begun, and be the caller's team's.
func (ms *Session) checkContinuedLocked(p *fixtures.Principal, id string, now time.Time) error {
	_, err := ms.openConversationLocked(p, id, now)
	switch {
	case errors.Is(err, ErrConversationNotFound):
		return ErrConversationNotFound.as(Invalid, "conversation_id: no conversation %q has begun (a run's conversation begins when a worker claims it)", id)
	case errors.Is(err, ErrConversationOtherTeam):
		return ErrConversationOtherTeam.because("conversation_id: conversation %q belongs to another team", id)
	}
	return err
}

// ConversationView is a conversation as it is at one instant: the
// exchanges of its runs that have begun, in creation order.
type ConversationView struct {
	ID        string
	Exchanges []Exchange
	// Harness names a third-party harness whose conversations are in a
	// format of their own, which the normalised form does not cover.
	Harness string
}

// Exchange is one run's part of a conversation: what its transcript holds.
type Exchange struct {
	RunID    string
	Prompt   string
	Messages []TranscriptMessage
	// Summary is what the agent reported at the end of a run that
	// succeeded; empty otherwise.
	Summary string
}

// TranscriptMessage is one message of a run's transcript.
type TranscriptMessage struct {
	ID     string
	Role   string // user, assistant, tool or system
	At     time.Time
	Blocks []Block
}

// Block is one piece of a message: text, an action, an action's result,
// or an event.
type Block struct {
	Type     string // text, action, action_result or event
	Text     string
	ActionID string
	Category string
	Name     string
	State    string // an action result's: completed or failed
	Input    map[string]any
	Output   map[string]any
	Data     map[string]any // an event's
}

// RunConversation is the conversation of a run p's team may see.
func (ms *Session) RunConversation(p *fixtures.Principal, runID string) (ConversationView, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	r, err := ms.visibleLocked(p, runID)
	if err != nil {
		return ConversationView{}, err
	}
	now := ms.clock.Now()
	conv := r.ConversationOf()
	runs, err := ms.openConversationLocked(p, conv, now)
	if errors.Is(err, ErrConversationNotFound) {
		return ConversationView{}, ErrNoConversation.because("the run has no conversation: %s", noConversationWhy(r.view(now).Snap))
	}
	if err != nil {
		return ConversationView{}, err
	}
	return ms.conversationViewLocked(conv, runs, now)
}

// ConversationOfRun is the conversation of a run whatever its team, for
// the Go API.
func (ms *Session) ConversationOfRun(runID string) (ConversationView, error) {
	ms.mu.RLock()
	r, ok := ms.runs.byID[runID]
	ms.mu.RUnlock()
	if !ok {
		return ConversationView{}, ErrRunNotFound
	}
	return ms.RunConversation(&fixtures.Principal{Team: r.Team}, runID)
}

// Conversation is a conversation p's team may see, by its id.
func (ms *Session) Conversation(p *fixtures.Principal, id string) (ConversationView, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	now := ms.clock.Now()
	runs, err := ms.openConversationLocked(p, id, now)
	if err != nil {
		return ConversationView{}, err
	}
	return ms.conversationViewLocked(id, runs, now)
}

// conversationViewLocked is the conversation of runs at now; a run on a
// third-party harness makes it ErrOtherHarness, with the view.
func (ms *Session) conversationViewLocked(id string, runs []*Run, now time.Time) (ConversationView, error) {
	ms.recordEventsLocked(now)
	cv := ConversationView{ID: id}
	for _, r := range runs {
		if r.Config != nil && r.Config.Harness != nil && r.Config.Harness.Type != "" && r.Config.Harness.Type != "oz" {
			cv.Harness = r.Config.Harness.Type
		}
		if x, ok := ms.exchangeLocked(r, now); ok {
			cv.Exchanges = append(cv.Exchanges, x)
		}
	}
	if cv.Harness != "" {
		return cv, ErrOtherHarness.because("this conversation includes a run on the %s harness, whose conversations are in that harness's own format, which the normalised form does not cover; its raw transcript can still be downloaded (GET /agent/runs/{runId}/transcript)", cv.Harness)
	}
	return cv, nil
}

func noConversationWhy(s Snapshot) string {
	if s.State == Cancelled {
		return "the run was cancelled before a worker claimed it"
	}
	return "the run is " + string(s.State) + "; its conversation begins when a worker claims it"
}

// Transcript is a run's own exchange, for a run p's team may see; its
// conversation's id comes with it.
func (ms *Session) Transcript(p *fixtures.Principal, runID string) (Exchange, string, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	r, err := ms.visibleLocked(p, runID)
	if err != nil {
		return Exchange{}, "", err
	}
	return ms.transcriptLocked(r)
}

// TranscriptOf is a run's own exchange whatever its team: for a download
// link, which is its own credential.
func (ms *Session) TranscriptOf(runID string) (Exchange, string, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	r, ok := ms.runs.byID[runID]
	if !ok {
		return Exchange{}, "", ErrRunNotFound
	}
	return ms.transcriptLocked(r)
}

func (ms *Session) transcriptLocked(r *Run) (Exchange, string, error) {
	now := ms.clock.Now()
	ms.recordEventsLocked(now)
	x, ok := ms.exchangeLocked(r, now)
	if !ok {
		return Exchange{}, "", ErrNoConversation.because("the run has no conversation: %s", noConversationWhy(r.view(now).Snap))
	}
	return x, r.ConversationOf(), nil
}

// SessionRedirect answers whether the agent session should now be shown as
// its conversation: the id of the run's conversation once the run has
// ended (its sandbox has stopped), else "". It asks for no caller: the
// operation is public, its ids unguessable (random UUIDs), and what it
// gives is another unguessable id whose content stays behind the
// conversation's own access rules.
func (ms *Session) SessionRedirect(agentSession uuid.UUID) string {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	now := ms.clock.Now()
	for _, r := range ms.runs.list {
		if r.AgentSession != agentSession {
			continue
		}
		snap := r.Timeline.At(now)
		if !snap.Claimed || !snap.State.Terminal() {
			return ""
		}
		if runs := ms.conversationLocked(r.ConversationOf()); len(runs) == 0 || !runs[0].Timeline.At(now).Claimed {
			return ""
		}
		return r.ConversationOf()
	}
	return ""
}

// ConversationRedirect is SessionRedirect's mirror: the agent session of
// the conversation's latest run while that run is live (claimed by a
// worker and not ended), else "". Public, as SessionRedirect.
func (ms *Session) ConversationRedirect(conversation string) string {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	now := ms.clock.Now()
	runs := ms.conversationLocked(conversation)
	if len(runs) == 0 {
		return ""
	}
	last := runs[len(runs)-1]
	if snap := last.Timeline.At(now); !snap.Claimed || snap.State.Terminal() {
		return ""
	}
	if id := last.SessionIDText(); id != "" {
		return id // as the run shows it
	}
	return last.AgentSession.String()
}

// exchangeLocked derives a run's exchange at now from its record and its
// events (recorded up to now by the caller); false before it has begun.
func (ms *Session) exchangeLocked(r *Run, now time.Time) (Exchange, bool) {
	snap := r.Timeline.At(now)
	if !snap.Claimed {
		return Exchange{}, false
	}
	x := Exchange{RunID: r.ID, Prompt: r.Prompt}
	if strings.TrimSpace(x.Prompt) == "" && r.Config != nil {
		x.Prompt = "Use the skill " + r.Config.SkillSpec
	}
	x.Messages = append(x.Messages, TranscriptMessage{ID: r.ID + ".prompt", Role: "user", At: r.CreatedAt,
		Blocks: []Block{{Type: "text", Text: x.Prompt}}})

	// The run's life from the event log: the spans it was in progress, the
	// moments it began waiting for a person, and its end.
	type span struct{ from, to time.Time }
	var spans []span
	var waits []Event
	var end *Event
	open := false
	var later []Event // the events of the executions follow-ups started
	for _, i := range ms.events.runEvents(r, 0) {
		e := ms.events.event(i)
		if end != nil {
			later = append(later, e)
			continue
		}
		switch st := eventStates[e.Type]; {
		case st == InProgress:
			if !open {
				spans, open = append(spans, span{from: e.OccurredAt}), true
			}
		case st == Blocked:
			if open {
				spans[len(spans)-1].to, open = e.OccurredAt, false
			}
			waits = append(waits, e)
		case st.Terminal():
			if open {
				spans[len(spans)-1].to, open = e.OccurredAt, false
			}
			end = &e
		}
	}
	if open {
		spans[len(spans)-1].to = now
	}
	// at finds the moment the run had been in progress for d, if it had.
	at := func(d time.Duration) (time.Time, bool) {
		var done time.Duration
		for _, s := range spans {
			// Compared as d-done, not done+l: a span may be as long as a
			// Duration holds (Sub saturates), and the sum would overflow.
			l := s.to.Sub(s.from)
			if l >= d-done {
				return s.from.Add(d - done), true
			}
			done += l // below d, so no overflow
		}
		return time.Time{}, false
	}

	plan := planFor(r)
	unit := r.Timeline.Steps[len(progression)-1] / time.Duration(2*len(plan)+2)
	var work []TranscriptMessage
	if t, ok := at(0); ok || end != nil && end.Type == EventSucceeded {
		if !ok {
			t = end.OccurredAt
		}
		work = append(work, TranscriptMessage{ID: r.ID + ".start", Role: "assistant", At: t,
			Blocks: []Block{{Type: "text", Text: "Starting on it: " + r.Title + "."}}})
	}
	taken := 0
	for k, a := range plan {
		for half := 0; half < 2; half++ {
			t, ok := at(unit * time.Duration(2*k+1+half))
			if !ok {
				if end == nil || end.Type != EventSucceeded {
					break
				}
				t = end.OccurredAt // the time left did not reach it: done at the end
			}
			actionID := fmt.Sprintf("%s.act%d", r.ID, k+1)
			if half == 0 {
				work = append(work, TranscriptMessage{ID: fmt.Sprintf("%s.call%d", r.ID, k+1), Role: "assistant", At: t,
					Blocks: []Block{{Type: "action", ActionID: actionID, Category: a.category, Name: a.name, Input: a.input}}})
				continue
			}
			work = append(work, TranscriptMessage{ID: fmt.Sprintf("%s.result%d", r.ID, k+1), Role: "tool", At: t,
				Blocks: []Block{{Type: "action_result", ActionID: actionID, Category: a.category, Name: a.name, State: "completed", Output: a.output}}})
			taken++
		}
	}
	// The waits, in time order among the work (a wait begins where a span
	// ends, so after whatever that span reached).
	for _, w := range waits {
		i := len(work)
		for i > 0 && work[i-1].At.After(w.OccurredAt) {
			i--
		}
		m := TranscriptMessage{ID: fmt.Sprintf("%s.wait%d", r.ID, w.Seq), Role: "system", At: w.OccurredAt,
			Blocks: []Block{{Type: "event", Name: string(w.Type), Data: map[string]any{"reason": "waiting for a person to answer"}}}}
		work = append(work[:i], append([]TranscriptMessage{m}, work[i:]...)...)
	}
	x.Messages = append(x.Messages, work...)

	if end != nil {
		msg := r.view(now).Msg
		switch end.Type {
		case EventSucceeded:
			x.Summary = fmt.Sprintf("Finished %q: %s.", r.Title, describePlan(plan))
			x.Messages = append(x.Messages, TranscriptMessage{ID: r.ID + ".summary", Role: "assistant", At: end.OccurredAt,
				Blocks: []Block{{Type: "text", Text: x.Summary}}})
		default:
			data := map[string]any{"state": string(eventStates[end.Type]), "actions_completed": taken}
			if msg != nil {
				data["message"] = msg.Message
				if msg.ErrorCode != "" {
					data["error_code"] = msg.ErrorCode
				}
			}
			x.Messages = append(x.Messages, TranscriptMessage{ID: r.ID + ".end", Role: "system", At: end.OccurredAt,
				Blocks: []Block{{Type: "event", Name: string(end.Type), Data: data}}})
		}
	}
	if len(r.FollowupList()) > 0 {
		ms.followupExchangeLocked(r, &x, later, now)
	}
	return x, true
}

// followupExchangeLocked adds to a run's exchange what its follow-ups
// brought: each follow-up as a message of its user, at the moment it was
// sent (one sent before the run began comes right after the prompt), and
// for each execution a follow-up started, its start, the waits for a
// person, and its end. A later execution's summary replaces the earlier
// one.
func (ms *Session) followupExchangeLocked(r *Run, x *Exchange, later []Event, now time.Time) {
	msgs := x.Messages
	insert := func(m TranscriptMessage) {
		i := len(msgs)
		for i > 0 && msgs[i-1].At.After(m.At) {
			i--
		}
		msgs = append(msgs[:i], append([]TranscriptMessage{m}, msgs[i:]...)...)
	}
	for i, f := range r.FollowupList() {
		insert(TranscriptMessage{ID: fmt.Sprintf("%s.followup%d", r.ID, i+1), Role: "user", At: f.At,
			Blocks: []Block{{Type: "text", Text: f.Message}}})
	}
	asked := func(execution int) string {
		for _, f := range r.FollowupList() {
			if f.Restarted && f.Execution == execution {
				return f.Message
			}
		}
		return ""
	}
	execution, started := 1, false
	for _, e := range later {
		if e.OccurredAt.After(now) {
			break
		}
		switch st := eventStates[e.Type]; {
		case st == InProgress && !started:
			started = true
			insert(TranscriptMessage{ID: fmt.Sprintf("%s.exec%d.start", r.ID, execution), Role: "assistant", At: e.OccurredAt,
				Blocks: []Block{{Type: "text", Text: fmt.Sprintf("Picking up the follow-up: %s", asked(execution))}}})
		case st == Blocked:
			insert(TranscriptMessage{ID: fmt.Sprintf("%s.wait%d", r.ID, e.Seq), Role: "system", At: e.OccurredAt,
				Blocks: []Block{{Type: "event", Name: string(e.Type), Data: map[string]any{"reason": "waiting for a person to answer"}}}})
		case st == Succeeded:
			x.Summary = fmt.Sprintf("Followed up on %q: %s.", r.Title, asked(execution))
			insert(TranscriptMessage{ID: fmt.Sprintf("%s.exec%d.summary", r.ID, execution), Role: "assistant", At: e.OccurredAt,
				Blocks: []Block{{Type: "text", Text: x.Summary}}})
			execution, started = execution+1, false
		case st.Terminal():
			data := map[string]any{"state": string(st)}
			if msg := r.view(now).Msg; msg != nil && r.view(now).Snap.State == st {
				data["message"] = msg.Message
				if msg.ErrorCode != "" {
					data["error_code"] = msg.ErrorCode
				}
			}
			insert(TranscriptMessage{ID: fmt.Sprintf("%s.exec%d.end", r.ID, execution), Role: "system", At: e.OccurredAt,
				Blocks: []Block{{Type: "event", Name: string(e.Type), Data: data}}})
			execution, started = execution+1, false
		}
	}
	x.Messages = msgs
}

// action is one step of an agent's plan.
type action struct {
	category, name string
	input, output  map[string]any
}

// planFor is the actions the agent takes for a run: three to five, chosen
// from the run's id and worded from its prompt, the same every time.
func planFor(r *Run) []action {
	h := fnv.New32a()
	h.Write([]byte(r.ID))
	sum := h.Sum32()
	word := keyword(r.Title + " " + r.Prompt)
	file := planFiles[sum%uint32(len(planFiles))]
	all := []action{
		{"search", "search_codebase", map[string]any{"query": word}, map[string]any{"matches": int(3 + sum%7)}},
		{"files", "read_files", map[string]any{"paths": []any{file}}, map[string]any{"files_read": 1}},
		{"files", "edit_files", map[string]any{"paths": []any{file}}, map[string]any{"files_changed": 1, "lines_added": int(4 + sum%20), "lines_removed": int(1 + sum%9)}},
		{"command", "run_command", map[string]any{"command": "make test"}, map[string]any{"exit_code": 0, "output": "ok: all tests passed"}},
		{"review", "review_changes", map[string]any{"paths": []any{file}}, map[string]any{"comments": 0}},
	}
	switch n := 3 + int(sum/7%3); n {
	case 3:
		return []action{all[0], all[2], all[3]}
	case 4:
		return all[:4]
	default:
		return all
	}
}

var planFiles = []string{"README.md", "internal/auth/login.go", "web/src/App.tsx", "cmd/server/main.go", "docs/CHANGELOG.md", "Makefile"}

// keyword picks the prompt's first word of five letters or more, the
// agent's first search.
func keyword(text string) string {
	for _, w := range strings.FieldsFunc(text, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_')
	}) {
		if len(w) >= 5 {
			return strings.ToLower(w)
		}
	}
	return "todo"
}

func describePlan(plan []action) string {
	names := make([]string, len(plan))
	for i, a := range plan {
		names[i] = a.name
	}
	return fmt.Sprintf("%d actions (%s), all completed", len(plan), strings.Join(names, ", "))
}
