package mockserver

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"time"

	"github.com/agentruns/agentruns/mockserver/store"
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

// Session gives a Go test the control API's powers over one mock session
// without HTTP; "" is the default one. A name the X-Mock-Session header
// would be refused for (see store.CheckSessionName) is an error, as the
// header's refusal is a 400.
func (s *Server) Session(name string) (*Session, error) {
	ms, err := s.store.Open(name) // a full server closes its oldest mock session
	if err != nil {
		return nil, err
	}
	return &Session{ms: ms, linkBase: s.sessionLinkBase, runs: s.runs}, nil
}

// DefaultSession is Session(""), the mock session of a caller that names
// none, which is always there.
func (s *Server) DefaultSession() *Session {
	sess, err := s.Session("")
	if err != nil {
		panic(err) // the default session's name is always good
	}
	return sess
}

// Session controls one mock session's clock, runs and faults. Its changes
// count for the saver (Server.Changes) as the control API's do.
type Session struct {
	ms       *store.Session
	linkBase string
	runs     *runCache // the server's, emptied by Reset
}

func (c *Session) harness() *harness { return harnessOf(c.ms) }

// Now is the mock session's current instant.
func (c *Session) Now() time.Time { return c.ms.Now() }

// Advance moves the mock session's clock forward by d and returns the new now.
func (c *Session) Advance(d time.Duration) (time.Time, error) { return c.ms.Advance(d) }

// Freeze stops the mock session's clock; from then on only Advance moves it.
func (c *Session) Freeze() time.Time { return c.ms.SetClockMode(VirtualClock) }

// Reset puts the mock session back to the fixtures and forgets its rules
// and journal.
func (c *Session) Reset() {
	c.ms.Reset()
	c.runs.clear()
}

// SetState puts a run into state now, with an optional status message.
// States only move forward.
func (c *Session) SetState(runID string, state State, msg *StatusMessage) (RunItem, error) {
	v, err := c.ms.Force(runID, state, msg)
	if err != nil {
		return RunItem{}, err
	}
	return runItem(v, c.linkBase), nil
}

// AddFault adds a fault rule to the mock session.
func (c *Session) AddFault(rule FaultRule) (FaultRule, error) { return c.harness().faults.add(rule) }

// ClearFaults removes the mock session's fault rules.
func (c *Session) ClearFaults() { c.harness().faults.Clear() }

// Attempts lists the latest requests the mock session saw, oldest first.
func (c *Session) Attempts() []Attempt { return c.harness().journal.list() }

// AddFate decides the fate of the mock session's next runs whose prompt
// matches the rule; an X-Mock-Fate header on a create still wins.
func (c *Session) AddFate(rule FateRule) (FateRule, error) { return c.ms.AddFate(rule) }

// Fates lists the mock session's fate rules with how many runs each decided.
func (c *Session) Fates() []FateRule { return c.ms.Fates() }

// ClearFates removes the mock session's fate rules.
func (c *Session) ClearFates() { c.ms.ClearFates() }

// Faults lists the mock session's fault rules with their counts.
func (c *Session) Faults() []FaultRule { return c.harness().faults.List() }

// RemoveFault removes one fault rule; it reports whether the rule existed.
func (c *Session) RemoveFault(id string) bool { return c.harness().faults.removeID(id) }

// ClearAttempts empties the mock session's request journal.
func (c *Session) ClearAttempts() { c.harness().journal.clear() }

// SetNow jumps the mock session's clock forward to t.
func (c *Session) SetNow(t time.Time) (time.Time, error) { return c.ms.SetNow(t) }

// SetClockMode freezes the clock (VirtualClock) or lets it run (RealClock)
// from the current instant.
func (c *Session) SetClockMode(m ClockMode) time.Time { return c.ms.SetClockMode(m) }

// Run returns a run of the mock session as the API shows it, whichever team owns it.
func (c *Session) Run(id string) (RunItem, error) {
	v, err := c.ms.Run(id)
	if err != nil {
		return RunItem{}, err
	}
	return runItem(v, c.linkBase), nil
}
