package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Steps of features/messages.feature: messages one run sends another,
// each recipient's inbox, and the delivery and reading of a message.

// sentMessage is the message a scenario sent last, and every reading of it.
type sentMessage struct {
	id        string
	recipient *trackedRun
	readings  []map[string]any // the answers to POST .../read, in order
}

// messagesRoom is what the message steps keep.
type messagesRoom struct {
	sent   sentMessage // the message sent last
	answer *response   // the answer to that send
}

// registerMessages registers the steps of run-to-run messages.
func (s *scenario) registerMessages(sc stepContext) {
	sc.Step(`^run "([^"]*)" sends run "([^"]*)" the message "([^"]*)" saying "([^"]*)"$`, s.sendMessage)
	sc.Step(`^run "([^"]*)" has sent run "([^"]*)" the message "([^"]*)" saying "([^"]*)"$`, func(ctx context.Context, from, to, subject, text string) error {
		if err := s.sendMessage(ctx, from, to, subject, text); err != nil {
			return err
		}
		return s.messageAccepted(ctx)
	})
	sc.Step(`^the message is accepted, with an id for its recipient$`, s.messageAccepted)
	sc.Step(`^the inbox of run "([^"]*)" holds the message "([^"]*)", neither delivered nor read$`, s.inboxHoldsUnread)
	sc.Step(`^the inbox of run "([^"]*)" is empty$`, s.inboxIsEmpty)
	sc.Step(`^run "([^"]*)" has no unread messages$`, s.noUnreadMessages)
	sc.Step(`^the recipient marks the message delivered(?: again)?$`, s.markDelivered)
	sc.Step(`^the recipient reads the message(?: again)?$`, s.readMessage)
	sc.Step(`^the message reads "([^"]*)", with the times it was delivered and read$`, s.messageReads)
	sc.Step(`^the times it was delivered and read are still those of the first reading$`, s.readingTimesKept)
	sc.Step(`^run "([^"]*)" has ended, cancelled unless it ended first$`, s.runCancelledAndEnded)
	sc.Step(`^the message is refused with a 4xx, the recipient having ended$`, s.messageRefusedAfterEnd)
}

// messageRefusedAfterEnd checks that the last message, sent to a recipient
// seen ended, was refused with a client error: which one the published
// document does not say.
func (s *scenario) messageRefusedAfterEnd() error {
	sent := s.messages.answer
	if sent == nil || s.messages.sent.recipient == nil {
		return errNoRequest
	}
	state := str(s.messages.sent.recipient.details["state"])
	if sent.status/100 != 4 {
		return fmt.Errorf("%s: expected a 4xx refusal, run %s having ended in %s before the message was sent; got %d\n%s",
			sent.op, s.messages.sent.recipient.id, state, sent.status, sent.excerpt())
	}
	return nil
}

// sendMessage posts a message from one run of the scenario to another.
// The answer is kept, and is the last response; when it is a 200, its id
// is kept too.
func (s *scenario) sendMessage(ctx context.Context, from, to, subject, text string) error {
	sender, err := s.mine.named(from)
	if err != nil {
		return err
	}
	recipient, err := s.mine.named(to)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]any{"to": []string{recipient.id}, "subject": subject, "body": text, "sender_run_id": sender.id})
	resp, err := s.ask(ctx, call{method: http.MethodPost, path: "/agent/messages", body: body})
	s.leave(resp) // a refusal is judged by the response steps too
	if err != nil {
		return err
	}
	s.messages.sent, s.messages.answer = sentMessage{recipient: recipient}, resp
	if resp.status == http.StatusOK {
		var doc struct {
			IDs []string `json:"message_ids"`
		}
		if err := resp.json(&doc); err != nil {
			return err
		}
		if len(doc.IDs) > 0 {
			s.messages.sent.id = doc.IDs[0]
		}
	}
	return nil
}

// messageAccepted checks that the message was sent. The published
// document keeps sending for the service's own agents, behind a feature
// flag, and documents no errors for it: a server other than the mock may
// refuse the suite's key, and then the scenario is skipped, saying so. A
// recipient that had already ended when the message came (runs can be
// quick) leaves the scenario inconclusive.
func (s *scenario) messageAccepted(ctx context.Context) error {
	sent := s.messages.answer
	if sent == nil {
		return errNoRequest
	}
	if sent.status != http.StatusOK && s.messages.sent.recipient != nil {
		run, err := s.fetch(ctx, s.messages.sent.recipient)
		if err != nil {
			return err
		}
		if st := str(run["state"]); isTerminal(st) && sent.status == http.StatusUnprocessableEntity {
			return s.inconclusive(fmt.Sprintf("run %s had already ended (%s) when the message came, and refused it: runs can end before the suite sends", s.messages.sent.recipient.id, st))
		}
		if s.api.control == nil && messagingRefused(sent) {
			return s.skip(fmt.Sprintf("%s answered %d: the server does not offer sending messages to this key (the published document keeps it for the service's own agents, behind a feature flag)", sent.op, sent.status))
		}
	}
	if err := sent.hasStatus(http.StatusOK); err != nil {
		return err
	}
	if s.messages.sent.id == "" {
		return fmt.Errorf("%s: expected one message id for the one recipient\n%s", sent.op, sent.excerpt())
	}
	return nil
}

// messagingRefused tells whether an answer to a send says the key may not
// send messages here (403, 404, 501, or a 422 saying the feature is not
// available), rather than that the server failed.
func messagingRefused(resp *response) bool {
	switch resp.status {
	case http.StatusForbidden, http.StatusNotFound, http.StatusNotImplemented:
		return true
	case http.StatusUnprocessableEntity:
		var p struct {
			Type  string `json:"type"`
			Error string `json:"error"`
		}
		_ = json.Unmarshal(resp.body, &p)
		return strings.HasSuffix(p.Type, "/feature_not_available") || strings.Contains(p.Error, "feature_not_available")
	}
	return false
}

