package mockserver_test

// The in-process API (README: "Using the mock inside Go tests"): Client,
// Transport and RegisterOn answer without a listener, and a Session moves the
// clock, forces states, adds faults and reads the journal without HTTP.
// Every request here goes to a host that cannot resolve (.invalid), so a test
// that passes cannot have used the network.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/openapi"
	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inProcessBase is where in-process requests go; nothing resolves it.
const inProcessBase = "http://agentruns.invalid"

// ipCaller sends requests through an http.Client that reaches a mock without
// the network, and checks /agent/ answers against the OpenAPI document.
type ipCaller struct {
	t         *testing.T
	hc        *http.Client
	base      string
	session   string
	validator *openapi.Validator
}

func newInProcess(t *testing.T, opts mockserver.Options) (*mockserver.Server, *ipCaller) {
	t.Helper()
	if opts.ClockMode == "" {
		opts.ClockMode, opts.ClockStart = mockserver.VirtualClock, clockStart
	}
	mock, err := mockserver.New(opts)
	require.NoError(t, err)
	return mock, &ipCaller{t: t, hc: mock.Client(), base: inProcessBase, validator: checkingValidator(t)}
}

func (c *ipCaller) in(session string) *ipCaller { cc := *c; cc.session = session; return &cc }

// send makes one request; headers come in pairs. It returns the transport's error as is.
func (c *ipCaller) send(method, path, body string, headers ...string) (response, error) {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	require.NoError(c.t, err)
	req.Header.Set("Authorization", "Bearer wk-mock-alice")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.session != "" {
		req.Header.Set(mockserver.SessionHeader, c.session)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	if strings.Contains(path, "/agent/") {
		resp.Body = io.NopCloser(bytes.NewReader(raw))
		vreq, _ := http.NewRequest(method, c.base+path, nil)
		require.NoError(c.t, c.validator.ValidateResponse(vreq, resp), "%s %s answered %d %s", method, path, resp.StatusCode, raw)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: raw}, nil
}

// do is send that must reach the mock.
func (c *ipCaller) do(method, path, body string, headers ...string) response {
	c.t.Helper()
	r, err := c.send(method, path, body, headers...)
	require.NoError(c.t, err, "%s %s", method, path)
	return r
}

func (c *ipCaller) create(prompt string, headers ...string) string {
	c.t.Helper()
	r := c.do("POST", "/agent/run", `{"prompt": "`+prompt+`"}`, headers...)
	require.Equal(c.t, http.StatusOK, r.status, "create: %s", r.body)
	var out mockserver.RunAgentResponse
	r.json(c.t, &out)
	require.Equal(c.t, mockserver.Queued, out.State)
	return out.RunID
}

func (c *ipCaller) state(id string) (int, mockserver.RunItem) {
	c.t.Helper()
	r := c.do("GET", "/agent/runs/"+id, "")
	var run mockserver.RunItem
	if r.status == http.StatusOK {
		r.json(c.t, &run)
	}
	return r.status, run
}

func TestInProcessClientAndTransportNeedNoListener(t *testing.T) {
	mock, c := newInProcess(t, mockserver.Options{})

	// Client: any host, at the root and under /api/v1.
	id := c.create("Fix the build")
	status, run := c.state(id)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, id, run.RunID)
	c.base = inProcessBase + "/api/v1"
	status, run = c.state(id)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "Fix the build", run.Prompt)

	// Transport: the same mock behind a client of the test's own making.
	c.hc = &http.Client{Transport: mock.Transport(), Timeout: 5 * time.Second}
	c.base = "https://another-host.invalid"
	status, run = c.state(id)
	require.Equal(t, http.StatusOK, status, "one mock whatever the host")
	require.Equal(t, id, run.RunID)
	r := c.do("GET", "/agent/runs?limit=1&state=QUEUED", "")
	require.Equal(t, http.StatusOK, r.status)
	var page mockserver.ListRunsResponse
	r.json(t, &page)
	require.Equal(t, []string{id}, ids(page.Runs))

	// The answer carries the request, as a network transport's does.
	req, _ := http.NewRequest("GET", inProcessBase+"/__mock/info", nil)
	resp, err := mock.Transport().RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Same(t, req, resp.Request)
	var info mockserver.Info
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&info))
	require.Equal(t, "agentruns", info.Mock)
}

