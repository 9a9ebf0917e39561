package mockserver

import "time"

// State is a run's RunState.
type State string

// The run states. A run moves forward through the first four, may wait in
// BLOCKED while in progress, and ends in one of the four terminal states.
const (
	Queued     State = "QUEUED"
	Pending    State = "PENDING"
	Claimed    State = "CLAIMED"
	InProgress State = "INPROGRESS"
	Blocked    State = "BLOCKED"
	Succeeded  State = "SUCCEEDED"
	Failed     State = "FAILED"
	Errored    State = "ERROR"
	Cancelled  State = "CANCELLED"
)

// progression is the order a run passes through before its final state.
var progression = [...]State{Queued, Pending, Claimed, InProgress}

// rank orders states so "only forward" can be checked: a move to a lower rank
// is backwards. BLOCKED shares INPROGRESS's rank because a run goes from one
// to the other and back while a user answers it.
var rank = map[State]int{
	Queued: 0, Pending: 1, Claimed: 2, InProgress: 3, Blocked: 3,
	Succeeded: 4, Failed: 4, Errored: 4, Cancelled: 4,
}

func (s State) valid() bool     { _, ok := rank[s]; return ok }
func (s State) terminal() bool  { return rank[s] == 4 && s.valid() }
func (s State) finalFate() bool { return s == Succeeded || s == Failed || s == Errored }

// stepsOf is how long a run spends in each state of progression.
type stepsOf [len(progression)]time.Duration

// timeline is everything needed to derive a run's state at any instant. It
// starts at anchor in anchorState and, unless that state is terminal or
// BLOCKED, moves through the rest of progression by steps and ends in final.
// Cancelling or forcing a state re-anchors it; nothing runs in the background.
type timeline struct {
	anchor      time.Time
	anchorState State
	steps       stepsOf
	final       State
	// Facts settled before the anchor, kept when a run is re-anchored.
	startedAt  time.Time
	wasClaimed bool
}

// snapshot is a run's derived condition at one instant.
type snapshot struct {
	state     State
	updatedAt time.Time // when the run entered state
	startedAt time.Time // zero until it entered INPROGRESS
	claimed   bool
}

func (tl *timeline) at(now time.Time) snapshot {
	s := snapshot{state: tl.anchorState, updatedAt: tl.anchor, startedAt: tl.startedAt, claimed: tl.wasClaimed}
	idx := -1
	for i, p := range progression {
		if p == s.state {
			idx = i
		}
	}
	for idx >= 0 {
		next := s.updatedAt.Add(tl.steps[idx])
		if now.Before(next) {
			break
		}
		s.updatedAt = next
		if idx+1 < len(progression) {
			idx++
			s.state = progression[idx]
		} else {
			idx = -1
			s.state = tl.final
		}
		if s.state == Claimed {
			s.claimed = true
		}
		if s.state == InProgress && s.startedAt.IsZero() {
			s.startedAt = next
		}
	}
	if s.state == Claimed || s.state == InProgress || s.state == Blocked {
		s.claimed = true
	}
	return s
}

// reanchor makes the run be in state from now on, keeping what it had done.
func (tl *timeline) reanchor(now time.Time, state State) {
	cur := tl.at(now)
	tl.anchor = now
	tl.anchorState = state
	tl.startedAt = cur.startedAt
	tl.wasClaimed = cur.claimed
	if (state == InProgress || state == Blocked) && tl.startedAt.IsZero() {
		tl.startedAt = now
	}
	if state.finalFate() {
		tl.final = state
	}
}