func (s *scenario) theMessage() (sentMessage, error) {
	if s.messages.sent.id == "" {
		return sentMessage{}, fmt.Errorf("no message was sent in this scenario")
	}
	return s.messages.sent, nil
}

// inbox lists the messages sent to a run of the scenario; the answer is
// returned, not kept as the last response.
func (s *scenario) inbox(ctx context.Context, nick string, query url.Values) ([]map[string]any, *response, error) {
	r, err := s.mine.named(nick)
	if err != nil {
		return nil, nil, err
	}
	var items []map[string]any
	resp, err := s.getJSON(ctx, "/agent/messages/"+pathEscape(r.id), query, &items)
	return items, resp, err
}

func (s *scenario) inboxHoldsUnread(ctx context.Context, nick, subject string) error {
	m, err := s.theMessage()
	if err != nil {
		return err
	}
	items, resp, err := s.inbox(ctx, nick, nil)
	if err != nil {
		return err
	}
	if len(items) != 1 {
		return fmt.Errorf("%s: expected 1 message, got %d\n%s", resp.op, len(items), resp.excerpt())
	}
	got := subjectOf(resp, items[0])
	for _, check := range []error{got.fieldIs("message_id", m.id), got.fieldIs("subject", subject)} {
		if check != nil {
			return check
		}
	}
	for _, f := range []string{"delivered_at", "read_at"} {
		if v := items[0][f]; v != nil {
			return fmt.Errorf("%s: expected the message's %q to be null, got %s", resp.op, f, show(v))
		}
	}
	return nil
}

func (s *scenario) inboxIsEmpty(ctx context.Context, nick string) error {
	return s.inboxHolds(ctx, nick, nil, 0)
}

func (s *scenario) noUnreadMessages(ctx context.Context, nick string) error {
	return s.inboxHolds(ctx, nick, url.Values{"unread": {"true"}}, 0)
}

func (s *scenario) inboxHolds(ctx context.Context, nick string, query url.Values, n int) error {
	items, resp, err := s.inbox(ctx, nick, query)
	if err != nil {
		return err
	}
	if len(items) != n {
		return fmt.Errorf("%s: expected %d messages, got %d\n%s", resp.op, n, len(items), resp.excerpt())
	}
	return nil
}

// markDelivered marks the message delivered: 204, every time.
func (s *scenario) markDelivered(ctx context.Context) error {
	m, err := s.theMessage()
	if err != nil {
		return err
	}
	resp, err := s.api.do(ctx, call{method: http.MethodPost, path: "/agent/messages/" + pathEscape(m.id) + "/delivered"})
	if err != nil {
		return err
	}
	return resp.hasStatus(http.StatusNoContent)
}

// readMessage reads the message: 200 with the message, every time.
func (s *scenario) readMessage(ctx context.Context) error {
	m, err := s.theMessage()
	if err != nil {
		return err
	}
	resp, err := s.api.do(ctx, call{method: http.MethodPost, path: "/agent/messages/" + pathEscape(m.id) + "/read"})
	if err != nil {
		return err
	}
	if err := resp.ok("reading a message"); err != nil {
		return err
	}
	doc, err := resp.object()
	if err != nil {
		return err
	}
	s.messages.sent.readings = append(s.messages.sent.readings, doc)
	return nil
}

func (s *scenario) lastReading() (subject, error) {
	if len(s.messages.sent.readings) == 0 {
		return subject{}, fmt.Errorf("the message was not read")
	}
	return subject{what: "the message read", doc: s.messages.sent.readings[len(s.messages.sent.readings)-1]}, nil
}

func (s *scenario) messageReads(text string) error {
	got, err := s.lastReading()
	if err != nil {
		return err
	}
	for _, check := range []error{got.fieldIs("body", text), got.fieldIs("message_id", s.messages.sent.id), got.nonEmpty("delivered_at"), got.nonEmpty("read_at")} {
		if check != nil {
			return check
		}
	}
	return nil
}

func (s *scenario) readingTimesKept() error {
	got, err := s.lastReading()
	if err != nil {
		return err
	}
	if len(s.messages.sent.readings) < 2 {
		return fmt.Errorf("the message was read only once")
	}
	first := s.messages.sent.readings[0]
	for _, f := range []string{"read_at", "delivered_at"} {
		if err := got.fieldIs(f, str(first[f])); err != nil {
			return fmt.Errorf("%w (at the first reading)", err)
		}
	}
	return nil
}

// runCancelledAndEnded cancels a run of the scenario (retrying while the
// server answers a retryable 409), then watches it until it has ended: a
// cancel may take effect a moment after the server accepts it, and a run
// may have ended on its own before the cancel reached it.
func (s *scenario) runCancelledAndEnded(ctx context.Context, nick string) error {
	r, err := s.mine.named(nick)
	if err != nil {
		return err
	}
	if err := s.cancel(ctx, r); err != nil {
		return err
	}
	if err := s.judgeCancel(ctx, r); err != nil {
		return err
	}
	current := s.current
	s.current = r
	defer func() { s.current = current }()
	return s.watchUntilTerminal(ctx)
}

// subjectOf is one JSON object of a response, for its assertions.
func subjectOf(resp *response, doc map[string]any) subject {
	return subject{what: "an item of the response to " + resp.op, doc: doc}
}
