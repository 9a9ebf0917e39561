package rules_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/rules"
)

func ids(vs []rules.Violation) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Rule)
	}
	return out
}

func run(fields ...any) map[string]any {
	m := map[string]any{"run_id": "r1", "created_at": "2026-01-01T10:00:00Z", "updated_at": "2026-01-01T10:00:05Z"}
	for i := 0; i+1 < len(fields); i += 2 {
		m[fields[i].(string)] = fields[i+1]
	}
	return m
}

func TestRunAlone(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  map[string]any
		want []string
	}{
		{"a queued run", run("state", "QUEUED"), nil},
		{"a failed run with its code", run("state", "FAILED", "status_message", map[string]any{"message": "m", "error_code": "e"}), nil},
		{"a failed run without a code", run("state", "FAILED", "status_message", map[string]any{"message": "m"}), []string{rules.EndedRunSaysWhy}},
		{"an errored run without a message", run("state", "ERROR"), []string{rules.EndedRunSaysWhy}},
		{"a pending run already started", run("state", "PENDING", "started_at", "2026-01-01T10:00:01Z"), []string{rules.StartedAtFitsState}},
		{"a run in progress not started", run("state", "INPROGRESS"), []string{rules.StartedAtFitsState}},
		{"updated before created", run("state", "QUEUED", "updated_at", "2026-01-01T09:00:00Z"), []string{rules.TimestampsOrdered}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ids(rules.RunAlone("body", tc.run)))
		})
	}
}

func TestMovedOn(t *testing.T) {
	t0 := time.Now()
	look := func(state string, at time.Duration) rules.Look {
		return rules.Look{State: state, Sent: t0.Add(at), Received: t0.Add(at + time.Millisecond), Request: "GET"}
	}
	assert.Empty(t, rules.MovedOn("body", "r", look("QUEUED", 0), look("INPROGRESS", time.Second)))
	assert.Empty(t, rules.MovedOn("body", "r", look("BLOCKED", 0), look("INPROGRESS", time.Second)))
	assert.Equal(t, []string{rules.StatesMoveForward}, ids(rules.MovedOn("body", "r", look("CLAIMED", 0), look("PENDING", time.Second))))
	assert.Equal(t, []string{rules.TerminalRunNeverChanges}, ids(rules.MovedOn("body", "r", look("SUCCEEDED", 0), look("FAILED", time.Second))))
}

func TestListingRules(t *testing.T) {
	q, _ := url.ParseQuery("state=QUEUED&model_id=gpt-5&created_after=2026-01-01T10:00:00Z&sort_by=created_at&sort_order=asc&limit=2")
	ok := run("state", "QUEUED", "created_at", "2026-01-01T10:00:01Z", "agent_config", map[string]any{"model_id": "gpt-5"})
	assert.Empty(t, rules.ListingMatchesQuery(q, []map[string]any{ok}))
	wrong := run("state", "SUCCEEDED", "created_at", "2026-01-01T09:59:59Z", "agent_config", map[string]any{"model_id": "auto"})
	assert.Equal(t, []string{rules.ListingMatchesFilters, rules.ListingMatchesFilters, rules.ListingMatchesFilters},
		ids(rules.ListingMatchesQuery(q, []map[string]any{wrong})), "state, model_id and the time bound")
	atTheInstant := run("state", "QUEUED", "created_at", "2026-01-01T10:00:00.000Z", "agent_config", map[string]any{"model_id": "gpt-5"})
	assert.Empty(t, rules.ListingMatchesQuery(q, []map[string]any{atTheInstant}),
		"shown to the millisecond, a run at the bound's instant may have been created a fraction after it")
	q.Set("created_after", "2026-01-01T10:00:00.0005Z")
	assert.Equal(t, []string{rules.ListingMatchesFilters}, ids(rules.ListingMatchesQuery(q, []map[string]any{run("state", "QUEUED", "created_at", "2026-01-01T09:59:59.999Z")})),
		"a run whose every possible instant is before the bound")

	older := run("created_at", "2026-01-01T09:00:00Z")
	assert.Empty(t, rules.ListingInOrder(q, []map[string]any{older, ok}))
	assert.Equal(t, []string{rules.ListingOrdered}, ids(rules.ListingInOrder(q, []map[string]any{ok, older})))
	assert.Equal(t, []string{rules.PageWithinLimit}, ids(rules.PageWithin(q, []map[string]any{ok, ok, ok})))
	assert.Empty(t, rules.PageWithin(url.Values{}, make([]map[string]any, 20)))
	assert.Equal(t, []string{rules.PageWithinLimit}, ids(rules.PageWithin(url.Values{}, make([]map[string]any, 21))))
}