func TestInProcessRegisterOnAnHttpmockTransport(t *testing.T) {
	mock, err := mockserver.New(mockserver.Options{ClockMode: mockserver.VirtualClock, ClockStart: clockStart})
	require.NoError(t, err)
	mt := httpmock.NewMockTransport()
	mock.RegisterOn(mt, "https://api.example.invalid/api/v1/") // a trailing slash is fine
	c := &ipCaller{t: t, hc: &http.Client{Transport: mt}, base: "https://api.example.invalid/api/v1", validator: checkingValidator(t)}

	id := c.create("Answer through httpmock")
	status, run := c.state(id)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, mockserver.Queued, run.State)
	r := c.do("GET", "/agent/runs?limit=2&state=QUEUED&state=PENDING", "")
	require.Equal(t, http.StatusOK, r.status, "a query string does not stop the match: %s", r.body)
	r = c.do("POST", "/agent/runs/"+id+"/cancel", "")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r = c.do("POST", "/__mock/clock/advance", `{"by": "1m"}`)
	require.Equal(t, http.StatusOK, r.status, "the control API too: %s", r.body)
	require.Equal(t, 5, mt.GetTotalCallCount())

	// Only URLs under the base URL are the mock's; httpmock answers the rest.
	for _, other := range []string{"https://api.example.invalid/api/v1x/agent/runs", "https://other.invalid/api/v1/agent/runs"} {
		req, _ := http.NewRequest("GET", other, nil)
		_, err := c.hc.Do(req)
		require.ErrorContains(t, err, "no responder", other)
	}
	mt.RegisterResponder("GET", "https://other.invalid/ping", httpmock.NewStringResponder(200, "pong"))
	resp, err := c.hc.Get("https://other.invalid/ping")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode, "the test's own responders live beside the mock's")

	// The transport was injected, not activated globally.
	_, global := http.DefaultTransport.(*httpmock.MockTransport)
	require.False(t, global, "RegisterOn must not touch http.DefaultTransport")
}

func TestInProcessSessionMovesTheClockWithoutHTTP(t *testing.T) {
	mock, c := newInProcess(t, mockserver.Options{})
	a := c.in("clock-a")
	id := a.create("Tidy the changelog")
	s := named(t, mock, "clock-a")
	require.Equal(t, clockStart, s.Now())

	now, err := s.Advance(5 * time.Minute)
	require.NoError(t, err)
	require.Equal(t, clockStart.Add(5*time.Minute), now)
	require.Equal(t, now, s.Now())
	_, run := a.state(id)
	require.Equal(t, mockserver.Succeeded, run.State, "five minutes later the run has finished")
	_, err = s.Advance(-time.Second)
	require.Error(t, err, "the clock never goes back")

	// The HTTP view of the session's clock agrees; the default session's did not move.
	var clk mockserver.ClockInfo
	a.do("GET", "/__mock/clock", "").json(t, &clk)
	require.Equal(t, now.UTC().Format(time.RFC3339Nano), mustTime(t, clk.Now).UTC().Format(time.RFC3339Nano))
	require.Equal(t, clockStart, mock.DefaultSession().Now())

	// Freeze stops a real clock; Advance then moves it alone.
	// The wall is moved by hand, so "time passes" needs no waiting.
	wall := &fakeWall{now: clockStart}
	realClock, err := mockserver.New(mockserver.Options{Wall: wall.Now})
	require.NoError(t, err)
	rs := named(t, realClock, "freeze")
	before := rs.Now()
	wall.Add(time.Second)
	require.Equal(t, before.Add(time.Second), rs.Now(), "a real clock runs")
	frozen := rs.Freeze()
	wall.Add(time.Minute)
	require.Equal(t, frozen, rs.Now(), "a frozen clock stands still")
	now, err = rs.Advance(time.Hour)
	require.NoError(t, err)
	require.Equal(t, frozen.Add(time.Hour), now)
	rc := &ipCaller{t: t, hc: realClock.Client(), base: inProcessBase, session: "freeze", validator: c.validator}
	rc.do("GET", "/__mock/clock", "").json(t, &clk)
	require.Equal(t, mockserver.VirtualClock, clk.Mode)
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err)
	return v
}

