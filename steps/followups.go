package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/agentruns/agentruns/rules"
)

// Steps of follow-ups (features/followups.feature, tagged newestClientTag):
// sending one to the run, and judging what it did by the state the run was
// in and the rules of rules/newest.go (what a new execution keeps). The
// suite's ledger holds every run it sees to the same rules; these steps
// make sure a scenario sees the situation.

// followupsRoom is what sendFollowup keeps for the steps that judge the
// follow-up.
type followupsRoom struct {
	before map[string]any // the run just before the follow-up, nil before any
	answer *response      // the answer to the follow-up
}

func (s *scenario) registerFollowups(sc stepContext) {
	sc.Step(`^I send the follow-up "([^"]*)"$`, s.sendFollowup)
	sc.Step(`^the follow-up was accepted$`, s.followupAccepted)
	sc.Step(`^the run was started again by the follow-up$`, s.startedAgainByFollowup)
	sc.Step(`^the follow-up kept the run going$`, s.followupKeptRunGoing)
	sc.Step(`^the run kept what its earlier executions accumulated$`, s.keptWhatItAccumulated)
}

func (s *scenario) sendFollowup(ctx context.Context, message string) error {
	if s.current == nil {
		return errNoRun
	}
	body, err := json.Marshal(map[string]string{"message": s.expand(message)})
	if err != nil {
		return err
	}
	// What the run looked like before, to tell later what the follow-up did.
	before, err := s.fetch(ctx, s.current)
	if err != nil {
		return err
	}
	s.followups.before = before
	// Only a follow-up the server accepted (2xx) may have started the run
	// again; a refused one binds no rule of what a follow-up does.
	answered := s.api.runs.followUp(s.api.session, s.current.id)
	resp, err := s.ask(ctx, call{method: http.MethodPost, path: "/agent/runs/" + pathEscape(s.current.id) + "/followups", body: body})
	status := 0
	if resp != nil {
		status = resp.status
	}
	answered(status, time.Now())
	s.leave(resp) // a refusal is judged by the response steps
	if resp != nil {
		s.followups.answer = resp
	}
	return err
}

func (s *scenario) followupAccepted() error {
	sent := s.followups.answer
	if sent == nil {
		return fmt.Errorf("no follow-up was sent to the run")
	}
	if err := sent.ok("sending a follow-up"); err != nil {
		return err
	}
	if _, err := sent.object(); err != nil {
		return fmt.Errorf("%s: expected a JSON object: %w", sent.op, err)
	}
	return nil
}

// startedAgainByFollowup: after a follow-up to an ended run, the run is
// going again, or, on a fast server, has ended again since: either way it
// changed after the moment it was last seen ended.
func (s *scenario) startedAgainByFollowup(ctx context.Context) error {
	updatedBefore, stateBefore := str(s.followups.before["updated_at"]), str(s.followups.before["state"])
	if !isTerminal(stateBefore) {
		return fmt.Errorf("the run had not ended before the follow-up (it was %s)", stateBefore)
	}
	doc, err := s.fetch(ctx, s.current)
	if err != nil {
		return err
	}
	if !isTerminal(str(doc["state"])) {
		return nil
	}
	before, err1 := time.Parse(time.RFC3339Nano, updatedBefore)
	after, err2 := timestamp(doc, "updated_at")
	if err1 == nil && err2 == nil && after.After(before) {
		return nil
	}
	if !rules.RestartShows(str(doc["updated_at"])) {
		return s.inconclusive(fmt.Sprintf("the run is %s at updated_at %s as before the follow-up: shown to that precision, a run that started again and ended again within it looks the same",
			str(doc["state"]), str(doc["updated_at"])))
	}
	return fmt.Errorf("after a follow-up to the ended run, it is still %s and unchanged since %s: the follow-up did not start it again", str(doc["state"]), updatedBefore)
}

// beforeFollowup is the look at the run sendFollowup took just before the
// follow-up.
func (s *scenario) beforeFollowup() (rules.Look, error) {
	if s.followups.before == nil {
		return rules.Look{}, fmt.Errorf("no follow-up was sent to the run")
	}
	return rules.LookAt(s.followups.before, time.Time{}, time.Time{}, "the look before the follow-up"), nil
}

// followupKeptRunGoing: a follow-up to a run that had not ended is taken by
// the execution under way; the run is not sent back. A run seen sent back
// may have ended in between and been started again by the follow-up: its
// events tell (rules.FollowupKeptLiveRun).
func (s *scenario) followupKeptRunGoing(ctx context.Context) error {
	before, err := s.beforeFollowup()
	if err != nil {
		return err
	}
	if rules.IsTerminal(before.State) {
		return s.inconclusive(fmt.Sprintf("the run had already ended (%s) when the follow-up was sent", before.State))
	}
	doc, resp, err := s.fetchAnswer(ctx, s.current)
	if err != nil {
		return err
	}
	now := rules.LookAt(doc, time.Time{}, time.Time{}, resp.op)
	if rules.Rank(now.State) >= rules.Rank(before.State) {
		return nil
	}
	// The events may list the end of the execution a while after it came:
	// they are polled until they reach past the moment the run went back
	// (rules.EventsReachPast), as long as the suite is patient for an end.
	deadline := time.Now().Add(s.suite.cfg.Timeout)
	for waited := time.Duration(0); ; {
		if err := s.pollEvents(ctx, 0); err != nil {
			return err
		}
		var ends, occurred []time.Time
		for _, e := range s.events.last() {
			t, err := time.Parse(time.RFC3339Nano, e.OccurredAt)
			if err != nil {
				continue
			}
			occurred = append(occurred, t)
			if rules.IsTerminal(eventStates[e.EventType]) {
				ends = append(ends, t)
			}
		}
		found := rules.FollowupKeptLiveRun("body", s.current.id, "the follow-up", before, now, ends)
		if len(found) == 0 || rules.EventsReachPast(now, occurred) {
			return violations("run "+s.current.id, found)
		}
		if waited >= s.suite.cfg.Timeout || time.Now().After(deadline) {
			return s.inconclusive(fmt.Sprintf("the run went back to %s after the follow-up, and %s later its events still reach no further than before it went back, so they cannot tell whether it had ended first", now.State, s.suite.cfg.Timeout))
		}
		d, err := s.tick(ctx)
		if err != nil {
			return err
		}
		waited += d
	}
}

// keptWhatItAccumulated: the run started again by a follow-up is the same
// run, its run_time and request_usage no smaller (rules.KeptAcrossExecutions).
func (s *scenario) keptWhatItAccumulated(ctx context.Context) error {
	before, err := s.beforeFollowup()
	if err != nil {
		return err
	}
	doc, resp, err := s.fetchAnswer(ctx, s.current)
	if err != nil {
		return err
	}
	return violations("run "+s.current.id, rules.KeptAcrossExecutions("body", s.current.id, before, rules.LookAt(doc, time.Time{}, time.Time{}, resp.op)))
}
