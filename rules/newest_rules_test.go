package rules_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/rules"
)

func look(fields ...any) rules.Look {
	return rules.LookAt(run(fields...), time.Time{}, time.Time{}, "GET /agent/runs/r1")
}

// A follow-up starts an ended run again whatever its end was.
func TestFollowupStartedEndedRun(t *testing.T) {
	for _, end := range []string{"SUCCEEDED", "CANCELLED", "FAILED", "ERROR"} {
		ended := look("state", end)
		assert.Equal(t, []string{rules.FollowupStartsEndedRun}, ids(rules.FollowupStartedEndedRun("body", "r1", "POST f", ended, ended)), "%s left as it was", end)
		assert.Empty(t, rules.FollowupStartedEndedRun("body", "r1", "POST f", ended, look("state", "QUEUED", "updated_at", "2026-01-01T10:00:09Z")), "%s going again", end)
		assert.Empty(t, rules.FollowupStartedEndedRun("body", "r1", "POST f", ended, look("state", end, "updated_at", "2026-01-01T10:00:09Z")), "%s ended again since", end)
	}
	assert.Empty(t, rules.FollowupStartedEndedRun("body", "r1", "POST f", look("state", "INPROGRESS"), look("state", "INPROGRESS")), "a live run is not started again")
}

// A live run taking a follow-up is not sent back, unless its events show
// it had ended first.
func TestFollowupKeptLiveRun(t *testing.T) {
	working := look("state", "INPROGRESS", "started_at", "2026-01-01T10:00:01Z")
	back := look("state", "QUEUED", "started_at", "2026-01-01T10:00:01Z", "updated_at", "2026-01-01T10:00:09Z")
	assert.Equal(t, []string{rules.FollowupKeepsLiveRun}, ids(rules.FollowupKeptLiveRun("body", "r1", "POST f", working, back, nil)), "sent back with no end")
	later := time.Date(2026, 1, 1, 10, 0, 30, 0, time.UTC)
	assert.Equal(t, []string{rules.FollowupKeepsLiveRun}, ids(rules.FollowupKeptLiveRun("body", "r1", "POST f", working, back, []time.Time{later})), "an end after the restart is the new execution's")
	ended := time.Date(2026, 1, 1, 10, 0, 8, 0, time.UTC)
	assert.Empty(t, rules.FollowupKeptLiveRun("body", "r1", "POST f", working, back, []time.Time{ended}), "ended, then started again")
	assert.Empty(t, rules.FollowupKeptLiveRun("body", "r1", "POST f", working, look("state", "SUCCEEDED"), nil), "went on to its end")
	assert.Empty(t, rules.FollowupKeptLiveRun("body", "r1", "POST f", look("state", "QUEUED"), look("state", "QUEUED"), nil), "a queued run still queued")
}

func TestEventsReachPast(t *testing.T) {
	at := func(s string) []time.Time { v, _ := time.Parse(time.RFC3339Nano, s); return []time.Time{v} }
	back := look("updated_at", "2026-01-01T10:00:09Z")
	assert.False(t, rules.EventsReachPast(back, nil), "no events")
	assert.False(t, rules.EventsReachPast(back, at("2026-01-01T10:00:09.5Z")), "within the second it is shown to")
	assert.True(t, rules.EventsReachPast(back, at("2026-01-01T10:00:10Z")))
	fine := look("updated_at", "2026-01-01T10:00:09.123456789Z")
	assert.False(t, rules.EventsReachPast(fine, at("2026-01-01T10:00:09.123456789Z")), "an event at the very moment it went back may be the end")
	assert.True(t, rules.EventsReachPast(fine, at("2026-01-01T10:00:09.12345679Z")))
}

