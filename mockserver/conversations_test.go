package mockserver_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// conversation is a ConversationResponse as the tests read it.
type conversation struct {
	ConversationID string `json:"conversation_id"`
	Steps          []struct {
		ID          string `json:"id"`
		Description string `json:"description"`
		Summary     string `json:"summary"`
		StartedAt   string `json:"started_at"`
		CompletedAt string `json:"completed_at"`
		Messages    []struct {
			MessageIDs []string         `json:"message_ids"`
			RequestID  string           `json:"request_id"`
			Role       string           `json:"role"`
			Timestamp  string           `json:"timestamp"`
			Content    []map[string]any `json:"content"`
		} `json:"messages"`
	} `json:"steps"`
}

// kinds lists a conversation's messages as role:block-type[:name], step by step.
func (cv conversation) kinds() []string {
	var out []string
	for _, st := range cv.Steps {
		for _, m := range st.Messages {
			k := m.Role + ":" + m.Content[0]["type"].(string)
			if n, ok := m.Content[0]["name"].(string); ok {
				k += ":" + n
			}
			out = append(out, k)
		}
	}
	return out
}

func (c *client) conversation(path string) (response, conversation) {
	c.t.Helper()
	r := c.do("GET", path, nil)
	var cv conversation
	if r.status == http.StatusOK {
		r.json(c.t, &cv)
	}
	return r, cv
}

// noFollow sends a GET without following a redirect, and checks the answer
// against the document as do does.
func (c *client) noFollow(path string, key string) response {
	c.t.Helper()
	req, err := http.NewRequest("GET", c.base+path, nil)
	require.NoError(c.t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if c.session != "" {
		req.Header.Set(mockserver.SessionHeader, c.session)
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	if strings.HasPrefix(path, "/agent/") {
		resp.Body = io.NopCloser(bytes.NewReader(raw))
		vreq, _ := http.NewRequest("GET", c.base+path, nil)
		require.NoError(c.t, c.validator.ValidateResponse(vreq, resp), "GET %s answered %d %s", path, resp.StatusCode, raw)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: raw}
}

// A run's conversation begins when a worker claims it, grows while the run
// is in progress and ends with a summary; every poll shows what the one
// before showed and more, nothing stamped after the clock, the same bytes
// while the clock stands still.
func TestConversationFollowsTheRunAsTheClockMoves(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: 10 * time.Second})
	id := c.create(map[string]any{"prompt": "Find why the login test is flaky"}).RunID
	path := "/agent/runs/" + id + "/conversation"

	r, _ := c.conversation(path)
	require.Equal(t, http.StatusNotFound, r.status, "%s", r.body)
	assert.Contains(t, r.problem(t).Detail, "QUEUED")
	assert.Empty(t, c.get(id).ConversationID, "no conversation, no conversation_id")

	c.advance(20 * time.Second) // CLAIMED
	r, cv := c.conversation(path)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, c.get(id).ConversationID, cv.ConversationID, "the run shows the conversation it has")
	assert.Equal(t, []string{"user:text"}, cv.kinds(), "the prompt first")
	require.Len(t, cv.Steps, 1)
	assert.Equal(t, "Find why the login test is flaky", cv.Steps[0].Messages[0].Content[0]["text"])
	assert.Equal(t, c.get(id).CreatedAt, cv.Steps[0].Messages[0].Timestamp)

	prev := cv
	grew := 0
	for i := 0; i < 22; i++ {
		c.advance(time.Second)
		r, cv := c.conversation(path)
		require.Equal(t, http.StatusOK, r.status)
		again := c.do("GET", path, nil)
		assert.Equal(t, string(r.body), string(again.body), "the same answer while the clock stands still")
		var clock mockserver.ClockInfo
		c.do("GET", "/__mock/clock", nil).json(t, &clock)
		for _, st := range cv.Steps {
			for _, m := range st.Messages {
				at, err1 := time.Parse(time.RFC3339Nano, m.Timestamp)
				now, err2 := time.Parse(time.RFC3339Nano, clock.Now)
				require.NoError(t, err1)
				require.NoError(t, err2)
				assert.False(t, at.After(now), "nothing stamped after the mock's now")
			}
		}
		pk, k := prev.kinds(), cv.kinds()
		require.GreaterOrEqual(t, len(k), len(pk))
		assert.Equal(t, pk, k[:len(pk)], "what was shown stays")
		if len(k) > len(pk) {
			grew++
		}
		if c.get(id).State != "SUCCEEDED" {
			assert.Empty(t, cv.Steps[0].Summary, "no summary before the end")
		}
		prev = cv
	}
	assert.GreaterOrEqual(t, grew, 3, "the conversation grew while the run was in progress")
	run := c.get(id)
	require.Equal(t, mockserver.State("SUCCEEDED"), run.State)
	k := prev.kinds()
	assert.Equal(t, "assistant:text", k[len(k)-1], "a summary at the end")
	assert.Contains(t, k, "assistant:action:run_command")
	assert.Contains(t, k, "tool:action_result:run_command")
	st := prev.Steps[0]
	assert.NotEmpty(t, st.Summary)
	assert.Equal(t, run.CreatedAt, st.StartedAt)
	assert.Equal(t, run.UpdatedAt, st.CompletedAt)

	c.advance(time.Hour)
	_, later := c.conversation(path)
	assert.Equal(t, prev, later, "a finished run's conversation does not change")
	byID, cv2 := c.conversation("/agent/conversations/" + prev.ConversationID)
	require.Equal(t, http.StatusOK, byID.status)
	assert.Equal(t, prev, cv2, "the same conversation by its own id")
}

