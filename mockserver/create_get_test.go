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

func TestCreateThenGetShowsTheResolvedRun(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	for _, path := range []string{"/agent/run", "/agent/runs", "/api/v1/agent/run", "/api/v1/agent/runs"} {
		t.Run(path, func(t *testing.T) {
			r := c.do("POST", path, map[string]any{
				"prompt": "Fix the flaky login test\nIt fails one run in ten.",
				"config": map[string]any{"name": "flaky-tests", "environment_id": "env-1",
					"mcp_servers": map[string]any{"gh": map[string]any{"url": "https://mcp.example.com"}}},
			})
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			var created mockserver.RunAgentResponse
			r.json(t, &created)
			assert.Equal(t, mockserver.Queued, created.State)
			assert.Equal(t, created.RunID, created.TaskID)

			run := c.get(created.RunID)
			assert.Equal(t, created.RunID, run.TaskID)
			assert.Equal(t, "Fix the flaky login test", run.Title, "title comes from the prompt's first line")
			assert.Equal(t, "Fix the flaky login test\nIt fails one run in ten.", run.Prompt)
			assert.Equal(t, "API", run.Source)
			assert.Equal(t, mockserver.Queued, run.State)
			require.NotNil(t, run.Creator)
			assert.Equal(t, "user-alice", run.Creator.UID)
			assert.Equal(t, "Alice Archer", run.Creator.DisplayName)
			require.NotNil(t, run.AgentConfig)
			assert.Equal(t, "flaky-tests", run.AgentConfig.Name)
			assert.Equal(t, "auto", run.AgentConfig.ModelID, "the default model is filled in")
			assert.Equal(t, "https://mcp.example.com", run.AgentConfig.MCPServers["gh"].URL)
			assert.Equal(t, "2026-03-01T12:00:00.000Z", run.CreatedAt)
			assert.Equal(t, run.CreatedAt, run.UpdatedAt)
			assert.Nil(t, run.StartedAt)
			assert.Empty(t, run.SessionLink, "no session before the run is claimed")
		})
	}
}

func TestCreateResolvesSkillTitleAndUnknownKey(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	run := c.get(c.create(map[string]any{"skill": "acme/skills:triage", "title": "  Nightly triage ",
		"config": map[string]any{"skill_spec": "acme/other:ignored", "model_id": "gpt-5"}}).RunID)
	assert.Equal(t, "Nightly triage", run.Title)
	assert.Equal(t, "acme/skills:triage", run.AgentConfig.SkillSpec, "skill wins over config.skill_spec")
	assert.Equal(t, "triage", run.AgentConfig.Name, "a skill names the run")
	assert.Equal(t, "gpt-5", run.AgentConfig.ModelID)

	run = c.get(c.create(map[string]any{"config": map[string]any{"skill_spec": "acme/skills:tools/review/SKILL.md"}}).RunID)
	assert.Equal(t, "review", run.AgentConfig.Name)
	assert.Equal(t, "Run skill review", run.Title)

	stranger := c.as("wk-someone-unknown")
	run = stranger.get(stranger.create(map[string]any{"prompt": "hello"}).RunID)
	assert.Regexp(t, `^user-default-[0-9a-f]{12}$`, run.Creator.UID, "an unknown key is a user of the default team")
	assert.Equal(t, run.Creator.UID, stranger.get(stranger.create(map[string]any{"prompt": "again"}).RunID).Creator.UID, "a key is always the same user")
}

// Day one for a client team: starting the mock and calling it with their own
// key shows a team's fixture runs, and each unknown key is its own user.
func TestUnknownKeysAreDistinctUsersOfTheFixtureTeam(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	mine, theirs := c.as("wk-my-real-key"), c.as("wk-a-colleagues-key")
	page := mine.list("limit=100")
	require.NotEmpty(t, page.Runs, "an unknown key sees its team's fixture runs")
	a := mine.get(mine.create(map[string]any{"prompt": "mine"}).RunID).Creator
	b := theirs.get(theirs.create(map[string]any{"prompt": "theirs"}).RunID).Creator
	require.NotNil(t, a)
	require.NotNil(t, b)
	assert.NotEqual(t, a.UID, b.UID, "two unknown keys are two users")
	assert.NotEqual(t, a.DisplayName, b.DisplayName)
	assert.NotContains(t, a.UID, "my-real-key", "the uid does not show the key")
	// Same team: each sees the other's run, as teammates do; alice (the
	// fixtures' team Acme) sees both.
	assert.Len(t, mine.list("creator="+b.UID).Runs, 1)
	assert.Len(t, c.as("wk-mock-alice").list("creator="+a.UID).Runs, 1)
}

func TestGetUnknownAndMalformedIDs(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	for _, tc := range []struct {
		id     string
		status int
	}{
		{"00000000-0000-4000-8000-000000000000", 404},
		{"no-such-run", 404},
		{"a%2Fb", 400},
		{"..%2F..%2Fetc", 400},
		{strings.Repeat("a", 200), 400},
	} {
		r := c.do("GET", "/agent/runs/"+tc.id, nil)
		assert.Equal(t, tc.status, r.status, "%s: %s", tc.id, r.body)
		p := r.problem(t)
		assert.NotEmpty(t, p.Detail)
	}
}

