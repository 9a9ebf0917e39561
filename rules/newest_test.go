package rules_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/rules"
)

// The newest client's filters hold where the run shows what they name.
func TestNewestFilters(t *testing.T) {
	q, _ := url.ParseQuery("metadata[ticket_id]=VIS-1&automation_id=nightly&executor=u1")
	ok := run("metadata", map[string]any{"ticket_id": "VIS-1", "automation_id": "nightly", "other": "x"}, "executor", map[string]any{"type": "user", "uid": "u1"})
	assert.Empty(t, rules.ListingMatchesQuery(q, []map[string]any{ok}))
	assert.Empty(t, rules.ListingMatchesQuery(q, []map[string]any{run()}), "a run that shows neither metadata nor executor")

	wrong := run("metadata", map[string]any{"ticket_id": "VIS-2"}, "executor", map[string]any{"type": "user", "uid": "u2"})
	vs := rules.ListingMatchesQuery(q, []map[string]any{wrong})
	require.Len(t, vs, 3, "the executor, the pair and the automation: %v", vs)
	fields := []string{vs[0].Field, vs[1].Field, vs[2].Field}
	assert.ElementsMatch(t, []string{"body.runs[0].executor.uid", "body.runs[0].metadata.ticket_id", "body.runs[0].metadata.automation_id"}, fields)

	factory, _ := url.ParseQuery("factory_uid=f1")
	byAgent := run("executor", map[string]any{"type": "service_account", "uid": "ag1"})
	byPerson := run("executor", map[string]any{"type": "user", "uid": "u1"})
	assert.Empty(t, rules.ListingMatchesQuery(factory, []map[string]any{byAgent, run()}))
	assert.Equal(t, []string{rules.ListingMatchesFilters}, ids(rules.ListingMatchesQuery(factory, []map[string]any{byPerson})),
		"a person is no agent of a factory")
}

func TestMetadataKept(t *testing.T) {
	m := rules.NewMemory(rules.Limits{})
	see := func(ex rules.Exchange) []string { return ids(m.Observe(ex)) }
	create := exchange("POST", "/agent/runs", 200, map[string]any{"run_id": "r1", "state": "QUEUED"}, 0)
	create.RequestBody = []byte(`{"prompt":"p","metadata":{"ticket_id":"VIS-1","team":"ui"}}`)
	require.Empty(t, see(create))

	inherited := map[string]any{"ticket_id": "VIS-1", "team": "ui", "from_parent": "yes"}
	assert.Empty(t, see(exchange("GET", "/agent/runs/r1", 200, run("state", "QUEUED", "metadata", inherited), time.Second)), "more keys, inherited, are fine")
	assert.Equal(t, []string{rules.MetadataKept}, see(exchange("GET", "/agent/runs/r1", 200, run("state", "QUEUED"), 2*time.Second)), "dropped")
	changed := map[string]any{"ticket_id": "VIS-2", "team": "ui"}
	page := map[string]any{"runs": []any{run("state", "QUEUED", "metadata", changed)}, "page_info": map[string]any{"has_next_page": false}}
	assert.Equal(t, []string{rules.MetadataKept}, see(exchange("GET", "/agent/runs", 200, page, 3*time.Second)), "changed, in a listing")
}

