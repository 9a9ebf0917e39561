package mockserver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/agentruns/agentruns/mockserver/store"
	"github.com/google/uuid"
)

// The conversations resource over HTTP: a run's conversation, a
// conversation by id, a run's raw transcript (a 302 to a download link the
// mock serves itself) and the agent session redirect. What a conversation
// holds and how it follows its runs is mockserver/store's conversations.go.

// transcriptLinkTTL is how long, on the mock session's clock, a transcript
// download link works, unless Options.LinkLifetime says otherwise.
const transcriptLinkTTL = 10 * time.Minute

// transcriptsPath is where the mock serves transcript downloads: outside
// /agent, as the service hands out links to its file storage.
const transcriptsPath = "/downloads/transcripts/"

// Conversation is a ConversationResponse: a conversation as the API shows it.
type Conversation struct {
	ConversationID string             `json:"conversation_id"`
	Steps          []ConversationStep `json:"steps"`
}

// ConversationStep is one run's part of a conversation.
type ConversationStep struct {
	ID          string                `json:"id"`
	Description string                `json:"description,omitempty"`
	Summary     string                `json:"summary,omitempty"`
	StartedAt   string                `json:"started_at,omitempty"`
	CompletedAt string                `json:"completed_at,omitempty"`
	Messages    []ConversationMessage `json:"messages"`
	Steps       []ConversationStep    `json:"steps"`
}

// ConversationMessage is one message of a conversation, and also a message
// of the raw transcript, which has the same parts. Content holds blocks of
// the types text, action, action_result and event, each with its fields.
type ConversationMessage struct {
	MessageIDs []string         `json:"message_ids,omitempty"`
	ID         string           `json:"id,omitempty"` // the raw transcript's
	RequestID  string           `json:"request_id,omitempty"`
	Role       string           `json:"role"`
	Timestamp  string           `json:"timestamp,omitempty"`
	Content    []map[string]any `json:"content"`
}

// blockJSON is a ConversationContentBlock: only the fields of its type.
func blockJSON(b store.Block, messageID string) map[string]any {
	m := map[string]any{"type": b.Type, "message_id": messageID}
	switch b.Type {
	case "text":
		m["text"] = b.Text
	case "action":
		m["id"], m["category"], m["name"], m["input"] = b.ActionID, b.Category, b.Name, b.Input
	case "action_result":
		m["action_id"], m["category"], m["name"], m["state"], m["output"] = b.ActionID, b.Category, b.Name, b.State, b.Output
	case "event":
		m["name"], m["data"] = b.Name, b.Data
	}
	return m
}

func messageJSON(x store.Exchange, m store.TranscriptMessage) ConversationMessage {
	out := ConversationMessage{RequestID: x.RunID, Role: m.Role, Timestamp: formatTime(m.At)}
	for _, b := range m.Blocks {
		out.Content = append(out.Content, blockJSON(b, m.ID))
	}
	return out
}

func exchangeJSON(x store.Exchange) ConversationStep {
	st := ConversationStep{ID: "step-" + x.RunID, Description: x.Prompt, Summary: x.Summary,
		Messages: []ConversationMessage{}, Steps: []ConversationStep{}}
	var first, last time.Time
	for i, m := range x.Messages {
		cm := messageJSON(x, m)
		cm.MessageIDs = []string{m.ID}
		st.Messages = append(st.Messages, cm)
		if i == 0 || m.At.Before(first) {
			first = m.At
		}
		if i == 0 || m.At.After(last) {
			last = m.At
		}
	}
	if len(x.Messages) > 0 {
		st.StartedAt, st.CompletedAt = formatTime(first), formatTime(last)
	}
	return st
}

func conversationJSON(cv store.ConversationView) Conversation {
	out := Conversation{ConversationID: cv.ID, Steps: []ConversationStep{}}
	for _, x := range cv.Exchanges {
		out.Steps = append(out.Steps, exchangeJSON(x))
	}
	return out
}

// getRunConversation is GET /agent/runs/{runId}/conversation: the whole
// conversation the run belongs to, as GET /agent/conversations/{id} shows it.
func (s *Server) getRunConversation(c *call) response {
	cv, err := c.session.RunConversation(c.principal, c.id)
	if err != nil {
		return fail(problemOf(err))
	}
	return ok(conversationJSON(cv))
}

// getConversation is GET /agent/conversations/{conversation_id}.
func (s *Server) getConversation(c *call) response {
	cv, err := c.session.Conversation(c.principal, c.id)
	if err != nil {
		return fail(problemOf(err))
	}
	return ok(conversationJSON(cv))
}