func TestKeptAcrossExecutions(t *testing.T) {
	base := []any{"state", "SUCCEEDED", "started_at", "2026-01-01T10:00:01Z", "prompt", "Fix it", "creator", map[string]any{"uid": "u1", "display_name": "A"},
		"metadata", map[string]any{"k": "v"}, "conversation_id", "c1", "run_time", "PT4S", "is_run_type_cancellable", true,
		"request_usage", map[string]any{"total_tokens": 100.0, "costs": map[string]any{"inference_cost_usd": 0.5}}}
	with := func(more ...any) rules.Look { return look(append(append([]any{}, base...), more...)...) }
	before := with()
	assert.Empty(t, rules.KeptAcrossExecutions("body", "r1", before, with("state", "QUEUED", "run_time", "PT5S", "creator", map[string]any{"uid": "u1"}, "prompt", "Fix")),
		"more run time, a creator shown with less, a prompt shortened by a listing")
	for name, now := range map[string]rules.Look{
		"run_time reset":       with("run_time", "PT0S"),
		"usage reset":          with("request_usage", map[string]any{"total_tokens": 0.0, "costs": map[string]any{"inference_cost_usd": 0.5}}),
		"nested usage shrunk":  with("request_usage", map[string]any{"total_tokens": 100.0, "costs": map[string]any{"inference_cost_usd": 0.1}}),
		"a new conversation":   with("conversation_id", "c2"),
		"started_at lost":      with("started_at", nil),
		"the follow-up's text": with("prompt", "And the docs"),
		"another creator":      with("creator", map[string]any{"uid": "u2"}),
		"metadata dropped":     with("metadata", map[string]any{}),
		"created_at moved":     with("created_at", "2026-01-01T10:00:08Z"),
		"another kind":         with("is_run_type_cancellable", false),
	} {
		assert.Equal(t, []string{rules.RunKeepsItsHistory}, ids(rules.KeptAcrossExecutions("body", "r1", before, now)), name)
	}
}

func TestEndedRunStopped(t *testing.T) {
	ended := look("state", "SUCCEEDED", "run_time", "PT4S", "request_usage", map[string]any{"total_tokens": 100.0}, "executor", map[string]any{"uid": "u1"})
	assert.Empty(t, rules.EndedRunStopped("body", "r1", ended, ended))
	assert.Empty(t, rules.EndedRunStopped("body", "r1", ended, look("state", "SUCCEEDED")), "a listing that shows less")
	for name, now := range map[string]rules.Look{
		"run_time goes on": look("state", "SUCCEEDED", "run_time", "PT5S", "request_usage", map[string]any{"total_tokens": 100.0}),
		"usage goes on":    look("state", "SUCCEEDED", "run_time", "PT4S", "request_usage", map[string]any{"total_tokens": 120.0}),
		"another executor": look("state", "SUCCEEDED", "executor", map[string]any{"uid": "u2"}),
	} {
		assert.Equal(t, []string{rules.EndedRunStopsCounting}, ids(rules.EndedRunStopped("body", "r1", ended, now)), name)
	}
	working := look("state", "INPROGRESS", "run_time", "PT1S")
	assert.Empty(t, rules.EndedRunStopped("body", "r1", working, look("state", "INPROGRESS", "run_time", "PT3S")), "a live run's run_time grows")
}

