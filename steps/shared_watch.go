package steps

import (
	"context"

	"github.com/cucumber/godog"
)

// A run the server ends on its own, watched once from its creation and
// shared by every scenario that only looks at it (@shares-runs): its
// arrangement says, in the past tense, that the run was created and
// watched to its end. The scenario that makes it watches it; the others
// take it with every look that watch took (trackedRun.copy), so that a
// scenario joining after the run ended still judges its whole history: a
// run that moved backwards or skipped a state is caught by each of them.

func (s *scenario) registerSharedWatch(sc stepContext) {
	sc.Step(`^I created a run with the prompt "([^"]*)"$`, func(ctx context.Context, prompt string) error {
		return s.unlessShared(ctx, func() error { return s.createRunWithPrompt(ctx, prompt) })
	})
	sc.Step(`^I created a run with the prompt "([^"]*)" and:$`, func(ctx context.Context, prompt string, t *godog.Table) error {
		return s.unlessShared(ctx, func() error { return s.createRunWithPromptAnd(ctx, prompt, t) })
	})
	sc.Step(`^I created a run with the failing prompt$`, func(ctx context.Context) error {
		return s.unlessShared(ctx, func() error { return s.createRunWithFailingPrompt(ctx) })
	})
	sc.Step(`^I created a run with the failing prompt in the last listed environment$`, func(ctx context.Context) error {
		return s.unlessShared(ctx, func() error { return s.createFailingInLastEnvironment(ctx) })
	})
	sc.Step(`^I cancelled the run, retrying while the server answers a retryable 409$`, func(ctx context.Context) error {
		return s.unlessShared(ctx, func() error {
			// Judged at once, while the run's state still tells a refusal
			// of a run that had ended from one of a run still going.
			if err := s.cancelRun(ctx); err != nil {
				return err
			}
			return s.cancelAcceptedOrTooLate(ctx)
		})
	})
	sc.Step(`^I watched the run until it reached a terminal state$`, func(ctx context.Context) error {
		return s.unlessShared(ctx, func() error { return s.watchUntilTerminal(ctx) })
	})
}

// unlessShared does what an arrangement step does, unless the scenario
// takes its runs from a set another scenario made: that one did it once
// for every sharer (shared_runs.go).
func (s *scenario) unlessShared(ctx context.Context, do func() error) error {
	if shared, err := s.follower(ctx); err != nil || shared {
		return err
	}
	return do()
}
