package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Steps about run events: polling GET /agent/events for the run, and
// reporting events with POST /agent/events/{runId}.

// eventStates maps each lifecycle event to the state it reports.
var eventStates = map[string]string{
	"run_in_progress": "INPROGRESS", "run_succeeded": "SUCCEEDED", "run_failed": "FAILED",
	"run_errored": "ERROR", "run_blocked": "BLOCKED", "run_cancelled": "CANCELLED",
}

// runEvent is one polled event.
type runEvent struct {
	EventType   string  `json:"event_type"`
	RunID       string  `json:"run_id"`
	ExecutionID *string `json:"execution_id"`
	OccurredAt  string  `json:"occurred_at"`
	Sequence    int64   `json:"sequence"`
}

func (e runEvent) String() string {
	return fmt.Sprintf("#%d %s at %s", e.Sequence, e.EventType, e.OccurredAt)
}

// eventPolls are the answers of every poll of the scenario, in order.
type eventPolls struct {
	polls [][]runEvent
}

func (p *eventPolls) last() []runEvent {
	if len(p.polls) == 0 {
		return nil
	}
	return p.polls[len(p.polls)-1]
}

// pollEvents polls the events of the run after since.
func (s *scenario) pollEvents(ctx context.Context, since int64) error {
	if s.current == nil {
		return errNoRun
	}
	q := url.Values{"run_ids": {s.current.id}}
	if since > 0 {
		q.Set("since", strconv.FormatInt(since, 10))
	}
	resp, err := s.ask(ctx, call{method: http.MethodGet, path: "/agent/events", query: q})
	if err != nil {
		return err
	}
	if err := resp.ok("polling events"); err != nil {
		return err
	}
	var evs []runEvent
	if err := json.Unmarshal(resp.body, &evs); err != nil {
		return fmt.Errorf("%s: the events are not a JSON array of events: %v\n%s", resp.op, err, resp.excerpt())
	}
	s.events.polls = append(s.events.polls, evs)
	return nil
}

func (s *scenario) pollTheRunsEvents(ctx context.Context) error { return s.pollEvents(ctx, 0) }

// pollSinceTheLast polls on from the last event seen.
func (s *scenario) pollSinceTheLast(ctx context.Context) error {
	evs := s.events.last()
	if len(evs) == 0 {
		return fmt.Errorf("no event was polled before")
	}
	return s.pollEvents(ctx, evs[len(evs)-1].Sequence)
}

// known leaves out event types the suite does not know: the document tells
// clients to skip them.
func known(evs []runEvent) []runEvent {
	var out []runEvent
	for _, e := range evs {
		if _, ok := eventStates[e.EventType]; ok {
			out = append(out, e)
		}
	}
	return out
}

func (s *scenario) eventsInOrderAboutTheRun() error {
	evs := s.events.last()
	for i, e := range evs {
		if e.RunID != s.current.id {
			return fmt.Errorf("event %s is about run %q, not the polled run %s", e, e.RunID, s.current.id)
		}
		if i > 0 && e.Sequence <= evs[i-1].Sequence {
			return fmt.Errorf("events are not in increasing sequence order: %s came after %s", e, evs[i-1])
		}
		if i > 0 && e.OccurredAt < evs[i-1].OccurredAt && sameLayout(e.OccurredAt, evs[i-1].OccurredAt) {
			return fmt.Errorf("event %s occurred before the event before it, %s", e, evs[i-1])
		}
	}
	return nil
}

// sameLayout says two timestamps compare as strings (same length, both UTC).
func sameLayout(a, b string) bool {
	return len(a) == len(b) && strings.HasSuffix(a, "Z") && strings.HasSuffix(b, "Z")
}

func (s *scenario) lastEventReportsTheEnd() error {
	if s.current.details == nil {
		return fmt.Errorf("the run's details have not been fetched")
	}
	state := str(s.current.details["state"])
	evs := known(s.events.last())
	if len(evs) == 0 {
		return fmt.Errorf("run %s is %s, but no event reports it (events: none)", s.current.id, state)
	}
	last := evs[len(evs)-1]
	if eventStates[last.EventType] != state {
		return fmt.Errorf("run %s is %s, but its last event is %s (events: %v)", s.current.id, state, last, evs)
	}
	return nil
}

