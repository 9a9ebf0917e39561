package mockserver_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests in this file hold the mock to the service's published document
// where the two used to differ, one difference each.

// Fixture runs these tests lean on (fixtures/runs.json), by the start of
// their ids.
const (
	fixtureFinished    = "f29d0da9" // SUCCEEDED, all four artifact kinds
	fixtureChild       = "0becd7b0" // CLAIMED, a child of fixtureFinished
	fixtureGrandchild  = "c1d3fcff" // PENDING, a child of fixtureChild
	fixtureSelfHosted  = "8a6a63ec" // INPROGRESS on the worker build-box-7
	fixtureScheduled   = "907a70c3" // QUEUED, started by a schedule
	fixtureBlocked     = "881ed162" // BLOCKED
	fixtureAction      = "ec66a787" // INPROGRESS, from a GitHub Action
	fixtureLocalActive = "37dc76fb" // INPROGRESS, LOCAL
)

// fixtureID finds the full id of a fixture run from its first characters.
func fixtureID(t *testing.T, c *client, prefix string) string {
	t.Helper()
	for _, r := range c.list("limit=500").Runs {
		if r.RunID[:8] == prefix {
			return r.RunID
		}
	}
	t.Fatalf("no fixture run %s… visible to this key", prefix)
	return ""
}

func TestListDefaultsToLastUpdatedFirst(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: time.Minute})
	a := c.create(map[string]any{"prompt": "a", "config": map[string]any{"name": "upd"}}).RunID
	c.advance(time.Second)
	b := c.create(map[string]any{"prompt": "b", "config": map[string]any{"name": "upd"}}).RunID
	c.advance(time.Second)
	cc := c.create(map[string]any{"prompt": "c", "config": map[string]any{"name": "upd"}}).RunID
	c.advance(time.Second)
	require.Equal(t, http.StatusOK, c.do("POST", "/agent/runs/"+a+"/cancel", nil).status)

	assert.Equal(t, []string{a, cc, b}, ids(c.list("name=upd").Runs), "the cancelled run changed last")
	assert.Equal(t, ids(c.list("name=upd&sort_by=updated_at&sort_order=desc").Runs), ids(c.list("name=upd").Runs))
	assert.Equal(t, []string{b, cc, a}, ids(c.list("name=upd&sort_order=asc").Runs))
	assert.Equal(t, []string{cc, b, a}, ids(c.list("name=upd&sort_by=created_at").Runs))

	all := c.list("limit=500").Runs
	for i := 1; i < len(all); i++ {
		assert.GreaterOrEqual(t, all[i-1].UpdatedAt, all[i].UpdatedAt, "by last update, newest first")
	}

	// A cursor walk by last update, one run a page, sees every run once
	// while nothing moves.
	seen := map[string]int{}
	q := "limit=1"
	page := c.list(q)
	for {
		for _, r := range page.Runs {
			seen[r.RunID]++
		}
		if !page.PageInfo.HasNextPage {
			break
		}
		page = c.list(q + "&cursor=" + url.QueryEscape(page.PageInfo.NextCursor))
	}
	assert.Len(t, seen, len(all))
	for id, n := range seen {
		assert.Equal(t, 1, n, "run %s", id)
	}
}

func TestSortByAgentIsBySkillWithSkillLessRunsLast(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	mk := func(skill string) string {
		body := map[string]any{"prompt": "p", "config": map[string]any{"name": "by-agent"}}
		if skill != "" {
			body["skill"] = skill
		}
		return c.create(body).RunID
	}
	none1 := mk("")
	zeta := mk("acme/skills:zeta")
	alpha := mk("acme/skills:Alpha")
	none2 := mk("")
	mid := mk("tools:mid") // an owner-less skill

	asc := ids(c.list("name=by-agent&sort_by=agent&sort_order=asc").Runs)
	assert.Equal(t, []string{alpha, mid, zeta}, asc[:3], "skills alphabetically, ignoring case")
	assert.ElementsMatch(t, []string{none1, none2}, asc[3:], "runs without a skill last")
	desc := ids(c.list("name=by-agent&sort_by=agent").Runs)
	assert.Equal(t, []string{zeta, mid, alpha}, desc[:3])
	assert.ElementsMatch(t, []string{none1, none2}, desc[3:], "runs without a skill last in descending order too")

	// Paging one run at a time gives the same order.
	var walked []string
	q := "name=by-agent&sort_by=agent&sort_order=asc&limit=1"
	page := c.list(q)
	for {
		walked = append(walked, ids(page.Runs)...)
		if !page.PageInfo.HasNextPage {
			break
		}
		page = c.list(q + "&cursor=" + url.QueryEscape(page.PageInfo.NextCursor))
	}
	assert.Equal(t, asc, walked)
}

