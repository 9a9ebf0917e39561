package refserver

import (
	"net/http"
	"sort"
	"strings"
	"time"
)

// Conversations, as the published document describes them: a run's
// conversation begins when a worker claims it; the runs created with its
// conversation_id continue it, one step each. GET
// /agent/runs/{runId}/transcript answers 302 with a link that works without
// a key until it expires; GET /agent/sessions/{id}/redirect names the
// conversation once the run's sandbox has finished. Everything is derived
// from the runs' timelines, so a finished run's conversation never changes.

// transcriptLife is how long a transcript link works.
const transcriptLife = time.Hour

// conversationSteps is the conversation id's steps, one per run of the
// caller's team that continues it and has been claimed, in the order the
// runs were created; nil when there is none yet. Called with s.mu held.
func (s *Server) conversationSteps(id string, c caller, now time.Time) (steps []any, foreign bool) {
	for _, r := range s.all {
		if r.conversation != id {
			continue
		}
		if r.team() != c.team {
			foreign = true
			continue
		}
		if st, ok := r.conversationStep(now, s.opts.SystemFirst); ok {
			steps = append(steps, st)
		}
	}
	return steps, foreign
}

// conversationStep is the run's part of its conversation: its prompt when
// a worker claimed it, a word from the assistant each time the work began,
// its user's follow-ups when they were sent (one sent before the claim
// right after the prompt), and a summary each time an execution ended.
func (r *run) conversationStep(now time.Time, systemFirst bool) (map[string]any, bool) {
	seen := r.seen(now)
	var claimed time.Time
	for _, p := range seen {
		if p.state == "CLAIMED" {
			claimed = p.at
			break
		}
	}
	if claimed.IsZero() {
		return nil, false
	}
	type timed struct {
		at  time.Time
		msg map[string]any
	}
	text := func(role string, at time.Time, s string) timed {
		return timed{at, map[string]any{"role": role, "timestamp": stamp(at), "content": []any{map[string]any{"type": "text", "text": s}}}}
	}
	msgs := []timed{text("user", claimed, r.prompt)}
	if systemFirst {
		msgs = append([]timed{text("system", claimed, "You are a careful engineer; change only what the task asks.")}, msgs...)
	}
	summary, previous := "", ""
	for _, p := range seen {
		switch {
		case p.state == "INPROGRESS" && previous != "BLOCKED":
			msgs = append(msgs, text("assistant", p.at, "Looking into it."))
		case isTerminal(p.state):
			summary = "The run ended " + strings.ToLower(p.state) + "."
			msgs = append(msgs, text("assistant", p.at, summary))
		}
		previous = p.state
	}
	for _, f := range r.followups {
		msgs = append(msgs, text("user", later(f.at, claimed), f.text))
	}
	sort.SliceStable(msgs, func(i, j int) bool { return msgs[i].at.Before(msgs[j].at) })
	out := make([]any, len(msgs))
	for i, m := range msgs {
		out[i] = m.msg
	}
	step := map[string]any{"id": "step-" + r.id, "description": r.prompt, "started_at": stamp(claimed),
		"completed_at": stamp(msgs[len(msgs)-1].at), "messages": out, "steps": []any{}}
	if isTerminal(seen[len(seen)-1].state) {
		step["summary"] = summary
	}
	return step, true
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func (s *Server) writeConversation(w http.ResponseWriter, r *http.Request, c caller, id string) {
	steps, foreign := s.conversationSteps(id, c, s.now())
	switch {
	case steps != nil:
		writeJSON(w, http.StatusOK, map[string]any{"conversation_id": id, "steps": steps})
	case foreign && !s.opts.ForeignNotFound:
		writeProblem(w, r, http.StatusForbidden, "not_authorized", "Not authorized", "the conversation belongs to another team")
	default:
		notFound(w, r, "no conversation has the id "+id)
	}
}

// runConversation answers GET /agent/runs/{runId}/conversation and
// /transcript.
func (s *Server) runConversation(w http.ResponseWriter, r *http.Request, c caller, id, what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run, ok := s.visible(w, r, c, id)
	if !ok {
		return
	}
	now := s.now()
	if _, claimed := run.at(now).reached["CLAIMED"]; !claimed {
		notFound(w, r, "run "+id+" has no conversation: no worker has claimed it")
		return
	}
	if what == "conversation" {
		s.writeConversation(w, r, c, run.conversation)
		return
	}
	token := newID()
	s.transcripts[token] = transcriptLink{run: run.id, expires: now.Add(transcriptLife)}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	w.Header().Set("Location", scheme+"://"+r.Host+"/downloads/transcripts/"+token)
	w.WriteHeader(http.StatusFound)
}

func (s *Server) conversationByID(w http.ResponseWriter, r *http.Request, c caller, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writeConversation(w, r, c, id)
}

// sessionRedirect names the run's conversation once it has ended, and
// nothing before, or for a session the server does not know. It needs no
// key: anyone holding the session's id may ask.
func (s *Server) sessionRedirect(w http.ResponseWriter, session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.all {
		if r.sessionID == session && isTerminal(r.at(s.now()).state) {
			writeJSON(w, http.StatusOK, map[string]any{"conversation_id": r.conversation})
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{})
}

// transcriptLink is a download link's secret: whose transcript, until when.
type transcriptLink struct {
	run     string
	expires time.Time
}

// downloadTranscript serves a transcript link, which is its own credential.
func (s *Server) downloadTranscript(w http.ResponseWriter, r *http.Request, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	link, ok := s.transcripts[token]
	now := s.now()
	switch {
	case !ok:
		notFound(w, r, "no such transcript link")
		return
	case now.After(link.expires):
		writeProblem(w, r, http.StatusForbidden, "not_authorized", "Not authorized", "the transcript link has expired; ask for a new one")
		return
	}
	run := s.runs[link.run]
	step, _ := run.conversationStep(now, s.opts.SystemFirst)
	writeJSON(w, http.StatusOK, map[string]any{"run_id": run.id, "messages": step["messages"]})
}