func TestInProcessSessionSetsRunStates(t *testing.T) {
	mock, c := newInProcess(t, mockserver.Options{})
	a := c.in("states")
	s := named(t, mock, "states")
	id := a.create("Force me along")

	item, err := s.SetState(id, mockserver.InProgress, nil)
	require.NoError(t, err)
	require.Equal(t, mockserver.InProgress, item.State)
	_, run := a.state(id)
	require.Equal(t, mockserver.InProgress, run.State)
	require.NotEmpty(t, run.SessionLink, "a run past CLAIMED has a session link")

	retryable := false
	msg := &mockserver.StatusMessage{Message: "Out of credits", ErrorCode: "insufficient_credits", Retryable: &retryable}
	item, err = s.SetState(id, mockserver.Failed, msg)
	require.NoError(t, err)
	require.Equal(t, mockserver.Failed, item.State)
	_, run = a.state(id)
	require.Equal(t, mockserver.Failed, run.State)
	require.NotNil(t, run.StatusMessage)
	require.Equal(t, "insufficient_credits", run.StatusMessage.ErrorCode)
	require.Equal(t, "Out of credits", run.StatusMessage.Message)
	require.Equal(t, &retryable, run.StatusMessage.Retryable)

	_, err = s.SetState(id, mockserver.Succeeded, nil)
	require.Error(t, err, "a finished run stays finished")
	_, err = s.SetState(id, "NOT-A-STATE", nil)
	require.Error(t, err)
	_, err = s.SetState("no-such-run", mockserver.Pending, nil)
	require.Error(t, err)

	// Another session has no such run, and the default session's runs are untouched.
	_, err = named(t, mock, "elsewhere").SetState(id, mockserver.Pending, nil)
	require.Error(t, err)
	status, _ := c.state(id)
	require.Equal(t, http.StatusNotFound, status)
}

