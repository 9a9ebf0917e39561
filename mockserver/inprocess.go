package mockserver

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"time"

	"github.com/jarcoal/httpmock"
)

// errDropped is what an in-process client sees where a network client would
// see its connection closed by an injected drop.
var errDropped = errors.New("mockserver: connection dropped (injected fault)")

// Transport returns an http.RoundTripper that answers every request with the
// mock in the same process: no listener, no port, any host name.
func (s *Server) Transport() http.RoundTripper { return inProcess{s} }

// Client returns an *http.Client whose requests the mock answers in-process.
func (s *Server) Client() *http.Client { return &http.Client{Transport: s.Transport()} }

type inProcess struct{ s *Server }

func (t inProcess) RoundTrip(req *http.Request) (resp *http.Response, err error) {
	rec := httptest.NewRecorder()
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				panic(v)
			}
			resp, err = nil, errDropped
		}
	}()
	t.s.ServeHTTP(rec, req)
	// A caller that gave up during a delay gets its context's error, as it
	// would over the network, not the answer written after it left.
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	resp = rec.Result()
	resp.Request = req
	return resp, nil
}

// RegisterOn makes the mock answer every request under baseURL that goes
// through mt, a transport from httpmock.NewMockTransport.
func (s *Server) RegisterOn(mt *httpmock.MockTransport, baseURL string) {
	prefix := regexp.MustCompile("^" + regexp.QuoteMeta(strings.TrimSuffix(baseURL, "/")) + "(/|$)")
	responder := func(req *http.Request) (*http.Response, error) { return s.Transport().RoundTrip(req) }
	for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
		mt.RegisterRegexpResponder(m, prefix, responder)
	}
}

// Session gives a Go test the control API's powers over one session
// without HTTP; "" is the default session.
func (s *Server) Session(name string) *Session {
	w, err := s.session(name)
	if err != nil { // cannot happen: a full server closes its oldest session
		panic(err)
	}
	return &Session{w: w}
}

// Session controls one session's clock, runs and faults.
type Session struct{ w *world }

func (c *Session) clock() *clock {
	c.w.mu.RLock()
	defer c.w.mu.RUnlock()
	return c.w.clock
}

// Now is the session's current instant.
func (c *Session) Now() time.Time { return c.clock().Now() }

// Advance moves the session's clock forward by d and returns the new now.
func (c *Session) Advance(d time.Duration) (time.Time, error) { return c.clock().Advance(d) }

// Freeze stops the session's clock; from then on only Advance moves it.
func (c *Session) Freeze() time.Time { return c.clock().SetMode(VirtualClock) }

// Reset puts the session back to the fixtures and forgets its faults.
func (c *Session) Reset() { c.w.reset() }

// SetState puts a run into state now, with an optional status message.
// States only move forward.
func (c *Session) SetState(runID string, state State, msg *StatusMessage) (RunItem, error) {
	if !state.valid() {
		return RunItem{}, errorf(codeInvalidRequest, "%q is not a run state", state)
	}
	return c.w.force(runID, state, msg)
}

// AddFault adds a fault rule to the session.
func (c *Session) AddFault(rule FaultRule) (FaultRule, error) { return c.w.faults.add(rule) }

// ClearFaults removes the session's fault rules.
func (c *Session) ClearFaults() { c.w.faults.clear() }

// Attempts lists the latest requests the session saw, oldest first.
func (c *Session) Attempts() []Attempt { return c.w.journal.list() }

// AddFate decides the fate of the session's next runs whose prompt matches
// the rule; an X-Mock-Fate header on a create still wins.
func (c *Session) AddFate(rule FateRule) (FateRule, error) { return c.w.fates.add(rule) }

// Fates lists the session's fate rules with how many runs each decided.
func (c *Session) Fates() []FateRule { return c.w.fates.list() }

// ClearFates removes the session's fate rules.
func (c *Session) ClearFates() { c.w.fates.clear() }

// Faults lists the session's fault rules with their counts.
func (c *Session) Faults() []FaultRule { return c.w.faults.list() }

// RemoveFault removes one fault rule; it reports whether the rule existed.
func (c *Session) RemoveFault(id string) bool { return c.w.faults.removeID(id) }

// ClearAttempts empties the session's request journal.
func (c *Session) ClearAttempts() { c.w.journal.clear() }

// SetNow jumps the session's clock forward to t.
func (c *Session) SetNow(t time.Time) (time.Time, error) { return c.clock().Set(t) }

// SetClockMode freezes the clock (VirtualClock) or lets it run (RealClock)
// from the current instant.
func (c *Session) SetClockMode(m ClockMode) time.Time { return c.clock().SetMode(m) }

// Run returns a run of the session as the API shows it, whichever team owns it.
func (c *Session) Run(id string) (RunItem, error) { return c.w.run(id) }
