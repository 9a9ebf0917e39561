// Package suitetest starts what the tests of several packages put side
// by side (the mock, the reference server, the validating proxy) over
// real HTTP, and runs the contract suite against them with the settings
// those tests share, so that the tests of steps, runner, e2e, drift and
// the contract command judge servers alike. Tests only: no command imports it.
package suitetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/features"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/openapi"
	"github.com/agentruns/agentruns/proxy"
	"github.com/agentruns/agentruns/refserver"
	"github.com/agentruns/agentruns/report"
	"github.com/agentruns/agentruns/runner"
	"github.com/agentruns/agentruns/suiteconfig"
)

// SharedValidator is loaded once: compiling the document's schemas is the
// slowest part of a run.
var SharedValidator = sync.OnceValues(openapi.NewValidator)

// NewMock starts the mock over real HTTP, wrapped by wrap unless it is
// nil.
func NewMock(t testing.TB, opts mockserver.Options, wrap func(http.Handler) http.Handler) *httptest.Server {
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

// NewReferenceServer starts the reference server over real HTTP and
// returns its API's base URL.
func NewReferenceServer(t testing.TB, opts refserver.Options) string {
	t.Helper()
	srv := httptest.NewServer(refserver.New(opts))
	t.Cleanup(srv.Close)
	return srv.URL + "/api/v1"
}

// NewProxy starts the proxy over real HTTP in front of upstream.
func NewProxy(t testing.TB, upstream string, opts proxy.Options) (*proxy.Proxy, string) {
	t.Helper()
	v, err := SharedValidator()
	require.NoError(t, err)
	opts.Upstream = upstream
	if opts.Validator == nil {
		opts.Validator = v
	}
	p, err := proxy.New(opts)
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Close() })
	return p, srv.URL
}

// FoundBy waits for the proxy to have checked everything and returns what
// it found.
func FoundBy(t testing.TB, p *proxy.Proxy) proxy.Summary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, p.Drain(ctx))
	return p.Summary()
}

// Describe says what the proxy found, for a failing assertion.
func Describe(s proxy.Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d exchanges, %d checked, unchecked %v, %d violations\n", s.Exchanges, s.Checked, s.Unchecked, s.Violations)
	for i, f := range s.Latest {
		if i == 5 {
			fmt.Fprintf(&b, "  ...\n")
			break
		}
		fmt.Fprintf(&b, "  %s (%d) %s\n", f.Request, f.Status, f.Violation)
	}
	return b.String()
}

