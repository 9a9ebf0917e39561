package steps

import (
	"context"
	"fmt"
)

// The state filter judged on any server: runs whose ends the scenario saw
// (one cancelled, one left to end as it will) are listed by the state one
// of them ended in, and the listing must hold exactly those that ended in
// it. No control API is needed to put a run into a state: the states a
// run ends in stay.

func (s *scenario) registerStateFilter(sc stepContext) {
	sc.Step(`^every run I created has ended$`, s.everyRunEnded)
	sc.Step(`^the listing holds every run that ended in the state of run "([^"]*)", and no other$`, s.listingHoldsRunsEndedLike)
}

// everyRunEnded watches each run of the scenario until it is in a terminal
// state.
func (s *scenario) everyRunEnded(ctx context.Context) error {
	current := s.current
	defer func() { s.current = current }()
	for _, r := range s.mine.runs {
		s.current = r
		if err := s.watchUntilTerminal(ctx); err != nil {
			return err
		}
	}
	return nil
}

// endedState is the terminal state the run with this nickname was last
// seen in.
func (s *scenario) endedState(nick string) (string, error) {
	r, err := s.mine.named(nick)
	if err != nil {
		return "", err
	}
	state := str(r.details["state"])
	if !isTerminal(state) {
		return "", fmt.Errorf("run %s was last seen %s, not ended: watch it to its end first", nick, show(r.details["state"]))
	}
	return state, nil
}

func (s *scenario) listingHoldsRunsEndedLike(ctx context.Context, nick string) error {
	state, err := s.endedState(nick)
	if err != nil {
		return err
	}
	l := s.wholeListing(ctx)
	if l.err != nil {
		return l.err
	}
	var want []*trackedRun
	for _, r := range s.mine.runs {
		if str(r.details["state"]) == state {
			want = append(want, r)
		}
	}
	if err := l.mine.sameRuns(l.op, want, l.runs); err != nil {
		return fmt.Errorf("listing by the state run %s ended in, %s: %w", nick, state, err)
	}
	return nil
}
