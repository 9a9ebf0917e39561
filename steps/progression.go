package steps

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/agentruns/agentruns/rules"
)

// Watching runs progress, cancelling them, and steering them through the
// mock's control API.

// tick lets time pass on the server: one second of the mock's clock, or a
// poll interval of real time. It returns how much time passed.
func (s *scenario) tick(ctx context.Context) (time.Duration, error) {
	if s.api.control != nil {
		return time.Second, s.api.advanceClock(ctx, time.Second)
	}
	return s.suite.cfg.PollInterval, s.suite.pause(ctx, s.suite.cfg.PollInterval)
}

// observe fetches the run and keeps the look.
func (s *scenario) observe(ctx context.Context, r *trackedRun) (string, error) {
	s.suite.looks.Add(1)
	doc, err := s.fetch(ctx, r)
	if err != nil {
		return "", err
	}
	r.looks = append(r.looks, doc)
	state := str(doc["state"])
	if isTerminal(state) && s.progress.ended == nil {
		s.progress.ended = doc
	}
	return state, nil
}

// waitFor watches the run until done says so, for at most Config.Timeout: of
// the mock's clock when the suite drives it, of real time otherwise.
func (s *scenario) waitFor(ctx context.Context, what string, done func(state string) bool) error {
	r := s.current
	if r == nil {
		return errNoRun
	}
	timeout := s.suite.cfg.Timeout
	deadline := time.Now().Add(timeout)
	// queued is how long the run waited in QUEUED behind its team's
	// capacity: a wait for its turn, not lateness, so it does not count
	// against the timeout, which runs from the moment the run leaves
	// QUEUED. A wait behind capacity longer than capacityPatience
	// timeouts leaves the scenario inconclusive: nothing was judged.
	var queued time.Duration
	for waited := time.Duration(0); ; {
		state, err := s.observe(ctx, r)
		switch {
		case err != nil:
			return err
		case rank[state] == 0 && state != "QUEUED":
			return fmt.Errorf("run %s is in state %q, which is not a RunState", r.id, state)
		case done(state):
			return nil
		case isTerminal(state):
			return fmt.Errorf("run %s ended in %s before it was %s (states seen: %s)", r.id, state, what, s.history().seen())
		case waited >= timeout || time.Now().After(deadline):
			return fmt.Errorf("run %s was not %s after %s (states seen: %s%s)", r.id, what, timeout, s.history().seen(), waitedBehind(queued))
		case queued > capacityPatience*timeout:
			return s.inconclusive(fmt.Sprintf("run %s waited %s in QUEUED behind its team's capacity (at_capacity), more than %d times --timeout: nothing was judged of it",
				r.id, queued.Round(time.Second), capacityPatience))
		}
		began := time.Now()
		d, err := s.tick(ctx)
		if err != nil {
			return err
		}
		if state == "QUEUED" && s.suite.book.behindCapacity(r.id) {
			queued += d
			s.suite.book.queued(d)
			deadline = deadline.Add(time.Since(began))
			continue
		}
		waited += d
	}
}

// capacityPatience is how many timeouts a run may wait behind its team's
// capacity before the scenario gives up on it, inconclusive.
const capacityPatience = 6

// waitedBehind says how long a run waited behind its team's capacity, for
// a message; "" when it did not.
func waitedBehind(queued time.Duration) string {
	if queued == 0 {
		return ""
	}
	return fmt.Sprintf("; before that it waited %s in QUEUED behind its team's capacity, which is not counted", queued.Round(time.Second))
}

func (s *scenario) watchUntilTerminal(ctx context.Context) error {
	return s.waitFor(ctx, "in a terminal state", isTerminal)
}

func (s *scenario) waitUntilAtLeast(ctx context.Context, state string) error {
	return s.waitFor(ctx, state+" or later", func(got string) bool { return rank[got] >= rank[state] && got != "CANCELLED" })
}