func TestProgressionOnTheVirtualClock(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: 10 * time.Second})
	id := c.create(map[string]any{"prompt": "go"}).RunID
	want := []struct {
		state   mockserver.State
		session bool
		started bool
	}{
		{mockserver.Queued, false, false},
		{mockserver.Pending, false, false},
		{mockserver.Claimed, true, false},
		{mockserver.InProgress, true, true},
		{mockserver.Succeeded, true, true},
		{mockserver.Succeeded, true, true},
	}
	prevUpdated := ""
	for i, w := range want {
		run := c.get(id)
		assert.Equal(t, w.state, run.State, "after %d steps", i)
		assert.Equal(t, w.session, run.SessionLink != "", "session link after %d steps", i)
		assert.Equal(t, w.session, run.SessionID != "", "session id after %d steps", i)
		assert.Equal(t, w.started, run.StartedAt != nil, "started_at after %d steps", i)
		assert.GreaterOrEqual(t, run.UpdatedAt, prevUpdated, "updated_at never goes back")
		if i > 0 && i < 5 {
			assert.Greater(t, run.UpdatedAt, prevUpdated, "updated_at moves on each change")
		}
		prevUpdated = run.UpdatedAt
		c.advance(10 * time.Second)
	}
	run := c.get(id)
	require.NotNil(t, run.StartedAt)
	assert.Equal(t, "2026-03-01T12:00:30.000Z", *run.StartedAt)
	assert.Nil(t, run.StatusMessage)
}

func TestFateFromHeaderAndFixtureRules(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: time.Minute})
	failed := c.create(map[string]any{"prompt": "x"}, mockserver.FateHeader, "state=FAILED; error_code=insufficient_credits; message=No credits; step=1s").RunID
	errored := c.create(map[string]any{"prompt": "please [mock:error] now"}).RunID
	setupFailed := c.create(map[string]any{"prompt": "[mock:setup-failed] deploy"}).RunID
	slowFail := c.create(map[string]any{"prompt": "y"}, mockserver.FateHeader, "state=ERROR, queued=1m, pending=1s, claimed=1s, inprogress=1s").RunID
	c.advance(5 * time.Second)

	run := c.get(failed)
	assert.Equal(t, mockserver.Failed, run.State)
	require.NotNil(t, run.StatusMessage)
	assert.Equal(t, "No credits", run.StatusMessage.Message)
	assert.Equal(t, "insufficient_credits", run.StatusMessage.ErrorCode)
	require.NotNil(t, run.StatusMessage.Retryable)
	assert.False(t, *run.StatusMessage.Retryable)

	assert.Equal(t, mockserver.Queued, c.get(errored).State, "a fixture rule's fate keeps the default steps")
	assert.Equal(t, mockserver.Queued, c.get(slowFail).State)
	c.advance(5 * time.Minute)
	run = c.get(errored)
	assert.Equal(t, mockserver.Errored, run.State)
	assert.Equal(t, "internal_error", run.StatusMessage.ErrorCode)
	run = c.get(setupFailed)
	assert.Equal(t, mockserver.Failed, run.State, "a failed environment setup is the caller's side")
	assert.Equal(t, "environment_setup_failed", run.StatusMessage.ErrorCode)
	run = c.get(slowFail)
	assert.Equal(t, mockserver.Errored, run.State)
	assert.Equal(t, "internal_error", run.StatusMessage.ErrorCode)
	assert.True(t, *run.StatusMessage.Retryable, "internal errors are retryable")

	for _, bad := range []string{"state=DONE", "step=fast", "error_code=oops", "colour=blue", "state",
		"state=ERROR; error_code=environment_setup_failed", "state=FAILED; error_code=internal_error"} {
		r := c.do("POST", "/agent/run", map[string]any{"prompt": "x"}, mockserver.FateHeader, bad)
		assert.Equal(t, http.StatusBadRequest, r.status, bad)
		assert.Contains(t, r.problem(t).Detail, mockserver.FateHeader)
	}
}

func TestCancel(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: 10 * time.Second})
	queued := c.create(map[string]any{"prompt": "a"}).RunID
	r := c.do("POST", "/agent/runs/"+queued+"/cancel", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var got string
	r.json(t, &got)
	assert.Equal(t, queued, got, "cancel answers the run id as a JSON string")
	run := c.get(queued)
	assert.Equal(t, mockserver.Cancelled, run.State)
	c.advance(time.Hour)
	assert.Equal(t, mockserver.Cancelled, c.get(queued).State, "a cancelled run stays cancelled")

	again := c.do("POST", "/agent/runs/"+queued+"/cancel", nil)
	assert.Equal(t, http.StatusBadRequest, again.status)
	assert.False(t, again.problem(t).Retryable)

	pending := c.create(map[string]any{"prompt": "b"}).RunID
	c.advance(10 * time.Second)
	r = c.do("POST", "/agent/runs/"+pending+"/cancel", nil)
	assert.Equal(t, http.StatusConflict, r.status)
	assert.True(t, r.problem(t).Retryable)
	assert.Equal(t, "1", r.header.Get("Retry-After"))

	c.advance(10 * time.Second)
	require.Equal(t, mockserver.Claimed, c.get(pending).State)
	require.Equal(t, http.StatusOK, c.do("POST", "/agent/runs/"+pending+"/cancel", nil).status)
	run = c.get(pending)
	assert.Equal(t, mockserver.Cancelled, run.State)
	assert.NotEmpty(t, run.SessionLink, "a run claimed before its cancel keeps its session")

	assert.Equal(t, http.StatusNotFound, c.do("POST", "/agent/runs/nope/cancel", nil).status)

	scheduled := c.list("source=SCHEDULED_AGENT&state=INPROGRESS&state=QUEUED&state=CLAIMED&state=BLOCKED")
	for _, run := range scheduled.Runs {
		r := c.do("POST", "/agent/runs/"+run.RunID+"/cancel", nil)
		assert.Equal(t, http.StatusUnprocessableEntity, r.status, "scheduled fixture runs cannot be cancelled: %s", r.body)
	}
}
