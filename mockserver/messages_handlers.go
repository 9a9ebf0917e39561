package mockserver

import (
	"net/http"
	"strconv"
	"time"

	"github.com/agentruns/agentruns/mockserver/store"
)

// Run-to-run messages over HTTP (mockserver/store/messages.go): send, a
// run's inbox, read one, mark one delivered.

type sendMessageRequest struct {
	To          []string `json:"to"`
	Subject     *string  `json:"subject"`
	Body        *string  `json:"body"`
	SenderRunID *string  `json:"sender_run_id"`
}

// SendMessageResponse answers POST /agent/messages.
type SendMessageResponse struct {
	MessageIDs []string `json:"message_ids"`
}

// MessageHeader is an inbox entry; MessageContent adds the body.
type MessageHeader struct {
	MessageID   string  `json:"message_id"`
	SenderRunID string  `json:"sender_run_id"`
	Subject     string  `json:"subject"`
	SentAt      string  `json:"sent_at"`
	DeliveredAt *string `json:"delivered_at"`
	ReadAt      *string `json:"read_at"`
}

// MessageContent is a message as POST /agent/messages/{id}/read answers it.
type MessageContent struct {
	MessageID   string  `json:"message_id"`
	SenderRunID string  `json:"sender_run_id"`
	Subject     string  `json:"subject"`
	Body        string  `json:"body"`
	SentAt      string  `json:"sent_at"`
	DeliveredAt *string `json:"delivered_at"`
	ReadAt      *string `json:"read_at"`
}

func optTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := formatTime(t)
	return &s
}

func messageHeader(m store.Message) MessageHeader {
	return MessageHeader{MessageID: m.ID, SenderRunID: m.SenderRunID, Subject: m.Subject, SentAt: formatTime(m.SentAt),
		DeliveredAt: optTime(m.DeliveredAt), ReadAt: optTime(m.ReadAt)}
}

// sendMessage is POST /agent/messages.
func (s *Server) sendMessage(c *call) response {
	var req sendMessageRequest
	if aerr := c.fill(&req); aerr != nil {
		return fail(aerr)
	}
	// The document marks all four required; validate has checked that.
	switch {
	case len(req.To) == 0:
		return fail(errorf(codeInvalidRequest, "to: name at least one recipient run"))
	case len(req.To) > 100:
		return fail(errorf(codeInvalidRequest, "to: at most 100 recipients")) // the mock's own bound
	case req.SenderRunID == nil || req.Subject == nil || req.Body == nil:
		return fail(errorf(codeInvalidRequest, "to, subject, body and sender_run_id are required"))
	}
	seen := map[string]bool{}
	for i, id := range req.To {
		if !isRunID(id) {
			return fail(errorf(codeInvalidRequest, "to[%d]: %q is not a run id", i, truncate(id, 80)))
		}
		if seen[id] {
			return fail(errorf(codeInvalidRequest, "to[%d]: %q is named twice", i, id))
		}
		seen[id] = true
	}
	ids, err := c.session.SendMessage(c.principal, store.NewMessage{SenderRunID: *req.SenderRunID, To: req.To, Subject: *req.Subject, Body: *req.Body})
	if err != nil {
		return fail(problemOf(err))
	}
	return ok(SendMessageResponse{MessageIDs: ids})
}

// listMessages is GET /agent/messages/{runId}: the run's inbox, oldest first.
func (s *Server) listMessages(c *call) response {
	q := c.query
	iq := store.InboxQuery{Limit: 50}
	// Each parameter once, or repeated with the same value, as for runs and
	// events: a conflicting repeat is a 400, never the first one taken.
	var values [3]string
	for i, name := range []string{"limit", "unread", "since"} {
		v, err := single(q, name)
		if err != nil {
			return fail(err.(*apiError))
		}
		values[i] = v
	}
	if v := values[0]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return fail(queryError("limit", "must be a whole number from 1 to 100"))
		}
		iq.Limit = n
	}
	if v := values[1]; v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fail(queryError("unread", "must be true or false"))
		}
		iq.UnreadOnly = b
	}
	if v := values[2]; v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return fail(queryError("since", "must be an RFC 3339 date-time"))
		}
		iq.Since = t
	}
	msgs, err := c.session.Inbox(c.principal, c.id, iq)
	if err != nil {
		return fail(problemOf(err))
	}
	out := make([]MessageHeader, len(msgs))
	for i, m := range msgs {
		out[i] = messageHeader(m)
	}
	return ok(out)
}

// readMessage is POST /agent/messages/{messageId}/read.
func (s *Server) readMessage(c *call) response {
	m, err := c.session.ReadMessage(c.principal, c.id)
	if err != nil {
		return fail(problemOf(err))
	}
	return ok(MessageContent{MessageID: m.ID, SenderRunID: m.SenderRunID, Subject: m.Subject, Body: m.Body, SentAt: formatTime(m.SentAt),
		DeliveredAt: optTime(m.DeliveredAt), ReadAt: optTime(m.ReadAt)})
}

// markDelivered is POST /agent/messages/{messageId}/delivered; it answers 204.
func (s *Server) markDelivered(c *call) response {
	if err := c.session.MarkDelivered(c.principal, c.id); err != nil {
		return fail(problemOf(err))
	}
	return response{status: http.StatusNoContent}
}
