package steps_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/openapi"
	"github.com/agentruns/agentruns/runner"
	"github.com/agentruns/agentruns/steps"
)

// sharedValidator is loaded once: compiling the document's schemas is the
// slowest part of a run.
var sharedValidator = sync.OnceValues(openapi.NewValidator)

// newMock starts the mock over real HTTP, optionally wrapped.
func newMock(t *testing.T, opts mockserver.Options, wrap func(http.Handler) http.Handler) *httptest.Server {
	t.Helper()
	m, err := mockserver.New(opts)
	require.NoError(t, err)
	var h http.Handler = m
	if wrap != nil {
		h = wrap(m)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// runSuite runs the suite against baseURL and returns the result and output.
func runSuite(t *testing.T, baseURL string, tune func(*steps.Config)) (runner.Result, string) {
	t.Helper()
	var out bytes.Buffer
	// A transport of the run's own: suites run side by side in these tests,
	// and each httptest server's Close closes http.DefaultTransport's idle
	// connections, which can break a request of another suite that has just
	// picked one up ("CloseIdleConnections called"); a DELETE is not retried.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(transport.CloseIdleConnections)
	cfg := steps.Config{
		HTTPClient:  &http.Client{Transport: transport},
		BaseURL:     baseURL,
		APIKey:      "wk-mock-alice",
		OtherAPIKey: "wk-mock-carol", // of another team than alice's (fixtures/principals.json)
		// The mock fails a prompt holding this marker (fixtures/fates.json).
		FailingPrompt: "Contract suite run that fails: [mock:fail]",
		IdentityPlan:  3, // of alice's team (fixtures/principals.json)
		// No Validator: the suite's own choice, the document or its
		// published view by the tags, is under test too.
		Format:       "progress",
		Output:       &out,
		NoColors:     true,
		Concurrency:  8,
		Timeout:      10 * time.Minute,
		PollInterval: 20 * time.Millisecond,
		Spacing:      20 * time.Millisecond,
	}
	if tune != nil {
		tune(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := runner.Run(ctx, cfg)
	require.NoError(t, err, out.String())
	return res, out.String()
}

// assertAllPassed fails the test for every failed scenario.
func assertAllPassed(t *testing.T, res runner.Result, out string) {
	t.Helper()
	for _, f := range res.Failed() {
		t.Errorf("scenario %s: %q failed:\n%s", f.Feature, f.Name, f.Message)
	}
	if t.Failed() {
		t.Log(out)
	}
}

// TestSuitePassesAgainstTheMock runs every scenario against the mock over
// real HTTP, driving it through its control API.
func TestSuitePassesAgainstTheMock(t *testing.T) {
	srv := newMock(t, mockserver.Options{}, nil)
	res, out := runSuite(t, srv.URL, nil)
	assert.True(t, res.Control, "the suite should have found the control API")
	assertAllPassed(t, res, out)
	assert.Empty(t, res.Skipped())
	passed, _, _ := res.Count()
	assert.Greater(t, passed, 50)
	names := map[string]bool{}
	for _, s := range res.Scenarios {
		assert.False(t, names[s.Name], "two scenarios are called %q: Result.Find needs unique names", s.Name)
		names[s.Name] = true
	}
	t.Logf("%d scenarios passed in %s", passed, res.Duration)
}

// leftToTheServer tells whether a scenario was skipped for a choice the
// document leaves to the server: an ending that leaves nothing to judge
// (inconclusive), a field shown only if available, messaging kept from
// the suite's key. Such a skip is reported, never a failure.
func leftToTheServer(s runner.ScenarioResult) bool {
	return strings.HasPrefix(s.Message, "inconclusive: ") || strings.Contains(s.Message, "only if available") ||
		strings.Contains(s.Message, "does not offer sending messages")
}

// skippedForAnOption tells whether a scenario was skipped for want of an
// option that would have run it, saying which: minutes of waiting for a
// schedule's tick (--wait-for-ticks), say.
func skippedForAnOption(s runner.ScenarioResult) bool {
	return s.Needs != nil && strings.Contains(s.Message, s.Needs.Flag)
}

// TestSuitePassesAgainstTheMockByPolling runs the suite as against a real
// server: the mock's control API is off, so the suite shares one world with
// the fixtures and its own concurrent scenarios, watches runs by polling, and
// skips the scenarios that need the control API.
func TestSuitePassesAgainstTheMockByPolling(t *testing.T) {
	srv := newMock(t, mockserver.Options{Step: 40 * time.Millisecond, DisableControl: true}, nil)
	res, out := runSuite(t, srv.URL, nil)
	assert.False(t, res.Control)
	assertAllPassed(t, res, out)
	require.NotEmpty(t, res.Skipped())
	for _, s := range res.Skipped() {
		if leftToTheServer(s) || skippedForAnOption(s) {
			continue // a run that ended before the suite could judge it, say
		}
		assert.True(t, hasAnyTag(s.Tags, "@mock-control", "@mock-only"), s.Name)
		assert.Contains(t, s.Message, "mock", s.Name)
	}
	passed, _, skipped := res.Count()
	t.Logf("%d scenarios passed, %d skipped, in %s", passed, skipped, res.Duration)
}

// The suite works against an API under a path prefix, and still finds the
// mock's control API at the root of the host.
func TestSuiteRunsUnderAPathPrefix(t *testing.T) {
	srv := newMock(t, mockserver.Options{}, nil)
	res, out := runSuite(t, srv.URL+"/api/v1", func(c *steps.Config) { c.Tags = "@mock-control" })
	assert.True(t, res.Control)
	assertAllPassed(t, res, out)
	assert.Empty(t, res.Skipped())
}

// The suite does not depend on the pace of the mock's runs: driving the
// mock's clock, it passes with runs that take 300 ms a state as with the
// default 2 s; polling, with runs that end within a few milliseconds.
func TestSuitePassesAgainstTheMockAtAnyPace(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts mockserver.Options
	}{
		{"300ms steps, control API", mockserver.Options{Step: 300 * time.Millisecond}},
		{"2ms steps, polling", mockserver.Options{Step: 2 * time.Millisecond, DisableControl: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newMock(t, tc.opts, nil)
			res, out := runSuite(t, srv.URL, nil)
			assertAllPassed(t, res, out)
		})
	}
}
