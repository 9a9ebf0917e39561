package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Steps of features/schedules.feature.
// Schedules a scenario creates are named "<label> <nickname>", so that a
// listing on a server full of other schedules can be narrowed to them, and
// are deleted when the scenario ends.

// schedulesRoom is what the schedule steps keep.
type schedulesRoom struct {
	ids map[string]string // nickname -> id of the schedules this scenario created
	// clockRead is the server's clock as the scenario read it (schedule_ticks.go).
	clockRead time.Time
	// ticks maps a nickname to the one tick of its schedule's cron (schedule_ticks.go).
	ticks map[string]time.Time
}

// registerSchedules registers the steps of schedules.
func (s *scenario) registerSchedules(sc stepContext) {
	sc.Step(`^I create a schedule "([^"]*)" with the cron "([^"]*)"$`, s.createSchedule)
	sc.Step(`^I create a paused schedule "([^"]*)" with the cron "([^"]*)"$`, s.createPausedSchedule)
	sc.Step(`^I create a schedule with the body (.*)$`, s.createScheduleRaw)
	sc.Step(`^I fetch schedule "([^"]*)"$`, s.fetchSchedule)
	sc.Step(`^I fetch a schedule that does not exist$`, s.fetchUnknownSchedule)
	sc.Step(`^I replace schedule "([^"]*)" with the cron "([^"]*)" and the prompt "([^"]*)"$`, s.replaceSchedule)
	sc.Step(`^I (pause|resume|delete) schedule "([^"]*)"$`, s.actOnSchedule)
	sc.Step(`^the schedules I created are listed in the order (.+)$`, s.schedulesListedInOrder)
	sc.Step(`^the response is schedule "([^"]*)"$`, s.responseIsSchedule)
	sc.Step(`^the problem's detail names "([^"]*)"$`, s.problemNames)
	sc.Step(`^(\d+) days? pass(?:es)? on the mock's clock$`, s.daysPass)
	sc.Step(`^I list the runs of schedule "([^"]*)"$`, s.listScheduleRuns)
	sc.Step(`^every listed run was started by schedule "([^"]*)", each at its own tick$`, s.listedRunsFromSchedule)
	sc.Step(`^every listed run was started by schedule "([^"]*)" at (\d\d):(\d\d) UTC$`, s.listedRunsFromScheduleAt)
}

func (s *scenario) scheduleName(nick string) string { return s.label + " " + nick }

func (s *scenario) createSchedule(ctx context.Context, nick, cron string) error {
	return s.postSchedule(ctx, nick, map[string]any{"name": s.scheduleName(nick), "cron_schedule": cron,
		"prompt": "Contract suite schedule " + nick + ": look for flaky tests"})
}

func (s *scenario) createPausedSchedule(ctx context.Context, nick, cron string) error {
	return s.postSchedule(ctx, nick, map[string]any{"name": s.scheduleName(nick), "cron_schedule": cron, "enabled": false,
		"prompt": "Contract suite schedule " + nick + ": look for flaky tests"})
}

func (s *scenario) postSchedule(ctx context.Context, nick string, body map[string]any) error {
	data, _ := json.Marshal(body)
	resp, err := s.ask(ctx, call{method: http.MethodPost, path: "/agent/schedules", body: data})
	s.leave(resp) // judged by the response steps too
	if err != nil {
		return err
	}
	if err := resp.expectStatus(http.StatusCreated); err != nil {
		return err
	}
	var made struct {
		ID string `json:"id"`
	}
	if err := resp.json(&made); err != nil {
		return err
	}
	if made.ID == "" {
		return fmt.Errorf("%s: the created schedule has no id\n%s", resp.op, resp.excerpt())
	}
	if s.schedules.ids == nil {
		s.schedules.ids = map[string]string{}
	}
	s.schedules.ids[nick] = made.ID
	return nil
}

func (s *scenario) createScheduleRaw(ctx context.Context, body string) error {
	resp, err := s.ask(ctx, call{method: http.MethodPost, path: "/agent/schedules", body: []byte(s.expand(body))})
	s.leave(resp) // judged by the response steps
	// A server that took it: clean up.
	if resp != nil && resp.status == http.StatusCreated {
		var made struct {
			ID string `json:"id"`
		}
		if resp.json(&made) == nil && made.ID != "" {
			if s.schedules.ids == nil {
				s.schedules.ids = map[string]string{}
			}
			s.schedules.ids["raw-"+made.ID] = made.ID
		}
	}
	return err
}

func (s *scenario) scheduleID(nick string) (string, error) {
	id, ok := s.schedules.ids[nick]
	if !ok {
		return "", fmt.Errorf("no schedule %q was created in this scenario", nick)
	}
	return id, nil
}

func (s *scenario) fetchSchedule(ctx context.Context, nick string) error {
	id, err := s.scheduleID(nick)
	if err != nil {
		return err
	}
	return s.send(ctx, call{method: http.MethodGet, path: "/agent/schedules/" + url.PathEscape(id)})
}

