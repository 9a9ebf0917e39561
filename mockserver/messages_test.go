package mockserver_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func send(t *testing.T, c *client, from string, to ...string) []string {
	t.Helper()
	r := c.do("POST", "/agent/messages", map[string]any{"to": to, "subject": "Schema changed", "body": "Rebase first.", "sender_run_id": from})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var out mockserver.SendMessageResponse
	r.json(t, &out)
	require.Len(t, out.MessageIDs, len(to))
	return out.MessageIDs
}

func inbox(t *testing.T, c *client, run, query string) []mockserver.MessageHeader {
	t.Helper()
	r := c.do("GET", "/agent/messages/"+run+query, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var out []mockserver.MessageHeader
	r.json(t, &out)
	return out
}

func TestMessagesAreDeliveredAndReadOnce(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: time.Hour}).in("msgs")
	a, b, d := c.create(map[string]any{"prompt": "a"}).RunID, c.create(map[string]any{"prompt": "b"}).RunID, c.create(map[string]any{"prompt": "d"}).RunID
	ids := send(t, c, a, b, d)
	assert.NotEqual(t, ids[0], ids[1], "each recipient gets its own copy")

	got := inbox(t, c, b, "")
	require.Len(t, got, 1)
	assert.Equal(t, ids[0], got[0].MessageID)
	assert.Equal(t, a, got[0].SenderRunID)
	assert.Nil(t, got[0].DeliveredAt)
	assert.Nil(t, got[0].ReadAt)

	c.advance(time.Minute)
	require.Equal(t, http.StatusNoContent, c.do("POST", "/agent/messages/"+ids[0]+"/delivered", nil).status)
	delivered := *inbox(t, c, b, "")[0].DeliveredAt
	c.advance(time.Minute)
	require.Equal(t, http.StatusNoContent, c.do("POST", "/agent/messages/"+ids[0]+"/delivered", nil).status)
	assert.Equal(t, delivered, *inbox(t, c, b, "")[0].DeliveredAt, "delivered_at is set once")

	r := c.do("POST", "/agent/messages/"+ids[0]+"/read", nil)
	require.Equal(t, http.StatusOK, r.status)
	var m mockserver.MessageContent
	r.json(t, &m)
	assert.Equal(t, "Rebase first.", m.Body)
	require.NotNil(t, m.ReadAt)
	c.advance(time.Minute)
	var again mockserver.MessageContent
	c.do("POST", "/agent/messages/"+ids[0]+"/read", nil).json(t, &again)
	assert.Equal(t, *m.ReadAt, *again.ReadAt, "read_at is set once")
	assert.Empty(t, inbox(t, c, b, "?unread=true"))
	assert.Len(t, inbox(t, c, d, "?unread=true"), 1)

	// Reading an undelivered message delivers it too.
	var fresh mockserver.MessageContent
	c.do("POST", "/agent/messages/"+ids[1]+"/read", nil).json(t, &fresh)
	assert.Equal(t, *fresh.ReadAt, *fresh.DeliveredAt)

	// since and limit
	later := send(t, c, a, b)
	assert.Len(t, inbox(t, c, b, ""), 2)
	assert.Len(t, inbox(t, c, b, "?limit=1"), 1)
	sinceFirst := inbox(t, c, b, "?since="+got[0].SentAt)
	require.Len(t, sinceFirst, 1)
	assert.Equal(t, later[0], sinceFirst[0].MessageID)
}

func TestAFinishedRecipientRefusesTheWholeSend(t *testing.T) {
	c := newMock(t, mockserver.Options{}).in("finished")
	a, b, done := c.create(map[string]any{"prompt": "a"}).RunID, c.create(map[string]any{"prompt": "b"}).RunID, c.create(map[string]any{"prompt": "done"}).RunID
	require.Equal(t, http.StatusOK, c.do("POST", "/agent/runs/"+done+"/cancel", nil).status)
	p := c.do("POST", "/agent/messages", map[string]any{"to": []string{b, done}, "subject": "s", "body": "b", "sender_run_id": a}).problem(t)
	assert.Equal(t, http.StatusUnprocessableEntity, p.Status)
	assert.Contains(t, p.Detail, "to[1]")
	assert.Empty(t, inbox(t, c, b, ""), "nothing was sent to the others either")
}

func TestMessageRequestsAreChecked(t *testing.T) {
	c := newMock(t, mockserver.Options{}).in("checks")
	a := c.create(map[string]any{"prompt": "a"}).RunID
	carols := c.as("wk-mock-carol").create(map[string]any{"prompt": "c"}).RunID
	for _, tc := range []struct {
		body  any
		want  int
		field string
	}{
		{map[string]any{"to": []string{a}, "subject": "s", "body": "b"}, 400, "sender_run_id"},
		{map[string]any{"to": []string{}, "subject": "s", "body": "b", "sender_run_id": a}, 400, "to"},
		{map[string]any{"to": []string{a, a}, "subject": "s", "body": "b", "sender_run_id": a}, 400, "to[1]"},
		{map[string]any{"to": []string{a}, "subject": strings.Repeat("s", 1025), "body": "b", "sender_run_id": a}, 400, "subject"},
		{map[string]any{"to": []string{"nope"}, "subject": "s", "body": "b", "sender_run_id": a}, 404, "to[0]"},
		{map[string]any{"to": []string{carols}, "subject": "s", "body": "b", "sender_run_id": a}, 403, "to[0]"},
		{map[string]any{"to": []string{a}, "subject": "s", "body": "b", "sender_run_id": carols}, 403, "sender_run_id"},
	} {
		p := c.do("POST", "/agent/messages", tc.body).problem(t)
		assert.Equal(t, tc.want, p.Status, "%v", tc.body)
		assert.Contains(t, p.Detail, tc.field, "%v", tc.body)
	}
	ids := send(t, c, a, a)
	assert.Equal(t, http.StatusForbidden, c.as("wk-mock-carol").do("POST", "/agent/messages/"+ids[0]+"/read", nil).problem(t).Status)
	assert.Equal(t, http.StatusForbidden, c.as("wk-mock-carol").do("GET", "/agent/messages/"+a, nil).problem(t).Status)
	assert.Equal(t, http.StatusNotFound, c.do("POST", "/agent/messages/msg-nope/delivered", nil).problem(t).Status)
	assert.Equal(t, http.StatusBadRequest, c.do("GET", "/agent/messages/"+a+"?limit=0", nil).problem(t).Status)
	assert.Equal(t, http.StatusBadRequest, c.do("GET", "/agent/messages/"+a+"?limit=101", nil).problem(t).Status)
	assert.Equal(t, http.StatusUnauthorized, c.as("").do("POST", "/agent/messages/"+ids[0]+"/read", nil).problem(t).Status)
}