func TestDerivedAlone(t *testing.T) {
	for _, tc := range []struct {
		name      string
		run       map[string]any
		restarted bool
		want      []string
	}{
		{"a cloud run of a cancellable kind", run("source", "API", "is_run_type_cancellable", true), false, nil},
		{"a LOCAL run of a cancellable kind", run("source", "LOCAL", "is_run_type_cancellable", true), false, []string{rules.DerivedFieldsAgree}},
		{"a GitHub Action run of a cancellable kind", run("source", "GITHUB_ACTION", "is_run_type_cancellable", true), false, []string{rules.DerivedFieldsAgree}},
		{"a run executed locally of a cancellable kind", run("source", "CLI", "execution_location", "LOCAL", "is_run_type_cancellable", true), false, []string{rules.DerivedFieldsAgree}},
		{"a LOCAL run not of a cancellable kind", run("source", "LOCAL", "is_run_type_cancellable", false), false, nil},
		{"run_time not a duration", run("state", "INPROGRESS", "started_at", "2026-01-01T10:00:01Z", "run_time", "150"), false, []string{rules.DerivedFieldsAgree}},
		{"run_time before the start", run("state", "QUEUED", "run_time", "PT2S"), false, []string{rules.DerivedFieldsAgree}},
		{"no run_time before the start", run("state", "QUEUED", "run_time", "PT0S"), false, nil},
		{"an ended run's run_time within its execution", run("state", "SUCCEEDED", "started_at", "2026-01-01T10:00:01Z", "run_time", "PT4S"), false, nil},
		{"an ended run's run_time longer than it lived", run("state", "SUCCEEDED", "started_at", "2026-01-01T10:00:02Z", "run_time", "PT9S"), false, []string{rules.DerivedFieldsAgree}},
		{"a restarted run's summed run_time", run("state", "SUCCEEDED", "started_at", "2026-01-01T10:00:02Z", "run_time", "PT5S"), true, nil},
		{"a run that never started, cancelled", run("state", "CANCELLED", "run_time", "PT0S"), false, nil},
	} {
		assert.Equal(t, tc.want, ids(rules.DerivedAlone("body", tc.run, tc.restarted)), tc.name)
	}
}

func TestOnBehalfOf(t *testing.T) {
	member := map[string]any{"uid": "u1", "email": "a@x"}
	agent := map[string]any{"uid": "agent-1"}
	assert.Empty(t, rules.OnBehalfOf("body", "a@x", run("creator", member, "executor", agent)))
	assert.Empty(t, rules.OnBehalfOf("body", "", run("creator", agent)), "no on_behalf_of")
	assert.Equal(t, []string{rules.OnBehalfOfCreator}, ids(rules.OnBehalfOf("body", "u1", run("creator", agent, "executor", agent))), "the agent kept as creator")
	assert.Equal(t, []string{rules.OnBehalfOfCreator}, ids(rules.OnBehalfOf("body", "u1", run("creator", member, "executor", member))), "the member as executor")
	assert.Equal(t, []string{rules.OnBehalfOfCreator}, ids(rules.OnBehalfOf("body", "u1", run("creator", member))), "no executor: the creator executed it")

	// The proxy reads on_behalf_of from the creation it saw.
	m := rules.NewMemory(rules.Limits{})
	create := exchange("POST", "/agent/runs", 200, map[string]any{"run_id": "r1", "state": "QUEUED"}, 0)
	create.RequestBody = []byte(`{"prompt":"p","on_behalf_of":"u1"}`)
	require.Empty(t, m.Observe(create))
	assert.Equal(t, []string{rules.OnBehalfOfCreator}, ids(m.Observe(exchange("GET", "/agent/runs/r1", 200, run("state", "QUEUED", "creator", agent, "executor", agent), time.Second))))
}

// The executor filter keeps the runs executed by whoever it names; a run
// that shows no executor was executed by its creator.
func TestExecutorFilter(t *testing.T) {
	q, _ := url.ParseQuery("executor=agent-1")
	delegated := run("creator", map[string]any{"uid": "u1"}, "executor", map[string]any{"uid": "agent-1"})
	own := run("creator", map[string]any{"uid": "agent-1"})
	byMember := run("creator", map[string]any{"uid": "u1"})
	assert.Empty(t, rules.ListingMatchesQuery(q, []map[string]any{delegated, own}))
	assert.Equal(t, []string{rules.ListingMatchesFilters}, ids(rules.ListingMatchesQuery(q, []map[string]any{byMember})), "created and so executed by another")
	byCreator, _ := url.ParseQuery("creator=agent-1")
	assert.Equal(t, []string{rules.ListingMatchesFilters}, ids(rules.ListingMatchesQuery(byCreator, []map[string]any{delegated})), "the creator filter answered by executor")
}

