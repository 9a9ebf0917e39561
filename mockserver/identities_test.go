package mockserver_test

import (
	"net/http"
	"testing"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func createIdentity(t *testing.T, c *client, name string) mockserver.AgentResponse {
	t.Helper()
	r := c.do("POST", "/agent/identities", map[string]any{"name": name})
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	var a mockserver.AgentResponse
	r.json(t, &a)
	return a
}

func agentKey(t *testing.T, c *client, uid string) string {
	t.Helper()
	r := c.do("POST", "/__mock/identities/"+uid+"/keys", nil)
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	var k mockserver.AgentKey
	r.json(t, &k)
	return k.APIKey
}

func agents(t *testing.T, c *client) []mockserver.AgentResponse {
	t.Helper()
	r := c.do("GET", "/agent/identities", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var out mockserver.ListAgentIdentitiesResponse
	r.json(t, &out)
	return out.Agents
}

func TestAgentsHaveAPlanLimitAndAProtectedDefault(t *testing.T) {
	c := newMock(t, mockserver.Options{}).in("agents")
	list := agents(t, c)
	require.Len(t, list, 2)
	assert.Equal(t, "agent-acme-default", list[0].UID)

	third := createIdentity(t, c, "  Docs bot ")
	assert.Equal(t, "Docs bot", third.Name)
	assert.True(t, third.Available)
	p := c.do("POST", "/agent/identities", map[string]any{"name": "Fourth"}).problem(t)
	assert.Equal(t, http.StatusForbidden, p.Status, "acme's plan allows three")
	assert.Contains(t, p.Detail, "plan")

	p = c.do("DELETE", "/agent/identities/agent-acme-default", nil).problem(t)
	assert.Equal(t, http.StatusBadRequest, p.Status)
	assert.Contains(t, p.Detail, "default")

	r := c.do("PUT", "/agent/identities/"+third.UID, map[string]any{"name": "Docs and changelog bot"})
	require.Equal(t, http.StatusOK, r.status)
	assert.Contains(t, string(r.body), "Docs and changelog bot")
	assert.Equal(t, http.StatusNoContent, c.do("DELETE", "/agent/identities/"+third.UID, nil).status)
	assert.Equal(t, http.StatusNotFound, c.do("DELETE", "/agent/identities/"+third.UID, nil).problem(t).Status)
	createIdentity(t, c, "Room again")

	// Globex's plan allows one: its second agent is listed as unavailable.
	globex := agents(t, c.as("wk-mock-carol"))
	require.Len(t, globex, 2)
	assert.True(t, globex[0].Available)
	assert.False(t, globex[1].Available)
}

func TestAgentRequestsAreChecked(t *testing.T) {
	c := newMock(t, mockserver.Options{}).in("checks")
	for _, body := range []any{map[string]any{}, map[string]any{"name": "  "}, map[string]any{"name": 7}} {
		p := c.do("POST", "/agent/identities", body).problem(t)
		assert.Equal(t, http.StatusBadRequest, p.Status, "%v", body)
		assert.Contains(t, p.Detail, "name")
	}
	assert.Equal(t, http.StatusForbidden, c.as("wk-mock-ci-bot").do("GET", "/agent/identities", nil).problem(t).Status, "a service account manages no agents")
	assert.Equal(t, http.StatusForbidden, c.as("wk-mock-carol").do("PUT", "/agent/identities/agent-acme-release", map[string]any{"name": "mine"}).problem(t).Status)
	assert.Equal(t, http.StatusForbidden, c.as("wk-mock-carol").do("DELETE", "/agent/identities/agent-acme-release", nil).problem(t).Status)
	assert.Equal(t, http.StatusNotFound, c.do("POST", "/__mock/identities/nobody/keys", nil).status)
}

func TestARunActingAsAnAgentIsCreatedByIt(t *testing.T) {
	c := newMock(t, mockserver.Options{}).in("acting")
	run := c.get(c.create(map[string]any{"prompt": "release", "team": true, "agent_identity_uid": "agent-acme-release"}).RunID)
	require.NotNil(t, run.Creator)
	assert.Equal(t, "agent-acme-release", run.Creator.UID)
	assert.Equal(t, "Release bot", run.Creator.DisplayName)
	assert.Equal(t, "service_account", run.Creator.Type)

	for body, want := range map[string]int{
		`{"prompt":"x","agent_identity_uid":"agent-nobody"}`:                    http.StatusBadRequest,
		`{"prompt":"x","agent_identity_uid":"agent-acme-release","team":false}`: http.StatusBadRequest,
		`{"prompt":"x","agent_identity_uid":"agent-globex-default"}`:            http.StatusForbidden,
	} {
		p := c.do("POST", "/agent/run", body).problem(t)
		assert.Equal(t, want, p.Status, body)
		assert.Contains(t, p.Detail, "agent_identity_uid", body)
	}
	p := c.as("wk-mock-carol").do("POST", "/agent/run", `{"prompt":"x","agent_identity_uid":"agent-globex-triage"}`).problem(t)
	assert.Equal(t, http.StatusForbidden, p.Status, "beyond the plan limit")
}

func TestDeletingAnAgentRevokesItsKeysAtOnce(t *testing.T) {
	c := newMock(t, mockserver.Options{StrictAuth: false}).in("revoke")
	a := createIdentity(t, c, "Short-lived")
	key := agentKey(t, c, a.UID)
	as := c.as(key)
	run := as.get(as.create(map[string]any{"prompt": "as the agent"}).RunID)
	assert.Equal(t, a.UID, run.Creator.UID)
	assert.Equal(t, http.StatusForbidden, as.do("GET", "/agent/identities", nil).problem(t).Status, "an agent manages no agents")

	require.Equal(t, http.StatusNoContent, c.do("DELETE", "/agent/identities/"+a.UID, nil).status)
	p := as.do("GET", "/agent/runs", nil).problem(t)
	assert.Equal(t, http.StatusUnauthorized, p.Status, "even a mock that lets unknown keys in refuses a revoked one")
	assert.Equal(t, http.StatusUnauthorized, c.as("wk-agent-never-issued").do("GET", "/agent/runs", nil).status)
	// Its run stays, still created by it.
	assert.Equal(t, a.UID, c.get(run.RunID).Creator.UID)
}
