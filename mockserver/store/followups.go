package store

import (
	"time"

	"github.com/agentruns/agentruns/fixtures"
)

// Follow-ups: a message the run's user sends after the prompt, as typing it
// in the run's session would. Where it goes depends on the run's state at
// that moment (docs/followups.md):
//
//   - not started yet (QUEUED, PENDING, CLAIMED): the agent reads it with
//     the prompt when it begins;
//   - in progress: the agent takes it at once; the run carries on;
//   - BLOCKED, waiting for its user: the follow-up is the answer, and the
//     run goes back to INPROGRESS;
//   - ended (SUCCEEDED, FAILED, ERROR, CANCELLED): the run is started
//     again, a new execution in the same conversation: it is QUEUED once
//     more and moves on as its fate says, keeping its started_at, its
//     conversation and the run time of its earlier executions.
//
// Runs the service does not drive (LOCAL and GITHUB_ACTION) take no
// follow-ups: their session lives on someone's machine or in a workflow.

// Errors of follow-ups.
var (
	ErrFollowupEmpty    = sentinel(Invalid, "message: a follow-up needs a message")
	ErrFollowupNotTaken = sentinel(Unsupported, "the run does not take follow-ups through the API")
)

// Followup is one message a run's user sent after its prompt.
type Followup struct {
	Message string    `json:"message"`
	Mode    string    `json:"mode,omitempty"` // normal when empty
	At      time.Time `json:"at"`
	// Restarted says the run had ended and this follow-up started its
	// next execution (numbered Execution, counted from 1).
	Restarted bool `json:"restarted,omitempty"`
	Execution int  `json:"execution,omitempty"`
}

// MaxFollowups is how many follow-ups one run keeps; the next is refused
// (the run's record, and its conversation, stay bounded).
const MaxFollowups = 100

// ErrTooManyFollowups is the answer to a follow-up once the run has taken
// MaxFollowups.
var ErrTooManyFollowups = sentinel(Exhausted, "the run has taken the most follow-ups the mock keeps")

// Followup sends message to a run p's team may see and returns the run as
// it is afterwards.
func (ms *Session) Followup(p *fixtures.Principal, id, message, mode string) (View, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	r, err := ms.visibleLocked(p, id) // a run that is not there is a 404 whatever the body
	if err != nil {
		return View{}, err
	}
	if message == "" {
		return View{}, ErrFollowupEmpty
	}
	if r.Source == "LOCAL" || r.Source == "GITHUB_ACTION" {
		return View{}, ErrFollowupNotTaken.because("the run does not take follow-ups through the API: it was started from %s, whose session the service does not drive", r.Source)
	}
	if len(r.FollowupList()) >= MaxFollowups {
		return View{}, ErrTooManyFollowups.because("the run has taken %d follow-ups, the most the mock keeps for one run; start a new run that continues its conversation (conversation_id)", MaxFollowups)
	}
	now := ms.clock.Now()
	ms.catchUpLocked(now)
	f := Followup{Message: message, Mode: mode, At: now}
	switch snap := r.Timeline.At(now); {
	case snap.State.Terminal():
		ms.restartLocked(r, now, snap)
		f.Restarted, f.Execution = true, int(r.Timeline.Execution)
	case snap.State == Blocked:
		ms.reanchorLocked(r, now, InProgress, "", "")
		if r.ForcedState == Blocked {
			r.ForcedState, r.ForcedMsg = "", nil
		}
	}
	list := append(r.FollowupList(), f)
	r.Followups = &list
	ms.changed()
	return r.view(now), nil
}

// restartLocked starts the next execution of a run that has ended: QUEUED
// again, moving on as its fate says, with the run time so far kept.
func (ms *Session) restartLocked(r *Run, now time.Time, snap Snapshot) {
	// The end the run was forced into becomes its fate's message, so the
	// next execution ends the same way (a cancel is not a fate).
	if r.ForcedState != "" {
		if r.ForcedState.FinalFate() && r.ForcedState == r.Timeline.Final {
			r.FateMsg = r.ForcedMsg
		}
		r.ForcedState, r.ForcedMsg = "", nil
	}
	ms.reanchorLocked(r, now, Queued, "", "")
	r.Timeline.PriorRun = snap.RunTime
	r.Timeline.ExecStart = time.Time{}
	r.Timeline.Execution++
	ms.events.watch(r)
}
