package refserver

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestASchedulePausesResumesAndIsReplaced(t *testing.T) {
	c := newClient(t, Options{})
	status, _, sc, _ := c.do("POST", "/agent/schedules", `{"name": "nightly", "cron_schedule": "0 3 * * *", "prompt": "p"}`)
	require.Equal(t, http.StatusCreated, status)
	id := sc["id"].(string)
	_, _, paused, _ := c.do("POST", "/agent/schedules/"+id+"/pause", "")
	assert.Equal(t, false, paused["enabled"])
	assert.Nil(t, paused["history"].(map[string]any)["next_run"], "a paused schedule has no next run")
	_, _, replaced, _ := c.do("PUT", "/agent/schedules/"+id, `{"name": "nightly", "cron_schedule": "30 4 * * 1-5", "prompt": "q", "enabled": true}`)
	assert.Equal(t, "30 4 * * 1-5", replaced["cron_schedule"])
	assert.Equal(t, true, replaced["enabled"])
	status, _, _, _ = c.do("PUT", "/agent/schedules/"+id, `{"name": "nightly", "cron_schedule": "30 4 * * 1-5", "prompt": "q"}`)
	assert.Equal(t, http.StatusBadRequest, status, "a replacement must say whether it is enabled")
	status, _, _, _ = c.do("POST", "/agent/schedules", `{"name": "n", "cron_schedule": "61 * * * *", "prompt": "p"}`)
	assert.Equal(t, http.StatusBadRequest, status, "minute 61")
	_, _, gone, _ := c.do("DELETE", "/agent/schedules/"+id, "")
	assert.Equal(t, true, gone["success"])
	status, _, _, _ = c.do("GET", "/agent/schedules/"+id, "")
	assert.Equal(t, http.StatusNotFound, status)
}

func TestAMessageIsDeliveredAndReadOnce(t *testing.T) {
	c := newClient(t, Options{Step: time.Hour})
	_, _, a, _ := c.do("POST", "/agent/runs", `{"prompt": "send"}`)
	_, _, b, _ := c.do("POST", "/agent/runs", `{"prompt": "receive"}`)
	status, _, sent, body := c.do("POST", "/agent/messages", `{"to": ["`+b["run_id"].(string)+`"], "subject": "s", "body": "hello", "sender_run_id": "`+a["run_id"].(string)+`"}`)
	require.Equal(t, http.StatusOK, status, body)
	id := sent["message_ids"].([]any)[0].(string)
	_, _, first, _ := c.do("POST", "/agent/messages/"+id+"/read", "")
	assert.Equal(t, "hello", first["body"])
	require.NotNil(t, first["read_at"])
	status, _, _, _ = c.do("POST", "/agent/messages/"+id+"/delivered", "")
	assert.Equal(t, http.StatusNoContent, status)
	_, _, again, _ := c.do("POST", "/agent/messages/"+id+"/read", "")
	assert.Equal(t, first["read_at"], again["read_at"])
	assert.Equal(t, first["delivered_at"], again["delivered_at"])

	off := newClient(t, Options{Step: time.Hour, MessagingOff: true})
	status, _, _, _ = off.do("POST", "/agent/messages", `{"to": ["x"], "subject": "s", "body": "b", "sender_run_id": "y"}`)
	assert.Equal(t, http.StatusForbidden, status)
}

func TestAConversationBeginsWhenClaimedAndIsContinued(t *testing.T) {
	c := newClient(t, Options{Step: time.Millisecond})
	_, _, first, _ := c.do("POST", "/agent/runs", `{"prompt": "first"}`)
	run := c.untilEnded(first["run_id"].(string))
	conv, _ := run["conversation_id"].(string)
	require.NotEmpty(t, conv)
	_, _, redirect, _ := c.do("GET", "/agent/sessions/"+run["session_id"].(string)+"/redirect", "")
	assert.Equal(t, conv, redirect["conversation_id"])
	_, _, second, _ := c.do("POST", "/agent/runs", `{"prompt": "second", "conversation_id": "`+conv+`"}`)
	c.untilEnded(second["run_id"].(string))
	status, _, doc, body := c.do("GET", "/agent/conversations/"+conv, "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Len(t, doc["steps"], 2, body)
	// The client follows the 302 to the link, which needs no key.
	status, _, _, body = c.do("GET", "/agent/runs/"+second["run_id"].(string)+"/transcript", "")
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "second")
}

