package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"time"
)

// Steps about conversations, transcripts and agent session redirects.
// Every conversation fetched is kept, so a step can compare it with the
// one before.

// conversationsRoom is what the conversation steps keep.
type conversationsRoom struct {
	docs       []conversationDoc // every conversation fetched, in order
	transcript *response         // the answer to the last ask for the run's transcript
}

func (s *scenario) registerConversations(sc stepContext) {
	sc.Step(`^I fetch the run's conversation$`, s.fetchRunConversation)
	sc.Step(`^a worker took the run on$`, s.workerTookRunOn)
	sc.Step(`^I fetch the conversation by its id$`, s.fetchConversationByID)
	sc.Step(`^the conversation begins with the prompt "([^"]*)"$`, s.conversationBeginsWith)
	sc.Step(`^the conversation's messages are in time order, within the run's life$`, s.conversationInOrder)
	sc.Step(`^the conversation is the one the run shows$`, s.conversationIsTheRuns)
	sc.Step(`^it is the same conversation as before$`, s.sameConversation)
	sc.Step(`^the conversation holds the prompts "([^"]*)" and "([^"]*)", in that order$`, s.conversationHoldsPrompts)
	sc.Step(`^the conversation has no summary yet$`, s.conversationHasNoSummary)
	sc.Step(`^the conversation still shows what it showed before, and more$`, s.conversationGrew)
	sc.Step(`^the conversation ends with a summary$`, s.conversationEndsWithSummary)
	sc.Step(`^the conversation ends with the event "([^"]*)" carrying the error code "([^"]*)"$`, s.conversationEndsWithEvent)
	sc.Step(`^I ask for the run's transcript$`, s.askForTranscript)
	sc.Step(`^the answer redirects to an absolute URL$`, s.answerRedirects)
	sc.Step(`^that URL, fetched without my API key, gives the transcript$`, func(ctx context.Context) error { return s.downloadTranscript(ctx, "") })
	sc.Step(`^that URL, fetched without my API key, gives a transcript holding "([^"]*)"$`, s.downloadTranscript)
	sc.Step(`^the run's agent session, if it shows one, redirects to nothing or to the run's conversation$`, func(ctx context.Context) error { return s.sessionRedirect(ctx, false) })
	sc.Step(`^that URL is refused with status (\d+)$`, s.transcriptURLRefused)
	sc.Step(`^once that URL has expired, if it says when, it is refused$`, s.transcriptURLRefusedOnceExpired)
	sc.Step(`^the run's agent session redirects nowhere yet$`, s.sessionRedirectsNowhereYet)
	sc.Step(`^the run's agent session redirects nowhere while the run is seen at work after the answer$`, s.sessionRedirectsNowhereWhileSeenAtWork)
	sc.Step(`^the run's session and conversation redirects answer without an API key$`, s.redirectsArePublic)
	sc.Step(`^the run's conversation redirects to its session, without an API key$`, func(ctx context.Context) error { return s.conversationRedirect(ctx, true) })
	sc.Step(`^the run's conversation redirects nowhere, without an API key$`, func(ctx context.Context) error { return s.conversationRedirect(ctx, false) })
	sc.Step(`^the run's session redirects to its conversation, without an API key$`, s.sessionRedirectsPublicly)
	sc.Step(`^the run's agent session redirects to the run's conversation$`, func(ctx context.Context) error { return s.sessionRedirect(ctx, true) })
}

// conversationDoc is a ConversationResponse as the suite reads it.
type conversationDoc struct {
	ID    string             `json:"conversation_id"`
	Steps []conversationStep `json:"steps"`
}

type conversationStep struct {
	Summary  string                `json:"summary"`
	Messages []conversationMessage `json:"messages"`
}

type conversationMessage struct {
	Role      string           `json:"role"`
	Timestamp string           `json:"timestamp"`
	Content   []map[string]any `json:"content"`
}

// flat is each message of the conversation, in order, as role and blocks.
func (c conversationDoc) flat() []string {
	var out []string
	for _, st := range c.Steps {
		for _, m := range st.Messages {
			b, _ := json.Marshal(m.Content)
			out = append(out, m.Role+" "+string(b))
		}
	}
	return out
}

// conversations are the conversations fetched so far, the last one last.
func (s *scenario) lastConversations(n int) ([]conversationDoc, error) {
	if len(s.conversations.docs) < n {
		return nil, fmt.Errorf("%d conversations fetched, this step needs %d", len(s.conversations.docs), n)
	}
	return s.conversations.docs[len(s.conversations.docs)-n:], nil
}