// getSessionRedirect is GET /agent/sessions/{sessionUuid}/redirect.
func (s *Server) getSessionRedirect(c *call) response {
	u, err := uuid.Parse(c.id)
	if err != nil {
		return fail(errorf(codeInvalidRequest, "sessionUuid: %q is not a UUID (a run's session_id)", truncate(c.id, 80)))
	}
	out := map[string]string{}
	if id := c.session.SessionRedirect(u); id != "" {
		out["conversation_id"] = id
	}
	return ok(out)
}

// getConversationRedirect is GET /agent/conversations/{conversationId}/redirect,
// the session redirect's mirror: the live session of the conversation's
// latest run while it has one, else an empty object. Like the session
// redirect it needs no key.
func (s *Server) getConversationRedirect(c *call) response {
	out := map[string]string{}
	if id := c.session.ConversationRedirect(c.id); id != "" {
		out["session_id"] = id
	}
	return ok(out)
}

// getRunTranscript is GET /agent/runs/{runId}/transcript: a 302 to a link,
// valid for the transcript lifetime of the mock session's clock, that needs
// no credentials (it is one). The link says until when in an Expires
// parameter (Unix seconds, rounded up), as a storage service's signed URLs
// do; the signed token holds the exact instant.
func (s *Server) getRunTranscript(c *call) response {
	if _, _, err := c.session.Transcript(c.principal, c.id); err != nil {
		return fail(problemOf(err))
	}
	link := transcriptLink{Session: c.r.Header.Get(SessionHeader), RunID: c.id,
		Expires: linkExpiry(c.session.Now(), s.transcriptTTL).UnixMilli()}
	scheme := "http"
	if c.r.TLS != nil {
		scheme = "https"
	}
	prefix := ""
	if strings.HasPrefix(c.r.URL.Path, versionPrefix+"/") {
		prefix = versionPrefix
	}
	expires := (link.Expires + 999) / 1000
	return redirectTo(scheme + "://" + c.r.Host + prefix + transcriptsPath + s.signLink(link) + "?Expires=" + strconv.FormatInt(expires, 10))
}

// transcriptLink is what a download link carries.
type transcriptLink struct {
	Session string `json:"s"`
	RunID   string `json:"r"`
	Expires int64  `json:"e"` // unix milliseconds on the mock session's clock
}

// signLink encodes a link and signs it with a key of this process: links
// do not outlive the mock process, as a storage service's signed links do
// not outlive their key.
func (s *Server) signLink(l transcriptLink) string {
	payload, _ := json.Marshal(l)
	p := base64.RawURLEncoding.EncodeToString(payload)
	return p + "." + base64.RawURLEncoding.EncodeToString(s.linkMAC(p))
}

func (s *Server) linkMAC(payload string) []byte {
	mac := hmac.New(sha256.New, s.downloadKey)
	mac.Write([]byte("transcript-link\x00" + payload))
	return mac.Sum(nil)
}

// downloadTranscript is GET /downloads/transcripts/{token}: the transcript
// a link names, while the link is valid.
func (s *Server) downloadTranscript(c *call) response {
	p, sig, ok := strings.Cut(c.id, ".")
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	var l transcriptLink
	if !ok || err != nil || !hmac.Equal(mac, s.linkMAC(p)) {
		return fail(errorf(codeNotAuthorized, "this download link is not one the mock signed (or the mock has restarted since); ask GET /agent/runs/{runId}/transcript for a new one"))
	}
	payload, _ := base64.RawURLEncoding.DecodeString(p)
	if json.Unmarshal(payload, &l) != nil {
		return fail(errorf(codeNotAuthorized, "this download link is not one the mock signed"))
	}
	// The link's Expires says what the token holds; one changed or added
	// to is not the link handed out.
	q := c.query
	if !exactLink(q, "Expires") || q.Get("Expires") != strconv.FormatInt((l.Expires+999)/1000, 10) {
		return notALink(c)
	}
	ms, ok := s.store.Lookup(l.Session)
	if !ok {
		return fail(errorf(codeNotFound, "the mock session of this link no longer exists"))
	}
	if expires := time.UnixMilli(l.Expires); ms.Now().After(expires) {
		return fail(errorf(codeNotAuthorized, "this download link expired at %s; ask GET /agent/runs/%s/transcript for a new one", formatTime(expires), l.RunID))
	}
	x, conv, err := ms.TranscriptOf(l.RunID)
	if err != nil {
		return fail(problemOf(err))
	}
	doc := struct {
		ConversationID string                `json:"conversation_id"`
		RunID          string                `json:"run_id"`
		Messages       []ConversationMessage `json:"messages"`
	}{conv, x.RunID, []ConversationMessage{}}
	for _, m := range x.Messages {
		cm := messageJSON(x, m)
		cm.ID = m.ID
		doc.Messages = append(doc.Messages, cm)
	}
	body, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fail(errorf(codeInternal, "encoding the transcript: %v", err))
	}
	return download("transcript-"+x.RunID+".json", "application/json", append(body, '\n'))
}
