package steps

import (
	"context"
	"fmt"
	"time"
)

// A run's handoff files are those its latest ended execution left: none
// while no execution has ended. Any server can be judged on that by
// listing the files just before each look at the run while it is watched:
// a look that finds the run not ended says it had not ended when the files
// were listed, so that listing must be empty.

// handoffLook is one listing of the handoff files and the state the run
// was found in by the look right after it.
type handoffLook struct {
	files     []handoffAttachment
	stateNext string
}

func (s *scenario) registerHandoffWatch(sc stepContext) {
	sc.Step(`^I watch the run until it reaches a terminal state, listing its handoff attachments before each look$`, s.watchListingHandoffs)
	sc.Step(`^every handoff listing made before a look that found the run not ended was empty$`, s.handoffsEmptyWhileNotEnded)
}

func (s *scenario) watchListingHandoffs(ctx context.Context) error {
	r := s.current
	if r == nil {
		return errNoRun
	}
	s.handoffs.looks = nil
	timeout := s.suite.cfg.Timeout
	deadline := time.Now().Add(timeout)
	for waited := time.Duration(0); ; {
		if err := s.listHandoffAttachments(ctx); err != nil {
			return err
		}
		files := s.handoffs.listings[len(s.handoffs.listings)-1]
		state, err := s.observe(ctx, r)
		if err != nil {
			return err
		}
		s.handoffs.looks = append(s.handoffs.looks, handoffLook{files: files, stateNext: state})
		switch {
		case isTerminal(state):
			return nil
		case waited >= timeout || time.Now().After(deadline):
			return fmt.Errorf("run %s was not in a terminal state after %s (states seen: %s)", r.id, timeout, s.history().seen())
		}
		d, err := s.tick(ctx)
		if err != nil {
			return err
		}
		waited += d
	}
}

func (s *scenario) handoffsEmptyWhileNotEnded() error {
	judged := 0
	for i, l := range s.handoffs.looks {
		if isTerminal(l.stateNext) {
			continue
		}
		judged++
		if len(l.files) != 0 {
			return fmt.Errorf("listing %d of the run's handoff attachments: expected no handoff attachments before the run ended (a look right after found it %s), got %d: %+v",
				i+1, l.stateNext, len(l.files), l.files)
		}
	}
	if judged == 0 {
		return s.inconclusive(fmt.Sprintf("run %s had ended by the first look: no listing was made before its end", s.current.id))
	}
	return nil
}
