package steps

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Steps of the schedules that fire as the server's clock runs
// (features/schedules.feature, @schedule-ticks). The scenario reads the
// server's clock once; "the server's minute N" is then the Nth whole
// minute after that reading, and a schedule made to fire "once, at the
// server's minute N" has a cron naming that minute, hour, day and month.
// With the mock's control API the suite moves the scenario's clock to a
// tick; otherwise it waits for it in real time, polling the schedule's
// runs, for at most its patience (--timeout), or until a minute past the
// tick when that is later (tickPatience).

func (s *scenario) registerScheduleTicks(sc stepContext) {
	sc.Step(`^I read the server's clock$`, s.readServerClock)
	sc.Step(`^I create a schedule "([^"]*)" that fires once, at the server's minute (\d+)$`, s.createScheduleAtMinute)
	sc.Step(`^I replace schedule "([^"]*)" so that it fires once, at the server's minute (\d+)$`, s.replaceScheduleAtMinute)
	sc.Step(`^the server answered before its minute (\d+)$`, s.answeredBeforeMinute)
	sc.Step(`^I wait until schedule "([^"]*)" has started a run$`, s.waitForScheduledRun)
	sc.Step(`^schedule "([^"]*)" started no run before the server's minute (\d+)$`, s.noScheduledRunBefore)
}

// serverMinute is the server's minute n of the scenario.
func (s *scenario) serverMinute(n int) (time.Time, error) {
	if s.schedules.clockRead.IsZero() {
		return time.Time{}, fmt.Errorf("the server's clock was not read in this scenario")
	}
	return s.schedules.clockRead.Truncate(time.Minute).Add(time.Duration(n) * time.Minute), nil
}

// cronAt is a cron expression that fires at t's minute, once a year.
func cronAt(t time.Time) string {
	t = t.UTC()
	return fmt.Sprintf("%d %d %d %d *", t.Minute(), t.Hour(), t.Day(), int(t.Month()))
}

// serverNow reads the server's clock: the mock's, through its control API,
// or the Date header of a light request. The Date has whole seconds, so
// the server may be up to a second further on; ok is false when the
// server sends no Date.
func (s *scenario) serverNow(ctx context.Context) (now time.Time, ok bool, err error) {
	if s.api.control != nil {
		clock, err := s.api.controlCall(ctx, http.MethodGet, "/clock", nil)
		if err != nil {
			return time.Time{}, false, err
		}
		now, err := time.Parse(time.RFC3339Nano, str(clock["now"]))
		return now, err == nil, err
	}
	resp, err := s.api.do(ctx, call{method: http.MethodGet, path: "/agent/runs", query: url.Values{"limit": {"1"}}})
	if err != nil {
		return time.Time{}, false, err
	}
	date, err := http.ParseTime(resp.header.Get("Date"))
	if err != nil {
		return time.Time{}, false, nil
	}
	return date.Add(time.Since(resp.received)), true, nil
}

func (s *scenario) readServerClock(ctx context.Context) error {
	now, ok, err := s.serverNow(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return s.skip("the server's answers carry no Date header, so the suite cannot tell the time of its clock")
	}
	s.schedules.clockRead = now
	return nil
}

func (s *scenario) createScheduleAtMinute(ctx context.Context, nick string, n int) error {
	at, err := s.serverMinute(n)
	if err != nil {
		return err
	}
	if err := s.createSchedule(ctx, nick, cronAt(at)); err != nil {
		return err
	}
	s.firesAt(nick, at)
	return s.answeredBefore(at, "the schedule's tick")
}

func (s *scenario) replaceScheduleAtMinute(ctx context.Context, nick string, n int) error {
	at, err := s.serverMinute(n)
	if err != nil {
		return err
	}
	old := s.schedules.ticks[nick]
	if err := s.replaceSchedule(ctx, nick, cronAt(at), "Contract suite schedule "+nick+": look for flaky tests"); err != nil {
		return err
	}
	if err := s.last.expectStatus(http.StatusOK); err != nil {
		return err
	}
	s.firesAt(nick, at)
	if !old.IsZero() {
		return s.answeredBefore(old, "the old cron's tick")
	}
	return nil
}

func (s *scenario) firesAt(nick string, at time.Time) {
	if s.schedules.ticks == nil {
		s.schedules.ticks = map[string]time.Time{}
	}
	s.schedules.ticks[nick] = at
}

func (s *scenario) answeredBeforeMinute(n int) error {
	at, err := s.serverMinute(n)
	if err != nil {
		return err
	}
	return s.answeredBefore(at, fmt.Sprintf("the server's minute %d", n))
}

