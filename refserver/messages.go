package refserver

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Run-to-run messages, as the published document describes them: a send
// gives each recipient its own copy, an inbox lists the copies' headers,
// reading one returns its body, and the times a copy was delivered and
// read are set once. The document keeps sending internal, behind a
// feature flag; with Options.MessagingOff the server refuses it.

type message struct {
	id, recipient, sender string
	subject, body         string
	sent                  time.Time
	delivered, read       time.Time
}

func (m *message) header() map[string]any {
	return map[string]any{
		"message_id": m.id, "sender_run_id": m.sender, "subject": m.subject, "sent_at": stamp(m.sent),
		"delivered_at": stampOrNil(m.delivered), "read_at": stampOrNil(m.read),
	}
}

func stampOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return stamp(t)
}

func (s *Server) serveMessages(w http.ResponseWriter, r *http.Request, c caller, rest []string) {
	switch {
	case len(rest) == 0:
		if r.Method != http.MethodPost {
			methodNotAllowed(w, r)
			return
		}
		s.sendMessage(w, r, c)
	case len(rest) == 1:
		if r.Method != http.MethodGet {
			methodNotAllowed(w, r)
			return
		}
		s.inbox(w, r, c, rest[0])
	case len(rest) == 2 && (rest[1] == "read" || rest[1] == "delivered"):
		if r.Method != http.MethodPost {
			methodNotAllowed(w, r)
			return
		}
		s.markMessage(w, r, c, rest[0], rest[1] == "read")
	default:
		notFound(w, r, "no such operation")
	}
}

func (s *Server) sendMessage(w http.ResponseWriter, r *http.Request, c caller) {
	if s.opts.MessagingOff {
		writeProblem(w, r, http.StatusForbidden, "feature_not_available", "Feature not available", "messaging between runs is switched off on this server")
		return
	}
	var req struct {
		To      []string `json:"to"`
		Subject string   `json:"subject"`
		Body    string   `json:"body"`
		Sender  string   `json:"sender_run_id"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.To) == 0 || req.Subject == "" || req.Sender == "" {
		writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request", "a message needs to, subject, body and sender_run_id")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if _, ok := s.visible(w, r, c, req.Sender); !ok {
		return
	}
	for _, to := range req.To {
		recipient, ok := s.visible(w, r, c, to)
		if !ok {
			return
		}
		if isTerminal(recipient.at(now).state) {
			writeProblem(w, r, http.StatusUnprocessableEntity, "operation_not_supported", "Operation not supported", "run "+to+" has ended and takes no messages")
			return
		}
	}
	ids := make([]string, 0, len(req.To))
	for _, to := range req.To {
		m := &message{id: newID(), recipient: to, sender: req.Sender, subject: req.Subject, body: req.Body, sent: now}
		s.messages = append(s.messages, m)
		ids = append(ids, m.id)
	}
	writeJSON(w, http.StatusOK, map[string]any{"message_ids": ids})
}

func (s *Server) inbox(w http.ResponseWriter, r *http.Request, c caller, runID string) {
	q := r.URL.Query()
	limit := 50
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request", "limit must be a whole number from 1 to 100")
			return
		}
		limit = n
	}
	var since time.Time
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request", "since must be an RFC 3339 time")
			return
		}
		since = t
	}
	unread := q.Get("unread") == "true"
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.visible(w, r, c, runID); !ok {
		return
	}
	headers := []map[string]any{}
	for _, m := range slices.Backward(s.messages) { // newest first
		if m.recipient != runID || (unread && !m.read.IsZero()) || (!since.IsZero() && !m.sent.After(since)) {
			continue
		}
		if headers = append(headers, m.header()); len(headers) == limit {
			break
		}
	}
	writeJSON(w, http.StatusOK, headers)
}

// markMessage sets a copy's delivered_at, or its read_at (and delivered_at
// if still unset), the first time only.
func (s *Server) markMessage(w http.ResponseWriter, r *http.Request, c caller, id string, read bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.messages, func(m *message) bool { return m.id == id })
	if i < 0 {
		notFound(w, r, "no message has the id "+id)
		return
	}
	m := s.messages[i]
	if _, ok := s.visible(w, r, c, m.recipient); !ok {
		return
	}
	now := s.now()
	if m.delivered.IsZero() {
		m.delivered = now
	}
	if !read {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if m.read.IsZero() {
		m.read = now
	}
	doc := m.header()
	doc["body"] = m.body
	writeJSON(w, http.StatusOK, doc)
}
