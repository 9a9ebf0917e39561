package rules_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/rules"
)

func TestCatalogueRules(t *testing.T) {
	models := func(def string) map[string]any {
		return map[string]any{"default_model_id": def, "models": []any{map[string]any{"id": "auto"}, map[string]any{"id": "gpt-5"}}}
	}
	assert.Empty(t, rules.DefaultModelIn(models("gpt-5")))
	assert.Equal(t, []string{rules.DefaultModelListed}, ids(rules.DefaultModelIn(models("nobody-has-it"))))

	env := func(uid, name, updated string) map[string]any {
		return map[string]any{"uid": uid, "last_updated": updated, "config": map[string]any{"name": name}}
	}
	older, newer := env("e1", "web-app", "2026-01-01T10:00:00Z"), env("e2", "backend", "2026-01-02T10:00:00Z")
	assert.Empty(t, rules.EnvironmentsInOrder(url.Values{}, []map[string]any{newer, older}))
	assert.Equal(t, []string{rules.EnvironmentsOrdered}, ids(rules.EnvironmentsInOrder(url.Values{}, []map[string]any{older, newer})))
	byName := url.Values{"sort_by": {"name"}}
	assert.Empty(t, rules.EnvironmentsInOrder(byName, []map[string]any{newer, env("e3", "Data", "2026-01-01T00:00:00Z"), older}), "case is ignored")
	assert.Equal(t, []string{rules.EnvironmentsOrdered}, ids(rules.EnvironmentsInOrder(byName, []map[string]any{older, newer})))

	skills := func(names ...string) []map[string]any {
		var out []map[string]any
		for _, n := range names {
			out = append(out, map[string]any{"name": n})
		}
		return out
	}
	assert.Empty(t, rules.SkillsInOrder(url.Values{}, skills("changelog", "Release", "triage")))
	assert.Equal(t, []string{rules.SkillsOrdered}, ids(rules.SkillsInOrder(url.Values{}, skills("triage", "changelog"))))
	assert.Empty(t, rules.SkillsInOrder(url.Values{"sort_by": {"last_run"}}, skills("triage", "changelog")))
}

func TestArtifactConversationAndScheduleRules(t *testing.T) {
	plan := func(content string) map[string]any {
		return map[string]any{"artifact_type": "PLAN", "data": map[string]any{"content": content}}
	}
	assert.Empty(t, rules.PlanContent(plan("# Plan")))
	assert.Equal(t, []string{rules.PlanHasContent}, ids(rules.PlanContent(plan(" "))))
	assert.Empty(t, rules.PlanContent(map[string]any{"artifact_type": "SCREENSHOT", "data": map[string]any{}}))

	msg := func(role, text, at string) any {
		return map[string]any{"role": role, "timestamp": at, "content": []any{map[string]any{"type": "text", "text": text}}}
	}
	conv := func(msgs ...any) map[string]any {
		return map[string]any{"conversation_id": "c1", "steps": []any{map[string]any{"id": "s1", "messages": msgs, "steps": []any{}}}}
	}
	inOrder := conv(msg("user", "Fix the build", "2026-01-01T10:00:00Z"), msg("assistant", "Done", "2026-01-01T10:00:05Z"))
	assert.Empty(t, rules.ConversationInOrder(inOrder))
	assert.True(t, rules.ConversationHolds(inOrder, "Fix the build"))
	assert.False(t, rules.ConversationHolds(inOrder, "Done"), "only the user's messages hold prompts")
	reversed := conv(msg("assistant", "Done", "2026-01-01T10:00:05Z"), msg("user", "Fix the build", "2026-01-01T10:00:00Z"))
	assert.Equal(t, []string{rules.ConversationInTimeOrder}, ids(rules.ConversationInOrder(reversed)))

	scheduled := func(id, created string) map[string]any {
		return map[string]any{"run_id": id, "created_at": created, "schedule": map[string]any{"schedule_id": "s1"}}
	}
	day1, day2 := scheduled("a", "2026-01-01T03:00:00Z"), scheduled("b", "2026-01-02T03:00:00Z")
	assert.Empty(t, rules.OneRunPerTick([]map[string]any{day1, day2}))
	assert.Equal(t, []string{rules.ScheduleOneRunPerTick}, ids(rules.OneRunPerTick([]map[string]any{day1, scheduled("twin", "2026-01-01T03:00:00Z")})))
	assert.Equal(t, []string{rules.ListingMatchesFilters}, ids(rules.ListingMatchesQuery(url.Values{"schedule_id": {"s2"}}, []map[string]any{day1})))
}