func (s *scenario) conversation() (conversationDoc, error) {
	c, err := s.lastConversations(1)
	if err != nil {
		return conversationDoc{}, err
	}
	return c[0], nil
}

// fetchConversation gets a conversation and keeps it when the answer is 200.
func (s *scenario) fetchConversation(ctx context.Context, path string) error {
	resp, err := s.ask(ctx, call{method: http.MethodGet, path: path})
	s.leave(resp) // judged by the response steps too
	if err != nil {
		return err
	}
	if resp.status != http.StatusOK {
		return nil // a later step says what it expected
	}
	var c conversationDoc
	if err := json.Unmarshal(resp.body, &c); err != nil {
		return fmt.Errorf("%s: not a conversation: %v\n%s", resp.op, err, resp.excerpt())
	}
	s.conversations.docs = append(s.conversations.docs, c)
	return nil
}

// workerTookRunOn skips the rest of the scenario when the run ended before
// any worker claimed it (it shows no agent session): a correct server may
// end a run that way, and such a run has no conversation to check.
func (s *scenario) workerTookRunOn() error {
	if s.current == nil {
		return errNoRun
	}
	if id, _ := s.current.details["session_id"].(string); id == "" {
		return s.inconclusive(fmt.Sprintf("run %s ended %v before a worker claimed it, so it has no conversation", s.current.id, s.current.details["state"]))
	}
	return nil
}

func (s *scenario) fetchRunConversation(ctx context.Context) error {
	if s.current == nil {
		return errNoRun
	}
	return s.fetchConversation(ctx, "/agent/runs/"+pathEscape(s.current.id)+"/conversation")
}

func (s *scenario) fetchConversationByID(ctx context.Context) error {
	c, err := s.conversation()
	if err != nil {
		return err
	}
	return s.fetchConversation(ctx, "/agent/conversations/"+pathEscape(c.ID))
}

// sentConversation is the conversation of the last answer, which must be a 200.
func (s *scenario) sentConversation() (conversationDoc, error) {
	if s.last == nil {
		return conversationDoc{}, fmt.Errorf("no response yet")
	}
	if err := s.last.ok("fetching a conversation"); err != nil {
		return conversationDoc{}, err
	}
	var c conversationDoc
	if err := json.Unmarshal(s.last.body, &c); err != nil {
		return conversationDoc{}, fmt.Errorf("%s: not a conversation: %v", s.last.op, err)
	}
	return c, nil
}

// userTexts are the texts of the conversation's user messages, in order.
func userTexts(c conversationDoc) []string {
	var out []string
	for _, st := range c.Steps {
		for _, m := range st.Messages {
			if m.Role != "user" {
				continue
			}
			for _, b := range m.Content {
				if t, ok := b["text"].(string); ok && b["type"] == "text" {
					out = append(out, t)
				}
			}
		}
	}
	return out
}

func (s *scenario) conversationBeginsWith(prompt string) error {
	c, err := s.sentConversation()
	if err != nil {
		return err
	}
	if len(c.Steps) == 0 || len(c.Steps[0].Messages) == 0 {
		return fmt.Errorf("the conversation has no messages, expected the prompt first\n%s", s.last.excerpt())
	}
	// A conversation may open with the system's instructions; the first
	// message of anyone else is the user's prompt.
	msgs := c.Steps[0].Messages
	for len(msgs) > 1 && msgs[0].Role == "system" {
		msgs = msgs[1:]
	}
	first := msgs[0]
	texts := userTexts(conversationDoc{Steps: []conversationStep{{Messages: msgs[:1]}}})
	if first.Role != "user" || len(texts) == 0 || !strings.Contains(texts[0], prompt) {
		return fmt.Errorf("the conversation's first message after any system message is from %q, expected the user's prompt %q\n%s", first.Role, prompt, s.last.excerpt())
	}
	return nil
}

