package steps

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// created is the answer to a create of run id.
func created(id string, atCapacity bool) *response {
	body := `{"run_id":"` + id + `","state":"QUEUED"}`
	if atCapacity {
		body = `{"run_id":"` + id + `","state":"QUEUED","at_capacity":true}`
	}
	return &response{status: http.StatusOK, body: []byte(body)}
}

// Issue 46, point 3: with --max-runs-at-once 2, a third create of another
// scenario waits until one of the two runs in flight is seen to end.
func TestACreateWaitsForAPlaceWhenTheSuitesRunsFillTheTeam(t *testing.T) {
	b := newRunBook(0, 2)
	b.every, b.patience = time.Hour, time.Hour // no looks, no giving up: only a seen end frees a place
	ctx := context.Background()
	for i, id := range []string{"r1", "r2"} {
		require.NoError(t, b.reserve(ctx, "A"), "create %d", i+1)
		b.settle("A", "", "Bearer k", created(id, false))
	}
	third := make(chan error, 1)
	go func() { third <- b.reserve(ctx, "B") }()
	select {
	case err := <-third:
		t.Fatalf("the third create went ahead with two runs in flight (err %v)", err)
	case <-time.After(50 * time.Millisecond): // a wait that must not end: no sleep decides the verdict below
	}
	b.seen("r1", "SUCCEEDED")
	require.NoError(t, <-third)
	b.settle("B", "", "Bearer k", created("r3", false))
	assert.Len(t, b.inFlight, 2)
}

// waits tells whether reserve for scenario is still waiting once the
// others have had their turn; it then cancels the wait.
func waits(t *testing.T, b *runBook, scenario string) bool {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.reserve(ctx, scenario) }()
	select {
	case err := <-done:
		cancel()
		require.NoError(t, err)
		b.settle(scenario, "", "Bearer k", nil) // give the place back
		return false                            // went ahead; only ever asserted to wait, so a slow machine never fails a test here
	case <-time.After(50 * time.Millisecond): // a wait that must not end; no sleep decides a pass
	}
	cancel()
	return errors.Is(<-done, context.Canceled)
}

// Without --max-runs-at-once, creates go one at a time until one says
// at_capacity: the capacity learned is exactly the runs the team took,
// and then it holds, for a scenario's own runs too.
func TestTheTeamsCapacityIsLearnedFromAtCapacity(t *testing.T) {
	b := newRunBook(0, 0)
	b.every, b.patience = time.Hour, time.Hour
	ctx := context.Background()
	require.NoError(t, b.reserve(ctx, "A"))
	assert.True(t, waits(t, b, "B"), "a second create went out before the first was answered, with no capacity known")
	b.settle("A", "", "Bearer k", created("r1", false))
	for i, id := range []string{"r2", "r3", "r4", "r5"} {
		require.NoError(t, b.reserve(ctx, "A"))
		b.settle("A", "", "Bearer k", created(id, i == 3))
	}
	assert.Equal(t, 4, b.limit(), "four runs were in flight when the fifth was queued")
	assert.True(t, b.behindCapacity("r5"))
	assert.True(t, waits(t, b, "A"), "a scenario's own runs fill the team: its next create waits")
	assert.True(t, waits(t, b, "B"), "B waits for a place")
	for _, id := range []string{"r1", "r2"} {
		b.seen(id, "SUCCEEDED")
	}
	// Two ended: three in flight of four. Only a wait that must not end
	// is bounded by a timer; a create that must go ahead is awaited.
	require.NoError(t, b.reserve(ctx, "B"), "two ended: three in flight of four")
	b.settle("B", "", "Bearer k", nil)
	runs := b.bill(func(string, string) (map[string]any, bool) { return nil, false })
	assert.Equal(t, 5, runs.AtOnce, "the most in flight, the one queued to learn the capacity included")
	assert.Equal(t, 4, runs.Capacity)
}