func TestProblemAndRefusal(t *testing.T) {
	assert.Empty(t, rules.ProblemStatus(404, map[string]any{"status": 404.0}))
	assert.Equal(t, []string{rules.ProblemStatusMatches}, ids(rules.ProblemStatus(404, map[string]any{"status": 500.0})))
	assert.Empty(t, rules.Refused(400, []string{"query.limit: must be at least 1"}))
	assert.Empty(t, rules.Refused(200, nil))
	assert.Equal(t, []string{rules.InvalidRequestRefused}, ids(rules.Refused(200, []string{"query.limit: must be at least 1"})))
}

// exchange builds what an observer saw: a request sent at +at, answered a
// millisecond later.
func exchange(method, target string, status int, body any, at time.Duration) rules.Exchange {
	u, _ := url.Parse(target)
	data, _ := json.Marshal(body)
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	return rules.Exchange{Method: method, Path: u.Path, Query: u.Query(), Caller: "alice", Status: status, Body: data,
		Sent: t0.Add(at), Received: t0.Add(at + time.Millisecond), Request: method + " " + target}
}

func TestMemoryAcrossAnswers(t *testing.T) {
	m := rules.NewMemory(rules.Limits{})
	see := func(ex rules.Exchange) []string { return ids(m.Observe(ex)) }

	require.Empty(t, see(exchange("GET", "/agent/runs/r1", 200, run("state", "SUCCEEDED"), 0)))
	assert.Equal(t, []string{rules.TerminalRunNeverChanges}, see(exchange("GET", "/agent/runs/r1", 200, run("state", "CANCELLED"), time.Second)))

	// A state forced through the mock's control API is no server moving a run.
	require.Empty(t, see(exchange("GET", "/agent/runs/r2", 200, run("run_id", "r2", "state", "CLAIMED", "session_link", "x"), 0)))
	require.Empty(t, see(exchange("POST", "/__mock/runs/r2/state", 200, map[string]any{}, time.Second)))
	assert.Empty(t, see(exchange("GET", "/agent/runs/r2", 200, run("run_id", "r2", "state", "QUEUED"), 2*time.Second)))

	// A cancel accepted must cancel: the run may take a while, but it ends
	// CANCELLED.
	require.Empty(t, see(exchange("POST", "/agent/runs/r3/cancel", 200, "r3", 0)))
	assert.Empty(t, see(exchange("GET", "/agent/runs/r3", 200, run("run_id", "r3", "state", "INPROGRESS", "started_at", "2026-01-01T10:00:01Z"), time.Second)), "not yet")
	assert.Equal(t, []string{rules.AcceptedCancelCancels}, see(exchange("GET", "/agent/runs/r3", 200, run("run_id", "r3", "state", "SUCCEEDED", "started_at", "2026-01-01T10:00:01Z"), 2*time.Second)))
	require.Empty(t, see(exchange("POST", "/agent/runs/r9/cancel", 200, "r9", 0)))
	assert.Empty(t, see(exchange("GET", "/agent/runs/r9", 200, run("run_id", "r9", "state", "CANCELLED"), time.Second)))

	// A run refused to a caller is never listed to it.
	require.Empty(t, see(exchange("GET", "/agent/runs/r4", http.StatusForbidden, map[string]any{"status": 403}, 0)))
	page := map[string]any{"runs": []any{run("run_id", "r4", "state", "QUEUED")}, "page_info": map[string]any{"has_next_page": false}}
	assert.Equal(t, []string{rules.RefusedRunNeverListed}, see(exchange("GET", "/agent/runs", 200, page, time.Second)))

	// A walk in creation order never repeats a run, and a promised page has runs.
	p1 := map[string]any{"runs": []any{run("run_id", "a", "state", "QUEUED")}, "page_info": map[string]any{"has_next_page": true, "next_cursor": "c1"}}
	p2 := map[string]any{"runs": []any{run("run_id", "a", "state", "QUEUED")}, "page_info": map[string]any{"has_next_page": true, "next_cursor": "c2"}}
	p3 := map[string]any{"runs": []any{}, "page_info": map[string]any{"has_next_page": false}}
	require.Empty(t, see(exchange("GET", "/agent/runs?sort_by=created_at&limit=1", 200, p1, 0)))
	assert.Equal(t, []string{rules.WalkNeverRepeats}, see(exchange("GET", "/agent/runs?sort_by=created_at&limit=1&cursor=c1", 200, p2, time.Second)))
	assert.Equal(t, []string{rules.NextPageHasRuns}, see(exchange("GET", "/agent/runs?sort_by=created_at&limit=1&cursor=c2", 200, p3, 2*time.Second)))

	// Events: renumbered, they are lost from a later poll.
	ev := func(seq float64) map[string]any {
		return map[string]any{"run_id": "r5", "event_type": "run_in_progress", "occurred_at": "2026-01-01T10:00:01Z", "sequence": seq}
	}
	require.Empty(t, see(exchange("GET", "/agent/events?run_ids=r5", 200, []any{ev(1)}, 0)))
	assert.Equal(t, []string{rules.EventsNeverChange}, see(exchange("GET", "/agent/events?run_ids=r5", 200, []any{ev(7)}, time.Second)))
	assert.Equal(t, []string{rules.EventsOrdered}, see(exchange("GET", "/agent/events?run_ids=r6", 200, []any{ev(3), ev(2)}, 2*time.Second)))
}