func TestAncestorListing(t *testing.T) {
	parents := map[string]string{"c1": "p", "g1": "c1", "p": "", "other": ""}
	parentOf := func(id string) (string, bool) { p, ok := parents[id]; return p, ok }
	q := url.Values{"ancestor_run_id": {"p"}}
	child := map[string]any{"run_id": "c1", "parent_run_id": "p"}
	grandchild := map[string]any{"run_id": "g1"}
	unknown := map[string]any{"run_id": "u9"}
	assert.Empty(t, rules.AncestorListing(q, []map[string]any{child, grandchild, unknown}, parentOf), "descendants at any depth; a run of unknown line")
	assert.Equal(t, []string{rules.AncestorNotItsOwn}, ids(rules.AncestorListing(q, []map[string]any{{"run_id": "p"}}, parentOf)), "the ancestor itself")
	assert.Equal(t, []string{rules.AncestorNotItsOwn}, ids(rules.AncestorListing(q, []map[string]any{{"run_id": "other"}}, parentOf)), "a root that is not it")
	assert.Equal(t, []string{rules.AncestorNotItsOwn}, ids(rules.AncestorListing(url.Values{"ancestor_run_id": {"c1"}}, []map[string]any{child}, parentOf)), "its parent")
	assert.Empty(t, rules.AncestorListing(url.Values{}, []map[string]any{{"run_id": "p"}}, parentOf), "no filter")

	// The proxy learns each run's parent from its creation.
	m := rules.NewMemory(rules.Limits{})
	for _, c := range []struct{ id, body string }{{"p", `{"prompt":"x"}`}, {"c1", `{"prompt":"x","parent_run_id":"p"}`}, {"o", `{"prompt":"x"}`}} {
		ex := exchange("POST", "/agent/runs", 200, map[string]any{"run_id": c.id, "state": "QUEUED"}, 0)
		ex.RequestBody = []byte(c.body)
		require.Empty(t, m.Observe(ex))
	}
	page := func(ids ...string) map[string]any {
		var runs []any
		for _, id := range ids {
			runs = append(runs, run("run_id", id, "state", "QUEUED"))
		}
		return map[string]any{"runs": runs, "page_info": map[string]any{"has_next_page": false}}
	}
	assert.Empty(t, m.Observe(exchange("GET", "/agent/runs?ancestor_run_id=p", 200, page("c1"), time.Second)))
	assert.Equal(t, []string{rules.AncestorNotItsOwn, rules.AncestorNotItsOwn}, ids(m.Observe(exchange("GET", "/agent/runs?ancestor_run_id=p", 200, page("c1", "p", "o"), 2*time.Second))))
}

func TestEmptyFilterAnswer(t *testing.T) {
	assert.Empty(t, rules.EmptyFilterAnswer("executor", 200, []string{"b", "a"}, []string{"a", "b"}), "no filter")
	assert.Empty(t, rules.EmptyFilterAnswer("executor", 400, nil, []string{"a"}), "refused")
	assert.Equal(t, []string{rules.EmptyFilterIsNoFilter}, ids(rules.EmptyFilterAnswer("executor", 200, nil, []string{"a", "b"})), "read as the runs executed by nobody")
}

