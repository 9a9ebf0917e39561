package steps

import (
	"fmt"
	"slices"
)

// A server may pass a run through its states faster than any poll, so a
// polling suite cannot ask to have seen each state. What it can judge on
// any server is that a run that succeeded was worked on: it shows when it
// started, and its events report it in progress before they report its
// end. A server that skipped the work (or never recorded it) shows neither.

func (s *scenario) registerWorkedOn(sc stepContext) {
	sc.Step(`^a run that succeeded shows when it started, and its events report it in progress before its end$`, s.succeededRunWorkedOn)
}

func (s *scenario) succeededRunWorkedOn() error {
	if s.current == nil || s.current.details == nil {
		return fmt.Errorf("the run's details have not been fetched")
	}
	run := s.current.details
	if state := str(run["state"]); state != "SUCCEEDED" {
		return s.inconclusive(fmt.Sprintf("run %s ended in %s, not SUCCEEDED: nothing says it worked", s.current.id, state))
	}
	if _, err := timestamp(run, "started_at"); err != nil {
		return fmt.Errorf("run %s SUCCEEDED, yet shows no time it started: %w", s.current.id, err)
	}
	evs := known(s.events.last())
	end := slices.IndexFunc(evs, func(e runEvent) bool { return e.EventType == "run_succeeded" })
	if end < 0 {
		return fmt.Errorf("run %s SUCCEEDED, yet its events do not report it (events: %v)", s.current.id, evs)
	}
	if !slices.ContainsFunc(evs[:end], func(e runEvent) bool { return e.EventType == "run_in_progress" }) {
		return fmt.Errorf("run %s SUCCEEDED, yet no run_in_progress event comes before its run_succeeded: the run's events never say it was worked on (events: %v)", s.current.id, evs)
	}
	return nil
}