func TestRunKeepsItsHistory(t *testing.T) {
	m := rules.NewMemory(rules.Limits{})
	see := func(ex rules.Exchange) []string { return ids(m.Observe(ex)) }
	start := "2026-01-01T10:00:01Z"
	ended := run("state", "SUCCEEDED", "started_at", start, "run_time", "PT4.5S", "conversation_id", "c1")
	again := run("state", "QUEUED", "started_at", start, "run_time", "PT4.5S", "conversation_id", "c1", "updated_at", "2026-01-01T10:00:09Z")
	require.Empty(t, see(exchange("GET", "/agent/runs/r1", 200, ended, 0)))
	require.Empty(t, see(exchange("POST", "/agent/runs/r1/followups", 200, map[string]any{}, time.Second)))
	assert.Empty(t, see(exchange("GET", "/agent/runs/r1", 200, again, 2*time.Second)), "started again, its history kept")
	longer := run("state", "SUCCEEDED", "started_at", start, "run_time", "PT1M", "conversation_id", "c1", "updated_at", "2026-01-01T10:01:09Z")
	assert.Empty(t, see(exchange("GET", "/agent/runs/r1", 200, longer, 3*time.Second)))

	for _, tc := range []struct {
		name string
		run  map[string]any
	}{
		{"started_at gone", run("state", "QUEUED", "run_time", "PT1M", "conversation_id", "c1")},
		{"run_time shorter", run("state", "QUEUED", "started_at", start, "run_time", "PT0S", "conversation_id", "c1")},
		{"another conversation", run("state", "QUEUED", "started_at", start, "run_time", "PT1M", "conversation_id", "c2")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := rules.NewMemory(rules.Limits{})
			require.Empty(t, m.Observe(exchange("GET", "/agent/runs/r1", 200, longer, 0)))
			require.Empty(t, m.Observe(exchange("POST", "/agent/runs/r1/followups", 200, map[string]any{}, time.Second)))
			// (a run_time without a started_at breaks the derived fields' rule too)
			assert.Contains(t, ids(m.Observe(exchange("GET", "/agent/runs/r1", 200, tc.run, 2*time.Second))), rules.RunKeepsItsHistory)
		})
	}

	// A look asked before the one that showed a start was answered is not
	// later than it.
	m = rules.NewMemory(rules.Limits{})
	late := exchange("GET", "/agent/runs/r2", 200, run("run_id", "r2", "state", "INPROGRESS", "started_at", start), 0)
	early := exchange("GET", "/agent/runs/r2", 200, run("run_id", "r2", "state", "QUEUED"), -time.Microsecond)
	early.Received = late.Received.Add(time.Millisecond)
	require.Empty(t, m.Observe(late))
	assert.Empty(t, m.Observe(early))
}

func TestFollowupStartsEndedRun(t *testing.T) {
	ended := run("state", "SUCCEEDED", "started_at", "2026-01-01T10:00:01Z", "updated_at", "2026-01-01T10:00:05.250Z")
	// Shown to the second, a run that started again and ended again
	// within that second looks as it was: nothing to judge.
	endedToTheSecond := run("state", "SUCCEEDED", "started_at", "2026-01-01T10:00:01Z", "updated_at", "2026-01-01T10:00:05Z")
	for _, tc := range []struct {
		name   string
		before map[string]any
		after  map[string]any
		want   []string
	}{
		{"going again", ended, run("state", "QUEUED", "started_at", "2026-01-01T10:00:01Z", "updated_at", "2026-01-01T10:00:09Z"), nil},
		{"ended again since", ended, run("state", "SUCCEEDED", "started_at", "2026-01-01T10:00:01Z", "updated_at", "2026-01-01T10:00:09Z"), nil},
		{"as it was", ended, ended, []string{rules.FollowupStartsEndedRun}},
		{"as it was, shown to the second", endedToTheSecond, endedToTheSecond, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := rules.NewMemory(rules.Limits{})
			require.Empty(t, m.Observe(exchange("GET", "/agent/runs/r1", 200, tc.before, 0)))
			require.Empty(t, m.Observe(exchange("POST", "/agent/runs/r1/followups", 200, map[string]any{}, time.Second)))
			assert.Equal(t, tc.want, ids(m.Observe(exchange("GET", "/agent/runs/r1", 200, tc.after, 2*time.Second))))
		})
	}

	// A look asked while the follow-up was on its way may predate it; a
	// follow-up to a run not seen ended need not start anything.
	m := rules.NewMemory(rules.Limits{})
	require.Empty(t, m.Observe(exchange("GET", "/agent/runs/r1", 200, ended, 0)))
	require.Empty(t, m.Observe(exchange("POST", "/agent/runs/r1/followups", 200, map[string]any{}, time.Second)))
	overlapping := exchange("GET", "/agent/runs/r1", 200, ended, time.Second)
	assert.Empty(t, m.Observe(overlapping))
	require.Empty(t, m.Observe(exchange("GET", "/agent/runs/r2", 200, run("run_id", "r2", "state", "INPROGRESS", "started_at", "2026-01-01T10:00:01Z"), 0)))
	require.Empty(t, m.Observe(exchange("POST", "/agent/runs/r2/followups", 200, map[string]any{}, time.Second)))
	assert.Empty(t, m.Observe(exchange("GET", "/agent/runs/r2", 200, run("run_id", "r2", "state", "INPROGRESS", "started_at", "2026-01-01T10:00:01Z"), 2*time.Second)))
}