func TestAConversationEndsAsItsRunEnds(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: 10 * time.Second})
	failed := c.create(map[string]any{"prompt": "Deploy"}, mockserver.FateHeader, "state=FAILED; error_code=insufficient_credits; message=Out of credits").RunID
	cancelled := c.create(map[string]any{"prompt": "Rename the package"}).RunID
	early := c.create(map[string]any{"prompt": "Never started"}).RunID
	require.Equal(t, http.StatusOK, c.do("POST", "/agent/runs/"+early+"/cancel", nil).status)
	c.advance(32 * time.Second)
	require.Equal(t, http.StatusOK, c.do("POST", "/agent/runs/"+cancelled+"/cancel", nil).status)
	_, atCancel := c.conversation("/agent/runs/" + cancelled + "/conversation")
	c.advance(time.Hour)

	_, cv := c.conversation("/agent/runs/" + failed + "/conversation")
	k := cv.kinds()
	assert.Equal(t, "system:event:run_failed", k[len(k)-1])
	last := cv.Steps[0].Messages[len(cv.Steps[0].Messages)-1].Content[0]["data"].(map[string]any)
	assert.Equal(t, "insufficient_credits", last["error_code"])
	assert.Equal(t, "Out of credits", last["message"])
	assert.Empty(t, cv.Steps[0].Summary)

	_, cv = c.conversation("/agent/runs/" + cancelled + "/conversation")
	assert.Equal(t, atCancel, cv, "a cancelled run's conversation stops where it was cancelled")
	k = cv.kinds()
	assert.Equal(t, "system:event:run_cancelled", k[len(k)-1])
	assert.NotContains(t, k, "assistant:text:summary")

	r, _ := c.conversation("/agent/runs/" + early + "/conversation")
	require.Equal(t, http.StatusNotFound, r.status, "a run cancelled before a worker claimed it has no conversation")
	assert.Contains(t, r.problem(t).Detail, "cancelled before")
}

