package mockserver

import (
	"encoding/json"
	"net/url"
	"strconv"

	"github.com/agentruns/agentruns/mockserver/store"
)

// The events resource over HTTP: polling the event log and reporting an
// event. What an event is, and how the log follows the runs' timelines, is
// mockserver/store's events.go.

// Limits of an event poll, as the document has them.
const (
	defaultEventLimit = 100
	maxEventLimit     = 500
	// maxEventRuns caps run_ids, so one poll cannot ask for a whole session.
	maxEventRuns = 500
	// maxEventFieldBytes bounds a reported event's ref_id and execution_id,
	// ids of a few dozen bytes at the service: the log keeps every event.
	maxEventFieldBytes = 1024
)

// RunEvent is one event as the API shows it.
type RunEvent struct {
	EventType   string  `json:"event_type"`
	RunID       string  `json:"run_id"`
	RefID       *string `json:"ref_id"`
	ExecutionID *string `json:"execution_id"`
	OccurredAt  string  `json:"occurred_at"`
	Sequence    int64   `json:"sequence"`
}

func eventJSON(e store.Event) RunEvent {
	out := RunEvent{EventType: string(e.Type), RunID: e.RunID, OccurredAt: formatTime(e.OccurredAt), Sequence: e.Seq}
	if e.RefID != "" {
		out.RefID = &e.RefID
	}
	if e.ExecutionID != "" {
		out.ExecutionID = &e.ExecutionID
	}
	return out
}

// pollEvents is GET /agent/events.
func (s *Server) pollEvents(c *call) response {
	q, aerr := parseEventQuery(c.query)
	if aerr != nil {
		return fail(aerr)
	}
	events, err := c.session.Events(c.principal, q)
	if err != nil {
		return fail(problemOf(err))
	}
	return ok(fitEvents(events, s.maxPageBytes))
}

// fitEvents shows a poll's events within the byte budget of a page of runs
// (Options.MaxPageBytes): the answer ends before the event that would pass
// it, always holding at least one. A poll answer is its own cursor: the
// poller asks again with since set to the last sequence it got, so an
// answer that ends early loses nothing.
func fitEvents(events []store.Event, budget int) []RunEvent {
	out := make([]RunEvent, 0, len(events))
	size := 2 // []
	for _, e := range events {
		ev := eventJSON(e)
		b, _ := json.Marshal(ev) // strings and numbers: never fails
		if size += len(b) + 1; size > budget && len(out) > 0 {
			break
		}
		out = append(out, ev)
	}
	return out
}

func parseEventQuery(v url.Values) (store.EventQuery, *apiError) {
	q := store.EventQuery{Limit: defaultEventLimit, RunIDs: v["run_ids"]}
	if len(q.RunIDs) == 0 {
		return q, queryError("run_ids", "name at least one run (repeat the parameter for each)")
	}
	if len(q.RunIDs) > maxEventRuns {
		return q, queryError("run_ids", "at most %d runs per poll, not %d", maxEventRuns, len(q.RunIDs))
	}
	for _, id := range q.RunIDs {
		if !isRunID(id) {
			return q, queryError("run_ids", "%q is not a valid run id", truncate(id, 80))
		}
	}
	since, err := single(v, "since")
	if err != nil {
		return q, err.(*apiError)
	}
	if since != "" {
		n, err := strconv.ParseInt(since, 10, 64)
		if err != nil || n < 0 {
			return q, queryError("since", "must be a sequence number, 0 or more, not %q", truncate(since, 40))
		}
		q.Since = n
	}
	limit, err := single(v, "limit")
	if err != nil {
		return q, err.(*apiError)
	}
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 || n > maxEventLimit {
			return q, queryError("limit", "must be an integer from 1 to %d, not %q", maxEventLimit, truncate(limit, 40))
		}
		q.Limit = n
	}
	return q, nil
}

// reportEventRequest is the body of POST /agent/events/{runId}.
type reportEventRequest struct {
	EventType   string `json:"event_type"`
	ExecutionID string `json:"execution_id"`
	RefID       string `json:"ref_id"`
}

// ReportEventResponse answers a reported event with its place in the log.
type ReportEventResponse struct {
	Sequence int64 `json:"sequence"`
}

// reportEvent is POST /agent/events/{runId}.
func (s *Server) reportEvent(c *call) response {
	var req reportEventRequest
	if aerr := c.fill(&req); aerr != nil {
		return fail(aerr)
	}
	for _, f := range []struct{ name, value string }{{"ref_id", req.RefID}, {"execution_id", req.ExecutionID}} {
		if len(f.value) > maxEventFieldBytes {
			return fail(errorf(codeInvalidRequest, "%s: %d bytes; at most %d", f.name, len(f.value), maxEventFieldBytes))
		}
	}
	seq, err := c.session.Report(c.principal, c.id, store.ReportedEvent{
		Type: store.EventType(req.EventType), ExecutionID: req.ExecutionID, RefID: req.RefID,
	})
	if err != nil {
		return fail(problemOf(err))
	}
	return ok(ReportEventResponse{Sequence: seq})
}

// Events returns the mock session's whole event log as it is now, every
// run's of every team, oldest first: what pollers would see, for tests.
func (c *Session) Events() []RunEvent {
	log := c.ms.EventLog()
	out := make([]RunEvent, len(log))
	for i, e := range log {
		out[i] = eventJSON(e)
	}
	return out
}