func TestInProcessSessionFaultsAndAttempts(t *testing.T) {
	mock, c := newInProcess(t, mockserver.Options{})
	a := c.in("faults")
	s := named(t, mock, "faults")

	rule, err := s.AddFault(mockserver.FaultRule{
		Method: "post", Path: "/agent/run*", Times: 2,
		Fault: mockserver.Fault{Status: http.StatusTooManyRequests, RetryAfter: "1s"},
	})
	require.NoError(t, err)
	require.NotEmpty(t, rule.ID)
	require.Equal(t, "POST", rule.Method)

	// What a client with built-in retries would send: three attempts.
	for i, want := range []int{429, 429, 200} {
		r := a.do("POST", "/agent/run", `{"prompt": "Retry me"}`, "X-Stainless-Retry-Count", strconv.Itoa(i))
		require.Equal(t, want, r.status, "attempt %d: %s", i, r.body)
		if want == 429 {
			p := r.problem(t)
			require.True(t, strings.HasSuffix(p.Type, "resource_unavailable"), p.Type)
			require.True(t, p.Retryable)
			require.Equal(t, "1", r.header.Get("Retry-After"))
		}
	}
	// GETs do not match the rule.
	require.Equal(t, http.StatusOK, a.do("GET", "/agent/runs?limit=1", "").status)

	attempts := s.Attempts()
	require.Len(t, attempts, 4)
	for i, at := range attempts[:3] {
		require.Equal(t, "POST", at.Method)
		require.Equal(t, "/agent/run", at.Path)
		require.NotNil(t, at.RetryCount)
		require.Equal(t, i, *at.RetryCount)
		require.Equal(t, i < 2, at.Injected)
		when, err := time.Parse(time.RFC3339Nano, at.At)
		require.NoError(t, err, "attempt %d at %q", i, at.At)
		require.WithinDuration(t, time.Now(), when, time.Hour, "an attempt's time is the wall time it came")
	}
	require.Equal(t, []int{429, 429, 200, 200}, []int{attempts[0].Status, attempts[1].Status, attempts[2].Status, attempts[3].Status})
	require.Nil(t, attempts[3].RetryCount, "no X-Stainless-Retry-Count header, no count")
	require.Empty(t, mock.DefaultSession().Attempts(), "the default session saw nothing")

	var rules []mockserver.FaultRule
	a.do("GET", "/__mock/faults", "").json(t, &rules)
	require.Len(t, rules, 1)
	require.Equal(t, 3, rules[0].Matched)
	require.Equal(t, 2, rules[0].Injected)

	// ClearFaults: the next create is answered. Bad rules are refused.
	_, err = s.AddFault(mockserver.FaultRule{Path: "/agent/run", Fault: mockserver.Fault{ErrorCode: "internal_error"}})
	require.NoError(t, err)
	require.Equal(t, http.StatusInternalServerError, a.do("POST", "/agent/run", `{"prompt": "x"}`).status)
	s.ClearFaults()
	a.create("No faults left")
	for _, bad := range []mockserver.FaultRule{
		{Path: "", Fault: mockserver.Fault{Status: 500}},
		{Path: "/agent/run", Fault: mockserver.Fault{Status: 200}},
		{Path: "/agent/run", Fault: mockserver.Fault{ErrorCode: "no_such_code"}},
		{Path: "/agent/run"},
		{Path: "/agent/run", Probability: 2, Fault: mockserver.Fault{Status: 500}},
	} {
		_, err := s.AddFault(bad)
		require.Error(t, err, "%+v", bad)
	}

	// Reset forgets rules and the journal.
	_, err = s.AddFault(mockserver.FaultRule{Path: "/agent/*", Fault: mockserver.Fault{Status: 503}})
	require.NoError(t, err)
	s.Reset()
	require.Empty(t, s.Attempts())
	a.create("After reset")
}

func TestInProcessDroppedConnectionIsAnErrorFromDo(t *testing.T) {
	mock, c := newInProcess(t, mockserver.Options{})
	a := c.in("drop")
	_, err := named(t, mock, "drop").AddFault(mockserver.FaultRule{Method: "POST", Path: "/agent/run", Times: 1, Fault: mockserver.Fault{Drop: true}})
	require.NoError(t, err)

	_, err = a.send("POST", "/agent/run", `{"prompt": "Dropped"}`)
	require.Error(t, err, "a dropped connection is an error from client.Do, not a response")
	require.ErrorContains(t, err, "connection dropped")
	a.create("The retry is answered")

	// The header fault drops too, and so does the mock behind httpmock.
	_, err = a.send("GET", "/agent/runs", "", mockserver.FaultHeader, "drop")
	require.ErrorContains(t, err, "connection dropped")
	mt := httpmock.NewMockTransport()
	mock.RegisterOn(mt, inProcessBase)
	viaHttpmock := &ipCaller{t: t, hc: &http.Client{Transport: mt}, base: inProcessBase, session: "drop", validator: c.validator}
	_, err = viaHttpmock.send("GET", "/agent/runs", "", mockserver.FaultHeader, "drop")
	require.ErrorContains(t, err, "connection dropped")

	attempts := named(t, mock, "drop").Attempts()
	require.Len(t, attempts, 4)
	for _, i := range []int{0, 2, 3} {
		require.Equal(t, 0, attempts[i].Status, "attempt %d was never answered", i)
		require.True(t, attempts[i].Injected, "attempt %d was dropped by a fault", i)
	}
	require.Equal(t, http.StatusOK, attempts[1].Status)
}

