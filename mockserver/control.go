package mockserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/agentruns/agentruns/mockserver/errcode"
	"github.com/agentruns/agentruns/mockserver/store"
)

// The control API lives under /__mock/, outside the API's paths, so no API
// client can reach it by accident. Every call acts on the mock session named
// by the X-Mock-Session header, like the API calls do. Its routes are in the
// routing table (routes.go).

// ClockInfo is the control API's view of a mock session's clock.
type ClockInfo struct {
	Now  string    `json:"now"`
	Mode ClockMode `json:"mode"`
}

// Info answers GET /__mock/info; clients use it to detect the mock.
type Info struct {
	Mock    string    `json:"mock"`
	Session string    `json:"session"`
	Clock   ClockInfo `json:"clock"`
}

func clockInfo(ms *store.Session) ClockInfo {
	c := ms.Clock()
	return ClockInfo{Now: formatTime(c.Now), Mode: c.Mode}
}

func info(c *call) Info {
	return Info{Mock: "agentruns", Session: c.r.Header.Get(SessionHeader), Clock: clockInfo(c.session)}
}

func (s *Server) info(c *call) response { return ok(info(c)) }

func (s *Server) reset(c *call) response {
	c.session.Reset()
	s.runs.clear()
	return ok(info(c))
}

func (s *Server) closeSession(c *call) response {
	s.store.Close(c.r.Header.Get(SessionHeader))
	s.runs.clear()
	return ok(info(c))
}

// decodeControl reads a control request body strictly: a misspelt field is
// an error here, because a test that thinks it set something must know.
func decodeControl(r *http.Request, v any) *apiError {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return errorf(codePayloadTooLarge, "a control request body is limited to %d bytes", tooLarge.Limit)
		}
		return errorf(codeInvalidRequest, "the body: %v", err)
	}
	return nil
}

func (s *Server) readClock(c *call) response { return ok(clockInfo(c.session)) }

func (s *Server) setClock(c *call) response {
	var req struct {
		Mode ClockMode `json:"mode"`
		Now  string    `json:"now"`
	}
	if aerr := decodeControl(c.r, &req); aerr != nil {
		return fail(aerr)
	}
	switch req.Mode {
	case "":
	case RealClock, VirtualClock:
		c.session.SetClockMode(req.Mode)
	default:
		return fail(errorf(codeInvalidRequest, "mode: must be real or virtual, not %q", req.Mode))
	}
	if req.Now != "" {
		t, err := time.Parse(time.RFC3339Nano, req.Now)
		if err != nil {
			return fail(errorf(codeInvalidRequest, "now: must be an RFC 3339 date-time, not %q", req.Now))
		}
		if _, err = c.session.SetNow(t); err != nil {
			return fail(problemOf(fmt.Errorf("now: %w (asked for %s; it is %s)", err, req.Now, formatTime(c.session.Now()))))
		}
	}
	return ok(clockInfo(c.session))
}

func (s *Server) advanceClock(c *call) response {
	var req struct {
		By string `json:"by"`
	}
	if aerr := decodeControl(c.r, &req); aerr != nil {
		return fail(aerr)
	}
	d, err := time.ParseDuration(req.By)
	if err != nil || d < 0 {
		return fail(errorf(codeInvalidRequest, "by: must be a positive duration such as 90s or 5m, not %q", req.By))
	}
	if _, err := c.session.Advance(d); err != nil {
		return fail(problemOf(fmt.Errorf("by: %w", err)))
	}
	return ok(clockInfo(c.session))
}

func (s *Server) forceState(c *call) response {
	var req struct {
		State     State  `json:"state"`
		Message   string `json:"message"`
		ErrorCode string `json:"error_code"`
		Retryable *bool  `json:"retryable"`
	}
	if aerr := decodeControl(c.r, &req); aerr != nil {
		return fail(aerr)
	}
	if !req.State.Valid() {
		return fail(errorf(codeInvalidRequest, "state: %q is not a run state", req.State))
	}
	if req.ErrorCode != "" && !errcode.Known(req.ErrorCode) {
		return fail(errorf(codeInvalidRequest, "error_code: %q is not an error code of the API", req.ErrorCode))
	}
	if err := (store.Fate{Final: req.State, ErrorCode: req.ErrorCode}).Check(); err != nil {
		return fail(errorf(codeInvalidRequest, "error_code: %v", err))
	}
	var msg *StatusMessage
	if req.Message != "" || req.ErrorCode != "" || req.Retryable != nil {
		msg = &StatusMessage{Message: req.Message, ErrorCode: req.ErrorCode, Retryable: req.Retryable}
		if req.State == Failed || req.State == Errored {
			msg = store.Fate{Final: req.State, Message: req.Message, ErrorCode: req.ErrorCode, Retryable: req.Retryable}.StatusMessage()
		}
		if msg.Message == "" {
			msg.Message = string(req.State)
		}
	}
	v, err := c.session.Force(c.id, req.State, msg)
	if err != nil {
		return fail(problemOf(err))
	}
	return ok(runJSON{v, s.sessionLinkBase})
}

// Fault rules: list (GET), add (POST), clear (DELETE), remove one.

func listFaults(c *call) response { return ok(harnessOf(c.session).faults.List()) }

func addFault(c *call) response {
	var rule FaultRule
	if aerr := decodeControl(c.r, &rule); aerr != nil {
		return fail(aerr)
	}
	added, err := harnessOf(c.session).faults.add(rule)
	if err != nil {
		return fail(errorf(codeInvalidRequest, "fault rule: %v", err))
	}
	return ok(added)
}

func clearFaults(c *call) response {
	harnessOf(c.session).faults.Clear()
	return listFaults(c)
}

func removeFault(c *call) response {
	if !harnessOf(c.session).faults.removeID(c.id) {
		return fail(errorf(codeNotFound, "no fault rule %q in this session", c.id))
	}
	return listFaults(c)
}

// Fate rules: list (GET), add (POST), clear (DELETE).

func listFates(c *call) response { return ok(c.session.Fates()) }

func addFate(c *call) response {
	var rule FateRule
	if aerr := decodeControl(c.r, &rule); aerr != nil {
		return fail(aerr)
	}
	added, err := c.session.AddFate(rule)
	if err != nil {
		return fail(errorf(codeInvalidRequest, "fate rule: %v", err))
	}
	return ok(added)
}

func clearFates(c *call) response {
	c.session.ClearFates()
	return listFates(c)
}

// The request journal: list (GET), clear (DELETE).

func listRequests(c *call) response { return ok(harnessOf(c.session).journal.list()) }

func clearRequests(c *call) response {
	harnessOf(c.session).journal.clear()
	return listRequests(c)
}

// ScheduleRuns answers GET /__mock/schedules/{scheduleId}/runs: the runs a
// schedule started, oldest first, whatever their team.
type ScheduleRuns struct {
	Runs []RunItem `json:"runs"`
}

func (s *Server) scheduleRuns(c *call) response {
	views, err := c.session.ScheduleRuns(c.id)
	if err != nil {
		return fail(problemOf(err))
	}
	out := ScheduleRuns{Runs: make([]RunItem, 0, len(views))}
	for _, v := range views {
		out.Runs = append(out.Runs, runItem(v, s.sessionLinkBase))
	}
	return ok(out)
}

// fireSchedule is POST /__mock/schedules/{scheduleId}/fire: the schedule
// starts a run now, paused or not; it answers the run.
func (s *Server) fireSchedule(c *call) response {
	v, err := c.session.FireSchedule(c.id)
	if err != nil {
		return fail(problemOf(err))
	}
	return ok(runJSON{v, s.sessionLinkBase})
}