func (s *scenario) fetchUnknownSchedule(ctx context.Context) error {
	return s.send(ctx, call{method: http.MethodGet, path: "/agent/schedules/" + s.unknownID})
}

func (s *scenario) replaceSchedule(ctx context.Context, nick, cron, prompt string) error {
	id, err := s.scheduleID(nick)
	if err != nil {
		return err
	}
	data, _ := json.Marshal(map[string]any{"name": s.scheduleName(nick), "cron_schedule": cron, "enabled": true, "prompt": prompt})
	return s.send(ctx, call{method: http.MethodPut, path: "/agent/schedules/" + url.PathEscape(id), body: data})
}

func (s *scenario) actOnSchedule(ctx context.Context, action, nick string) error {
	id, err := s.scheduleID(nick)
	if err != nil {
		return err
	}
	c := call{method: http.MethodPost, path: "/agent/schedules/" + url.PathEscape(id) + "/" + action}
	if action == "delete" {
		c = call{method: http.MethodDelete, path: "/agent/schedules/" + url.PathEscape(id)}
	}
	return s.send(ctx, c)
}

// schedulesListed lists the schedules as the caller a sees them; the
// answer is not kept as the last response.
func (s *scenario) schedulesListed(ctx context.Context, a auth) ([]map[string]any, error) {
	resp, err := s.api.do(ctx, call{method: http.MethodGet, path: "/agent/schedules", auth: a})
	if err != nil {
		return nil, err
	}
	if err := resp.ok("listing schedules"); err != nil {
		return nil, err
	}
	var doc struct {
		Schedules []map[string]any `json:"schedules"`
	}
	return doc.Schedules, resp.json(&doc)
}

func (s *scenario) schedulesListedInOrder(ctx context.Context, names string) error {
	listed, err := s.schedulesListed(ctx, auth{})
	if err != nil {
		return err
	}
	var got []string
	for _, sc := range listed {
		if name := str(sc["name"]); strings.HasPrefix(name, s.label+" ") {
			got = append(got, strings.TrimPrefix(name, s.label+" "))
		}
	}
	want := parseNames(names)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		return fmt.Errorf("expected the schedules %s in that order (by name), got %s", strings.Join(want, ", "), strings.Join(got, ", "))
	}
	return nil
}

func (s *scenario) responseIsSchedule(nick string) error {
	id, err := s.scheduleID(nick)
	if err != nil {
		return err
	}
	sub := s.last.subject()
	if err := sub.fieldIs("id", id); err != nil {
		return err
	}
	return sub.fieldIs("name", s.scheduleName(nick))
}

func (s *scenario) problemNames(field string) error {
	sub := s.last.subject()
	if sub.err != nil {
		return sub.err
	}
	if d := str(sub.doc["detail"]) + " " + str(sub.doc["error"]); !strings.Contains(d, field) {
		return fmt.Errorf("expected the problem to name %q, got %q", field, d)
	}
	return nil
}

func (s *scenario) daysPass(ctx context.Context, days int) error {
	return s.api.advanceClock(ctx, time.Duration(days)*24*time.Hour)
}

func (s *scenario) listScheduleRuns(ctx context.Context, nick string) error {
	id, err := s.scheduleID(nick)
	if err != nil {
		return err
	}
	return s.listRuns(ctx, "schedule_id="+id+"&limit=100")
}

func (s *scenario) listedRunsFromSchedule(nick string) error {
	id, err := s.scheduleID(nick)
	if err != nil {
		return err
	}
	if s.listings.page == nil || s.listings.page.err != nil {
		return fmt.Errorf("no listing to check")
	}
	ticks := map[string]bool{}
	for _, r := range s.listings.page.runs {
		sched, _ := r["schedule"].(map[string]any)
		switch {
		case r["source"] != "SCHEDULED_AGENT":
			return fmt.Errorf("run %s has source %s, want SCHEDULED_AGENT", str(r["run_id"]), str(r["source"]))
		case sched == nil || sched["schedule_id"] != id:
			return fmt.Errorf("run %s shows schedule %s, want %s", str(r["run_id"]), str(r["schedule"]), id)
		case ticks[str(r["created_at"])]:
			return fmt.Errorf("two runs were started at the same tick %s", str(r["created_at"]))
		}
		ticks[str(r["created_at"])] = true
	}
	return nil
}

// listedRunsFromScheduleAt checks that every listed run was started by the
// schedule at hour:minute UTC, each at its own tick.
func (s *scenario) listedRunsFromScheduleAt(nick string, hour, minute int) error {
	if err := s.listedRunsFromSchedule(nick); err != nil {
		return err
	}
	for _, r := range s.listings.page.runs {
		t, err := timestamp(r, "created_at")
		if err != nil {
			return err
		}
		if t = t.UTC(); t.Hour() != hour || t.Minute() != minute {
			return fmt.Errorf("run %s was started at %s, not at %02d:%02d UTC as the schedule's cron says", str(r["run_id"]), t.Format(time.RFC3339), hour, minute)
		}
	}
	return nil
}
