package mockserver_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func environments(t *testing.T, c *client, query string) map[string]mockserver.CloudEnvironment {
	t.Helper()
	r := c.do("GET", "/agent/environments"+query, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var out mockserver.ListEnvironmentsResponse
	r.json(t, &out)
	m := map[string]mockserver.CloudEnvironment{}
	for _, e := range out.Environments {
		m[e.UID] = e
	}
	return m
}

func TestEnvironmentsFollowTheTeamsNewestRun(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: 10 * time.Second}).in("envs")
	envs := environments(t, c, "")
	assert.Contains(t, envs, "env-acme-data")
	assert.NotContains(t, envs, "env-globex-ml", "another team's unshared environment is never listed")
	assert.NotContains(t, environments(t, c.as("wk-mock-carol"), ""), "env-acme-data")

	run := c.create(map[string]any{"prompt": "load the warehouse", "config": map[string]any{"environment_id": "env-acme-data"}})
	e := environments(t, c, "")["env-acme-data"]
	require.NotNil(t, e.LastTaskCreated)
	assert.Equal(t, run.RunID, e.LastTaskCreated.ID)
	assert.Equal(t, mockserver.Queued, e.LastTaskCreated.State)
	assert.Nil(t, e.LastTaskCreated.StartedAt)
	assert.Nil(t, e.LastTaskRunTimestamp, "no run has started there yet")

	c.advance(35 * time.Second) // QUEUED, PENDING, CLAIMED: 10 s each
	e = environments(t, c, "")["env-acme-data"]
	assert.Equal(t, mockserver.InProgress, e.LastTaskCreated.State)
	require.NotNil(t, e.LastTaskRunTimestamp)
	assert.Equal(t, *e.LastTaskCreated.StartedAt, *e.LastTaskRunTimestamp)
	assert.False(t, e.SetupFailed)

	// The newest run fails in setup: the environment says so, for its team only.
	failing := c.create(map[string]any{"prompt": "again", "config": map[string]any{"environment_id": "env-acme-data"}},
		mockserver.FateHeader, "state=FAILED; error_code=environment_setup_failed; step=1s")
	c.advance(5 * time.Second)
	e = environments(t, c, "")["env-acme-data"]
	assert.Equal(t, failing.RunID, e.LastTaskCreated.ID)
	assert.Equal(t, mockserver.Failed, e.LastTaskCreated.State)
	assert.True(t, e.SetupFailed)

	// A shared environment shows each team only its own runs.
	c.create(map[string]any{"prompt": "mobile", "config": map[string]any{"environment_id": "env-mobile"}})
	carol := environments(t, c.as("wk-mock-carol"), "")["env-mobile"]
	require.NotNil(t, carol.LastTaskCreated)
	assert.NotEqual(t, "mobile", carol.LastTaskCreated.Title)
}

func TestEnvironmentsSort(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	for _, q := range []string{"", "?sort_by=last_updated", "?sort_by=name"} {
		r := c.do("GET", "/agent/environments"+q, nil)
		require.Equal(t, http.StatusOK, r.status)
		var out mockserver.ListEnvironmentsResponse
		r.json(t, &out)
		require.NotEmpty(t, out.Environments)
		for i := 1; i < len(out.Environments); i++ {
			a, b := out.Environments[i-1], out.Environments[i]
			if q == "?sort_by=name" {
				assert.LessOrEqual(t, nameOf(t, a), nameOf(t, b))
			} else {
				assert.GreaterOrEqual(t, a.LastUpdated, b.LastUpdated)
			}
		}
	}
	p := c.do("GET", "/agent/environments?sort_by=size", nil).problem(t)
	assert.Equal(t, http.StatusBadRequest, p.Status)
	assert.Contains(t, p.Detail, "sort_by")
}

func nameOf(t *testing.T, e mockserver.CloudEnvironment) string {
	t.Helper()
	var cfg struct{ Name string }
	response{body: e.Config}.json(t, &cfg)
	return cfg.Name
}

func TestCreateInAnotherTeamsEnvironmentIsForbidden(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	r := c.do("POST", "/agent/run", map[string]any{"prompt": "x", "config": map[string]any{"environment_id": "env-globex-ml"}})
	p := r.problem(t)
	assert.Equal(t, http.StatusForbidden, p.Status)
	assert.Contains(t, p.Detail, "config.environment_id")
	// Shared with the caller's team: allowed.
	c.create(map[string]any{"prompt": "x", "config": map[string]any{"environment_id": "env-mobile"}})
	c.as("wk-mock-carol").create(map[string]any{"prompt": "x", "config": map[string]any{"environment_id": "env-globex-ml"}})
}