// eventsWithinTheRun checks that no event occurred before the run was
// created or after its last update.
func (s *scenario) eventsWithinTheRun() error {
	created, err1 := time.Parse(time.RFC3339Nano, str(s.current.details["created_at"]))
	updated, err2 := time.Parse(time.RFC3339Nano, str(s.current.details["updated_at"]))
	if err1 != nil || err2 != nil {
		return fmt.Errorf("the run's created_at or updated_at is not a timestamp")
	}
	for _, e := range s.events.last() {
		at, err := time.Parse(time.RFC3339Nano, e.OccurredAt)
		if err != nil {
			return fmt.Errorf("event %s: occurred_at is not a timestamp", e)
		}
		if at.Before(created) || at.After(updated) {
			return fmt.Errorf("event %s occurred outside the run's life, from its created_at %s to its updated_at %s", e, created.Format(time.RFC3339Nano), updated.Format(time.RFC3339Nano))
		}
	}
	return nil
}

func (s *scenario) eventsSameAsFirstPoll() error {
	if len(s.events.polls) < 2 {
		return fmt.Errorf("the events were polled only once")
	}
	first, last := s.events.polls[0], s.events.last()
	if fmt.Sprint(first) != fmt.Sprint(last) {
		return fmt.Errorf("the same events came back different: first %v, then %v", first, last)
	}
	return nil
}

func (s *scenario) noEventsCameBack() error {
	if evs := s.events.last(); len(evs) > 0 {
		return fmt.Errorf("expected no events after the last one seen, got %v", evs)
	}
	return nil
}

// eventsAre checks the run's event types, in order: "run_in_progress and run_succeeded".
func (s *scenario) eventsAre(list string) error {
	want := splitList(list)
	var got []string
	for _, e := range s.events.last() {
		got = append(got, e.EventType)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		return fmt.Errorf("expected the events %s, got %v", strings.Join(want, ", "), s.events.last())
	}
	return nil
}

// eventOccurredAtRunField checks an event's occurred_at against the run's field.
func (s *scenario) eventOccurredAtRunField(eventType, field string) error {
	want := str(s.current.details[field])
	for _, e := range s.events.last() {
		if e.EventType == eventType {
			if !sameInstant(e.OccurredAt, want) {
				return fmt.Errorf("event %s occurred at %s, expected the run's %s, %s", e, e.OccurredAt, field, want)
			}
			return nil
		}
	}
	return fmt.Errorf("no %s event among %v", eventType, s.events.last())
}

func sameInstant(a, b string) bool {
	ta, err1 := time.Parse(time.RFC3339Nano, a)
	tb, err2 := time.Parse(time.RFC3339Nano, b)
	return err1 == nil && err2 == nil && ta.Equal(tb)
}

// reportEvent reports an event for the run.
func (s *scenario) reportEvent(ctx context.Context, eventType, executionID string) error {
	if s.current == nil {
		return errNoRun
	}
	body := map[string]string{"event_type": eventType}
	if executionID != "" {
		body["execution_id"] = executionID
	}
	data, _ := json.Marshal(body)
	return s.send(ctx, call{method: http.MethodPost, path: "/agent/events/" + pathEscape(s.current.id), body: data})
}

func (s *scenario) reportEventPlain(ctx context.Context, eventType string) error {
	return s.reportEvent(ctx, eventType, "")
}

// reportedEventIsPolled checks that the last report's sequence is that of
// the run's last polled event, with the execution id sent.
func (s *scenario) reportedEventCarries(executionID string) error {
	evs := s.events.last()
	if len(evs) == 0 {
		return fmt.Errorf("no events were polled")
	}
	e := evs[len(evs)-1]
	if e.ExecutionID == nil || *e.ExecutionID != executionID {
		return fmt.Errorf("the last event %s does not carry the execution id %q", e, executionID)
	}
	return nil
}

