package store

import (
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

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

// statesByJSON are the states by their JSON.
var statesByJSON = func() map[string]State {
	m := map[string]State{}
	for s := range rank {
		m[`"`+string(s)+`"`] = s
	}
	return m
}()

// UnmarshalJSONFrom reads a state as the constant it names, for Load's
// decoder: a state file of a hundred thousand runs would otherwise make
// two or three strings per run, each a copy of one of nine.
func (s *State) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() == '"' {
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if known, ok := statesByJSON[string(v)]; ok {
			*s = known
			return nil
		}
		str, err := jsontext.AppendUnquote(nil, v)
		*s = State(str)
		return err
	}
	var str string
	err := jsonv2.UnmarshalDecode(dec, &str)
	*s = State(str)
	return err
}

// Valid reports whether s is a run state of the API.
func (s State) Valid() bool { _, ok := rank[s]; return ok }

// Terminal reports whether a run in s has stopped for good: the states of
// rank 4. Written out rather than looked up, as every run shown asks.
func (s State) Terminal() bool {
	return s == Succeeded || s == Failed || s == Errored || s == Cancelled
}

// FinalFate reports whether s is a way a run can end on its own (not cancelled).
func (s State) FinalFate() bool { return s == Succeeded || s == Failed || s == Errored }

// States lists every run state.
func States() []State {
	out := make([]State, 0, len(rank))
	for s := range rank {
		out = append(out, s)
	}
	return out
}

// Steps is how long a run spends in each state of progression. Saved as
// nanoseconds, exact where a duration string could round.
type Steps [len(progression)]time.Duration

// Timeline is everything needed to derive a run's state at any instant. It
// starts at anchor in anchorState and, unless that state is terminal or
// BLOCKED, moves through the rest of progression by steps and ends in final.
// Cancelling or forcing a state re-anchors it; nothing runs in the background.
type Timeline struct {
	Anchor      time.Time `json:"anchor"`
	AnchorState State     `json:"anchor_state"`
	Steps       Steps     `json:"steps_ns" load:"readSteps"`
	Final       State     `json:"final"`
	// Facts settled before the anchor, kept when a run is re-anchored.
	StartedAt  time.Time `json:"started_at,omitzero"`
	WasClaimed bool      `json:"was_claimed,omitempty"`
	// Execution counts the executions before the current one: a follow-up
	// to a run that has ended starts it again (followups.go). PriorRun is
	// how long those executions ran, and ExecStart when the current one
	// entered INPROGRESS (zero until it does). Files from before follow-ups
	// have none of the three: their only execution started at StartedAt.
	Execution int32         `json:"execution,omitempty"`
	PriorRun  time.Duration `json:"prior_run_ns,omitempty"`
	ExecStart time.Time     `json:"exec_started_at,omitzero"`
}

// execStart is when the current execution entered INPROGRESS, as stored.
func (tl *Timeline) execStart() time.Time {
	if tl.ExecStart.IsZero() && tl.Execution == 0 {
		return tl.StartedAt
	}
	return tl.ExecStart
}

// Snapshot is a run's derived condition at one instant.
type Snapshot struct {
	State     State
	UpdatedAt time.Time // when the run entered State
	StartedAt time.Time // zero until it entered INPROGRESS
	Claimed   bool      // it has a worker, so it shows its agent session
	// ExecStartedAt is when the current execution entered INPROGRESS, zero
	// until it does; RunTime is how long the run has executed, every
	// execution together, up to UpdatedAt (so it changes only when the
	// run does, like the rest of it).
	ExecStartedAt time.Time
	RunTime       time.Duration
}

// MaxRunTime is the most run time a run shows, every execution together. A
// mock clock spans eight thousand years, more than a time.Duration holds,
// so a run left in progress across such moves shows this instead of a sum
// that overflowed.
const MaxRunTime = 100 * 365 * 24 * time.Hour

// progressionIndex is where s stands in progression, or -1.
func progressionIndex(s State) int {
	for i, p := range progression {
		if p == s {
			return i
		}
	}
	return -1
}

// At derives the run's condition at now. The walk takes at most one pass
// over progression, whatever the steps hold: it ends even on a timeline
// no check has seen.
func (tl *Timeline) At(now time.Time) Snapshot {
	s := Snapshot{State: tl.AnchorState, UpdatedAt: tl.Anchor, StartedAt: tl.StartedAt, Claimed: tl.WasClaimed, ExecStartedAt: tl.execStart()}
	for idx := progressionIndex(s.State); idx >= 0 && idx < len(progression); idx++ {
		next := s.UpdatedAt.Add(tl.Steps[idx])
		if now.Before(next) {
			break
		}
		s.UpdatedAt = next
		s.State = tl.Final
		if idx+1 < len(progression) {
			s.State = progression[idx+1]
		}
		if s.State == Claimed {
			s.Claimed = true
		}
		if s.State == InProgress && s.StartedAt.IsZero() {
			s.StartedAt = next
		}
		if s.State == InProgress && s.ExecStartedAt.IsZero() {
			s.ExecStartedAt = next
		}
	}
	if s.State == Claimed || s.State == InProgress || s.State == Blocked {
		s.Claimed = true
	}
	s.RunTime = tl.PriorRun
	if !s.ExecStartedAt.IsZero() && s.UpdatedAt.After(s.ExecStartedAt) {
		s.RunTime = addRunTime(s.RunTime, s.UpdatedAt.Sub(s.ExecStartedAt))
	}
	return s
}

// addRunTime adds two spans of run time, at most MaxRunTime: neither sum
// nor overflow can make it go negative.
func addRunTime(a, b time.Duration) time.Duration {
	a, b = min(max(a, 0), MaxRunTime), min(max(b, 0), MaxRunTime)
	return min(a+b, MaxRunTime)
}

// reanchor makes the run be in state from now on, keeping what it had done.
func (tl *Timeline) reanchor(now time.Time, state State) {
	cur := tl.At(now)
	tl.Anchor = now
	tl.AnchorState = state
	tl.StartedAt = cur.StartedAt
	tl.WasClaimed = cur.Claimed
	tl.ExecStart = cur.ExecStartedAt
	// A run that succeeded was worked on, even if put there by fiat
	// straight from the queue.
	working := state == InProgress || state == Blocked || state == Succeeded
	if working && tl.StartedAt.IsZero() {
		tl.StartedAt = now
	}
	if working && tl.ExecStart.IsZero() {
		tl.ExecStart = now
	}
	if state.FinalFate() {
		tl.Final = state
	}
}