// A wait for a person shows as an event, and the work after it follows.
func TestABlockedRunShowsItsWait(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: 10 * time.Second})
	id := c.create(map[string]any{"prompt": "Ask before deleting"}).RunID
	c.advance(33 * time.Second)
	require.Equal(t, http.StatusOK, c.do("POST", "/__mock/runs/"+id+"/state", map[string]any{"state": "BLOCKED"}).status)
	_, blocked := c.conversation("/agent/runs/" + id + "/conversation")
	k := blocked.kinds()
	assert.Equal(t, "system:event:run_blocked", k[len(k)-1])
	c.advance(time.Hour)
	_, still := c.conversation("/agent/runs/" + id + "/conversation")
	assert.Equal(t, blocked, still, "nothing happens while the run waits")
	require.Equal(t, http.StatusOK, c.do("POST", "/__mock/runs/"+id+"/state", map[string]any{"state": "INPROGRESS"}).status)
	c.advance(time.Hour)
	_, done := c.conversation("/agent/runs/" + id + "/conversation")
	assert.Equal(t, k, done.kinds()[:len(k)], "the wait stays in place")
	assert.Equal(t, "assistant:text", done.kinds()[len(done.kinds())-1])
}

// A run created with conversation_id continues that conversation; the
// conversation must exist, have begun and be the caller's team's.
func TestARunContinuesAConversation(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: 10 * time.Second})
	first := c.create(map[string]any{"prompt": "Write the migration"}).RunID
	c.advance(time.Hour)
	conv := c.get(first).ConversationID
	require.NotEmpty(t, conv)

	next := c.as("wk-mock-bob").create(map[string]any{"prompt": "Now add a rollback", "conversation_id": conv}).RunID
	assert.Equal(t, conv, c.get(next).ConversationID, "shown at once: the caller chose it")
	_, cv := c.conversation("/agent/conversations/" + conv)
	require.Len(t, cv.Steps, 1, "the new run has not begun yet")
	c.advance(time.Hour)
	_, cv = c.conversation("/agent/conversations/" + conv)
	require.Len(t, cv.Steps, 2)
	assert.Equal(t, "Write the migration", cv.Steps[0].Description)
	assert.Equal(t, "Now add a rollback", cv.Steps[1].Description)
	_, viaFirst := c.conversation("/agent/runs/" + first + "/conversation")
	_, viaNext := c.conversation("/agent/runs/" + next + "/conversation")
	assert.Equal(t, cv, viaFirst)
	assert.Equal(t, cv, viaNext)

	for _, tc := range []struct {
		key, conv string
		status    int
		detail    string
	}{
		{"wk-mock-alice", "2b1d6c1e-2a7f-4c3e-9a61-5b8d0f3e7c21", 400, "conversation_id"},
		{"wk-mock-alice", "", 400, "conversation_id"},
		{"wk-mock-carol", conv, 403, "conversation_id"},
	} {
		r := c.as(tc.key).do("POST", "/agent/runs", map[string]any{"prompt": "x", "conversation_id": tc.conv})
		require.Equal(t, tc.status, r.status, "%s", r.body)
		assert.Contains(t, r.problem(t).Detail, tc.detail)
	}
	notBegun := c.create(map[string]any{"prompt": "not begun"}).RunID
	c.advance(time.Second)
	r := c.do("POST", "/agent/runs", map[string]any{"prompt": "x", "conversation_id": c.get(first).ConversationID})
	require.Equal(t, http.StatusOK, r.status, "a conversation can be continued again")
	assert.Empty(t, c.get(notBegun).ConversationID)
}