// The proxy holds a live run sent back by a follow-up once it polled the
// run's events: no end came before it went back.
func TestMemoryJudgesARunSentBackByItsEvents(t *testing.T) {
	working := run("state", "INPROGRESS", "started_at", "2026-01-01T10:00:01Z")
	back := run("state", "QUEUED", "started_at", "2026-01-01T10:00:01Z", "updated_at", "2026-01-01T10:00:09Z")
	for _, tc := range []struct {
		name   string
		events []any
		want   []string
	}{
		{"no end before", []any{
			map[string]any{"run_id": "r1", "event_type": "run_in_progress", "sequence": 1, "occurred_at": "2026-01-01T10:00:01Z"},
			map[string]any{"run_id": "r1", "event_type": "run_succeeded", "sequence": 2, "occurred_at": "2026-01-01T10:00:20Z"}}, []string{rules.FollowupKeepsLiveRun}},
		// A server may list an event a while after it occurred: a poll that
		// reaches no further than before the run went back judges nothing.
		{"events not yet past the moment it went back", []any{map[string]any{"run_id": "r1", "event_type": "run_in_progress", "sequence": 1, "occurred_at": "2026-01-01T10:00:01Z"}}, nil},
		{"ended, then started again", []any{
			map[string]any{"run_id": "r1", "event_type": "run_in_progress", "sequence": 1, "occurred_at": "2026-01-01T10:00:01Z"},
			map[string]any{"run_id": "r1", "event_type": "run_succeeded", "sequence": 2, "occurred_at": "2026-01-01T10:00:08Z"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := rules.NewMemory(rules.Limits{})
			require.Empty(t, m.Observe(exchange("GET", "/agent/runs/r1", 200, working, 0)))
			require.Empty(t, m.Observe(exchange("POST", "/agent/runs/r1/followups", 200, map[string]any{}, time.Second)))
			require.Empty(t, m.Observe(exchange("GET", "/agent/runs/r1", 200, back, 2*time.Second)))
			assert.Equal(t, tc.want, ids(m.Observe(exchange("GET", "/agent/events?run_ids=r1", 200, tc.events, 3*time.Second))))
		})
	}
}

// The suite and the proxy see the derived fields of every run: a run seen
// ended whose run_time goes on is caught across two looks.
func TestMemoryHoldsAnEndedRunsFigures(t *testing.T) {
	m := rules.NewMemory(rules.Limits{})
	ended := run("state", "SUCCEEDED", "started_at", "2026-01-01T10:00:01Z", "run_time", "PT2S")
	require.Empty(t, m.Observe(exchange("GET", "/agent/runs/r1", 200, ended, 0)))
	assert.Equal(t, []string{rules.EndedRunStopsCounting}, ids(m.Observe(exchange("GET", "/agent/runs/r1", 200,
		run("state", "SUCCEEDED", "started_at", "2026-01-01T10:00:01Z", "run_time", "PT3S"), time.Second))))
}

// A run keeps its session link once shown: judged only of a look asked
// after the link was answered. The proxy observes exchanges in the order
// they end, so a look answered before the link was shown may come after
// the linked one.
func TestASessionLinkIsKeptFromWhenItWasShown(t *testing.T) {
	for _, tc := range []struct {
		name       string
		unlinkedAt time.Duration // when the look without a link was sent
		want       []string
	}{
		{"asked after the link was shown", 2 * time.Second, []string{rules.ClaimedRunLinksSession}},
		{"asked before the link was shown, observed after it", 0, nil},
	} {
		m := rules.NewMemory(rules.Limits{})
		create := exchange("POST", "/agent/runs", 200, map[string]any{"run_id": "r1", "state": "QUEUED"}, 0)
		create.RequestBody = []byte(`{"prompt":"p"}`)
		require.Empty(t, m.Observe(create), tc.name)
		linked := exchange("GET", "/agent/runs/r1", 200, run("state", "CLAIMED",
			"session_id", "3f1b8c2e-1111-4222-8333-444455556666", "session_link", "https://example.com/s/3f1b8c2e-1111-4222-8333-444455556666"), time.Second)
		require.Empty(t, m.Observe(linked), tc.name)
		unlinked := exchange("GET", "/agent/runs/r1", 200, run("state", "CLAIMED"), tc.unlinkedAt)
		if tc.unlinkedAt == 0 {
			unlinked.Received = linked.Received.Add(time.Millisecond) // answered after the linked look, asked before it
		}
		assert.Equal(t, tc.want, ids(m.Observe(unlinked)), tc.name)
	}
}