// splitList splits "a, b and c".
func splitList(list string) []string {
	list = strings.ReplaceAll(list, " and ", ", ")
	var out []string
	for _, p := range strings.Split(list, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// registerRunEvents registers the steps of polling and reporting run events.
func (s *scenario) registerRunEvents(sc stepContext) {
	sc.Step(`^I poll the run's events$`, s.pollTheRunsEvents)
	sc.Step(`^I poll the run's events again$`, s.pollTheRunsEvents)
	sc.Step(`^I poll the run's events until they report the state it ended in$`, s.pollUntilTheEnd)
	sc.Step(`^each event occurred when the state it reports began, as the run's timestamps show$`, s.eventsAtTheRunsTimes)
	sc.Step(`^I poll the run's events since the last one$`, s.pollSinceTheLast)
	sc.Step(`^the events are about the run, in increasing sequence order$`, s.eventsInOrderAboutTheRun)
	sc.Step(`^the last event reports the run's state$`, s.lastEventReportsTheEnd)
	sc.Step(`^every event occurred between the run's creation and its last update$`, s.eventsWithinTheRun)
	sc.Step(`^the events are the same as at the first poll$`, s.eventsSameAsFirstPoll)
	sc.Step(`^no events came back$`, s.noEventsCameBack)
	sc.Step(`^the run's events are (run_[a-z_]+(?:(?:, | and )run_[a-z_]+)*)$`, s.eventsAre)
	sc.Step(`^the "(run_[a-z_]+)" event occurred at the run's "([^"]*)"$`, s.eventOccurredAtRunField)
	sc.Step(`^I report the event "(run_[a-z_]+)" for the run with the execution id "([^"]*)"$`, s.reportEvent)
	sc.Step(`^I report the event "(run_[a-z_]+)" for the run$`, s.reportEventPlain)
	sc.Step(`^the last event carries the execution id "([^"]*)"$`, s.reportedEventCarries)
}

// pollUntilTheEnd polls the events of a run that has ended until one
// reports the state it ended in. The document promises the events'
// order, not that they are there the moment the state changes: a server
// may record one a moment later. The patience is the suite's
// (Config.Timeout), or a minute of the mock's clock when the suite drives
// it. Only the last poll is kept, as the first of those that follow.
func (s *scenario) pollUntilTheEnd(ctx context.Context) error {
	if s.current == nil {
		return errNoRun
	}
	state := str(s.current.details["state"])
	if !isTerminal(state) {
		return fmt.Errorf("run %s has not been seen to end (it was last %s): watch it until it ends first", s.current.id, show(s.current.details["state"]))
	}
	patience := s.suite.cfg.Timeout
	if s.api.control != nil {
		patience = min(patience, time.Minute)
	}
	deadline := time.Now().Add(s.suite.cfg.Timeout)
	for waited := time.Duration(0); ; {
		if err := s.pollEvents(ctx, 0); err != nil {
			return err
		}
		if slices.ContainsFunc(s.events.last(), func(e runEvent) bool { return eventStates[e.EventType] == state }) {
			// Where it stands among the others is for later steps to judge.
			s.events.polls = s.events.polls[len(s.events.polls)-1:]
			return nil
		}
		if waited >= patience || time.Now().After(deadline) {
			return fmt.Errorf("run %s ended in %s, but %s later its events still do not report it (events: %v)", s.current.id, state, patience, s.events.last())
		}
		d, err := s.tick(ctx)
		if err != nil {
			return err
		}
		waited += d
	}
}

// eventsAtTheRunsTimes checks the events against the run's own timeline: the
// first run_in_progress occurred at the run's started_at, and the event of
// its end at its last update, each within the precision the server shows.
// An event is stamped with the moment its state began, not with the moment
// the server noticed the change.
func (s *scenario) eventsAtTheRunsTimes() error {
	if s.current == nil || s.current.details == nil {
		return fmt.Errorf("the run's details have not been fetched")
	}
	run := s.current.details
	evs := known(s.events.last())
	if len(evs) == 0 {
		return fmt.Errorf("run %s has no events", s.current.id)
	}
	check := func(e runEvent, field string) error {
		raw := str(run[field])
		if raw == "" {
			return nil // not shown: nothing to compare with
		}
		if !closeInstants(e.OccurredAt, raw) {
			return fmt.Errorf("event %s occurred at %s, but the run's %s is %s: an event is stamped with the moment its state began", e, e.OccurredAt, field, raw)
		}
		return nil
	}
	for _, e := range evs {
		if e.EventType == "run_in_progress" {
			if err := check(e, "started_at"); err != nil {
				return err
			}
			break
		}
	}
	if last := evs[len(evs)-1]; isTerminal(eventStates[last.EventType]) {
		return check(last, "updated_at")
	}
	return nil
}

// closeInstants says whether two timestamps may stand for the same
// instant, each known to the last digit it shows.
func closeInstants(a, b string) bool {
	ta, err1 := time.Parse(time.RFC3339Nano, a)
	tb, err2 := time.Parse(time.RFC3339Nano, b)
	if err1 != nil || err2 != nil {
		return false
	}
	d := ta.Sub(tb)
	if d < 0 {
		d = -d
	}
	return d < max(shownUnit(a), shownUnit(b)) || d == 0
}