// At a capacity of one, a scenario with one run in flight gets a second
// (messages go between two runs at work); a third waits.
func TestAScenarioGetsTheSecondRunItNeedsAtACapacityOfOne(t *testing.T) {
	b := newRunBook(0, 1)
	b.every, b.patience = time.Hour, time.Hour
	ctx := context.Background()
	require.NoError(t, b.reserve(ctx, "A"))
	b.settle("A", "", "Bearer k", created("r1", false))
	assert.True(t, waits(t, b, "B"))
	require.NoError(t, b.reserve(ctx, "A"))
	b.settle("A", "", "Bearer k", created("r2", true))
	assert.True(t, waits(t, b, "A"))
}

// The wait behind the team's capacity the reports give is what the server
// shows of the runs it queued, from created_at to started_at.
func TestTheWaitBehindCapacityIsWhatTheServerShows(t *testing.T) {
	b := newRunBook(0, 0)
	b.sending++
	b.settle("A", "s", "Bearer k", created("r1", false))
	b.sending++
	b.settle("A", "s", "Bearer k", created("r2", true))
	b.queued(2 * time.Second) // the suite's looks saw little of it
	shown := map[string]map[string]any{
		"r1": {"created_at": "2026-11-28T10:00:00Z", "started_at": "2026-11-28T10:00:01Z"},
		"r2": {"created_at": "2026-11-28T10:00:00.5Z", "started_at": "2026-11-28T10:02:45.5Z"},
	}
	runs := b.bill(func(_, id string) (map[string]any, bool) { doc, ok := shown[id]; return doc, ok })
	assert.Equal(t, 165*time.Second, runs.QueuedBehindCapacity)
}

// The most runs at once the reports give is what the server's timestamps
// show: runs that ended between two of the suite's looks do not count.
func TestTheMostRunsAtOnceIsWhatTheServerShows(t *testing.T) {
	span := func(from, to string) map[string]any {
		doc := map[string]any{"created_at": "2026-11-28T10:00:" + from + "Z", "state": "INPROGRESS"}
		if to != "" {
			doc["state"], doc["updated_at"] = "SUCCEEDED", "2026-11-28T10:00:"+to+"Z"
		}
		return doc
	}
	b := newRunBook(0, 0)
	shown := map[string]map[string]any{
		"r1": span("00", "10"), "r2": span("05", "15"), "r3": span("10", "20"), // r3 begins as r1 ends
		"r4": span("12", ""), // never seen to end
	}
	for _, id := range []string{"r1", "r2", "r3", "r4"} {
		b.sending++
		b.settle("A", "s", "Bearer k", created(id, false))
	}
	runs := b.bill(func(_, id string) (map[string]any, bool) { doc, ok := shown[id]; return doc, ok })
	assert.Equal(t, 3, runs.AtOnce, "r2, r3 and r4 between 12 and 15")
}

// A follow-up to a run that has ended starts it again: it waits for a
// place as a create does, and once accepted the run is in flight again.
// One to a run still in flight takes no place.
func TestAFollowupToAnEndedRunTakesAPlace(t *testing.T) {
	b := newRunBook(0, 1)
	b.every, b.patience = time.Hour, time.Hour
	followup := func(id string) call { return call{method: http.MethodPost, path: "/agent/runs/" + id + "/followups"} }
	require.NoError(t, b.reserve(context.Background(), "A"))
	b.settle("A", "", "Bearer k", created("r1", false))
	_, takes := b.restarts(followup("r1"))
	assert.False(t, takes, "r1 is in flight")
	b.seen("r1", "SUCCEEDED")
	id, takes := b.restarts(followup("r1"))
	require.True(t, takes)
	require.NoError(t, b.reserve(context.Background(), "A"))
	b.settleRestart("A", id, &response{status: http.StatusOK, body: []byte(`{}`)})
	assert.True(t, waits(t, b, "B"), "r1 works again: the team's one place is taken")
	_, takes = b.restarts(call{method: http.MethodGet, path: "/agent/runs/r1/followups"})
	assert.False(t, takes)
}
