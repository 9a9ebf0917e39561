package runner_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/openapi"
	"github.com/agentruns/agentruns/runner"
	"github.com/agentruns/agentruns/steps"
)

// The runner's tests run the suite against the bundled mock over real HTTP,
// as steps' own tests do (steps/suite_test.go), with the same settings.

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
	// A transport of the run's own: each httptest server's Close closes
	// http.DefaultTransport's idle connections, which can break a request
	// of a suite running beside it.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(transport.CloseIdleConnections)
	cfg := steps.Config{
		HTTPClient:    &http.Client{Transport: transport},
		BaseURL:       baseURL,
		APIKey:        "wk-mock-alice",
		OtherAPIKey:   "wk-mock-carol", // of another team than alice's (fixtures/principals.json)
		FailingPrompt: "Contract suite run that fails: [mock:fail]",
		IdentityPlan:  3, // of alice's team (fixtures/principals.json)
		Format:        "progress",
		Output:        &out,
		NoColors:      true,
		Concurrency:   8,
		Timeout:       10 * time.Minute,
		PollInterval:  20 * time.Millisecond,
		Spacing:       20 * time.Millisecond,
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
