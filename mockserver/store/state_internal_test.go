package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestTimelineDerivesStateFromTheClock(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tl := Timeline{Anchor: t0, AnchorState: Queued, Final: Failed, Steps: Steps{time.Second, 2 * time.Second, time.Second, 5 * time.Second}}
	cases := []struct {
		at      time.Duration
		state   State
		entered time.Duration
	}{
		{0, Queued, 0},
		{999 * time.Millisecond, Queued, 0},
		{time.Second, Pending, time.Second},
		{3 * time.Second, Claimed, 3 * time.Second},
		{4 * time.Second, InProgress, 4 * time.Second},
		{9 * time.Second, Failed, 9 * time.Second},
		{time.Hour, Failed, 9 * time.Second},
	}
	for _, c := range cases {
		s := tl.At(t0.Add(c.at))
		assert.Equal(t, c.state, s.State, "at %v", c.at)
		assert.Equal(t, t0.Add(c.entered), s.UpdatedAt, "entered at %v", c.at)
	}
	s := tl.At(t0.Add(time.Hour))
	assert.Equal(t, t0.Add(4*time.Second), s.StartedAt)
	assert.True(t, s.Claimed)

	// A cancel while queued ends the run there: no session, never started.
	tl2 := tl
	tl2.reanchor(t0.Add(500*time.Millisecond), Cancelled)
	s = tl2.At(t0.Add(time.Hour))
	assert.Equal(t, Cancelled, s.State)
	assert.False(t, s.Claimed)
	assert.True(t, s.StartedAt.IsZero())
	assert.Equal(t, t0.Add(500*time.Millisecond), s.UpdatedAt)

	// Forcing INPROGRESS starts the run now and lets it go on from there.
	tl3 := tl
	tl3.reanchor(t0.Add(500*time.Millisecond), InProgress)
	s = tl3.At(t0.Add(6 * time.Second))
	assert.Equal(t, Failed, s.State)
	assert.Equal(t, t0.Add(500*time.Millisecond), s.StartedAt)
}

func TestStateRanksOnlyForward(t *testing.T) {
	order := []State{Queued, Pending, Claimed, InProgress, Succeeded}
	for i := 1; i < len(order); i++ {
		assert.Less(t, rank[order[i-1]], rank[order[i]])
	}
	assert.Equal(t, rank[InProgress], rank[Blocked])
	for _, s := range []State{Succeeded, Failed, Errored, Cancelled} {
		assert.True(t, s.Terminal(), s)
	}
	assert.False(t, Blocked.Terminal())
}

func TestTerminalIsTheLastRank(t *testing.T) {
	for s, r := range rank {
		if s.Terminal() != (r == 4) {
			t.Errorf("%s: Terminal() = %v, rank %d", s, s.Terminal(), r)
		}
	}
	if State("NOPE").Terminal() || State("").Terminal() {
		t.Error("a state that is not one is terminal")
	}
}
