package mockserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The control API lives under /__mock/, outside the API's paths, so no API
// client can reach it by accident. Every call acts on the session named by
// the X-Mock-Session header, like the API calls do.

// ClockInfo is the control API's view of a session clock.
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

func (s *Server) control(w http.ResponseWriter, r *http.Request, path string) {
	if s.cfg.disableControl {
		writeProblem(w, r, errorf(codeNotFound, "no such path: %s (the control API is turned off)", r.URL.Path))
		return
	}
	if tok := s.cfg.controlToken; tok != "" {
		// Digests, so the comparison tells nothing of the token's length either.
		got := sha256.Sum256([]byte(strings.TrimSpace(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))))
		want := sha256.Sum256([]byte(tok))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			writeProblem(w, r, errorf(codeAuthRequired, "the control API needs its token: Authorization: Bearer <control token>"))
			return
		}
	}
	world, err := s.world(r)
	if err != nil {
		writeProblem(w, r, &apiError{code: codeUnavailable, detail: "too many isolated sessions are open", retryAfter: 5 * time.Second})
		return
	}
	var out any
	var aerr *apiError
	switch parts := strings.Split(strings.Trim(path, "/"), "/"); {
	case path == "/info":
		if allowMethod(w, r, "GET, HEAD") {
			out = Info{Mock: "agentruns", Session: r.Header.Get(SessionHeader), Clock: world.clockInfo()}
		}
	case path == "/reset":
		if allowMethod(w, r, "POST") {
			world.reset()
			out = Info{Mock: "agentruns", Session: r.Header.Get(SessionHeader), Clock: world.clockInfo()}
		}
	case path == "/clock":
		if allowMethod(w, r, "GET, HEAD, PUT") {
			out, aerr = s.clockCall(world, r)
		}
	case path == "/clock/advance":
		if allowMethod(w, r, "POST") {
			out, aerr = advanceClock(world, r)
		}
	case len(parts) == 3 && parts[0] == "runs" && parts[2] == "state":
		if allowMethod(w, r, "POST") {
			out, aerr = forceState(world, r, parts[1])
		}
	case path == "/faults":
		if allowMethod(w, r, "GET, HEAD, POST, DELETE") {
			out, aerr = faultsCall(world, r)
		}
	case len(parts) == 2 && parts[0] == "faults":
		if allowMethod(w, r, "DELETE") {
			if !world.faults.removeID(parts[1]) {
				aerr = errorf(codeNotFound, "no fault rule %q in this session", parts[1])
			} else {
				out = world.faults.list()
			}
		}
	case path == "/session":
		if allowMethod(w, r, "DELETE") {
			s.closeSession(r.Header.Get(SessionHeader))
			out = Info{Mock: "agentruns", Session: r.Header.Get(SessionHeader), Clock: world.clockInfo()}
		}
	case path == "/fates":
		if allowMethod(w, r, "GET, HEAD, POST, DELETE") {
			out, aerr = fatesCall(world, r)
		}
	case path == "/sessions":
		if allowMethod(w, r, "GET, HEAD") {
			out = s.sessionList()
		}
	case path == "/requests":
		if allowMethod(w, r, "GET, HEAD, DELETE") {
			if r.Method == http.MethodDelete {
				world.journal.clear()
			}
			out = world.journal.list()
		}
	default:
		aerr = errorf(codeNotFound, "no such control path: %s", r.URL.Path)
	}
	switch {
	case aerr != nil:
		writeProblem(w, r, aerr)
	case out != nil:
		writeJSON(w, r, out)
	}
}

