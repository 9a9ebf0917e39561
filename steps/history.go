package steps

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// rank orders the states so that "only forward" can be checked. BLOCKED sits
// beside INPROGRESS: a run goes from one to the other and back.
var rank = map[string]int{
	"QUEUED": 0, "PENDING": 1, "CLAIMED": 2, "INPROGRESS": 3, "BLOCKED": 3,
	"SUCCEEDED": 4, "FAILED": 4, "ERROR": 4, "CANCELLED": 4,
}

func isTerminal(state string) bool { r, ok := rank[state]; return ok && r == 4 }

// history is every look the scenario took at one run while it watched it.
// When the run was not watched, err says so.
type history struct {
	id    string
	looks []map[string]any
	err   error
}

func (h history) state(i int) string { return str(h.looks[i]["state"]) }

// states is the run's states as seen, repeats folded: "QUEUED -> PENDING".
func (h history) states() []string {
	var out []string
	for i := range h.looks {
		if st := h.state(i); len(out) == 0 || out[len(out)-1] != st {
			out = append(out, st)
		}
	}
	return out
}

func (h history) seen() string { return strings.Join(h.states(), " -> ") }

// movedOnlyForward checks every look: a known state, never a lower rank than
// before, no change after a terminal state, and a terminal state at the end.
func (h history) movedOnlyForward() error {
	if h.err != nil {
		return h.err
	}
	prev := ""
	for i := range h.looks {
		st := h.state(i)
		if _, ok := rank[st]; !ok {
			return fmt.Errorf("look %d at run %s: %q is not a RunState", i+1, h.id, st)
		}
		if prev != "" && (rank[st] < rank[prev] || isTerminal(prev) && st != prev) {
			return fmt.Errorf("run %s moved backwards from %s to %s (states seen: %s)", h.id, prev, st, h.seen())
		}
		prev = st
	}
	if !isTerminal(prev) {
		return fmt.Errorf("run %s did not reach a terminal state (states seen: %s)", h.id, h.seen())
	}
	return nil
}

// seenInOrder checks the exact sequence of states seen.
func (h history) seenInOrder(list string) error {
	if h.err != nil {
		return h.err
	}
	if want, got := parseNames(list), h.states(); !reflect.DeepEqual(want, got) {
		return fmt.Errorf("expected run %s to be seen in %s, got %s", h.id, strings.Join(want, " -> "), strings.Join(got, " -> "))
	}
	return nil
}

// neverWentBack checks that a timestamp field never decreased between looks.
func (h history) neverWentBack(field string) error {
	if h.err != nil {
		return h.err
	}
	var prev time.Time
	for i, look := range h.looks {
		t, err := timestamp(look, field)
		if err != nil {
			return fmt.Errorf("look %d at run %s (%s): %w", i+1, h.id, h.state(i), err)
		}
		if t.Before(prev) {
			return fmt.Errorf("run %s: %s went back from %s to %s when it was %s",
				h.id, field, prev.Format(time.RFC3339Nano), t.Format(time.RFC3339Nano), h.state(i))
		}
		prev = t
	}
	return nil
}

// startedOnlyOnceInProgress checks that field (started_at) is absent or null
// while the run is QUEUED or PENDING, set once it is INPROGRESS (and after,
// if it got there), never before created_at, and unchanged once set.
func (h history) startedOnlyOnceInProgress(field string) error {
	if h.err != nil {
		return h.err
	}
	var first any
	for i, look := range h.looks {
		st := h.state(i)
		v, _ := lookup(look, field)
		switch {
		case rank[st] < rank["CLAIMED"] && v != nil:
			return fmt.Errorf("run %s has %s %s while it is only %s", h.id, field, show(v), st)
		case first != nil && str(v) != str(first):
			return fmt.Errorf("run %s: %s changed from %s to %s when it was %s", h.id, field, show(first), show(v), st)
		case v != nil:
			if err := (subject{what: "run " + h.id, doc: look}).notBefore(field, "created_at"); err != nil {
				return err
			}
			first = v
		case st == "INPROGRESS" || st == "BLOCKED" || st == "SUCCEEDED" || isTerminal(st) && h.wasInProgress():
			return fmt.Errorf("run %s has no %s although it is %s (states seen: %s)", h.id, field, st, h.seen())
		}
	}
	return nil
}

func (h history) wasInProgress() bool {
	for i := range h.looks {
		if st := h.state(i); st == "INPROGRESS" || st == "BLOCKED" {
			return true
		}
	}
	return false
}

// presentOnceClaimed checks that field is set whenever the run has been
// claimed and has not been stopped short.
func (h history) presentOnceClaimed(field string) error {
	if h.err != nil {
		return h.err
	}
	for i, look := range h.looks {
		st := h.state(i)
		claimed := st == "CLAIMED" || st == "INPROGRESS" || st == "BLOCKED" || st == "SUCCEEDED"
		if v, _ := lookup(look, field); claimed && str(v) == "" {
			return fmt.Errorf("run %s has no %s although it is %s (states seen: %s)", h.id, field, st, h.seen())
		}
	}
	return nil
}

// keptOnceShown checks that field, once the run shows it, is in every
// later look, unchanged.
func (h history) keptOnceShown(field string) error {
	if h.err != nil {
		return h.err
	}
	first := ""
	for i, look := range h.looks {
		v, _ := lookup(look, field)
		switch {
		case first == "":
			first = str(v)
		case str(v) != first:
			return fmt.Errorf("run %s showed %s %q, then %s when it was %s (states seen: %s)", h.id, field, first, show(v), h.state(i), h.seen())
		}
	}
	return nil
}

var errNotWatched = errors.New("the run was not watched")
