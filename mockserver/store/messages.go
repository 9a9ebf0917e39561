package store

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/google/uuid"
)

// The messages resource: run-to-run messages. One send is one Letter,
// kept once however many runs it goes to; each recipient has its own copy
// (a Message), with its own id and delivery and read times, each set once.
// Every run involved must be one the caller's team may see.

// Errors of the messages resource.
var (
	ErrMessageNotFound   = sentinel(NotFound, "no message with this id")
	ErrMessageOtherTeam  = sentinel(Forbidden, "the message was sent to another team's run")
	ErrRecipientFinished = sentinel(Unsupported, "a recipient has already finished")
	ErrMessageTooLarge   = sentinel(Invalid, "the message is larger than the mock keeps")
	// ErrInboxFull and ErrTeamMailFull: a limit only a reset lifts.
	ErrInboxFull    = sentinel(Exhausted, "the run holds the most messages the mock keeps for one run")
	ErrTeamMailFull = sentinel(Exhausted, "the team has sent the most messages the mock keeps for one team")
)

// The bounds on what messages may hold, so a caller cannot make a mock
// session hold more than (MaxMessagesPerTeam copies of about 250 bytes,
// plus MaxMessageBytesPerTeam of letters) per team.
const (
	// MaxMessageSubject and MaxMessageBody bound one letter.
	MaxMessageSubject = 1 << 10
	MaxMessageBody    = 64 << 10
	// MaxMessagesPerRun bounds a run's inbox.
	MaxMessagesPerRun = 1000
	// MaxMessagesPerTeam bounds the copies a team's runs hold together.
	MaxMessagesPerTeam = 10000
	// MaxMessageBytesPerTeam bounds the subjects and bodies a team's
	// letters hold together, each letter counted once.
	MaxMessageBytesPerTeam = 16 << 20
)

// messageTable is the messages resource's part of a mock session.
type messageTable struct {
	list  []*Message // in the order sent
	byID  map[string]*Message
	byRun map[string][]*Message // by recipient, in the order sent
	// used is what each team's messages hold, against the bounds above.
	used map[string]mailUse
}

// mailUse is what one team's messages hold.
type mailUse struct {
	copies int
	bytes  int
}

// savedMessages is the messages table's part of the save: each letter
// once, then the copies naming their letter.
type savedMessages struct {
	Letters  []*Letter      `json:"letters,omitempty"`
	Messages []savedMessage `json:"messages,omitempty"`
}

// savedMessage is a copy in the save. Files written before letters were
// kept once have no Letter: each copy carries the letter's fields itself,
// and restore gathers equal ones into one letter.
type savedMessage struct {
	ID          string    `json:"id"`
	Team        string    `json:"team"`
	RecipientID string    `json:"recipient_run_id"`
	Letter      string    `json:"letter,omitempty"`
	DeliveredAt time.Time `json:"delivered_at,omitzero"`
	ReadAt      time.Time `json:"read_at,omitzero"`

	SenderRunID string    `json:"sender_run_id,omitempty"`
	Subject     string    `json:"subject,omitempty"`
	Body        string    `json:"body,omitempty"`
	SentAt      time.Time `json:"sent_at,omitzero"`
}

// reset: the fixtures have no messages.
func (t *messageTable) reset(*Session, time.Time) { t.empty() }

func (t *messageTable) empty() {
	t.list, t.byID, t.byRun, t.used = nil, map[string]*Message{}, map[string][]*Message{}, map[string]mailUse{}
}

func (t *messageTable) save(ss *savedSession) {
	seen := map[*Letter]bool{}
	ss.savedMessages = savedMessages{Messages: make([]savedMessage, len(t.list))}
	for i, m := range t.list {
		if !seen[m.Letter] {
			seen[m.Letter] = true
			ss.Letters = append(ss.Letters, m.Letter)
		}
		ss.Messages[i] = savedMessage{ID: m.ID, Team: m.Team, RecipientID: m.RecipientID, Letter: m.Letter.ID,
			DeliveredAt: m.DeliveredAt, ReadAt: m.ReadAt}
	}
}

func (t *messageTable) restore(_ *Session, ss *savedSession, _ *restorer) error {
	t.empty()
	letters := make(map[string]*Letter, len(ss.Letters))
	for i, l := range ss.Letters {
		if l == nil || l.ID == "" || l.Team == "" || letters[l.ID] != nil {
			return fmt.Errorf("letter %d is null, without id or team, or repeated", i)
		}
		letters[l.ID] = l
	}
	// An older file's copies each carry their letter: equal ones are one.
	type whole struct {
		team, sender, subject, body string
		sentAt                      int64
	}
	inline := map[whole]*Letter{}
	counted := map[*Letter]bool{}
	for i, sm := range ss.Messages {
		if sm.ID == "" || sm.Team == "" || t.byID[sm.ID] != nil {
			return fmt.Errorf("message %d is without id or team, or repeated", i)
		}
		l := letters[sm.Letter]
		if sm.Letter == "" {
			k := whole{sm.Team, sm.SenderRunID, sm.Subject, sm.Body, sm.SentAt.UnixNano()}
			if l = inline[k]; l == nil {
				l = &Letter{ID: "ltr-" + strings.TrimPrefix(sm.ID, "msg-"), Team: sm.Team, SenderRunID: sm.SenderRunID,
					Subject: sm.Subject, Body: sm.Body, SentAt: sm.SentAt}
				inline[k] = l
			}
		}
		if l == nil {
			return fmt.Errorf("message %d names no letter the file has (%q)", i, sm.Letter)
		}
		if !counted[l] { // a letter counts once, whatever its copies
			counted[l] = true
			if err := checkLetter(l); err != nil {
				return fmt.Errorf("message %d: %v", i, err)
			}
			t.countLetter(l)
		}
		t.add(&Message{ID: sm.ID, Team: sm.Team, RecipientID: sm.RecipientID, Letter: l,
			DeliveredAt: sm.DeliveredAt, ReadAt: sm.ReadAt})
		if n := len(t.byRun[sm.RecipientID]); n > MaxMessagesPerRun {
			return fmt.Errorf("run %s has more than %d messages in its inbox, the most the mock keeps for one run", sm.RecipientID, MaxMessagesPerRun)
		}
	}
	for team, u := range t.used {
		if u.copies > MaxMessagesPerTeam || u.bytes > MaxMessageBytesPerTeam {
			return fmt.Errorf("team %s has %d messages of %d bytes; the mock keeps at most %d messages and %d bytes (16 MiB) of subjects and bodies for one team", team, u.copies, u.bytes, MaxMessagesPerTeam, MaxMessageBytesPerTeam)
		}
	}
	return nil
}