func (w *world) clockInfo() ClockInfo {
	w.mu.RLock()
	c := w.clock
	w.mu.RUnlock()
	return ClockInfo{Now: formatTime(c.Now()), Mode: c.Mode()}
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

func (s *Server) clockCall(world *world, r *http.Request) (any, *apiError) {
	if r.Method != http.MethodPut {
		return world.clockInfo(), nil
	}
	var req struct {
		Mode ClockMode `json:"mode"`
		Now  string    `json:"now"`
	}
	if aerr := decodeControl(r, &req); aerr != nil {
		return nil, aerr
	}
	world.mu.RLock()
	c := world.clock
	world.mu.RUnlock()
	switch req.Mode {
	case "":
	case RealClock, VirtualClock:
		c.SetMode(req.Mode)
	default:
		return nil, errorf(codeInvalidRequest, "mode: must be real or virtual, not %q", req.Mode)
	}
	if req.Now != "" {
		t, err := time.Parse(time.RFC3339Nano, req.Now)
		if err != nil {
			return nil, errorf(codeInvalidRequest, "now: must be an RFC 3339 date-time, not %q", req.Now)
		}
		if _, err := c.Set(t); err != nil {
			return nil, &apiError{code: codeInvalidRequest, status: http.StatusConflict, detail: "now: " + err.Error() + "; it is " + formatTime(c.Now())}
		}
	}
	world.changed()
	return world.clockInfo(), nil
}

func advanceClock(world *world, r *http.Request) (any, *apiError) {
	var req struct {
		By string `json:"by"`
	}
	if aerr := decodeControl(r, &req); aerr != nil {
		return nil, aerr
	}
	d, err := time.ParseDuration(req.By)
	if err != nil || d < 0 {
		return nil, errorf(codeInvalidRequest, "by: must be a positive duration such as 90s or 5m, not %q", req.By)
	}
	world.mu.RLock()
	c := world.clock
	world.mu.RUnlock()
	if _, err := c.Advance(d); err != nil {
		return nil, errorf(codeInvalidRequest, "by: %v", err)
	}
	world.changed()
	return world.clockInfo(), nil
}

func forceState(world *world, r *http.Request, rawID string) (any, *apiError) {
	id, err := url.PathUnescape(rawID)
	if err != nil {
		return nil, errorf(codeInvalidRequest, "runId %q is not a valid run id", rawID)
	}
	var req struct {
		State     State  `json:"state"`
		Message   string `json:"message"`
		ErrorCode string `json:"error_code"`
		Retryable *bool  `json:"retryable"`
	}
	if aerr := decodeControl(r, &req); aerr != nil {
		return nil, aerr
	}
	if !req.State.valid() {
		return nil, errorf(codeInvalidRequest, "state: %q is not a run state", req.State)
	}
	if req.ErrorCode != "" && !knownErrorCode(req.ErrorCode) {
		return nil, errorf(codeInvalidRequest, "error_code: %q is not an error code of the API", req.ErrorCode)
	}
	var msg *StatusMessage
	if req.Message != "" || req.ErrorCode != "" || req.Retryable != nil {
		f := fate{final: req.State, message: req.Message, errorCode: req.ErrorCode, retryable: req.Retryable}
		msg = &StatusMessage{Message: req.Message, ErrorCode: req.ErrorCode, Retryable: req.Retryable}
		if req.State == Failed || req.State == Errored {
			msg = f.statusMessage()
		}
		if msg.Message == "" {
			msg.Message = string(req.State)
		}
	}
	item, err := world.force(id, req.State, msg)
	if err != nil {
		if errors.Is(err, errRunNotFound) {
			return nil, errorf(codeNotFound, "no run with id %q in this session", id)
		}
		return nil, asAPIError(err)
	}
	return item, nil
}

// faultsCall lists (GET), adds (POST) or clears (DELETE) fault rules.
func faultsCall(world *world, r *http.Request) (any, *apiError) {
	switch r.Method {
	case http.MethodPost:
		var rule FaultRule
		if aerr := decodeControl(r, &rule); aerr != nil {
			return nil, aerr
		}
		added, err := world.faults.add(rule)
		if err != nil {
			return nil, errorf(codeInvalidRequest, "fault rule: %v", err)
		}
		return added, nil
	case http.MethodDelete:
		world.faults.clear()
	}
	return world.faults.list(), nil
}

// fatesCall lists (GET), adds (POST) or clears (DELETE) the session's fate rules.
func fatesCall(world *world, r *http.Request) (any, *apiError) {
	switch r.Method {
	case http.MethodPost:
		var rule FateRule
		if aerr := decodeControl(r, &rule); aerr != nil {
			return nil, aerr
		}
		added, err := world.fates.add(rule)
		if err != nil {
			return nil, errorf(codeInvalidRequest, "fate rule: %v", err)
		}
		return added, nil
	case http.MethodDelete:
		world.fates.clear()
	}
	return world.fates.list(), nil
}