// conversationInOrder checks each step's messages are in time order and
// stamped between the run's creation and its last update.
func (s *scenario) conversationInOrder(ctx context.Context) error {
	c, err := s.sentConversation()
	if err != nil {
		return err
	}
	doc, err := s.fetch(ctx, s.current)
	if err != nil {
		return err
	}
	created, err1 := timestamp(doc, "created_at")
	updated, err2 := timestamp(doc, "updated_at")
	if err1 != nil || err2 != nil {
		return fmt.Errorf("the run's created_at or updated_at is not a timestamp")
	}
	for i, st := range c.Steps {
		var prev time.Time
		for j, m := range st.Messages {
			if m.Timestamp == "" {
				continue // optional in the document
			}
			at, err := time.Parse(time.RFC3339Nano, m.Timestamp)
			if err != nil {
				return fmt.Errorf("step %d, message %d: timestamp %q is not RFC 3339", i, j, m.Timestamp)
			}
			if at.Before(prev) {
				return fmt.Errorf("step %d, message %d at %s comes after a message at %s", i, j, m.Timestamp, prev.Format(time.RFC3339Nano))
			}
			if i == len(c.Steps)-1 && (at.Before(created) || at.After(updated)) {
				return fmt.Errorf("step %d, message %d at %s is outside the run's life, from its created_at %s to its updated_at %s", i, j, m.Timestamp, created.Format(time.RFC3339Nano), updated.Format(time.RFC3339Nano))
			}
			prev = at
		}
	}
	return nil
}

func (s *scenario) conversationIsTheRuns(ctx context.Context) error {
	c, err := s.conversation()
	if err != nil {
		return err
	}
	doc, err := s.fetch(ctx, s.current)
	if err != nil {
		return err
	}
	if id := str(doc["conversation_id"]); id != "" && id != c.ID {
		return fmt.Errorf("the run shows conversation_id %q, but its conversation is %q", id, c.ID)
	}
	return nil
}

func (s *scenario) sameConversation() error {
	c, err := s.lastConversations(2)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(c[0], c[1]) {
		return fmt.Errorf("the same conversation came back different:\nfirst %v\nthen  %v", c[0].flat(), c[1].flat())
	}
	return nil
}

func (s *scenario) conversationHoldsPrompts(ctx context.Context, a, b string) error {
	c, err := s.sentConversation()
	if err != nil {
		return err
	}
	s.conversations.docs = append(s.conversations.docs, c)
	texts := userTexts(c)
	ia, ib := -1, -1
	for i, t := range texts {
		if ia < 0 && strings.Contains(t, a) {
			ia = i
		}
		if strings.Contains(t, b) {
			ib = i
		}
	}
	if ia < 0 || ib < 0 || ia > ib {
		return fmt.Errorf("expected the prompts %q and %q, in that order, among the user's messages %q", a, b, texts)
	}
	return nil
}

func (s *scenario) conversationHasNoSummary() error {
	c, err := s.sentConversation()
	if err != nil {
		return err
	}
	for _, st := range c.Steps {
		if st.Summary != "" {
			return fmt.Errorf("a summary before the run has ended: %q", st.Summary)
		}
	}
	return nil
}

func (s *scenario) conversationGrew() error {
	c, err := s.lastConversations(2)
	if err != nil {
		return err
	}
	before, now := c[0].flat(), c[1].flat()
	if len(now) <= len(before) || !reflect.DeepEqual(before, now[:len(before)]) {
		return fmt.Errorf("expected the conversation to keep its %d messages and add more:\nbefore %v\nnow    %v", len(before), before, now)
	}
	return nil
}

func (s *scenario) conversationEndsWithSummary() error {
	c, err := s.sentConversation()
	if err != nil {
		return err
	}
	if len(c.Steps) == 0 || c.Steps[len(c.Steps)-1].Summary == "" {
		return fmt.Errorf("expected the last step to have a summary\n%s", s.last.excerpt())
	}
	msgs := c.Steps[len(c.Steps)-1].Messages
	if last := msgs[len(msgs)-1]; last.Role != "assistant" || last.Content[0]["type"] != "text" {
		return fmt.Errorf("expected the assistant's summary last, got a %s message %v", last.Role, last.Content)
	}
	return nil
}

func (s *scenario) conversationEndsWithEvent(name, code string) error {
	c, err := s.sentConversation()
	if err != nil {
		return err
	}
	flat := c.flat()
	if len(c.Steps) == 0 || len(flat) == 0 {
		return fmt.Errorf("the conversation is empty")
	}
	msgs := c.Steps[len(c.Steps)-1].Messages
	b := msgs[len(msgs)-1].Content[0]
	data, _ := b["data"].(map[string]any)
	if b["type"] != "event" || b["name"] != name || data["error_code"] != code {
		return fmt.Errorf("expected the conversation to end with the event %s carrying error_code %s, got %s", name, code, flat[len(flat)-1])
	}
	return nil
}

