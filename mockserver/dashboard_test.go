package mockserver_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/internal/syncbuf"
	"github.com/agentruns/agentruns/mockserver"
)

// GET /__mock/sessions lists the open sessions with their runs and clocks,
// the default first, then the most recently used.
func TestControlListsSessions(t *testing.T) {
	c := newMock(t, mockserver.Options{ClockMode: mockserver.VirtualClock, ClockStart: clockStart})
	c.in("job-a").create(map[string]any{"prompt": "Fix the build"})
	c.in("job-b").advance(0)
	c.in("job-b").advance(0)
	c.in("job-a").advance(0) // job-a used last

	var sessions []mockserver.SessionInfo
	r := c.do("GET", "/__mock/sessions", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r.json(t, &sessions)
	require.Len(t, sessions, 3)
	assert.Equal(t, []string{"", "job-a", "job-b"}, []string{sessions[0].Name, sessions[1].Name, sessions[2].Name})
	assert.Equal(t, sessions[0].Runs+1, sessions[1].Runs, "job-a holds the fixtures and its own run")
	assert.Equal(t, sessions[0].Runs, sessions[2].Runs)
	assert.Equal(t, mockserver.VirtualClock, sessions[1].Clock.Mode)
	assert.NotEmpty(t, sessions[1].LastUsed)

	// Listing uses no session but the caller's.
	c.do("GET", "/__mock/sessions", nil)
	r = c.do("GET", "/__mock/sessions", nil)
	r.json(t, &sessions)
	assert.Equal(t, []string{"", "job-a", "job-b"}, []string{sessions[0].Name, sessions[1].Name, sessions[2].Name})

	assert.Equal(t, http.StatusMethodNotAllowed, c.do("POST", "/__mock/sessions", nil).status)
}

// The dashboard's API reads (X-Mock-Observer) are answered as any other,
// but stay out of the journal and never meet a fault rule, so watching a
// session changes nothing its clients see.
func TestObserverReadsLeaveNoTrace(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	r := c.do("POST", "/__mock/faults", map[string]any{"method": "GET", "path": "/agent/runs", "status": 503, "times": 1})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)

	seen := c.do("GET", "/agent/runs?limit=5", nil, mockserver.ObserverHeader, "dashboard")
	assert.Equal(t, http.StatusOK, seen.status, "a fault rule hit the observer")
	var attempts []mockserver.Attempt
	c.do("GET", "/__mock/requests", nil).json(t, &attempts)
	assert.Empty(t, attempts, "the observer's read was journalled")

	client := c.do("GET", "/agent/runs?limit=5", nil)
	assert.Equal(t, http.StatusServiceUnavailable, client.status, "the rule was still there for the client")
	c.do("GET", "/__mock/requests", nil).json(t, &attempts)
	require.Len(t, attempts, 1)
	assert.True(t, attempts[0].Injected)
}

// /__mock/ui/ serves the page, with the control API: off with it, and the
// page's data come through the control API's token.
func TestDashboardIsServedWithTheControlAPI(t *testing.T) {
	c := newMock(t, mockserver.Options{ControlToken: "s3cret"})
	for _, base := range []string{"", "/api/v1"} {
		r := c.do("GET", base+"/__mock/ui/", nil)
		require.Equal(t, http.StatusOK, r.status, base)
		assert.True(t, strings.HasPrefix(r.header.Get("Content-Type"), "text/html"))
		assert.Contains(t, string(r.body), `<script src="app.js"`)
		assert.Contains(t, r.header.Get("Content-Security-Policy"), "connect-src 'self'")
		assert.Equal(t, http.StatusOK, c.do("GET", base+"/__mock/ui/app.js", nil).status)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(c.base + "/__mock/ui")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMovedPermanently, resp.StatusCode)
	assert.Equal(t, "/__mock/ui/", resp.Header.Get("Location"))

	// Its data need the token, as the rest of the control API does.
	assert.Equal(t, http.StatusUnauthorized, c.do("GET", "/__mock/sessions", nil).status)
	assert.Equal(t, http.StatusOK, c.as("s3cret").do("GET", "/__mock/sessions", nil).status)

	off := newMock(t, mockserver.Options{DisableControl: true})
	r := off.do("GET", "/__mock/ui/", nil)
	assert.Equal(t, http.StatusNotFound, r.status)
	off.do("GET", "/__mock/ui/", nil).problem(t)
}

// The dashboard's own polling (its reads, marked as an observer's, and its
// page) is logged at debug level, so it does not flood the mock's console;
// every other request is logged as before.
func TestDashboardPollingDoesNotFloodTheLog(t *testing.T) {
	var logs syncbuf.Buffer
	m, err := mockserver.New(mockserver.Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	require.NoError(t, err)
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	get := func(path string, observer bool) {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer wk-mock-alice")
		if observer {
			req.Header.Set(mockserver.ObserverHeader, "dashboard")
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	for range 3 {
		get("/__mock/sessions", true)
		get("/agent/runs?limit=5", true)
		get("/__mock/ui/", false)
	}
	assert.NotContains(t, logs.String(), "msg=request", "the dashboard's polling was logged at info")
	get("/agent/runs?limit=1", false)
	assert.Equal(t, 1, strings.Count(logs.String(), "msg=request"), "%s", logs.String())
}