func TestCancelFollowsTheServiceRules(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	cancel := func(id string) response { return c.do("POST", "/agent/runs/"+id+"/cancel", nil) }

	r := cancel(fixtureID(t, c, fixtureBlocked))
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	assert.Equal(t, mockserver.ProblemTypeBase+"invalid_request", r.problem(t).Type)
	assert.Contains(t, r.problem(t).Detail, "BLOCKED")

	for _, tc := range []struct{ id, why string }{
		{fixtureID(t, c, fixtureAction), "GITHUB_ACTION"},
		{fixtureID(t, c, fixtureLocalActive), "LOCAL"},
		{fixtureID(t, c, fixtureSelfHosted), "build-box-7"},
	} {
		r := cancel(tc.id)
		require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s: %s", tc.why, r.body)
		p := r.problem(t)
		assert.Equal(t, mockserver.ProblemTypeBase+"operation_not_supported", p.Type)
		assert.Contains(t, p.Detail, tc.why)
		assert.Equal(t, mockserver.InProgress, c.get(tc.id).State, "the run goes on")
	}

	scheduled := fixtureID(t, c, fixtureScheduled)
	r = cancel(scheduled)
	require.Equal(t, http.StatusOK, r.status, "a scheduled run is cancelled like any other: %s", r.body)
	assert.Equal(t, mockserver.Cancelled, c.get(scheduled).State)

	// A run sent to a self-hosted worker cannot be cancelled; one on the
	// service's own workers ("warp") can.
	own := c.create(map[string]any{"prompt": "x", "config": map[string]any{"worker_host": "my-box"}}).RunID
	assert.Equal(t, http.StatusUnprocessableEntity, cancel(own).status)
	hosted := c.create(map[string]any{"prompt": "x", "config": map[string]any{"worker_host": "warp"}}).RunID
	assert.Equal(t, http.StatusOK, cancel(hosted).status)
}

func TestCreateKeepsAndShowsTheNewRequestFields(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	parent := c.create(map[string]any{"prompt": "orchestrate"}).RunID
	id := c.create(map[string]any{
		"prompt":             "Fix it",
		"parent_run_id":      parent,
		"interactive":        true,
		"agent_identity_uid": "agent-acme-release",
		"attachments":        []map[string]any{{"file_name": "trace.log", "mime_type": "text/plain", "data": "aGVsbG8="}},
		"images":             []map[string]any{{"mime_type": "image/png", "data": "iVBORw0KGgo="}},
		"config": map[string]any{"idle_timeout_minutes": 30, "harness": map[string]any{"type": "claude"},
			"harness_auth_secrets": map[string]any{"claude_auth_secret_name": "claude-key"}},
	}).RunID
	run := c.get(id)
	assert.Equal(t, parent, run.ParentRunID)
	require.NotNil(t, run.AgentConfig)
	require.NotNil(t, run.AgentConfig.IdleTimeoutMinutes)
	assert.Equal(t, 30, *run.AgentConfig.IdleTimeoutMinutes)
	require.NotNil(t, run.AgentConfig.Harness)
	assert.Equal(t, "claude", run.AgentConfig.Harness.Type)
	require.NotNil(t, run.AgentConfig.HarnessAuthSecrets)
	assert.Equal(t, "claude-key", run.AgentConfig.HarnessAuthSecrets.ClaudeAuthSecretName)

	// The edges of what is allowed pass.
	for _, cfg := range []map[string]any{{"idle_timeout_minutes": 1}, {"idle_timeout_minutes": 60}, {"harness": map[string]any{"type": "oz"}}} {
		c.create(map[string]any{"prompt": "x", "config": cfg})
	}
	five := make([]map[string]any, 5)
	for i := range five {
		five[i] = map[string]any{"file_name": "f.txt", "mime_type": "text/plain", "data": "aGk="}
	}
	c.create(map[string]any{"prompt": "x", "attachments": five})

	// Another team's run is no parent of mine, and says nothing about it.
	r := c.as("wk-mock-carol").do("POST", "/agent/run", map[string]any{"prompt": "x", "parent_run_id": parent})
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	assert.Contains(t, r.problem(t).Detail, "parent_run_id")
}

func TestTeamOwnedUnlessAskedAndIdentitiesOnlyThere(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	run := c.get(c.create(map[string]any{"prompt": "x"}).RunID)
	require.NotNil(t, run.Scope)
	assert.Equal(t, "Team", run.Scope.Type, "a user on a single team gets a team-owned run")
	assert.Equal(t, "team-acme", run.Scope.UID)
	run = c.get(c.create(map[string]any{"prompt": "x", "team": false}).RunID)
	assert.Equal(t, "User", run.Scope.Type)
	assert.Equal(t, "user-alice", run.Scope.UID)

	c.create(map[string]any{"prompt": "x", "agent_identity_uid": "agent-acme-release"})
	c.create(map[string]any{"prompt": "x", "agent_identity_uid": "agent-acme-release", "team": true})
	for _, body := range []map[string]any{
		{"prompt": "x", "agent_identity_uid": "agent-acme-release", "team": false},
		{"prompt": "x", "agent_identity_uid": ""},
	} {
		r := c.do("POST", "/agent/runs", body)
		require.Equal(t, http.StatusBadRequest, r.status, "%v: %s", body, r.body)
		assert.Contains(t, r.problem(t).Detail, "agent_identity_uid")
	}
}