func TestConversationsKeepToTheirTeamAndCheckTheirInput(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: 10 * time.Second})
	id := c.create(map[string]any{"prompt": "Tidy the README"}).RunID
	c.advance(time.Hour)
	run := c.get(id)
	conv, session := run.ConversationID, run.SessionID
	carol := c.as("wk-mock-carol")
	for _, tc := range []struct {
		client *client
		path   string
		status int
		detail string
	}{
		{carol, "/agent/runs/" + id + "/conversation", 403, "another team"},
		{carol, "/agent/conversations/" + conv, 403, "another team"},
		{carol, "/agent/runs/" + id + "/transcript", 403, "another team"},
		{c, "/agent/runs/6f9f1a52-0000-4000-8000-000000000000/conversation", 404, "no run"},
		{c, "/agent/conversations/6f9f1a52-0000-4000-8000-000000000000", 404, "no conversation"},
		{c, "/agent/runs/6f9f1a52-0000-4000-8000-000000000000/transcript", 404, "no run"},
		{c, "/agent/runs/bad%20id/conversation", 400, "runId"},
		{c, "/agent/conversations/bad%20id", 400, "conversation_id"},
		{c, "/agent/runs/bad%20id/transcript", 400, "runId"},
		{c, "/agent/sessions/not-a-uuid/redirect", 400, "sessionUuid"},
		{c.as(""), "/agent/runs/" + id + "/conversation", 401, ""},
		{c.as(""), "/agent/conversations/" + conv, 401, ""},
		{c.as(""), "/agent/runs/" + id + "/transcript", 401, ""},
		{c.in("elsewhere"), "/agent/runs/" + id + "/conversation", 404, "no run"},
		{c.in("elsewhere"), "/agent/conversations/" + conv, 404, "no conversation"},
	} {
		r := tc.client.noFollow(tc.path, tc.client.key)
		require.Equal(t, tc.status, r.status, "%s: %s", tc.path, r.body)
		assert.Contains(t, r.problem(t).Detail, tc.detail, tc.path)
	}
	// The redirects are public (their ids are unguessable): another team's
	// caller, or one without a key, holding the id is told the same.
	var mine, theirs, keyless map[string]string
	c.do("GET", "/agent/sessions/"+session+"/redirect", nil).json(t, &mine)
	carol.do("GET", "/agent/sessions/"+session+"/redirect", nil).json(t, &theirs)
	r := c.as("").noFollow("/agent/sessions/"+session+"/redirect", "")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r.json(t, &keyless)
	assert.Equal(t, mine, theirs)
	assert.Equal(t, mine, keyless)

	require.Equal(t, http.StatusOK, c.do("POST", "/__mock/reset", nil).status)
	assert.Equal(t, http.StatusNotFound, c.do("GET", "/agent/conversations/"+conv, nil).status, "a reset forgets the conversation")
}

// The session redirect names the conversation once the run has ended.
func TestTheSessionRedirectsToTheConversationOnceTheRunEnds(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: 10 * time.Second})
	id := c.create(map[string]any{"prompt": "Update the docs"}).RunID
	c.advance(35 * time.Second)
	run := c.get(id)
	require.NotEmpty(t, run.SessionID)
	var red map[string]string
	r := c.do("GET", "/agent/sessions/"+run.SessionID+"/redirect", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r.json(t, &red)
	assert.Empty(t, red, "the sandbox still runs")
	c.advance(time.Hour)
	c.do("GET", "/agent/sessions/"+run.SessionID+"/redirect", nil).json(t, &red)
	assert.Equal(t, map[string]string{"conversation_id": run.ConversationID}, red)
	red = nil
	c.do("GET", "/agent/sessions/6f9f1a52-0000-4000-8000-000000000000/redirect", nil).json(t, &red)
	assert.Empty(t, red, "an unknown session: nothing to go to")
}

// The conversation redirect mirrors the session redirect: while the
// conversation's run is live it names the run's session, afterwards
// nothing; it answers without a key.
func TestTheConversationRedirectsToTheLiveSession(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: 10 * time.Second})
	id := c.create(map[string]any{"prompt": "Update the docs"}).RunID
	c.advance(35 * time.Second)
	run := c.get(id)
	require.NotEmpty(t, run.SessionID)
	require.NotEmpty(t, run.ConversationID)
	keyless := c.as("")
	var red map[string]string
	r := keyless.noFollow("/agent/conversations/"+run.ConversationID+"/redirect", "")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r.json(t, &red)
	assert.Equal(t, map[string]string{"session_id": run.SessionID}, red, "the run is live")
	c.advance(time.Hour)
	red = nil
	keyless.noFollow("/agent/conversations/"+run.ConversationID+"/redirect", "").json(t, &red)
	assert.Empty(t, red, "the run has ended: nothing to go to")
	red = nil
	keyless.noFollow("/agent/conversations/6f9f1a52-0000-4000-8000-000000000000/redirect", "").json(t, &red)
	assert.Empty(t, red, "an unknown conversation: nothing to go to")
}