func TestModelsNameTheDefaultACreateFillsIn(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	r := c.do("GET", "/agent/models", nil)
	require.Equal(t, http.StatusOK, r.status)
	var out mockserver.ListModelsResponse
	r.json(t, &out)
	ids := map[string]bool{}
	disabled := 0
	for _, m := range out.Models {
		ids[m.ID] = true
		if m.DisableReason != "" {
			disabled++
		}
	}
	assert.True(t, ids[out.DefaultModelID])
	assert.Positive(t, disabled, "the fixtures show a disabled model")
	run := c.get(c.create(map[string]any{"prompt": "x"}).RunID)
	assert.Equal(t, out.DefaultModelID, run.AgentConfig.ModelID)
}

func TestEnvironmentsModelsAndIdentitiesNeedAuth(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	for _, path := range []string{"/agent/environments", "/agent/models", "/agent/identities"} {
		assert.Equal(t, http.StatusUnauthorized, c.as("").do("GET", path, nil).problem(t).Status, path)
	}
}

// Agents and messages live in the state file like runs, and a restart
// keeps agent keys working, and revoked ones refused.
func TestIdentitiesMessagesAndEnvironmentsSurviveARestart(t *testing.T) {
	opts := mockserver.Options{ClockMode: mockserver.VirtualClock, ClockStart: clockStart}
	s1 := newServer(t, opts)
	c1 := serve(t, s1).in("keep")
	require.Equal(t, http.StatusNoContent, c1.do("DELETE", "/agent/identities/agent-acme-release", nil).status) // room for two
	agent := createIdentity(t, c1, "Keeper")
	gone := createIdentity(t, c1, "Goner")
	key, goneKey := agentKey(t, c1, agent.UID), agentKey(t, c1, gone.UID)
	require.Equal(t, http.StatusNoContent, c1.do("DELETE", "/agent/identities/"+gone.UID, nil).status)
	a := c1.create(map[string]any{"prompt": "a"}).RunID
	b := c1.create(map[string]any{"prompt": "b"}).RunID
	ids := send(t, c1, a, b)
	before := c1.do("GET", "/agent/messages/"+b, nil).body
	agentsBefore := c1.do("GET", "/agent/identities", nil).body
	envsBefore := c1.do("GET", "/agent/environments", nil).body

	var buf bytes.Buffer
	require.NoError(t, s1.Save(&buf))
	s2 := newServer(t, opts)
	require.NoError(t, s2.Load(&buf))
	c2 := serve(t, s2).in("keep")
	assert.JSONEq(t, string(before), string(c2.do("GET", "/agent/messages/"+b, nil).body))
	assert.JSONEq(t, string(agentsBefore), string(c2.do("GET", "/agent/identities", nil).body))
	assert.JSONEq(t, string(envsBefore), string(c2.do("GET", "/agent/environments", nil).body))
	assert.Equal(t, http.StatusOK, c2.as(key).do("GET", "/agent/runs", nil).status)
	assert.Equal(t, http.StatusUnauthorized, c2.as(goneKey).do("GET", "/agent/runs", nil).status)
	assert.Equal(t, http.StatusOK, c2.do("POST", "/agent/messages/"+ids[0]+"/read", nil).status)
}

// Each mock session has its own agents and messages, and a reset puts the
// fixtures back.
func TestIdentitiesAndMessagesIsolationAndReset(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	one, two := c.in("one"), c.in("two")
	agent := createIdentity(t, one, "Only here")
	key := agentKey(t, one, agent.UID)
	assert.Equal(t, http.StatusNotFound, two.do("PUT", "/agent/identities/"+agent.UID, map[string]any{"name": "x"}).status)
	assert.Equal(t, http.StatusUnauthorized, two.as(key).do("GET", "/agent/runs", nil).status, "a key works only in its mock session")
	a, b := one.create(map[string]any{"prompt": "a"}).RunID, one.create(map[string]any{"prompt": "b"}).RunID
	send(t, one, a, b)

	require.Equal(t, http.StatusOK, one.do("POST", "/__mock/reset", nil).status)
	assert.Equal(t, http.StatusNotFound, one.do("PUT", "/agent/identities/"+agent.UID, map[string]any{"name": "x"}).status)
	assert.Equal(t, http.StatusUnauthorized, one.as(key).do("GET", "/agent/runs", nil).status)
	assert.Equal(t, http.StatusNotFound, one.do("GET", "/agent/messages/"+b, nil).status)
}
