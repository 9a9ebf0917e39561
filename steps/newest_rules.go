package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/agentruns/agentruns/rules"
)

// Steps that put a run where a rule of the newest surface (rules/newest.go)
// shows, and judge it by that rule: what a follow-up did by the state the
// run was in, what a new execution kept, what an ended run keeps, what an
// empty filter means. The suite's ledger holds every run it sees to the
// same rules; these steps make sure a scenario sees the situation.

// beforeFollowupDoc is where sendFollowup keeps the run as it was just
// before the follow-up (JSON).
const beforeFollowupDoc = "\x00before follow-up doc"

func (s *scenario) registerNewestRules(sc stepContext) {
	sc.Step(`^the follow-up kept the run going$`, s.followupKeptRunGoing)
	sc.Step(`^the run kept what its earlier executions accumulated$`, s.keptWhatItAccumulated)
	sc.Step(`^the run's run_time and request_usage are as when it ended$`, s.endedRunStopped)
	sc.Step(`^an empty "([^"]*)" added to "([^"]*)" lists the same runs, or is refused with a 400$`, s.emptyFilterIsNoFilter)
}

// beforeFollowup is the look at the run sendFollowup took just before the
// follow-up.
func (s *scenario) beforeFollowup() (rules.Look, error) {
	var doc map[string]any
	if err := json.Unmarshal([]byte(s.cache[beforeFollowupDoc]), &doc); err != nil || doc == nil {
		return rules.Look{}, fmt.Errorf("no follow-up was sent to the run")
	}
	return rules.LookAt(doc, time.Time{}, time.Time{}, "the look before the follow-up"), nil
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
	doc, err := s.fetch(ctx, s.current)
	if err != nil {
		return err
	}
	now := rules.LookAt(doc, time.Time{}, time.Time{}, s.last.op)
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
	doc, err := s.fetch(ctx, s.current)
	if err != nil {
		return err
	}
	return violations("run "+s.current.id, rules.KeptAcrossExecutions("body", s.current.id, before, rules.LookAt(doc, time.Time{}, time.Time{}, s.last.op)))
}

// endedRunStopped: the run seen again after it ended shows the run_time,
// request_usage, executor and metadata it ended with (rules.EndedRunStopped).
func (s *scenario) endedRunStopped(ctx context.Context) error {
	if s.ended == nil {
		return fmt.Errorf("the run was not seen ended")
	}
	doc, err := s.fetch(ctx, s.current)
	if err != nil {
		return err
	}
	ended := rules.LookAt(s.ended, time.Time{}, time.Time{}, "the look that showed it ended")
	return violations("run "+s.current.id, rules.EndedRunStopped("body", s.current.id, ended, rules.LookAt(doc, time.Time{}, time.Time{}, s.last.op)))
}

// emptyFilterIsNoFilter lists runs with query, then with query and an
// empty param: the same runs, or a 400 (rules.EmptyFilterAnswer). The runs
// of query must not move between the two listings (runs that have ended).
func (s *scenario) emptyFilterIsNoFilter(ctx context.Context, param, query string) error {
	if err := s.listRuns(ctx, query); err != nil {
		return err
	}
	if s.listing.refused {
		return fmt.Errorf("%s: expected the listing without %s=, got %d", s.listing.op, param, s.last.status)
	}
	without := runIDs(s.listing.runs)
	empty := query + "&" + param + "="
	s.listing = s.listPage(ctx, empty, "")
	if s.listing.err != nil && !s.listing.refused {
		return s.listing.err
	}
	return violations(s.last.op, rules.EmptyFilterAnswer(param, s.last.status, runIDs(s.listing.runs), without))
}

func runIDs(runs []map[string]any) []string {
	ids := make([]string, 0, len(runs))
	for _, r := range runs {
		ids = append(ids, str(r["run_id"]))
	}
	return slices.Clip(ids)
}
