package mockserver_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A caller that has not authenticated touches nothing: with --strict-auth
// an unknown key with a fresh X-Mock-Session gets 401, not the fault it
// asked for or a rule would inject; no mock session is opened (none is
// evicted to make room), nothing is journaled, no rule counts it, and the
// saver sees no change.
func TestNothingHappensBeforeTheCallerIsAuthenticated(t *testing.T) {
	s := newServer(t, mockserver.Options{StrictAuth: true, MaxSessions: 1, ControlToken: "ctl"})
	c := serve(t, s)
	ctl := c.as("ctl")
	alice := c.in("a").create(map[string]any{"prompt": "in a"}).RunID
	require.Equal(t, http.StatusOK, ctl.in("a").do("POST", "/__mock/faults", map[string]any{"path": "/agent/*", "status": 503}).status)
	before := s.Changes()

	for _, key := range []string{"wk-unknown", ""} {
		for _, session := range []string{"fresh", "a"} {
			r := c.as(key).in(session).do("GET", "/agent/runs", nil, mockserver.FaultHeader, "status=429")
			require.Equal(t, http.StatusUnauthorized, r.status, "key %q in %s: %s", key, session, r.body)
			assert.Equal(t, mockserver.ProblemTypeBase+"authentication_required", r.problem(t).Type)
			r = c.as(key).in(session).do("POST", "/agent/run", map[string]any{"prompt": "x"}, mockserver.FaultHeader, "drop")
			require.Equal(t, http.StatusUnauthorized, r.status, "key %q in %s: the drop fault is not applied", key, session)
		}
	}
	// The control API without its token is refused the same way.
	for _, key := range []string{"wk-mock-alice", ""} {
		r := c.as(key).in("fresh").do("POST", "/__mock/reset", nil)
		require.Equal(t, http.StatusUnauthorized, r.status, "%s", r.body)
	}
	assert.Equal(t, before, s.Changes(), "no mock session was opened, evicted or changed")

	// Session a was not evicted for "fresh", and saw none of it.
	assert.Equal(t, alice, c.in("a").get(alice).RunID, "the only mock session a stays")
	var rules []mockserver.FaultRule
	ctl.in("a").do("GET", "/__mock/faults", nil).json(t, &rules)
	require.Len(t, rules, 1)
	assert.Zero(t, rules[0].Matched, "the rule never saw an unauthenticated request")
	var attempts []mockserver.Attempt
	ctl.in("a").do("GET", "/__mock/requests", nil).json(t, &attempts)
	for _, a := range attempts {
		assert.NotEqual(t, http.StatusUnauthorized, a.Status, "an unauthenticated request was journaled: %+v", a)
	}
}

// A routing header given twice is refused, as the balancer in front of
// replicas refuses it (deploy/haproxy.cfg): which of two to read is a
// choice the two would each make their own way (net/http reads the
// first, HAProxy the last), and one session's runs would land on two
// replicas. Given once, each is read as always.
func TestARoutingHeaderGivenTwiceIsRefused(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	send := func(header string, values ...string) (int, string, mockserver.Problem) {
		t.Helper()
		req, err := http.NewRequest("GET", c.base+"/agent/runs", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer wk-mock-alice")
		req.Header.Del(header)
		for _, v := range values {
			req.Header.Add(header, v)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var p mockserver.Problem
		_ = json.NewDecoder(resp.Body).Decode(&p)
		return resp.StatusCode, resp.Header.Get("Content-Type"), p
	}
	for _, tc := range []struct{ header, first, second string }{
		{mockserver.SessionHeader, "a", "b"},
		{mockserver.SessionHeader, "a", "a"},
		{"Authorization", "Bearer wk-mock-alice", "Bearer wk-mock-carol"},
	} {
		status, ct, p := send(tc.header, tc.first, tc.second)
		assert.Equal(t, http.StatusBadRequest, status, tc.header)
		assert.Equal(t, "application/problem+json", ct, tc.header)
		assert.Equal(t, mockserver.ProblemTypeBase+"invalid_request", p.Type, tc.header)
		assert.Equal(t, "header "+tc.header+" appears 2 times: send it once", p.Detail, tc.header)
	}
	status, _, _ := send(mockserver.SessionHeader, "a")
	assert.Equal(t, http.StatusOK, status)
}