func TestResourceMemory(t *testing.T) {
	m := rules.NewMemory(rules.Limits{})
	see := func(ex rules.Exchange) []string { return ids(m.Observe(ex)) }
	withBody := func(ex rules.Exchange, body string) rules.Exchange { ex.RequestBody = []byte(body); return ex }

	// An environment follows the runs created in it.
	require.Empty(t, see(withBody(exchange("POST", "/agent/run", 200, map[string]any{"run_id": "r1"}, 0), `{"prompt":"p","config":{"environment_id":"e1"}}`)))
	envs := func(last any) map[string]any {
		return map[string]any{"environments": []any{map[string]any{"uid": "e1", "last_updated": "2026-01-01T10:00:00Z", "last_task_created": last}}}
	}
	assert.Empty(t, see(exchange("GET", "/agent/environments", 200, envs(map[string]any{"id": "r1", "created_at": "2026-01-01T10:00:00Z"}), time.Second)))
	assert.Empty(t, see(exchange("GET", "/agent/environments", 200, envs(nil), 2*time.Second)), "last_task_created is optional")
	require.Empty(t, see(exchange("GET", "/agent/runs/r1", 200, run("state", "QUEUED", "agent_config", map[string]any{"environment_id": "e1"}), 3*time.Second)))
	assert.Equal(t, []string{rules.EnvironmentShowsNewestRun}, see(exchange("GET", "/agent/environments", 200, envs(map[string]any{"id": "r0", "created_at": "2026-01-01T09:00:00Z"}), 4*time.Second)),
		"an older run than one seen created there")

	// A deleted identity stays gone.
	require.Empty(t, see(exchange("DELETE", "/agent/identities/ag1", 204, nil, 0)))
	assert.Equal(t, []string{rules.DeletedIdentityGone}, see(exchange("GET", "/agent/identities", 200, map[string]any{"agents": []any{map[string]any{"uid": "ag1"}}}, time.Second)))
	assert.Equal(t, []string{rules.DeletedIdentityGone}, see(exchange("GET", "/agent/identities/ag1", 200, map[string]any{"uid": "ag1"}, time.Second)))

	// A message's times are set once.
	read := func(at string) map[string]any {
		return map[string]any{"message_id": "m1", "delivered_at": at, "read_at": at}
	}
	require.Empty(t, see(exchange("POST", "/agent/messages/m1/read", 200, read("2026-01-01T10:00:01Z"), 0)))
	assert.Empty(t, see(exchange("GET", "/agent/messages/r9", 200, []any{read("2026-01-01T10:00:01Z")}, time.Second)))
	assert.Equal(t, []string{rules.MessageTimesSetOnce, rules.MessageTimesSetOnce}, see(exchange("POST", "/agent/messages/m1/read", 200, read("2026-01-01T10:00:02Z"), 2*time.Second)))

	// A finished run takes no message.
	require.Empty(t, see(exchange("GET", "/agent/runs/r7", 200, run("run_id", "r7", "state", "CANCELLED"), 0)))
	send := `{"to":["r7"],"subject":"s","body":"b","sender_run_id":"r1"}`
	assert.Equal(t, []string{rules.FinishedRunTakesNoMessage}, see(withBody(exchange("POST", "/agent/messages", 200, map[string]any{"message_ids": []any{"m2"}}, time.Second), send)))

	// A conversation holds every run that ended in it.
	require.Empty(t, see(withBody(exchange("POST", "/agent/run", 200, map[string]any{"run_id": "r8"}, 0), `{"prompt":"Write the migration"}`)))
	require.Empty(t, see(exchange("GET", "/agent/runs/r8", 200, run("run_id", "r8", "state", "SUCCEEDED", "conversation_id", "c8"), time.Second)))
	step := func(text string) map[string]any {
		return map[string]any{"conversation_id": "c8", "steps": []any{map[string]any{"id": "s", "steps": []any{},
			"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}}}}}}
	}
	assert.Empty(t, see(exchange("GET", "/agent/conversations/c8", 200, step("Write the migration"), 2*time.Second)))
	assert.Equal(t, []string{rules.ConversationKeepsItsRuns}, see(exchange("GET", "/agent/conversations/c8", 200, step("Now add a rollback"), 3*time.Second)))
}