// The transcript is a 302 to a link the mock serves without credentials,
// holding the run's messages, until the link expires on the mock's clock.
func TestTheTranscriptIsADownloadThatExpires(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: 10 * time.Second}).in("transcripts")
	queued := c.create(map[string]any{"prompt": "later"}).RunID
	r := c.noFollow("/agent/runs/"+queued+"/transcript", c.key)
	require.Equal(t, http.StatusNotFound, r.status, "no transcript before the conversation begins: %s", r.body)

	id := c.create(map[string]any{"prompt": "Fix the build"}).RunID
	c.advance(time.Hour)
	r = c.noFollow("/agent/runs/"+id+"/transcript", c.key)
	require.Equal(t, http.StatusFound, r.status, "%s", r.body)
	loc := r.header.Get("Location")
	require.True(t, strings.HasPrefix(loc, c.base+"/downloads/transcripts/"), loc)

	dl := c.as("").in("").noFollow(strings.TrimPrefix(loc, c.base), "") // no key, no session header
	require.Equal(t, http.StatusOK, dl.status, "%s", dl.body)
	assert.Contains(t, dl.header.Get("Content-Disposition"), "transcript-"+id+".json")
	var tr struct {
		ConversationID string `json:"conversation_id"`
		RunID          string `json:"run_id"`
		Messages       []struct {
			ID      string           `json:"id"`
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	dl.json(t, &tr)
	_, cv := c.conversation("/agent/runs/" + id + "/conversation")
	assert.Equal(t, cv.ConversationID, tr.ConversationID)
	assert.Equal(t, id, tr.RunID)
	require.Len(t, tr.Messages, len(cv.Steps[0].Messages))
	for i, m := range tr.Messages {
		assert.Equal(t, cv.Steps[0].Messages[i].MessageIDs, []string{m.ID}, "the conversation names the transcript's messages")
	}

	token, expiresParam, _ := strings.Cut(strings.TrimPrefix(loc, c.base+"/downloads/transcripts/"), "?Expires=")
	assert.Equal(t, strconv.FormatInt(clockStart.Add(time.Hour+10*time.Minute).Unix(), 10), expiresParam,
		"the link says until when it works, in Unix seconds, as signed storage URLs do")
	r = c.noFollow("/downloads/transcripts/"+token+"x", "")
	assert.Equal(t, http.StatusForbidden, r.status, "a link changed by hand")
	c.advance(11 * time.Minute)
	r = c.as("").noFollow(strings.TrimPrefix(loc, c.base), "")
	require.Equal(t, http.StatusForbidden, r.status, "%s", r.body)
	assert.Contains(t, string(r.body), "expired")
	r = c.noFollow("/api/v1/agent/runs/"+id+"/transcript", c.key)
	require.Equal(t, http.StatusFound, r.status)
	assert.True(t, strings.HasPrefix(r.header.Get("Location"), c.base+"/api/v1/downloads/transcripts/"), "a fresh link, under the prefix the client uses")
}

// A conversation in a third-party harness's own format is not normalised
// (422), but its raw transcript can be downloaded.
func TestAThirdPartyHarnessConversationIsNotNormalised(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: 10 * time.Second})
	id := c.create(map[string]any{"prompt": "Refactor", "config": map[string]any{"harness": map[string]any{"type": "claude"}}}).RunID
	c.advance(time.Hour)
	r := c.do("GET", "/agent/runs/"+id+"/conversation", nil)
	require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s", r.body)
	assert.Contains(t, r.problem(t).Detail, "claude")
	assert.Equal(t, http.StatusFound, c.noFollow("/agent/runs/"+id+"/transcript", c.key).status)
}