// untilEnded polls a run until it has ended, and returns it.
func (c client) untilEnded(id string) map[string]any {
	for {
		_, _, run, _ := c.do("GET", "/agent/runs/"+id, "")
		if isTerminal(str(run["state"])) {
			return run
		}
	}
}

func TestAnArtifactDownloadsAsAnnounced(t *testing.T) {
	c := newClient(t, Options{Step: time.Millisecond})
	_, _, created, _ := c.do("POST", "/agent/runs", `{"prompt": "draw"}`)
	run := c.untilEnded(created["run_id"].(string))
	require.Equal(t, "SUCCEEDED", run["state"])
	for _, a := range run["artifacts"].([]any) {
		shown := a.(map[string]any)
		uid, _ := shown["data"].(map[string]any)["artifact_uid"].(string)
		if uid == "" {
			continue // a pull request
		}
		status, _, got, body := c.do("GET", "/agent/artifacts/"+uid, "")
		require.Equal(t, http.StatusOK, status, body)
		data := got["data"].(map[string]any)
		if link, ok := data["download_url"].(string); ok {
			resp, err := http.Get(link) // no key: the link is its own credential
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, data["content_type"], resp.Header.Get("Content-Type"))
		}
	}
}

func TestTheDefaultIdentityStaysAndThePlanHasAnEdge(t *testing.T) {
	c := newClient(t, Options{})
	_, _, list, _ := c.do("GET", "/agent/identities", "")
	def := list["agents"].([]any)[0].(map[string]any)["uid"].(string)
	status, _, _, _ := c.do("DELETE", "/agent/identities/"+def, "")
	assert.Equal(t, http.StatusBadRequest, status)
	for range identityPlan - 1 {
		status, _, _, _ = c.do("POST", "/agent/identities", `{"name": "bot"}`)
		require.Equal(t, http.StatusCreated, status)
	}
	status, _, _, _ = c.do("POST", "/agent/identities", `{"name": "one too many"}`)
	assert.Equal(t, http.StatusForbidden, status)
}

func TestAnotherTeamsEnvironmentIsListedToItAloneAndRefusedToOthers(t *testing.T) {
	for _, opts := range []Options{{Step: time.Hour}, {Step: time.Hour, StrictReferences: true}, {Step: time.Hour, ForeignNotFound: true}} {
		c := newClient(t, opts)
		they := c
		they.key = OtherTeamKeyPrefix + "test"
		listed := func(cl client) []string {
			_, _, doc, _ := cl.do("GET", "/agent/environments", "")
			var ids []string
			for _, e := range doc["environments"].([]any) {
				ids = append(ids, e.(map[string]any)["uid"].(string))
			}
			return ids
		}
		assert.NotContains(t, listed(c), otherTeamEnvironmentID)
		assert.Contains(t, listed(they), otherTeamEnvironmentID)
		status, _, _, body := c.do("POST", "/agent/runs", `{"prompt": "p", "config": {"environment_id": "`+otherTeamEnvironmentID+`"}}`)
		want := http.StatusForbidden
		if opts.ForeignNotFound {
			want = http.StatusBadRequest
		}
		assert.Equal(t, want, status, body)
		status, _, _, body = they.do("POST", "/agent/runs", `{"prompt": "p", "config": {"environment_id": "`+otherTeamEnvironmentID+`"}}`)
		assert.Equal(t, http.StatusOK, status, "the team's own environment: %s", body)
	}
}