// checkLetter holds a letter from a file to the sizes a send is held to.
func checkLetter(l *Letter) error {
	if len(l.Subject) > MaxMessageSubject || len(l.Body) > MaxMessageBody {
		return fmt.Errorf("letter %s has a subject of %d bytes and a body of %d; the limits are %d (1 KiB) and %d (64 KiB)", l.ID, len(l.Subject), len(l.Body), MaxMessageSubject, MaxMessageBody)
	}
	return nil
}

// add files a copy.
func (t *messageTable) add(m *Message) {
	t.list = append(t.list, m)
	t.byID[m.ID] = m
	t.byRun[m.RecipientID] = append(t.byRun[m.RecipientID], m)
	u := t.used[m.Team]
	u.copies++
	t.used[m.Team] = u
}

// countLetter counts a new letter's bytes against its team.
func (t *messageTable) countLetter(l *Letter) {
	u := t.used[l.Team]
	u.bytes += l.size()
	t.used[l.Team] = u
}

// Letter is what one send says, kept once however many runs it went to;
// never changed once stored.
type Letter struct {
	ID          string    `json:"id"`
	Team        string    `json:"team"` // the sender's team
	SenderRunID string    `json:"sender_run_id"`
	Subject     string    `json:"subject"`
	Body        string    `json:"body"`
	SentAt      time.Time `json:"sent_at"`
}

func (l *Letter) size() int { return len(l.Subject) + len(l.Body) }

// Message is one recipient's copy of a letter: its own id and times; the
// letter's fields (SenderRunID, Subject, Body, SentAt) read through it.
type Message struct {
	ID          string
	Team        string // the recipient's team, who may see it
	RecipientID string
	*Letter
	DeliveredAt time.Time
	ReadAt      time.Time
}

// NewMessage is what a send asks for, already validated.
type NewMessage struct {
	SenderRunID string
	To          []string
	Subject     string
	Body        string
}

// SendMessage stores the message once, with a copy per recipient, and
// returns the copies' ids in the order of To. Nothing is stored unless
// every run is visible to p's team, no recipient has finished, and the
// message fits the bounds above.
func (ms *Session) SendMessage(p *fixtures.Principal, n NewMessage) ([]string, error) {
	switch {
	case len(n.Subject) > MaxMessageSubject:
		return nil, ErrMessageTooLarge.because("subject: %d bytes, over the %d bytes (1 KiB) a message's subject may have", len(n.Subject), MaxMessageSubject)
	case len(n.Body) > MaxMessageBody:
		return nil, ErrMessageTooLarge.because("body: %d bytes, over the %d bytes (64 KiB) a message's body may have", len(n.Body), MaxMessageBody)
	}
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
		if len(ms.messages.byRun[id]) >= MaxMessagesPerRun {
			return nil, ErrInboxFull.because("to[%d]: the run %s holds %d messages, the most the mock keeps for one run; retrying will not help: reset the session (POST /__mock/reset)", i, id, MaxMessagesPerRun)
		}
		recipients[i] = r
	}
	l := &Letter{ID: "ltr-" + uuid.NewString(), Team: p.Team, SenderRunID: n.SenderRunID, Subject: n.Subject, Body: n.Body, SentAt: now}
	u := ms.messages.used[p.Team]
	switch {
	case u.copies+len(recipients) > MaxMessagesPerTeam:
		return nil, ErrTeamMailFull.because("team %s's runs hold %d messages; %d more would pass the %d the mock keeps for one team; retrying will not help: reset the session (POST /__mock/reset)", p.Team, u.copies, len(recipients), MaxMessagesPerTeam)
	case u.bytes+l.size() > MaxMessageBytesPerTeam:
		return nil, ErrTeamMailFull.because("team %s's messages hold %d bytes of subjects and bodies; %d more would pass the %d (16 MiB) the mock keeps for one team; retrying will not help: reset the session (POST /__mock/reset)", p.Team, u.bytes, l.size(), MaxMessageBytesPerTeam)
	}
	ms.messages.countLetter(l)
	ids := make([]string, len(recipients))
	for i, r := range recipients {
		m := &Message{ID: "msg-" + uuid.NewString(), Team: r.Team, RecipientID: r.ID, Letter: l}
		ms.messages.add(m)
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
	for _, m := range ms.messages.byRun[runID] {
		if len(out) == q.Limit {
			break
		}
		if q.UnreadOnly && !m.ReadAt.IsZero() || !q.Since.IsZero() && !m.SentAt.After(q.Since) {
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