func TestInProcessDelayOutlivingTheRequestContextIsAnError(t *testing.T) {
	_, c := newInProcess(t, mockserver.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", inProcessBase+"/agent/runs", nil)
	req.Header.Set("Authorization", "Bearer wk-mock-alice")
	req.Header.Set(mockserver.FaultHeader, "delay=2m")
	start := time.Now()
	resp, err := c.hc.Do(req)
	if resp != nil {
		resp.Body.Close()
	}
	require.ErrorIs(t, err, context.DeadlineExceeded, "a network client would time out, not get an answer")
	// Far below the delay, so no busy machine makes this fail.
	require.Less(t, time.Since(start), time.Minute)
}

func TestInProcessSessionsAreIsolated(t *testing.T) {
	mock, c := newInProcess(t, mockserver.Options{})
	a, b, shared := c.in("iso-a"), c.in("iso-b"), c

	id := a.create("Only in session A")
	for _, other := range []*ipCaller{b, shared} {
		status, _ := other.state(id)
		require.Equal(t, http.StatusNotFound, status, "session %q", other.session)
	}

	// A's rules and clock are A's.
	_, err := named(t, mock, "iso-a").AddFault(mockserver.FaultRule{Path: "/agent/runs", Fault: mockserver.Fault{Status: 500}})
	require.NoError(t, err)
	require.Equal(t, http.StatusInternalServerError, a.do("GET", "/agent/runs", "").status)
	require.Equal(t, http.StatusOK, b.do("GET", "/agent/runs", "").status)
	require.Equal(t, http.StatusOK, shared.do("GET", "/agent/runs", "").status)
	_, err = named(t, mock, "iso-a").Advance(time.Hour)
	require.NoError(t, err)
	require.Equal(t, clockStart, named(t, mock, "iso-b").Now())
	require.Equal(t, clockStart.Add(time.Hour), named(t, mock, "iso-a").Now())

	// The control API over HTTP and Session("iso-a") are the same session.
	var info mockserver.Info
	a.do("GET", "/__mock/info", "").json(t, &info)
	require.Equal(t, "iso-a", info.Session)
	require.Equal(t, clockStart.Add(time.Hour), mustTime(t, info.Clock.Now))
	statuses := func(session string) (out []string) {
		for _, at := range named(t, mock, session).Attempts() {
			out = append(out, at.Method+" "+strconv.Itoa(at.Status))
		}
		return out
	}
	require.Equal(t, []string{"POST 200", "GET 500"}, statuses("iso-a"), "each journal holds its own session's requests")
	require.Equal(t, []string{"GET 404", "GET 200"}, statuses("iso-b"))

	// Each session starts from the fixtures: the same fixture runs, apart.
	var pa, pb mockserver.ListRunsResponse
	b.do("GET", "/agent/runs?limit=100", "").json(t, &pb)
	named(t, mock, "iso-a").ClearFaults()
	a.do("GET", "/agent/runs?limit=100", "").json(t, &pa)
	require.NotEmpty(t, pb.Runs)
	require.Equal(t, len(pb.Runs)+1, len(pa.Runs), "A has the fixtures and its own run")

	// Reset puts A back to the fixtures.
	named(t, mock, "iso-a").Reset()
	status, _ := a.state(id)
	require.Equal(t, http.StatusNotFound, status)
}

// A Go client test in a few lines: an isolated session, a fault rule that
// fails the next two creates, the attempts the mock saw, and a run forced to
// fail, all without HTTP control calls. (README: "Testing your client".)
func ExampleSession_AddFault() {
	mock, err := mockserver.New(mockserver.Options{ClockMode: mockserver.VirtualClock})
	if err != nil {
		panic(err)
	}
	client := mock.Client()
	session, err := mock.Session("job-42") // its own runs, clock, rules and journal
	if err != nil {
		panic(err) // a name X-Mock-Session would refuse
	}
	if _, err := session.AddFault(mockserver.FaultRule{
		Method: "POST", Path: "/agent/run*", Times: 2,
		Fault: mockserver.Fault{Status: 429, RetryAfter: "1s"},
	}); err != nil {
		panic(err)
	}

	create := func() *http.Response {
		req, _ := http.NewRequest("POST", "http://agentruns.test/agent/run", strings.NewReader(`{"prompt": "Fix the build"}`))
		req.Header.Set("Authorization", "Bearer wk-mock-alice")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Mock-Session", "job-42")
		resp, err := client.Do(req)
		if err != nil {
			panic(err)
		}
		return resp
	}
	var created mockserver.RunAgentResponse
	for attempt := 0; ; attempt++ { // your client's retry loop goes here
		resp := create()
		fmt.Printf("attempt %d: %s, Retry-After %q\n", attempt, resp.Status, resp.Header.Get("Retry-After"))
		if resp.StatusCode == http.StatusOK {
			_ = json.NewDecoder(resp.Body).Decode(&created)
			resp.Body.Close()
			break
		}
		resp.Body.Close()
	}
	fmt.Println("the mock saw", len(session.Attempts()), "attempts")

	run, err := session.SetState(created.RunID, mockserver.Failed, &mockserver.StatusMessage{
		Message: "Out of credits", ErrorCode: "insufficient_credits",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(run.State, run.StatusMessage.ErrorCode)
	// Output:
	// attempt 0: 429 Too Many Requests, Retry-After "1"
	// attempt 1: 429 Too Many Requests, Retry-After "1"
	// attempt 2: 200 OK, Retry-After ""
	// the mock saw 3 attempts
	// FAILED insufficient_credits
}

// Changes made through the Go API count for the saver as those made over
// HTTP do: the store counts its own mutations, whoever asks for them.
func TestGoAPIChangesCountForTheSaver(t *testing.T) {
	s := newServer(t, mockserver.Options{})
	ms := s.DefaultSession()
	id := serve(t, s).create(map[string]any{"prompt": "counted"}).RunID
	for _, c := range []struct {
		name   string
		change func()
	}{
		{"set state", func() { _, err := ms.SetState(id, mockserver.Cancelled, nil); require.NoError(t, err) }},
		{"advance", func() { _, err := ms.Advance(time.Minute); require.NoError(t, err) }},
		{"set now", func() { _, err := ms.SetNow(ms.Now().Add(time.Hour)); require.NoError(t, err) }},
		{"clock mode", func() { ms.SetClockMode(mockserver.RealClock) }},
		{"reset", ms.Reset},
		{"new session", func() { named(t, s, "another") }},
	} {
		before := s.Changes()
		c.change()
		require.Greater(t, s.Changes(), before, "%s is a change the saver must see", c.name)
	}
	before := s.Changes()
	_ = ms.Now()
	_, _ = ms.Run(id)
	_ = ms.Fates()
	require.Equal(t, before, s.Changes(), "reading changes nothing")
}

// named is the mock session of that name, which the test knows is good.
func named(t testing.TB, s *mockserver.Server, name string) *mockserver.Session {
	t.Helper()
	sess, err := s.Session(name)
	require.NoError(t, err)
	return sess
}

// A name the X-Mock-Session header would be refused for is an error, not
// a panic, and opens no session.
func TestABadSessionNameIsAnError(t *testing.T) {
	mock := newServer(t, mockserver.Options{})
	for _, name := range []string{"has space", strings.Repeat("x", 200), "tab\there", "é"} {
		sess, err := mock.Session(name)
		assert.Error(t, err, name)
		assert.Nil(t, sess, name)
	}
	sess, err := mock.Session("job-42")
	require.NoError(t, err)
	assert.NotNil(t, sess)
	assert.NotNil(t, mock.DefaultSession())
}