func TestSkillsWithoutAnOwner(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	for _, skill := range []string{"api:release", "api:skills/release/SKILL.md", "acme/api:release", "acme/api:skills/release/SKILL.md"} {
		run := c.get(c.create(map[string]any{"skill": skill}).RunID)
		assert.Equal(t, skill, run.AgentConfig.SkillSpec)
		assert.Equal(t, "release", run.AgentConfig.Name, skill)
	}
	for _, bad := range []string{"release", "a/b/c:release", ":release", "api:"} {
		r := c.do("POST", "/agent/run", map[string]any{"skill": bad})
		assert.Equal(t, http.StatusBadRequest, r.status, bad)
	}
}

func TestListFiltersByExecutionLocationAndAncestor(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	local := c.list("execution_location=LOCAL&limit=500").Runs
	require.NotEmpty(t, local)
	for _, r := range local {
		assert.Equal(t, "LOCAL", r.Location)
		assert.Equal(t, "LOCAL", r.Source)
	}
	remote := c.list("execution_location=REMOTE&limit=500").Runs
	assert.Len(t, remote, len(c.list("limit=500").Runs)-len(local))
	for _, r := range remote {
		assert.Equal(t, "REMOTE", r.Location)
	}
	r := c.do("GET", "/agent/runs?execution_location=MOON", nil)
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Contains(t, r.problem(t).Detail, "execution_location")

	// The fixtures hold a chain: finished -> child -> grandchild.
	root, child, grandchild := fixtureID(t, c, fixtureFinished), fixtureID(t, c, fixtureChild), fixtureID(t, c, fixtureGrandchild)
	assert.ElementsMatch(t, []string{child, grandchild}, ids(c.list("ancestor_run_id="+root).Runs))
	assert.Equal(t, []string{grandchild}, ids(c.list("ancestor_run_id="+child).Runs))
	assert.Empty(t, c.list("ancestor_run_id="+grandchild).Runs)
	spawned := c.create(map[string]any{"prompt": "sub-task", "parent_run_id": grandchild}).RunID
	assert.ElementsMatch(t, []string{child, grandchild, spawned}, ids(c.list("ancestor_run_id="+root).Runs))

	for _, who := range []*client{c, c.as("wk-mock-carol")} {
		id := "no-such-run"
		if who != c {
			id = root // exists, but in another team
		}
		r := who.do("GET", "/agent/runs?ancestor_run_id="+id, nil)
		require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
		assert.Contains(t, r.problem(t).Detail, "ancestor_run_id")
	}
}

func TestRunsShowTheDocumentsFields(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: time.Minute})
	run := c.get(fixtureID(t, c, fixtureFinished))
	assert.Equal(t, "REMOTE", run.Location)
	assert.False(t, run.SandboxRunning, "a finished run's sandbox is down")
	require.NotNil(t, run.RequestUsage, "a run that worked has a cost")
	assert.Positive(t, run.RequestUsage.InferenceCost)
	assert.Positive(t, run.RequestUsage.ComputeCost)
	kinds := map[string]map[string]any{}
	for _, a := range run.Artifacts {
		kinds[a.Type] = a.Data
	}
	require.Len(t, kinds, 4, "PLAN, PULL_REQUEST, SCREENSHOT and FILE")
	for _, k := range []string{"SCREENSHOT", "FILE", "PLAN"} {
		assert.NotEmpty(t, kinds[k]["artifact_uid"], k)
	}
	assert.NotEqual(t, kinds["SCREENSHOT"]["artifact_uid"], kinds["FILE"]["artifact_uid"])
	assert.Equal(t, run.Artifacts[2].Data, c.get(run.RunID).Artifacts[2].Data, "artifact ids are stable")

	action := c.get(fixtureID(t, c, fixtureAction))
	assert.Equal(t, "https://github.example.com/acme/web/actions/runs/9120", action.TriggerURL)
	assert.True(t, action.SandboxRunning)
	assert.Equal(t, fixtureID(t, c, fixtureFinished), c.get(fixtureID(t, c, fixtureChild)).ParentRunID)

	// A new run: no cost and no sandbox until a worker has it and works.
	id := c.create(map[string]any{"prompt": "x"}).RunID
	fresh := c.get(id)
	assert.Nil(t, fresh.RequestUsage)
	assert.False(t, fresh.SandboxRunning)
	assert.Equal(t, "REMOTE", fresh.Location)
	c.advance(3*time.Minute + 30*time.Second) // INPROGRESS for 30 s
	working := c.get(id)
	require.Equal(t, mockserver.InProgress, working.State)
	assert.True(t, working.SandboxRunning)
	require.NotNil(t, working.RequestUsage)
	c.advance(time.Minute) // SUCCEEDED
	done := c.get(id)
	assert.False(t, done.SandboxRunning)
	assert.Greater(t, done.RequestUsage.ComputeCost, working.RequestUsage.ComputeCost, "the cost grows with the work")
}