// askForTranscript asks for the transcript without following the redirect.
func (s *scenario) askForTranscript(ctx context.Context) error {
	if s.current == nil {
		return errNoRun
	}
	api := *s.api
	hc := *api.http
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	api.http = &hc
	resp, err := api.do(ctx, call{method: http.MethodGet, path: "/agent/runs/" + pathEscape(s.current.id) + "/transcript"})
	if resp != nil {
		s.conversations.transcript = resp
	}
	return err
}

// answerRedirects checks the transcript's answer is a redirect to an
// absolute URL.
func (s *scenario) answerRedirects() error {
	t := s.conversations.transcript
	if t == nil {
		return fmt.Errorf("the run's transcript was not asked for")
	}
	if t.status != http.StatusFound {
		return fmt.Errorf("%s: expected 302 to the transcript, got %d\n%s", t.op, t.status, t.excerpt())
	}
	u, err := url.Parse(t.header.Get("Location"))
	if err != nil || !u.IsAbs() || u.Host == "" {
		return fmt.Errorf("%s: expected an absolute URL in Location, got %q", t.op, t.header.Get("Location"))
	}
	return nil
}

// downloadTranscript fetches the Location of the last answer without the
// API key, expecting a non-empty body (holding want, if given).
func (s *scenario) downloadTranscript(ctx context.Context, want string) error {
	if err := s.answerRedirects(); err != nil {
		return err
	}
	loc := s.conversations.transcript.header.Get("Location")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
	if err != nil {
		return err
	}
	resp, err := s.api.http.Do(req)
	if err != nil {
		return fmt.Errorf("downloading the transcript from %s: %w", loc, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("downloading the transcript: %w", err)
	}
	if resp.StatusCode != http.StatusOK || len(body) == 0 {
		return fmt.Errorf("downloading the transcript without the API key answered %d with %d bytes: %.300s", resp.StatusCode, len(body), body)
	}
	if want != "" && !strings.Contains(string(body), want) {
		return fmt.Errorf("the transcript does not hold %q: %.300s", want, body)
	}
	return nil
}

// sessionRedirect asks where the run's agent session leads. Without must,
// a run that shows no session passes, and so does an empty answer.
func (s *scenario) sessionRedirect(ctx context.Context, must bool) error {
	doc := s.current.details
	if doc == nil {
		return fmt.Errorf("the run's details have not been fetched")
	}
	session, conv := str(doc["session_id"]), str(doc["conversation_id"])
	if session == "" {
		if must {
			return fmt.Errorf("the run shows no session_id")
		}
		return nil
	}
	resp, err := s.ask(ctx, call{method: http.MethodGet, path: "/agent/sessions/" + pathEscape(session) + "/redirect"})
	if err != nil {
		return err
	}
	if err := resp.ok("asking for the session redirect"); err != nil {
		return err
	}
	var red struct {
		ConversationID *string `json:"conversation_id"`
	}
	if err := json.Unmarshal(resp.body, &red); err != nil {
		return fmt.Errorf("%s: %v", resp.op, err)
	}
	switch {
	case red.ConversationID == nil && must:
		return fmt.Errorf("the finished run's session redirects nowhere; expected its conversation %q\n%s", conv, resp.excerpt())
	case red.ConversationID != nil && conv != "" && *red.ConversationID != conv:
		return fmt.Errorf("the run's session redirects to conversation %q, but the run's conversation is %q", *red.ConversationID, conv)
	}
	return nil
}

// transcriptURLRefused fetches the Location of the last answer (a transcript
// redirect) without the API key, expecting it refused: a signed link that
// has expired.
func (s *scenario) transcriptURLRefused(ctx context.Context, status int) error {
	if err := s.answerRedirects(); err != nil {
		return err
	}
	loc := s.conversations.transcript.header.Get("Location")
	resp, err := s.download(ctx, loc)
	if err != nil {
		return err
	}
	if resp.status != status {
		return fmt.Errorf("the transcript link %s answered %d once it should have expired, expected %d", loc, resp.status, status)
	}
	return nil
}

// sessionRedirectsNowhereYet checks that a run still at work has a session
// that redirects to no conversation: the redirect names one only once the
// agent's sandbox has finished.
func (s *scenario) sessionRedirectsNowhereYet(ctx context.Context) error {
	if s.current == nil || s.current.details == nil {
		return fmt.Errorf("the run's details have not been fetched")
	}
	doc := s.current.details
	if st := str(doc["state"]); isTerminal(st) {
		return fmt.Errorf("run %s has already ended (%s)", s.current.id, st)
	}
	session := str(doc["session_id"])
	if session == "" { // shown only "if available"
		return s.skip(fmt.Sprintf("run %s shows no session while it is %s, so it has no redirect to judge", s.current.id, str(doc["state"])))
	}
	var red struct {
		ConversationID *string `json:"conversation_id"`
	}
	resp, err := s.getJSON(ctx, "/agent/sessions/"+pathEscape(session)+"/redirect", nil, &red)
	if err != nil {
		return err
	}
	if red.ConversationID != nil {
		return fmt.Errorf("%s: the session of a run still %s redirects to conversation %q; expected no redirect until its sandbox has finished\n%s",
			resp.op, str(doc["state"]), *red.ConversationID, resp.excerpt())
	}
	return nil
}

// sessionRedirectsNowhereWhileSeenAtWork judges the redirect of a run at
// work without the mock's clock: it asks for the redirect, then looks at
// the run again. Only a run still at work after the answer proves that the
// answer came while it worked. A run that ended first is replaced by a new
// one, up to redirectAttempts runs in all; a run that shows no session
// ("if available") leaves nothing to judge, and so do runs that all end
// first: the scenario is then inconclusive, saying so.
func (s *scenario) sessionRedirectsNowhereWhileSeenAtWork(ctx context.Context) error {
	for attempt := 1; ; attempt++ {
		ended, err := s.redirectWhileSeenAtWork(ctx)
		if err != nil || ended == "" {
			return err
		}
		if attempt == redirectAttempts {
			return s.inconclusive(fmt.Sprintf("%d runs in a row ended before the suite could see one at work after its session's redirect; the last %s", attempt, ended))
		}
		if err := s.create(ctx, "/agent/run", "", map[string]any{"prompt": "Update the changelog", "config": map[string]any{"name": s.label}}); err != nil {
			return err
		}
		if err := s.waitUntilAtLeast(ctx, "INPROGRESS"); err != nil {
			return err
		}
	}
}

// redirectAttempts is how many runs the redirect check tries before it
// gives up as inconclusive.
const redirectAttempts = 3

// redirectWhileSeenAtWork asks once; ended says why it proved nothing.
func (s *scenario) redirectWhileSeenAtWork(ctx context.Context) (ended string, err error) {
	if s.current == nil {
		return "", errNoRun
	}
	before, err := s.fetch(ctx, s.current)
	if err != nil {
		return "", err
	}
	if st := str(before["state"]); isTerminal(st) {
		return fmt.Sprintf("run %s ended (%s) before the suite could ask for its session's redirect", s.current.id, st), nil
	}
	session := str(before["session_id"])
	if session == "" {
		return "", s.skip(fmt.Sprintf("run %s shows no session while it is %s (shown only if available), so it has no redirect to judge", s.current.id, str(before["state"])))
	}
	var red struct {
		ConversationID *string `json:"conversation_id"`
	}
	resp, err := s.getJSON(ctx, "/agent/sessions/"+pathEscape(session)+"/redirect", nil, &red)
	if err != nil {
		return "", err
	}
	after, err := s.fetch(ctx, s.current)
	if err != nil {
		return "", err
	}
	if st := str(after["state"]); isTerminal(st) {
		return fmt.Sprintf("run %s ended (%s) while the suite asked for its session's redirect, so the answer may have come after its end", s.current.id, st), nil
	}
	if red.ConversationID != nil {
		return "", fmt.Errorf("%s: the session of run %s redirects to conversation %q, yet the run was still %s after the answer; expected no redirect until its sandbox has finished\n%s",
			resp.op, s.current.id, *red.ConversationID, str(after["state"]), resp.excerpt())
	}
	return "", nil
}

// transcriptURLRefusedOnceExpired reads when the transcript link stops
// working from the expiry a signed URL carries (the 302 has no expires_at
// of its own), lets the server's clock pass it, and expects the link to be
// refused with a 4xx. A link that does not say when it expires leaves the
// scenario skipped, saying so: the document promises "a limited time"
// without saying how long.
func (s *scenario) transcriptURLRefusedOnceExpired(ctx context.Context) error {
	if err := s.answerRedirects(); err != nil {
		return err
	}
	loc := s.conversations.transcript.header.Get("Location")
	at, ok := signedLinkExpiry(loc)
	if !ok {
		return s.inconclusive("the transcript link does not say when it expires (no signed-URL expiry parameter such as X-Goog-Expires, X-Amz-Expires or Expires), so the suite cannot tell when to check it is refused")
	}
	if err := s.letServerClockPass(ctx, at, s.conversations.transcript, "the transcript link's expiry"); err != nil {
		return err
	}
	got, err := s.download(ctx, loc)
	if err != nil {
		return err
	}
	if got.status/100 != 4 {
		return fmt.Errorf("the transcript link still answers %d after it expired at %s\n%s", got.status, at.UTC().Format(time.RFC3339), got.excerpt())
	}
	return nil
}

// The public redirects, which the newest client asks without an API key.

// redirect asks a redirect without a key and returns the one field of its
// answer ("" when the answer is an empty object), and the answer.
func (s *scenario) redirect(ctx context.Context, path, field string) (string, *response, error) {
	resp, err := s.ask(ctx, call{method: http.MethodGet, path: path, auth: auth{omit: true}})
	if err != nil {
		return "", resp, err
	}
	if err := resp.ok("asking a redirect without an API key"); err != nil {
		return "", resp, err
	}
	doc, err := resp.object()
	if err != nil {
		return "", resp, err
	}
	return str(doc[field]), resp, nil
}

func (s *scenario) runIDs() (session, conversation string, err error) {
	if s.current == nil {
		return "", "", errNoRun
	}
	if s.current.details == nil {
		return "", "", fmt.Errorf("the run's details have not been fetched")
	}
	return str(s.current.details["session_id"]), str(s.current.details["conversation_id"]), nil
}

func (s *scenario) redirectsArePublic(ctx context.Context) error {
	session, conv, err := s.runIDs()
	if err != nil {
		return err
	}
	if session == "" && conv == "" {
		// A run may end (an ERROR of the platform's, a cancel) before any
		// worker took it: nothing is wrong, but nothing can be checked.
		return s.inconclusive(fmt.Sprintf("run %s shows neither a session nor a conversation (it is %v), so there is no redirect to ask", s.current.id, s.current.details["state"]))
	}
	if session != "" {
		got, _, err := s.redirect(ctx, "/agent/sessions/"+pathEscape(session)+"/redirect", "conversation_id")
		if err != nil {
			return err
		}
		if got != "" && conv != "" && got != conv {
			return fmt.Errorf("the run's session redirects to conversation %q, but the run's conversation is %q", got, conv)
		}
	}
	if conv != "" {
		got, _, err := s.redirect(ctx, "/agent/conversations/"+pathEscape(conv)+"/redirect", "session_id")
		if err != nil {
			return err
		}
		if got != "" && session != "" && got != session {
			return fmt.Errorf("the run's conversation redirects to session %q, but the run's session is %q", got, session)
		}
	}
	return nil
}

func (s *scenario) conversationRedirect(ctx context.Context, toSession bool) error {
	session, conv, err := s.runIDs()
	if err != nil {
		return err
	}
	if conv == "" {
		return fmt.Errorf("the run shows no conversation_id")
	}
	got, resp, err := s.redirect(ctx, "/agent/conversations/"+pathEscape(conv)+"/redirect", "session_id")
	if err != nil {
		return err
	}
	switch {
	case toSession && (session == "" || got != session):
		return fmt.Errorf("expected the live run's conversation to redirect to its session %q, got %q\n%s", session, got, resp.excerpt())
	case !toSession && got != "":
		return fmt.Errorf("expected the ended run's conversation to redirect nowhere, got session %q", got)
	}
	return nil
}

func (s *scenario) sessionRedirectsPublicly(ctx context.Context) error {
	session, conv, err := s.runIDs()
	if err != nil {
		return err
	}
	if session == "" || conv == "" {
		return fmt.Errorf("the run shows no session_id or conversation_id")
	}
	got, _, err := s.redirect(ctx, "/agent/sessions/"+pathEscape(session)+"/redirect", "conversation_id")
	if err != nil {
		return err
	}
	if got != conv {
		return fmt.Errorf("expected the finished run's session to redirect to its conversation %q, got %q", conv, got)
	}
	return nil
}
