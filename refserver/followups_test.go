package refserver

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Follow-ups route by the run's state, as our document and docs/followups.md
// say; the suite reaches only the runs it creates, so the seeded ones (ended
// long ago, waiting for their user, local) are checked here.
func TestFollowUpsRouteByTheRunsState(t *testing.T) {
	c := newClient(t, Options{Step: time.Hour})
	old := c.runsFrom()

	slack := old["SLACK"]
	id := slack["run_id"].(string)
	status, _, files, _ := c.do("GET", "/agent/runs/"+id+"/handoff/attachments", "")
	require.Equal(t, http.StatusOK, status)
	status, _, _, body := c.do("POST", "/agent/runs/"+id+"/followups", `{"message": "Also link the runbook"}`)
	require.Equal(t, http.StatusOK, status, body)
	assert.JSONEq(t, `{}`, body)
	_, _, again, _ := c.do("GET", "/agent/runs/"+id, "")
	assert.Equal(t, "QUEUED", again["state"], "an ended run starts again")
	assert.Equal(t, slack["started_at"], again["started_at"], "it keeps its first execution's start")
	assert.Equal(t, slack["conversation_id"], again["conversation_id"])
	_, _, conv, _ := c.do("GET", "/agent/runs/"+id+"/conversation", "")
	var users []string
	for _, m := range conv["steps"].([]any)[0].(map[string]any)["messages"].([]any) {
		if msg := m.(map[string]any); msg["role"] == "user" {
			users = append(users, msg["content"].([]any)[0].(map[string]any)["text"].(string))
		}
	}
	assert.Equal(t, []string{slack["prompt"].(string), "Also link the runbook"}, users)
	_, _, filesAgain, _ := c.do("GET", "/agent/runs/"+id+"/handoff/attachments", "")
	assert.Equal(t, attachmentIDs(files), attachmentIDs(filesAgain), "until the new execution ends, the last one's files stay")
	assert.Len(t, attachmentIDs(files), 1)

	blocked := old["WEB_APP"]["run_id"].(string)
	status, _, _, _ = c.do("POST", "/agent/runs/"+blocked+"/followups", `{"message": "Yes, push it", "mode": "normal"}`)
	require.Equal(t, http.StatusOK, status)
	_, _, run, _ := c.do("GET", "/agent/runs/"+blocked, "")
	assert.Equal(t, "INPROGRESS", run["state"], "the follow-up answers a run that waits for its user")

	cancelled := old["CLI"]["run_id"].(string)
	status, _, _, _ = c.do("POST", "/agent/runs/"+cancelled+"/followups", `{"message": "Do it after all"}`)
	require.Equal(t, http.StatusOK, status)
	_, _, run, _ = c.do("GET", "/agent/runs/"+cancelled, "")
	assert.Equal(t, "QUEUED", run["state"], "a cancelled run starts again too")

	for _, tc := range []struct {
		path, body string
		want       int
	}{
		{"/agent/runs/" + old["LOCAL"]["run_id"].(string) + "/followups", `{"message": "hello"}`, http.StatusUnprocessableEntity},
		{"/agent/runs/" + id + "/followups", `{"message": ""}`, http.StatusBadRequest},
		{"/agent/runs/" + id + "/followups", `{"message": "hi", "mode": "loud"}`, http.StatusBadRequest},
		{"/agent/runs/no-such-run/followups", `not json`, http.StatusNotFound},
		{"/agent/runs/no-such-run/handoff/attachments", ``, http.StatusNotFound},
	} {
		method := http.MethodPost
		if tc.body == "" {
			method = http.MethodGet
		}
		status, _, problem, _ := c.do(method, tc.path, tc.body)
		assert.Equal(t, tc.want, status, tc.path+" "+tc.body)
		assert.EqualValues(t, tc.want, problem["status"], tc.path)
	}
}

func TestANewRunHasNoHandoffFilesAndKeepsItsMetadata(t *testing.T) {
	c := newClient(t, Options{Step: time.Hour})
	status, _, created, body := c.do("POST", "/agent/runs", `{"prompt": "Tag the release", "metadata": {"ticket_id": "REL-1"}, "mode": "plan"}`)
	require.Equal(t, http.StatusOK, status, body)
	id := created["run_id"].(string)
	_, _, files, _ := c.do("GET", "/agent/runs/"+id+"/handoff/attachments", "")
	assert.Empty(t, attachmentIDs(files))
	_, _, page, _ := c.do("GET", "/agent/runs?metadata[ticket_id]=REL-1", "")
	require.Len(t, page["runs"], 1)
	assert.Equal(t, map[string]any{"ticket_id": "REL-1"}, page["runs"].([]any)[0].(map[string]any)["metadata"])
	_, _, page, _ = c.do("GET", "/agent/runs?metadata[ticket_id]=REL-2", "")
	assert.Empty(t, page["runs"])
	for _, bad := range []string{`{"prompt": "x", "metadata": {"bad key": "v"}}`, `{"prompt": "x", "metadata": {"k": 1}}`, `{"prompt": "x", "mode": "fast"}`} {
		status, _, _, _ := c.do("POST", "/agent/runs", bad)
		assert.Equal(t, http.StatusBadRequest, status, bad)
	}
}

func attachmentIDs(doc map[string]any) []string {
	ids := []string{}
	list, _ := doc["attachments"].([]any)
	for _, a := range list {
		ids = append(ids, a.(map[string]any)["attachment_id"].(string))
	}
	return ids
}