// pollIntervalsPass lets n poll intervals pass (see tick).
func (s *scenario) pollIntervalsPass(ctx context.Context, n int) error {
	for range n {
		if _, err := s.tick(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Steps that check what was seen while watching: one line each.

func (s *scenario) onlyMovedForward() error { return s.history().movedOnlyForward() }

func (s *scenario) seenInOrder(list string) error { return s.history().seenInOrder(list) }

func (s *scenario) neverWentBack(field string) error { return s.history().neverWentBack(field) }

func (s *scenario) startedAtRule(field string) error {
	return s.history().startedOnlyOnceInProgress(field)
}

func (s *scenario) presentOnceClaimed(field string) error {
	return s.history().presentOnceClaimed(field)
}

func (s *scenario) keptOnceShown(field string) error { return s.history().keptOnceShown(field) }

// waitUntilShowsSession watches the run until it shows a session_id; a run
// that ends without one has the scenario skipped, as the document shows a
// session only "if available".
func (s *scenario) waitUntilShowsSession(ctx context.Context) error {
	err := s.waitFor(ctx, "showing a session", func(string) bool {
		return str(s.current.looks[len(s.current.looks)-1]["session_id"]) != ""
	})
	if r := s.current; err != nil && r != nil && len(r.looks) > 0 {
		if last := r.looks[len(r.looks)-1]; isTerminal(str(last["state"])) && str(last["session_id"]) == "" {
			return s.skip(fmt.Sprintf("run %s ended %s without showing a session, which the document shows only if available", r.id, str(last["state"])))
		}
	}
	return err
}

// Cancelling.

func (s *scenario) cancelRun(ctx context.Context) error {
	if s.current == nil {
		return errNoRun
	}
	return s.cancel(ctx, s.current)
}

func (s *scenario) cancelRunOnce(ctx context.Context) error {
	return s.sendCancel(ctx, s.currentID())
}

// sendCancel asks once to cancel run id. Its answer is kept for the steps
// that judge the cancel, and is the last response for the generic ones.
func (s *scenario) sendCancel(ctx context.Context, id string) error {
	resp, err := s.ask(ctx, call{method: http.MethodPost, path: "/agent/runs/" + pathEscape(id) + "/cancel"})
	s.leave(resp)
	if resp != nil {
		s.progress.cancel = resp
	}
	return err
}

func (s *scenario) cancelAcceptedOrTooLate(ctx context.Context) error {
	if s.current == nil {
		return errNoRun
	}
	if s.progress.cancelled != "" {
		// Judged when it was sent, by the arrangement that cancelled a
		// shared run (shared_watch.go): the run has moved on since.
		return nil
	}
	return s.judgeCancel(ctx, s.current)
}

func (s *scenario) cancelledIfAccepted() error {
	switch s.progress.cancelled {
	case "":
		return errors.New("the run was not cancelled")
	case cancelTooLate:
		return nil // the run ended, or waited for a person, before the cancel arrived
	}
	if err := s.inconclusiveIfErroredOnItsOwn(); err != nil {
		return err
	}
	return s.details().fieldIs("state", "CANCELLED")
}

// How the server took a cancel (scenario.cancelled).
const (
	cancelAccepted = "accepted"
	cancelTooLate  = "refused, too late"
)

// judgeCancel checks the answer to a cancel of r that the server had no
// reason to refuse but the run's own progress: 200 with the run's id, or a
// 400 because the run has ended or is BLOCKED by then, which a fetch right
// after the refusal must confirm.
//
// A run may be BLOCKED when the cancel arrives and back in INPROGRESS by the
// fetch that follows. The fetch cannot tell that apart from a server that
// refuses to cancel a running run, so the suite sends the cancel again: a
// correct server now accepts it (or refuses it for the same reasons again,
// which is judged the same way, a few times at most); a server that refuses
// every cancel of a running run still fails.
func (s *scenario) judgeCancel(ctx context.Context, r *trackedRun) error {
	const attempts = 3
	for attempt := 1; ; attempt++ {
		answer := s.progress.cancel
		if answer == nil {
			return errNoRequest
		}
		switch answer.status {
		case http.StatusOK:
			if err := answer.isJSONString(r.id); err != nil {
				return err
			}
			s.progress.cancelled = cancelAccepted
			return nil
		case http.StatusBadRequest:
			if err := answer.isProblem(http.StatusBadRequest, "invalid_request"); err != nil {
				return err
			}
			doc, err := s.fetch(ctx, r)
			if err != nil {
				return err
			}
			st := str(doc["state"])
			if isTerminal(st) || st == "BLOCKED" {
				s.progress.cancelled = cancelTooLate
				return nil
			}
			if rank[st] < rank["CLAIMED"] {
				// States only move forward: the run was QUEUED or PENDING
				// when the server refused.
				return fmt.Errorf("%s: expected the cancel to be accepted, or refused with a retryable 409 while the run is being handed to a worker, got 400 while run %s is %s\n%s",
					answer.op, s.mine.nameOf(r), st, answer.excerpt())
			}
			if attempt == attempts {
				return fmt.Errorf("%s: expected the cancel to be accepted, or refused with 400 only because the run had ended or was BLOCKED, got 400 while run %s is %s (%d cancels sent, each refused)\n%s",
					answer.op, s.mine.nameOf(r), st, attempts, answer.excerpt())
			}
			if err := s.cancel(ctx, r); err != nil {
				return err
			}
			continue
		}
		return fmt.Errorf("%s: expected the cancel to be accepted (200) or, if the run had ended or was BLOCKED, refused (400), got %d\n%s",
			answer.op, answer.status, answer.excerpt())
	}
}

// pendingCancelJudged judges a single cancel sent right after the run was
// seen PENDING (or later), by polling: a run still being handed to a worker
// must answer a retryable 409; one that moved on meanwhile is judged as any
// cancel. A run never seen PENDING (a fast server) leaves nothing to judge
// here but the answer's own shape.
func (s *scenario) pendingCancelJudged(ctx context.Context) error {
	r := s.current
	if r == nil || len(r.looks) == 0 {
		return errNoRun
	}
	answer := s.progress.cancel
	if answer == nil {
		return errNoRequest
	}
	before := str(r.looks[len(r.looks)-1]["state"])
	switch answer.status {
	case http.StatusConflict:
		if before != "PENDING" {
			return fmt.Errorf("%s: a run last seen %s answered 409; only a run being handed to a worker (PENDING) may\n%s", answer.op, before, answer.excerpt())
		}
		if err := answer.isProblem(http.StatusConflict, "conflict"); err != nil {
			return err
		}
		return answer.subject().isRetryable()
	case http.StatusOK:
		if err := answer.isJSONString(r.id); err != nil {
			return err
		}
		s.progress.cancelled = cancelAccepted
		return nil
	}
	return s.judgeCancel(ctx, r)
}

func (s *scenario) cancelUnknownRun(ctx context.Context) error {
	return s.send(ctx, call{method: http.MethodPost, path: "/agent/runs/" + s.unknownID + "/cancel"})
}

// cancelledRunLater lets a moment pass, then cancels the run with this
// nickname, so that it becomes the run updated last, unless it has ended
// (or waits for a person) by then.
func (s *scenario) cancelledRunLater(ctx context.Context, nick string) error {
	if shared, err := s.follower(ctx); err != nil || shared {
		return err // the scenario that made the shared runs cancelled it (shared_runs.go)
	}
	r, err := s.mine.named(nick)
	if err != nil {
		return err
	}
	if err := s.aMoment(ctx); err != nil {
		return err
	}
	if err := s.cancel(ctx, r); err != nil {
		return err
	}
	if err := s.judgeCancel(ctx, r); err != nil {
		return fmt.Errorf("cancelling run %s: %w", nick, err)
	}
	return nil
}

// cancel cancels a run, trying again while the server answers 409 (the run
// is being handed to a worker) with "retryable": true.
func (s *scenario) cancel(ctx context.Context, r *trackedRun) error {
	deadline := time.Now().Add(s.suite.cfg.Timeout)
	for {
		if err := s.sendCancel(ctx, r.id); err != nil {
			return err
		}
		if s.progress.cancel.status != http.StatusConflict || time.Now().After(deadline) {
			return nil
		}
		if p, err := s.progress.cancel.object(); err != nil || p["retryable"] != true {
			return nil
		}
		if _, err := s.tick(ctx); err != nil {
			return err
		}
	}
}

// The mock's control API.

var errNoControl = errors.New("this step needs the mock control API; tag the scenario @mock-control")

// mockWillEndNextRunPaced chooses how the next run ends and how long it
// stays in each state before, whatever pace the mock was started with.
func (s *scenario) mockWillEndNextRunPaced(state string, seconds int) error {
	if s.api.control == nil {
		return errNoControl
	}
	s.fate = fateHeader(state, "", time.Duration(seconds)*time.Second)
	return nil
}

func (s *scenario) mockWillEndNextRunWithCode(state, code string) error {
	if s.api.control == nil {
		return errNoControl
	}
	s.fate = fateHeader(state, code, 0)
	return nil
}

func (s *scenario) anHourPassesOnTheMocksClock(ctx context.Context) error {
	if s.api.control == nil {
		return errNoControl
	}
	return s.api.advanceClock(ctx, time.Hour)
}

func (s *scenario) mockPutsRunInto(ctx context.Context, state string) error {
	return s.mockPutsRunIntoWithCode(ctx, state, "")
}

func (s *scenario) mockPutsRunIntoWithCode(ctx context.Context, state, code string) error {
	if s.current == nil {
		return errNoRun
	}
	return s.api.forceState(ctx, s.current.id, state, code)
}

func (s *scenario) mockHasPutRunInto(ctx context.Context, nick, state string) error {
	r, err := s.mine.named(nick)
	if err != nil {
		return err
	}
	return s.api.forceState(ctx, r.id, state, "")
}

var errNoRun = errors.New("no run yet: create one first")

// progressRoom is what watching and cancelling the run leave for later steps.
type progressRoom struct {
	// ended is the run as first seen in a terminal state, nil before.
	ended map[string]any
	// cancelled tells how the server took the last cancel of the run: ""
	// before any, cancelAccepted or cancelTooLate.
	cancelled string
	cancel    *response // the answer to the last cancel sent
}

// registerProgression registers the steps of watching runs move, cancelling them and steering them through the mock's control API.
func (s *scenario) registerProgression(sc stepContext) {
	sc.Step(`^I watch the run until it reaches a terminal state$`, s.watchUntilTerminal)
	sc.Step(`^I wait until the run is "(PENDING|CLAIMED|INPROGRESS)" or later$`, s.waitUntilAtLeast)
	sc.Step(`^(\d+) poll intervals? pass(?:es)?$`, s.pollIntervalsPass)
	sc.Step(`^the run only moved forward along QUEUED, PENDING, CLAIMED, INPROGRESS to a terminal state$`, s.onlyMovedForward)
	sc.Step(`^the run was seen in ((?:[A-Z]+)(?:(?:, | and )[A-Z]+)*), in that order$`, s.seenInOrder)
	sc.Step(`^the run's "([^"]*)" never went back$`, s.neverWentBack)
	sc.Step(`^the run had a "([^"]*)" from the moment it was INPROGRESS, and none before it was CLAIMED$`, s.startedAtRule)
	sc.Step(`^the run had a "([^"]*)" from the moment it was CLAIMED$`, s.presentOnceClaimed)
	sc.Step(`^the run kept its "([^"]*)" from the moment it showed one$`, s.keptOnceShown)
	sc.Step(`^I wait until the run shows its session$`, s.waitUntilShowsSession)
	sc.Step(`^the run has not changed since it ended$`, s.unchangedSinceEnded)
	sc.Step(`^the run's run_time and request_usage are as when it ended$`, s.endedRunStopped)

	sc.Step(`^I cancel the run, retrying while the server answers a retryable 409$`, s.cancelRun)
	sc.Step(`^I send a single cancel request for the run$`, s.cancelRunOnce)
	sc.Step(`^the cancel was accepted with the run's id, or refused with 400 because the run had ended or was BLOCKED$`, s.cancelAcceptedOrTooLate)
	sc.Step(`^the run is in state "CANCELLED" if the cancel was accepted$`, s.cancelledIfAccepted)
	sc.Step(`^a run still PENDING refused the cancel with a retryable 409, and one that had moved on took it as any other$`, s.pendingCancelJudged)
	sc.Step(`^I cancel a run that does not exist$`, s.cancelUnknownRun)
	sc.Step(`^a moment later I cancelled run "([^"]*)", unless it had already ended$`, s.cancelledRunLater)

	sc.Step(`^the mock will end my next run in "(SUCCEEDED|FAILED|ERROR)", spending (\d+) seconds? in each state$`, s.mockWillEndNextRunPaced)
	sc.Step(`^the mock will end my next run in "(SUCCEEDED|FAILED|ERROR)" with error code "([^"]*)"$`, s.mockWillEndNextRunWithCode)
	sc.Step(`^the mock puts the run into "([A-Z]+)"$`, s.mockPutsRunInto)
	sc.Step(`^the mock puts the run into "([A-Z]+)" with error code "([^"]*)"$`, s.mockPutsRunIntoWithCode)
	sc.Step(`^the mock has put run "([^"]*)" into "([A-Z]+)"$`, s.mockHasPutRunInto)
	sc.Step(`^an hour passes on the mock's clock$`, s.anHourPassesOnTheMocksClock)
}

// endedRunStopped: the run seen again after it ended shows the run_time,
// request_usage, executor and metadata it ended with (rules.EndedRunStopped).
func (s *scenario) endedRunStopped(ctx context.Context) error {
	if s.progress.ended == nil {
		return fmt.Errorf("the run was not seen ended")
	}
	doc, resp, err := s.fetchAnswer(ctx, s.current)
	if err != nil {
		return err
	}
	ended := rules.LookAt(s.progress.ended, time.Time{}, time.Time{}, "the look that showed it ended")
	return violations("run "+s.current.id, rules.EndedRunStopped("body", s.current.id, ended, rules.LookAt(doc, time.Time{}, time.Time{}, resp.op)))
}