// answeredBefore makes the scenario inconclusive unless the last answer
// came, by the server's clock, before at: a schedule changed too close to a
// tick may or may not fire at it.
func (s *scenario) answeredBefore(at time.Time, what string) error {
	date, err := http.ParseTime(s.last.header.Get("Date"))
	if err != nil {
		return s.skip("the server's answers carry no Date header, so the suite cannot tell the time of its clock")
	}
	if latest := date.Add(time.Second); !latest.Before(at) {
		return s.inconclusive(fmt.Sprintf("%s answered at %s by the server's clock, too close to %s (%s) to tell what should happen then",
			s.last.op, date.UTC().Format(time.RFC3339), what, at.UTC().Format(time.RFC3339)))
	}
	return nil
}

// waitForScheduledRun lists the schedule's runs until it has started one.
// With the mock's control API the clock is moved to the schedule's tick
// first; otherwise the suite polls, for at most its patience, stretched
// to a minute past the tick (tickPatience). A schedule that has not fired
// when the patience runs out fails the scenario only if the server's clock
// is by then a minute past the tick; before that, the scenario is
// inconclusive.
func (s *scenario) waitForScheduledRun(ctx context.Context, nick string) error {
	tick, ok := s.schedules.ticks[nick]
	if !ok {
		return fmt.Errorf("schedule %q was not made to fire at a minute of the server's clock in this scenario", nick)
	}
	if s.api.control != nil {
		if err := s.letServerClockPass(ctx, tick.Add(time.Second), nil, "the schedule's tick"); err != nil {
			return err
		}
	}
	patience := s.suite.cfg.Timeout
	if s.api.control == nil {
		now, ok, err := s.serverNow(ctx)
		if err != nil {
			return err
		}
		if ok {
			patience = tickPatience(patience, s.suite.cfg.PollInterval, now, tick)
		}
	}
	deadline := time.Now().Add(patience)
	for waited := time.Duration(0); ; waited += s.suite.cfg.PollInterval {
		if err := s.listScheduleRuns(ctx, nick); err != nil {
			return err
		}
		if s.listings.page.refused {
			return fmt.Errorf("%s: listing the schedule's runs was refused", s.listings.page.op)
		}
		if len(s.listings.page.runs) > 0 {
			return nil
		}
		if s.api.control != nil || waited >= patience || time.Now().After(deadline) {
			now, ok, err := s.serverNow(ctx)
			if err != nil {
				return err
			}
			if ok && now.After(tick.Add(time.Minute)) {
				return fmt.Errorf("schedule %q started no run, though the server's clock (%s) is a minute past its tick (%s)",
					nick, now.UTC().Format(time.RFC3339), tick.UTC().Format(time.RFC3339))
			}
			return s.inconclusive(fmt.Sprintf("the server's clock did not reach a minute past schedule %q's tick (%s) within %s of waiting (--timeout %s, or until then)",
				nick, tick.UTC().Format(time.RFC3339), patience, s.suite.cfg.Timeout))
		}
		if err := s.suite.pause(ctx, s.suite.cfg.PollInterval); err != nil {
			return err
		}
	}
}

// tickPatience is how long to wait, polling, for a schedule to fire at
// tick, the server's clock reading now: the suite's patience (timeout),
// or, when the tick is further away, until the server's clock is a minute
// past it (when a schedule still silent fails), with a poll and the Date
// header's second to spare. So a tick two minutes away is waited for even
// with --timeout 1m, and the scenario ends passed or failed, not
// inconclusive.
func tickPatience(timeout, poll time.Duration, now, tick time.Time) time.Duration {
	return max(timeout, tick.Add(time.Minute).Sub(now)+poll+2*time.Second)
}

// noScheduledRunBefore lists the schedule's runs and checks that none was
// started before the server's minute n: a run started earlier fired on a
// tick the schedule no longer had.
func (s *scenario) noScheduledRunBefore(ctx context.Context, nick string, n int) error {
	at, err := s.serverMinute(n)
	if err != nil {
		return err
	}
	if err := s.listScheduleRuns(ctx, nick); err != nil {
		return err
	}
	if err := s.listedRunsFromSchedule(nick); err != nil {
		return err
	}
	for _, r := range s.listings.page.runs {
		created, err := timestamp(r, "created_at")
		if err != nil {
			return err
		}
		if created.Before(at) {
			return fmt.Errorf("run %s was started at %s, before the server's minute %d (%s), the first tick of the schedule's cron since it was replaced: it fired on its old cron",
				str(r["run_id"]), created.UTC().Format(time.RFC3339Nano), n, at.UTC().Format(time.RFC3339))
		}
	}
	return nil
}
