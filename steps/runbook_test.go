package steps

import (
	"context"
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

// Without --max-runs-at-once, the suite learns the team's capacity from
// the first at_capacity, and a scenario whose own runs fill every place
// goes ahead (waiting would wait for itself).
func TestTheTeamsCapacityIsLearnedFromAtCapacity(t *testing.T) {
	b := newRunBook(0, 0)
	b.every, b.patience = time.Hour, time.Hour
	ctx := context.Background()
	for i, id := range []string{"r1", "r2", "r3"} {
		require.NoError(t, b.reserve(ctx, "A"))
		b.settle("A", "", "Bearer k", created(id, i == 2))
	}
	assert.Equal(t, 2, b.limit(), "two runs were in flight when the third was queued")
	assert.True(t, b.behindCapacity("r3"))
	require.NoError(t, b.reserve(ctx, "A"), "A's own runs fill every place")
	b.settle("A", "", "Bearer k", nil)
	waiting, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, b.reserve(waiting, "B"), context.Canceled, "B waits for a place")
}
