package refserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// What the newest official client (oz-agent-sdk 1.4.0-alpha.6) calls beyond
// the published document, as our document describes it: follow-ups, a
// run's handoff files and the conversation redirect.

// followup is a message the run's user sent after the prompt.
type followup struct {
	text string
	at   time.Time
}

// followUp answers POST /agent/runs/{runId}/followups. The run is judged
// before the body, so an unknown run is a 404 whatever was sent. A running
// or waiting run takes the message into its conversation; a BLOCKED one
// takes it as the answer it waited for and goes on at once; an ended one
// is started again, QUEUED in the same conversation, and moves on as a
// created run does.
func (s *Server) followUp(w http.ResponseWriter, r *http.Request, c caller, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run, ok := s.visible(w, r, c, id)
	if !ok {
		return
	}
	var body map[string]any
	data, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err == nil {
		err = json.Unmarshal(data, &body)
	}
	if err != nil || body == nil {
		writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request", "the body must be one JSON object")
		return
	}
	message, _ := body["message"].(string)
	if strings.TrimSpace(message) == "" {
		writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request", "message is required and must be a non-empty string")
		return
	}
	if err := checkMode(body); err != nil {
		writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request", err.Error())
		return
	}
	if run.source == "LOCAL" || run.source == "GITHUB_ACTION" {
		writeProblem(w, r, http.StatusUnprocessableEntity, "operation_not_supported", "Operation not supported",
			"runs from "+run.source+" run elsewhere; the service cannot pass them a follow-up")
		return
	}
	now := s.now()
	switch state := run.at(now).state; {
	case isTerminal(state):
		s.restart(run, now)
	case state == "BLOCKED":
		run.unblock(now, s.opts.Step)
	}
	run.followups = append(run.followups, followup{text: message, at: now})
	writeJSON(w, http.StatusOK, map[string]any{})
}

// restart starts an ended run again: its history up to its end stays (a
// cancel becomes a CANCELLED phase of it), and a new execution is laid out
// from now, as the run's first was. Called with s.mu held.
func (s *Server) restart(r *run, now time.Time) {
	if !r.cancelledAt.IsZero() {
		kept := r.seen(now)
		// The cancel's event, if a poll has numbered it, is that of the
		// phase it becomes.
		if s.numbered[eventKey{r.id, -1}] {
			delete(s.numbered, eventKey{r.id, -1})
			s.numbered[eventKey{r.id, len(kept) - 1}] = true
		}
		r.phases, r.cancelledAt, r.cancelAccepted = kept, time.Time{}, time.Time{}
	}
	next := s.plan(now, max(r.n, 1), r.selfHosted())
	if last := r.phases[len(r.phases)-1]; !next[0].at.After(last.at) {
		// Keep the timeline strictly ordered, even on a coarse clock.
		for i := range next {
			next[i].at = next[i].at.Add(last.at.Sub(next[0].at) + time.Nanosecond)
		}
	}
	r.phases = append(r.phases, next...)
	switch next[len(next)-1].state {
	case "FAILED", "ERROR":
		if r.failure == nil {
			r.failure = map[string]any{"message": "The run failed again.", "error_code": "internal_error", "retryable": true}
		}
	}
}

// unblock answers a BLOCKED run: it is INPROGRESS from now, and its
// remaining phases come that much sooner; a run with nothing planned after
// its wait goes on to succeed a step later.
func (r *run) unblock(now time.Time, step time.Duration) {
	i := len(r.phases)
	for j, p := range r.phases {
		if p.at.After(now) {
			i = j
			break
		}
	}
	if i == len(r.phases) || r.phases[i].state != "INPROGRESS" {
		r.phases = append(r.phases[:i:i], phase{"INPROGRESS", now.Add(time.Nanosecond)}, phase{"SUCCEEDED", now.Add(step)})
		return
	}
	sooner := r.phases[i].at.Sub(now) - time.Nanosecond
	for j := i; j < len(r.phases); j++ {
		r.phases[j].at = r.phases[j].at.Add(-sooner)
	}
}

// handoffAttachments answers GET /agent/runs/{runId}/handoff/attachments:
// the files the run's latest ended execution left, none before any has
// ended. Every execution of this server leaves its workspace as an
// archive, whose id names the execution, with a fresh link each call.
func (s *Server) handoffAttachments(w http.ResponseWriter, r *http.Request, c caller, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run, ok := s.visible(w, r, c, id)
	if !ok {
		return
	}
	now := s.now()
	ended := 0
	for _, p := range run.seen(now) {
		if isTerminal(p.state) {
			ended++
		}
	}
	attachments := []any{}
	if ended > 0 {
		token := newID()
		s.downloads[token] = downloadLink{contentType: "application/gzip", body: handoffArchive, expires: now.Add(artifactLinkLife)}
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		attachments = append(attachments, map[string]any{
			"attachment_id": fmt.Sprintf("handoff-%s-%d", run.id[:8], ended),
			"filename":      "workspace.tar.gz",
			"mime_type":     "application/gzip",
			"download_url":  scheme + "://" + r.Host + "/downloads/artifacts/" + token,
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{"attachments": attachments})
}

// handoffArchive is the bytes every handoff file downloads as: an empty
// gzip stream (what matters to a caller is that the link works).
var handoffArchive = []byte{0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}

// conversationRedirect names the live session of the conversation's run
// (claimed and not ended), and nothing otherwise. It needs no key: anyone
// holding the conversation's id may ask.
func (s *Server) conversationRedirect(w http.ResponseWriter, conversation string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for i := len(s.all) - 1; i >= 0; i-- {
		r := s.all[i]
		if r.conversation != conversation {
			continue
		}
		if v := r.at(now); v.claimed && !isTerminal(v.state) {
			writeJSON(w, http.StatusOK, map[string]any{"session_id": r.sessionID})
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{})
}