// Two looks whose requests overlapped are not ordered: a server answering
// an older state to the request that was sent first breaks nothing.
func TestOverlappingLooksAreNotOrdered(t *testing.T) {
	m := rules.NewMemory(rules.Limits{})
	late := exchange("GET", "/agent/runs/r1", 200, run("state", "INPROGRESS", "started_at", "2026-01-01T10:00:01Z"), 0)
	early := exchange("GET", "/agent/runs/r1", 200, run("state", "QUEUED"), -time.Microsecond)
	early.Received = late.Received.Add(time.Millisecond)
	require.Empty(t, m.Observe(late))
	assert.Empty(t, m.Observe(early))
}

// The memory forgets its oldest runs past its limit: it then misses, never
// invents, a violation.
func TestMemoryIsBounded(t *testing.T) {
	m := rules.NewMemory(rules.Limits{Runs: 2})
	require.Empty(t, m.Observe(exchange("GET", "/agent/runs/r1", 200, run("state", "SUCCEEDED"), 0)))
	for _, id := range []string{"r2", "r3"} {
		require.Empty(t, m.Observe(exchange("GET", "/agent/runs/"+id, 200, run("run_id", id, "state", "QUEUED"), time.Second)))
	}
	assert.Empty(t, m.Observe(exchange("GET", "/agent/runs/r1", 200, run("state", "FAILED", "status_message", map[string]any{"message": "m", "error_code": "e"}), 2*time.Second)))
}

// A follow-up may start an ended run again: QUEUED once more, with the
// started_at of its first execution. Without one, that is a violation.
func TestMemoryFollowUpStartsAnEndedRunAgain(t *testing.T) {
	m := rules.NewMemory(rules.Limits{})
	see := func(ex rules.Exchange) []string { return ids(m.Observe(ex)) }
	ended := run("state", "SUCCEEDED", "started_at", "2026-01-01T10:00:01Z")
	again := run("state", "QUEUED", "started_at", "2026-01-01T10:00:01Z", "updated_at", "2026-01-01T10:00:05Z")

	settled := func() (out []string) {
		for _, u := range m.Settle(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)) {
			out = append(out, ids(u.Violations)...)
		}
		return out
	}

	// Held until settled: a follow-up not yet seen may explain it.
	require.Empty(t, see(exchange("GET", "/agent/runs/r1", 200, ended, 0)))
	assert.Empty(t, see(exchange("GET", "/agent/runs/r1", 200, again, time.Second)))
	assert.Contains(t, settled(), rules.StartedAtFitsState, "no follow-up was sent")
	assert.Empty(t, settled(), "settled once")

	ended["run_id"], again["run_id"] = "r2", "r2"
	require.Empty(t, see(exchange("GET", "/agent/runs/r2", 200, ended, 0)))
	require.Empty(t, see(exchange("POST", "/agent/runs/r2/followups", 200, map[string]any{}, time.Second)))
	assert.Empty(t, see(exchange("GET", "/agent/runs/r2", 200, again, 2*time.Second)))

	// The look that shows the follow-up's effect may end before the
	// follow-up does, and reach the memory first: the follow-up explains it.
	ended["run_id"], again["run_id"] = "r3", "r3"
	require.Empty(t, see(exchange("GET", "/agent/runs/r3", 200, ended, 0)))
	followup := exchange("POST", "/agent/runs/r3/followups", 200, map[string]any{}, time.Second)
	followup.Received = followup.Sent.Add(3 * time.Second)
	assert.Empty(t, see(exchange("GET", "/agent/runs/r3", 200, again, 2*time.Second)))
	require.Empty(t, see(followup))
	assert.Empty(t, settled(), "the follow-up explained the look")
}