// RunSuite runs the suite against baseURL and returns the result and output.
func RunSuite(t testing.TB, baseURL string, tune func(*suiteconfig.Config)) (runner.Result, string) {
	t.Helper()
	var out bytes.Buffer
	// A transport of the run's own: suites run side by side in these tests,
	// and each httptest server's Close closes http.DefaultTransport's idle
	// connections, which can break a request of another suite that has just
	// picked one up; a DELETE is not retried.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(transport.CloseIdleConnections)
	cfg := suiteconfig.Config{
		HTTPClient:  &http.Client{Transport: transport},
		BaseURL:     baseURL,
		APIKey:      "wk-mock-alice",
		OtherAPIKey: "wk-mock-carol", // of another team than alice's (fixtures/principals.json)
		// The mock fails a prompt holding this marker (fixtures/fates.json).
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

// AssertAllPassed fails the test for every failed scenario.
func AssertAllPassed(t testing.TB, res runner.Result, out string) {
	t.Helper()
	for _, f := range res.Failed() {
		t.Errorf("scenario %s: %q failed:\n%s", f.Feature, f.Name, f.Message)
	}
	if t.Failed() {
		t.Log(out)
	}
}

// OneCaller is the reference server as one caller: it has no second team
// the suite knows a key of, fails no prompt, and its plan is its own.
func OneCaller(c *suiteconfig.Config) {
	c.OtherAPIKey, c.FailingPrompt, c.IdentityPlan = "", "", RefserverPlan
}

// RefserverPlan is how many identities the reference server's plan allows
// a team (refserver/identities.go).
const RefserverPlan = 5

// RunFeatures are the features of the operations the reference server
// serves, every feature. A new feature belongs here.
var RunFeatures = []string{
	"agents.feature", "artifacts.feature", "conversations.feature", "identities.feature", "create_run.feature", "environments_and_models.feature", "errors.feature",
	"events.feature", "followups.feature", "get_run.feature", "handoff_attachments.feature", "list_runs.feature", "list_rules.feature", "messages.feature",
	"mock_control.feature", "schedules.feature", "state_progression.feature", "tenancy.feature",
}

// RunFeaturesOnly runs the features of the operations the reference server
// serves.
func RunFeaturesOnly(c *suiteconfig.Config) {
	sub := fstest.MapFS{}
	for _, n := range RunFeatures {
		data, err := fs.ReadFile(features.FS, n)
		if err != nil {
			panic(err) // a feature renamed or removed: update RunFeatures
		}
		sub[n] = &fstest.MapFile{Data: data}
	}
	c.Features = sub
}

// AssertOnlyMockScenariosSkipped checks that the scenarios left out are
// exactly those that need the bundled mock, each saying why.
func AssertOnlyMockScenariosSkipped(t testing.TB, res runner.Result) {
	t.Helper()
	for _, s := range res.Skipped() {
		if slices.Contains(s.Tags, "@two-callers") {
			assert.Contains(t, s.Message, "--other-api-key", s.Name)
			continue
		}
		if slices.Contains(s.Tags, "@failing-prompt") {
			assert.Contains(t, s.Message, "--failing-prompt", s.Name)
			continue
		}
		if LeftToTheServer(s) || SkippedForAnOption(s) {
			continue
		}
		assert.True(t, slices.Contains(s.Tags, "@mock-control") || slices.Contains(s.Tags, "@mock-only"), "scenario %q was skipped but needs no mock: %s", s.Name, s.Message)
		assert.Contains(t, s.Message, "mock", s.Name)
	}
}

// LeftToTheServer tells whether a scenario was skipped for a choice the
// document leaves to the server: an ending that leaves nothing to judge
// (inconclusive), a field shown only if available, messaging kept from
// the suite's key.
func LeftToTheServer(s runner.ScenarioResult) bool {
	return strings.HasPrefix(s.Message, "inconclusive: ") || strings.Contains(s.Message, "only if available") ||
		strings.Contains(s.Message, "does not offer sending messages")
}

// SkippedForAnOption tells whether a scenario was skipped for want of an
// option that would have run it, saying which.
func SkippedForAnOption(s runner.ScenarioResult) bool {
	return s.Needs != nil && strings.Contains(s.Message, s.Needs.Flag)
}

// Broken names the versions an answer broke in a run, and checks that
// every version was reached.
func Broken(t testing.TB, res runner.Result) []string {
	t.Helper()
	var names []string
	for _, c := range res.Report.Clients {
		assert.Positive(t, c.Checked, "%s read no answer", c.Name)
		if c.Broken > 0 {
			names = append(names, c.Name)
		}
	}
	return names
}

// ClientTable is the run's table of client versions, for the log.
func ClientTable(t testing.TB, res runner.Result) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, report.WriteClientTable(&b, res.Report.Clients))
	return b.String()
}

// EditFetchedRun is a server that answers GET /agent/runs/{runId} as next
// does, but with the run passed through edit first; every other request,
// and an answer that is no run, as next answers it. Broken servers of the
// tests are made of it.
func EditFetchedRun(next http.Handler, edit func(run map[string]any)) http.Handler {
	oneRun := func(r *http.Request) bool {
		rest, one := strings.CutPrefix(r.URL.Path, "/agent/runs/")
		return r.Method == http.MethodGet && one && !strings.Contains(rest, "/")
	}
	return EditAnswers(next, oneRun, func(_ *http.Request, doc any) {
		if run, ok := doc.(map[string]any); ok {
			edit(run)
		}
	})
}

// EditAnswers is a server that answers as next does, but passes the JSON
// of each success to a request match picks through edit first. Broken
// servers of the tests are made of it.
func EditAnswers(next http.Handler, match func(r *http.Request) bool, edit func(r *http.Request, doc any)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !match(r) {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		var doc any
		if rec.Code/100 == 2 && json.Unmarshal(body, &doc) == nil {
			edit(r, doc)
			body, _ = json.Marshal(doc)
		}
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}