// Conversations come back after a restart with --state-file exactly as
// they were: they derive from the runs and the event log, both saved.
func TestConversationsSurviveARestart(t *testing.T) {
	opts := mockserver.Options{ClockMode: mockserver.VirtualClock, ClockStart: clockStart, Step: 10 * time.Second}
	s1 := newServer(t, opts)
	c1 := serve(t, s1)
	done := c1.create(map[string]any{"prompt": "Finish this"}).RunID
	c1.advance(time.Hour)
	conv := c1.get(done).ConversationID
	going := c1.create(map[string]any{"prompt": "Keep going", "conversation_id": conv}).RunID
	c1.advance(34 * time.Second)
	blocked := c1.create(map[string]any{"prompt": "Wait for me"}).RunID
	c1.advance(33 * time.Second)
	require.Equal(t, http.StatusOK, c1.do("POST", "/__mock/runs/"+blocked+"/state", map[string]any{"state": "BLOCKED"}).status)
	paths := []string{"/agent/conversations/" + conv, "/agent/runs/" + going + "/conversation", "/agent/runs/" + blocked + "/conversation"}
	before := map[string]string{}
	for _, p := range paths {
		before[p] = string(c1.do("GET", p, nil).body)
	}

	s2 := newServer(t, opts)
	require.NoError(t, s2.Load(bytes.NewReader(saved(t, s1))))
	c2 := serve(t, s2)
	for _, p := range paths {
		assert.JSONEq(t, before[p], string(c2.do("GET", p, nil).body), p)
	}
	c1.advance(time.Hour)
	c2.advance(time.Hour)
	for _, p := range paths {
		assert.JSONEq(t, string(c1.do("GET", p, nil).body), string(c2.do("GET", p, nil).body), "the same future: %s", p)
	}
	var cv conversation
	require.NoError(t, json.Unmarshal(c2.do("GET", paths[0], nil).body, &cv))
	assert.Len(t, cv.Steps, 2)
}

// The Go API gives the same conversation as the HTTP API.
func TestTheGoAPIGivesARunsConversation(t *testing.T) {
	s := newServer(t, mockserver.Options{Step: 10 * time.Second})
	c := serve(t, s)
	id := c.create(map[string]any{"prompt": "Fix the build"}).RunID
	_, err := s.DefaultSession().Conversation(id)
	require.Error(t, err, "no conversation before a worker claims the run")
	c.advance(time.Hour)
	got, err := s.DefaultSession().Conversation(id)
	require.NoError(t, err)
	var want mockserver.Conversation
	c.do("GET", "/agent/runs/"+id+"/conversation", nil).json(t, &want)
	assert.Equal(t, want, got)
	assert.Equal(t, "Fix the build", got.Steps[0].Description)
}

// Options.LinkLifetime shortens every signed link at once: a transcript's,
// which then says so in its Expires parameter, and an artifact's, whose
// expires_at says so.
func TestLinkLifetimeShortensEverySignedLink(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: 10 * time.Second, LinkLifetime: 3 * time.Second}).in("short-links")
	id := c.create(map[string]any{"prompt": "Fix the build"}).RunID
	c.advance(time.Hour)
	loc := c.noFollow("/agent/runs/"+id+"/transcript", c.key).header.Get("Location")
	_, expiresParam, _ := strings.Cut(loc, "?Expires=")
	assert.Equal(t, strconv.FormatInt(clockStart.Add(time.Hour+3*time.Second).Unix(), 10), expiresParam)
	shot := c.artifact(uidOf(t, c.get(fixtureRunWithAll), "SCREENSHOT"))
	assert.Equal(t, clockStart.Add(time.Hour+3*time.Second).Format("2006-01-02T15:04:05.000Z"), shot.Data.ExpiresAt)

	c.advance(2 * time.Second)
	assert.Equal(t, http.StatusOK, c.as("").in("").noFollow(strings.TrimPrefix(loc, c.base), "").status, "still valid a second before")
	assert.Equal(t, http.StatusOK, download(t, shot.Data.DownloadURL).status, "still valid a second before")
	c.advance(1001 * time.Millisecond)
	assert.Equal(t, http.StatusForbidden, c.as("").in("").noFollow(strings.TrimPrefix(loc, c.base), "").status)
	assert.Equal(t, http.StatusForbidden, download(t, shot.Data.DownloadURL).status)
}