// A follow-up and another request can cross: the server takes the
// follow-up at some moment between its sending and its answer, so what
// was asked or occurred before the answer may be of the execution before.
// Only what comes after the answer binds the run's new execution.
func TestAnswersThatCrossAFollowupBindNothingAfterIt(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	at := func(ex rules.Exchange, sent, received time.Duration) rules.Exchange {
		ex.Sent, ex.Received = t0.Add(sent), t0.Add(received)
		return ex
	}
	ended := run("state", "ERROR", "started_at", nil, "updated_at", "2026-01-01T10:00:01Z",
		"status_message", map[string]any{"message": "No worker could take the run.", "error_code": "resource_unavailable"})
	again := run("state", "PENDING", "started_at", nil, "updated_at", "2026-01-01T10:00:09Z")
	followup := at(exchange("POST", "/agent/runs/r1/followups", 200, map[string]any{}, 0), 2*time.Second, 4*time.Second)

	// A look asked before the follow-up was answered, answered after it.
	m := rules.NewMemory(rules.Limits{})
	require.Empty(t, m.Observe(followup))
	require.Empty(t, m.Observe(at(exchange("GET", "/agent/runs/r1", 200, ended, 0), 3*time.Second, 5*time.Second)))
	assert.Empty(t, ids(m.Observe(exchange("GET", "/agent/runs/r1", 200, again, 6*time.Second))))

	// An end event that occurred while the follow-up was on its way.
	endedAt := func(event string, occurred time.Duration) []any {
		return []any{map[string]any{"run_id": "r1", "sequence": 1, "event_type": event, "occurred_at": t0.Add(occurred).Format(time.RFC3339Nano)}}
	}
	m = rules.NewMemory(rules.Limits{})
	require.Empty(t, m.Observe(followup))
	require.Empty(t, m.Observe(exchange("GET", "/agent/events?run_ids=r1", 200, endedAt("run_succeeded", 3*time.Second), 5*time.Second)))
	assert.Empty(t, ids(m.Observe(exchange("GET", "/agent/runs/r1", 200, run("state", "CANCELLED"), 6*time.Second))))

	// An end event after the answer is of the new execution, and binds.
	m = rules.NewMemory(rules.Limits{})
	require.Empty(t, m.Observe(followup))
	require.Empty(t, m.Observe(exchange("GET", "/agent/events?run_ids=r1", 200, endedAt("run_succeeded", 4500*time.Millisecond), 5*time.Second)))
	assert.Equal(t, []string{rules.EventsTellTheEnd}, ids(m.Observe(exchange("GET", "/agent/runs/r1", 200, run("state", "CANCELLED"), 6*time.Second))))

	// A look asked after the answer is the baseline of the looks after it.
	m = rules.NewMemory(rules.Limits{})
	require.Empty(t, m.Observe(followup))
	require.Empty(t, m.Observe(exchange("GET", "/agent/runs/r1", 200, run("state", "SUCCEEDED", "started_at", "2026-01-01T10:00:01Z"), 5*time.Second)))
	assert.Contains(t, ids(m.Observe(exchange("GET", "/agent/runs/r1", 200, again, 6*time.Second))), rules.TerminalRunNeverChanges)
}
