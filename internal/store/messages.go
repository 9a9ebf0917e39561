package store

import (
	"errors"
	"fmt"
	"time"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/google/uuid"
)

// The messages resource: run-to-run messages. One send makes one copy per
// recipient, each with its own delivery and read times, each set once.
// Every run involved must be one the caller's team may see.

// Errors of the messages resource.
var (
	ErrMessageNotFound   = sentinel(NotFound, "no message with this id")
	ErrMessageOtherTeam  = sentinel(Forbidden, "the message was sent to another team's run")
	ErrRecipientFinished = sentinel(Unsupported, "a recipient has already finished")
)

// messageTable is the messages resource's part of a mock session.
type messageTable struct {
	list []*Message // in the order sent
	byID map[string]*Message
}

// savedMessages is the messages table's part of the save.
type savedMessages struct {
	Messages []*Message `json:"messages,omitempty"`
}

// reset: the fixtures have no messages.
func (t *messageTable) reset(*Session, time.Time) { t.list, t.byID = nil, map[string]*Message{} }

func (t *messageTable) save(ss *savedSession) { ss.Messages = t.list }

func (t *messageTable) restore(_ *Session, ss *savedSession, _ *restorer) error {
	t.list, t.byID = nil, map[string]*Message{}
	for i, m := range ss.Messages {
		if m == nil || m.ID == "" || m.Team == "" || t.byID[m.ID] != nil {
			return fmt.Errorf("message %d is null, without id or team, or repeated", i)
		}
		t.list = append(t.list, m)
		t.byID[m.ID] = m
	}
	return nil
}

// Message is one recipient's copy of a message, the same record in memory
// and in the save.
type Message struct {
	ID          string    `json:"id"`
	Team        string    `json:"team"` // the recipient's team, who may see it
	SenderRunID string    `json:"sender_run_id"`
	RecipientID string    `json:"recipient_run_id"`
	Subject     string    `json:"subject"`
	Body        string    `json:"body"`
	SentAt      time.Time `json:"sent_at"`
	DeliveredAt time.Time `json:"delivered_at,omitzero"`
	ReadAt      time.Time `json:"read_at,omitzero"`
}

// NewMessage is what a send asks for, already validated.
type NewMessage struct {
	SenderRunID string
	To          []string
	Subject     string
	Body        string
}

// SendMessage stores one copy of the message per recipient and returns
// their ids in the order of To. Nothing is stored unless every run is
// visible to p's team and no recipient has finished.
func (ms *Session) SendMessage(p *fixtures.Principal, n NewMessage) ([]string, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if _, err := ms.visibleLocked(p, n.SenderRunID); err != nil {
		return nil, namedRunError("sender_run_id", n.SenderRunID, err)
	}
	now := ms.clock.Now()
	recipients := make([]*Run, len(n.To))
	for i, id := range n.To {
		r, err := ms.visibleLocked(p, id)
		if err != nil {
			return nil, namedRunError(fmt.Sprintf("to[%d]", i), id, err)
		}
		if s := r.Timeline.At(now).State; s.Terminal() {
			return nil, ErrRecipientFinished.because("to[%d]: the run %s has finished and takes no more messages (it is %s)", i, id, s)
		}
		recipients[i] = r
	}
	ids := make([]string, len(recipients))
	for i, r := range recipients {
		m := &Message{ID: "msg-" + uuid.NewString(), Team: r.Team, SenderRunID: n.SenderRunID, RecipientID: r.ID,
			Subject: n.Subject, Body: n.Body, SentAt: now}
		ms.messages.list = append(ms.messages.list, m)
		ms.messages.byID[m.ID] = m
		ids[i] = m.ID
	}
	ms.changed()
	return ids, nil
}

// namedRunError says which of a message's runs could not be seen.
func namedRunError(field, id string, err error) error {
	if errors.Is(err, ErrOtherTeam) {
		return ErrOtherTeam.because("%s: the run %q belongs to another team", field, id)
	}
	return ErrRunNotFound.because("%s: no run %q", field, id)
}

// InboxQuery selects a run's messages.
type InboxQuery struct {
	UnreadOnly bool
	Since      time.Time // sent after; zero: from the first
	Limit      int
}

// Inbox returns the messages sent to a run p's team may see, oldest first.
func (ms *Session) Inbox(p *fixtures.Principal, runID string, q InboxQuery) ([]Message, error) {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	if _, err := ms.visibleLocked(p, runID); err != nil {
		return nil, err
	}
	out := []Message{}
	for _, m := range ms.messages.list {
		if len(out) == q.Limit {
			break
		}
		if m.RecipientID != runID || q.UnreadOnly && !m.ReadAt.IsZero() || !q.Since.IsZero() && !m.SentAt.After(q.Since) {
			continue
		}
		out = append(out, *m)
	}
	return out, nil
}

func (ms *Session) messageLocked(p *fixtures.Principal, id string) (*Message, error) {
	m, ok := ms.messages.byID[id]
	switch {
	case !ok:
		return nil, ErrMessageNotFound
	case m.Team != p.Team:
		return nil, ErrMessageOtherTeam
	}
	return m, nil
}

// ReadMessage returns a message with its body and sets read_at the first
// time. A message read was delivered, so delivered_at is set too if unset.
func (ms *Session) ReadMessage(p *fixtures.Principal, id string) (Message, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	m, err := ms.messageLocked(p, id)
	if err != nil {
		return Message{}, err
	}
	now := ms.clock.Now()
	if m.DeliveredAt.IsZero() {
		m.DeliveredAt = now
	}
	if m.ReadAt.IsZero() {
		m.ReadAt = now
		ms.changed()
	}
	return *m, nil
}

// MarkDelivered sets a message's delivered_at the first time; later calls
// change nothing.
func (ms *Session) MarkDelivered(p *fixtures.Principal, id string) error {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	m, err := ms.messageLocked(p, id)
	if err != nil {
		return err
	}
	if m.DeliveredAt.IsZero() {
		m.DeliveredAt = ms.clock.Now()
		ms.changed()
	}
	return nil
}