func TestHandoffFilesOnlyAfterAnEnd(t *testing.T) {
	files := map[string]any{"attachments": []any{map[string]any{"attachment_id": "a", "filename": "w.tar.gz", "download_url": "https://x/a"}}}
	none := map[string]any{"attachments": []any{}}
	created := func(m *rules.Memory) {
		ex := exchange("POST", "/agent/runs", 200, map[string]any{"run_id": "r1", "state": "QUEUED"}, 0)
		ex.RequestBody = []byte(`{"prompt":"p"}`)
		require.Empty(t, m.Observe(ex))
	}
	for _, tc := range []struct {
		name    string
		listing map[string]any
		then    map[string]any
		want    []string
	}{
		{"files, then the run seen queued", files, run("state", "QUEUED"), []string{rules.HandoffFilesAfterAnEnd}},
		{"files, then the run seen ended", files, run("state", "SUCCEEDED", "started_at", "2026-01-01T10:00:01Z"), nil},
		{"no files, then the run seen queued", none, run("state", "QUEUED"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := rules.NewMemory(rules.Limits{})
			created(m)
			require.Empty(t, m.Observe(exchange("GET", "/agent/runs/r1/handoff/attachments", 200, tc.listing, time.Second)))
			assert.Equal(t, tc.want, ids(m.Observe(exchange("GET", "/agent/runs/r1", 200, tc.then, 2*time.Second))))
		})
	}

	// Files of an execution that ended before a follow-up started the run
	// again stay listed while the new one goes on.
	m := rules.NewMemory(rules.Limits{})
	created(m)
	require.Empty(t, m.Observe(exchange("GET", "/agent/runs/r1", 200, run("state", "SUCCEEDED", "started_at", "2026-01-01T10:00:01Z"), time.Second)))
	require.Empty(t, m.Observe(exchange("POST", "/agent/runs/r1/followups", 200, map[string]any{}, 2*time.Second)))
	require.Empty(t, m.Observe(exchange("GET", "/agent/runs/r1/handoff/attachments", 200, files, 3*time.Second)))
	assert.Empty(t, m.Observe(exchange("GET", "/agent/runs/r1", 200, run("state", "QUEUED", "started_at", "2026-01-01T10:00:01Z", "updated_at", "2026-01-01T10:00:09Z"), 4*time.Second)))

	// A run whose creation was not seen may have ended and started again
	// before the observer came.
	m = rules.NewMemory(rules.Limits{})
	require.Empty(t, m.Observe(exchange("GET", "/agent/runs/r1/handoff/attachments", 200, files, time.Second)))
	assert.Empty(t, m.Observe(exchange("GET", "/agent/runs/r1", 200, run("state", "QUEUED"), 2*time.Second)))
}

// A run created through the API links to the session it shows; when it
// shows one is the server's choice.
func TestCreatedRunLinksItsSession(t *testing.T) {
	claimed := run("state", "CLAIMED")
	assert.Empty(t, rules.CreatedRunRules("body", claimed, false), "a session shown late, from INPROGRESS on")
	withSession := run("state", "CLAIMED", "session_id", "s1")
	assert.Equal(t, []string{rules.ClaimedRunLinksSession}, ids(rules.CreatedRunRules("body", withSession, false)))
	withSession["session_link"] = "https://sessions.example.test/s1"
	assert.Empty(t, rules.CreatedRunRules("body", withSession, false))
	assert.Equal(t, []string{rules.ClaimedRunLinksSession}, ids(rules.CreatedRunRules("body", run("state", "SUCCEEDED", "started_at", "2026-01-01T10:00:01Z"), true)),
		"a link shown before is kept")
	assert.Empty(t, rules.CreatedRunRules("body", run("state", "QUEUED"), true), "a run started again by a follow-up has no session yet")
}
