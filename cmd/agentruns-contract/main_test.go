package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/joshdk/go-junit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/features"
	"github.com/agentruns/agentruns/internal/junitcheck"
	"github.com/agentruns/agentruns/internal/suitetest"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/runner"
)

func runCmd(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	t.Setenv("OZ_API_BASE_URL", "")
	t.Setenv("WARP_API_KEY", "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	err = run(ctx, args, &out, &errOut)
	return out.String(), errOut.String(), err
}

// newMock serves the mock over HTTP; wrap, when given, rewrites its answers.
var newMock = suitetest.NewMock

// With no base URL the command starts the bundled mock and verifies it.
func TestRunVerifiesTheBundledMock(t *testing.T) {
	out, errOut, err := runCmd(t, "--tags", "@mock-control", "--format", "progress", "--concurrency", "8")
	require.NoError(t, err, "%s\n%s", out, errOut)
	assert.True(t, strings.HasPrefix(errOut, "testing the bundled mock at http://127.0.0.1:"), errOut)
	assert.Contains(t, errOut, "0 failed, 0 skipped")
	assert.Contains(t, errOut, "driving the mock's control API")
	assert.Contains(t, out, "scenarios (")
}

// Against the bundled mock the tenancy scenarios run with two fixture keys
// of different teams; against a server named with --base-url and no second
// key they are skipped, saying which flag they need.
func TestTwoCallersOnTheBundledMockAndSkippedWithoutASecondKey(t *testing.T) {
	out, errOut, err := runCmd(t, "--tags", "@two-callers", "--format", "progress", "--concurrency", "8")
	require.NoError(t, err, "%s\n%s", out, errOut)
	total, passed, _, _ := summaryCounts(t, errOut)
	assert.Greater(t, total, 2)
	assert.Equal(t, total, passed, errOut)

	// Issue 34, point 7: every scenario skipped is a run that checked
	// nothing, which must not exit 0.
	srv := newMock(t, mockserver.Options{}, nil)
	out, errOut, err = runCmd(t, "--base-url", srv.URL, "--api-key", "wk-mock-alice", "--tags", "@two-callers", "--format", "progress")
	require.ErrorIs(t, err, errNothingChecked, "%s\n%s", out, errOut)
	assert.Equal(t, 3, exitStatus(err))
	total, _, _, skipped := summaryCounts(t, errOut)
	assert.Equal(t, total, skipped, errOut)
	assert.Contains(t, errOut, "Nothing was checked: add --other-api-key to check the rest.")
	assert.Contains(t, errOut, "NOT CHECKED one team never sees, fetches nor cancels another team's runs, schedules, conversations or artifacts, nor uses its environments ("+strconv.Itoa(total)+" scenarios skipped): pass --other-api-key KEY")
	assert.NotContains(t, errOut, "SKIPPED", "a skip a flag would avoid is told once, as not checked")

	out, errOut, err = runCmd(t, "--base-url", srv.URL, "--api-key", "wk-mock-alice", "--other-api-key", "wk-mock-nightly", "--tags", "@two-callers", "--format", "progress")
	require.NoError(t, err, "%s\n%s", out, errOut)
	total, passed, _, _ = summaryCounts(t, errOut)
	assert.Equal(t, total, passed, errOut)
}

// A run that passed where it ran but skipped scenarios a flag would have
// run says so in the summary, the HTML report and JUnit, naming the flags;
// skips the server rules out (no control API) are not counted as such.
func TestAvoidableSkipsAreNamedInEveryReport(t *testing.T) {
	srv := newMock(t, mockserver.Options{DisableControl: true}, nil)
	dir := t.TempDir()
	args := []string{"--base-url", srv.URL, "--api-key", "wk-mock-alice", "--tags", "@two-callers or @failing-prompt or not @creates-runs and not @slow"}
	out, errOut, err := runCmd(t, append(args, "--format", "html", "--output", filepath.Join(dir, "report.html"))...)
	require.NoError(t, err, "skips do not fail the run: %s\n%s", out, errOut)
	assert.Contains(t, errOut, "NOT CHECKED one team never sees, fetches nor cancels another team's runs, schedules, conversations or artifacts, nor uses its environments (18 scenarios skipped): pass --other-api-key KEY (of another team) to check it")
	assert.Contains(t, errOut, "NOT CHECKED a run that fails says why, with an error code, and its last event reports the failure (4 scenarios skipped): pass --failing-prompt PROMPT")
	assert.Regexp(t, `SKIPPED \d+ scenarios: checks what only the bundled mock promises`, errOut, "skips the server rules out, grouped by reason")
	assert.Contains(t, errOut, "NOT CHECKED the team's plan allows exactly as many agent identities as it says (1 scenario skipped): pass --identity-plan N")
	assert.True(t, strings.HasSuffix(errOut, "Passed, but not all checked: add --failing-prompt and --identity-plan and --other-api-key to check the rest.\n"), errOut)
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	require.NoError(t, err)
	assert.Contains(t, string(page), `id="verdict">Passed, 23 not checked</div>`)
	assert.NotContains(t, string(page), "All passed")
	assert.Contains(t, string(page), `<code>--other-api-key</code>`)

	out, errOut, err = runCmd(t, append(args, "--format", "junit", "--output", filepath.Join(dir, "contract.xml"))...)
	require.NoError(t, err, "%s\n%s", out, errOut)
	data, err := os.ReadFile(filepath.Join(dir, "contract.xml"))
	require.NoError(t, err)
	junitcheck.Validate(t, data)
	_, tests := junitcheck.Totals(t, data)
	notChecked := 0
	for _, tc := range tests {
		if strings.HasPrefix(tc.Message, "not checked: ") {
			notChecked++
			assert.Regexp(t, `; --(other-api-key|failing-prompt|identity-plan) would check it`, tc.Message)
		}
	}
	assert.Equal(t, 23, notChecked)
	assert.Contains(t, string(data), `<property name="not_checked" value="not checked: 15 scenarios skipped for want of an option: --other-api-key would run 15 scenarios`)
}

// summaryCounts reads "N scenarios: p passed, f failed, s skipped" from the
// summary on stderr.
func summaryCounts(t *testing.T, errOut string) (total, passed, failed, skipped int) {
	t.Helper()
	m := regexp.MustCompile(`(\d+) scenarios: (\d+) passed, (\d+) failed, (\d+) skipped`).FindStringSubmatch(errOut)
	require.NotNil(t, m, errOut)
	n := func(s string) int { i, _ := strconv.Atoi(s); return i }
	return n(m[1]), n(m[2]), n(m[3]), n(m[4])
}

// Issue 15, point 1: the JUnit report of a run with skips and failures
// validates against the schema CI consumers read, a real consumer counts
// what the summary says, and the report's own counters agree with its test
// cases.
func TestJUnitReportOfARunWithSkipsAndFailures(t *testing.T) {
	// The mock without its control API (as any real server), with errors
	// typed text/plain instead of application/problem+json for unknown
	// runs: the @mock-control scenarios skip and the unknown-run one fails.
	srv := newMock(t, mockserver.Options{DisableControl: true}, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/agent/runs/") {
				w = &retyped{ResponseWriter: w}
			}
			next.ServeHTTP(w, r)
		})
	})
	path := filepath.Join(t.TempDir(), "contract.xml")
	out, errOut, err := runCmd(t, "--base-url", srv.URL, "--api-key", "wk-mock-alice",
		"--tags", "@mock-control or not @creates-runs", "--format", "junit", "--output", path)
	require.ErrorIs(t, err, errFailed, "%s\n%s", out, errOut)
	assert.Contains(t, errOut, "polling the server")
	total, passed, failed, skipped := summaryCounts(t, errOut)
	require.Positive(t, skipped, errOut)
	require.Positive(t, failed, errOut)

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	junitcheck.Validate(t, data)
	_, all := junitcheck.Totals(t, data)
	tests, clients := scenarioCases(all)
	assert.Len(t, clients, 3, "a test case per client version")
	tot := junit.Totals{}
	for _, tc := range tests {
		tot.Tests++
		switch tc.Status {
		case junit.StatusPassed:
			tot.Passed++
		case junit.StatusFailed:
			tot.Failed++
		case junit.StatusSkipped:
			tot.Skipped++
		case junit.StatusError:
			tot.Error++
		}
	}
	assert.Equal(t, total, tot.Tests)
	assert.Equal(t, passed, tot.Passed)
	assert.Equal(t, failed, tot.Failed)
	assert.Equal(t, skipped, tot.Skipped)
	assert.Zero(t, tot.Error)
	for _, tc := range tests {
		assert.NotEmpty(t, tc.Classname, tc.Name)
		if tc.Status == "skipped" {
			// Skipped for the control API it lacks, as a scenario only the
			// bundled mock promises (@mock-only), inconclusive (a link
			// that lives beyond the suite's patience), or for want of the
			// plan's size (a server named by --base-url is not the bundled
			// mock, whose plan the runner knows).
			assert.Regexp(t, `needs the mock control API|\(@mock-only\)|^inconclusive: |; --(identity-plan|other-api-key) would check it`, tc.Message, tc.Name)
		}
		if tc.Name == "An unknown run is not found" {
			assert.Equal(t, "failed", string(tc.Status))
			assert.Contains(t, tc.Message, "application/problem+json")
		}
	}
	var doc struct {
		Suites []struct {
			Name string `xml:"name,attr"`
			Time string `xml:"time,attr"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(data, &doc))
	assert.Greater(t, len(doc.Suites), 1, "one testsuite per feature")
	assert.Equal(t, 1, strings.Count(string(data), `name="An unknown run is not found"`))
	junitCountersAgree(t, data, total, failed, skipped)
}

// junitCountersAgree checks the tests, failures, errors and skipped
// attributes that Jenkins and the GitHub reporters show: each testsuite's
// match its test cases' outcome elements, the root's are their sum, and
// both match the run's summary.
func junitCountersAgree(t *testing.T, data []byte, total, failed, skipped int) {
	t.Helper()
	type counters struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Skipped  int `xml:"skipped,attr"`
	}
	var doc struct {
		counters
		Suites []struct {
			Name string `xml:"name,attr"`
			counters
			Cases []struct {
				Name    string     `xml:"name,attr"`
				Failure []xml.Name `xml:"failure"`
				Error   []xml.Name `xml:"error"`
				Skipped []xml.Name `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(data, &doc))
	var sum counters
	for _, s := range doc.Suites {
		var got counters
		for _, c := range s.Cases {
			got.Tests++
			got.Failures += len(c.Failure)
			got.Errors += len(c.Error)
			got.Skipped += len(c.Skipped)
			assert.LessOrEqual(t, len(c.Failure)+len(c.Error)+len(c.Skipped), 1, "%s: one outcome at most", c.Name)
		}
		assert.Equal(t, got, s.counters, "testsuite %q: its counters against its test cases", s.Name)
		sum.Tests += got.Tests
		sum.Failures += got.Failures
		sum.Errors += got.Errors
		sum.Skipped += got.Skipped
	}
	assert.Equal(t, sum, doc.counters, "the testsuites counters against the test cases")
	// The summary counts scenarios; the suite "client versions" has a case
	// per client version besides.
	scenarios := doc.counters
	for _, s := range doc.Suites {
		if s.Name == "client versions" {
			scenarios.Tests -= s.Tests
			scenarios.Failures -= s.Failures
			scenarios.Errors -= s.Errors
			scenarios.Skipped -= s.Skipped
		}
	}
	assert.Equal(t, counters{Tests: total, Failures: failed, Skipped: skipped}, scenarios, "the testsuites counters against the summary")
}

// scenarioCases splits a JUnit report's test cases into the scenarios'
// and the client versions' (report.clientSuite).
func scenarioCases(all []junit.Test) (scenarios, clients []junit.Test) {
	for _, tc := range all {
		if tc.Classname == "client versions" {
			clients = append(clients, tc)
		} else {
			scenarios = append(scenarios, tc)
		}
	}
	return scenarios, clients
}

// retyped answers a 404 as text/plain.
type retyped struct{ http.ResponseWriter }

func (r *retyped) WriteHeader(code int) {
	if code == http.StatusNotFound {
		r.Header().Set("Content-Type", "text/plain")
	}
	r.ResponseWriter.WriteHeader(code)
}

// --read-only leaves out the scenarios that create runs or change anything.
func TestRunWritesJUnitInReadOnlyMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "contract.xml")
	out, errOut, err := runCmd(t, "--read-only", "--format", "junit", "--output", path)
	require.NoError(t, err, "%s\n%s", out, errOut)
	assert.Contains(t, errOut, "read-only: only GET and HEAD were sent; scenarios tagged @creates-runs or @writes were left out")

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	junitcheck.Validate(t, data)
	tot, all := junitcheck.Totals(t, data)
	// The mock's control API changes the mock at every use: a read-only
	// run leaves it alone and skips what needs it. (The client versions
	// an answer breaks are skipped test cases too.)
	assert.Equal(t, tot.Tests, tot.Passed+tot.Skipped)
	assert.Positive(t, tot.Passed)
	tests, _ := scenarioCases(all)
	var names []string
	for _, tc := range tests {
		names = append(names, tc.Name)
		if tc.Status == "skipped" && !strings.HasPrefix(tc.Message, "inconclusive: ") {
			assert.Contains(t, tc.Message, "read-only run leaves alone", tc.Name)
		}
	}
	assert.Contains(t, names, "An unknown run is not found")
	assert.Contains(t, names, "A bad limit of 0 is refused with 400")
	assert.NotContains(t, names, "A prompt alone starts a queued run", "a @creates-runs scenario ran in read-only mode")
	assert.NotContains(t, names, "An identity is created, renamed and deleted", "a @writes scenario ran in read-only mode")
}

// A server that breaks the contract makes the command fail and say where.
func TestRunFailsAgainstABrokenServer(t *testing.T) {
	srv := newMock(t, mockserver.Options{}, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/agent/runs/") {
				w = &retyped{ResponseWriter: w}
			}
			next.ServeHTTP(w, r)
		})
	})
	out, errOut, err := runCmd(t, "--base-url", srv.URL, "--api-key", "wk-test", "--read-only", "--no-control", "--format", "progress")
	require.ErrorIs(t, err, errFailed, "%s\n%s", out, errOut)
	assert.Contains(t, errOut, "CAUSE   1 scenario failed from GET /agent/runs/{runId} 404: header.Content-Type: \"text/plain\" is not documented for status 404")
	assert.Contains(t, errOut, "get_run.feature: An unknown run is not found")
	assert.Contains(t, errOut, "polling the server")
}

func TestRunRefusesBadCommandLines(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"--nope"}, "flag provided but not defined"},
		{"stray argument", []string{"extra"}, "unexpected arguments"},
		{"bad format", []string{"--format", "xml", "--base-url", "http://127.0.0.1:1", "--api-key", "k"}, `--format "xml": want one of pretty, progress, junit, cucumber`},
		{"no key for a real server", []string{"--base-url", "http://127.0.0.1:1"}, "no API key"},
		{"bad base URL", []string{"--base-url", "ftp://example.com", "--api-key", "k"}, "want http(s)://host"},
		{"bad tags", []string{"--tags", "@a and", "--base-url", "http://127.0.0.1:1", "--api-key", "k"}, "ends where a tag was expected"},
		{"no scheme", []string{"--base-url", "127.0.0.1:8080", "--api-key", "k"}, "has no scheme: write it as http://127.0.0.1:8080"},
		{"unknown tag", []string{"--tags", "not @sloww"}, "no scenario is tagged @sloww; did you mean @slow? the tags are @creates-runs, "},
		{"bare timeout", []string{"--timeout", "5"}, `invalid value "5" for flag -timeout: want a duration with its unit, such as 30s, 5m or 1h30m`},
		{"bare poll interval", []string{"--poll-interval", "2"}, `invalid value "2" for flag -poll-interval: want a duration with its unit`},
		{"zero poll interval", []string{"--poll-interval", "0s"}, `want a duration above zero`},
		{"negative seed", []string{"--seed", "-3"}, "want a positive number"},
		{"no concurrency", []string{"--concurrency", "0"}, "want 1 or more"},
		{"empty client version", []string{"--fail-on-client", ""},
			`--fail-on-client : no client version "": the known ones are python-0.11.0, typescript-1.0.0-alpha.8, typescript-1.4.0-alpha.6, or all`},
		{"unknown client version", []string{"--fail-on-client", "typescript-2.0.0"},
			`--fail-on-client typescript-2.0.0: no client version "typescript-2.0.0": the known ones are python-0.11.0, typescript-1.0.0-alpha.8, typescript-1.4.0-alpha.6, or all`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, err := runCmd(t, tc.args...)
			require.ErrorIs(t, err, errUsage, "exit status 2: the command line is wrong")
			assert.Contains(t, errOut+err.Error(), tc.want)
		})
	}
}

func TestHelpShowsEveryFlagButNoKey(t *testing.T) {
	t.Setenv("WARP_API_KEY", "wk-secret")
	var errOut bytes.Buffer
	err := run(context.Background(), []string{"--help"}, &bytes.Buffer{}, &errOut)
	require.ErrorIs(t, err, errHelp)
	assert.NotContains(t, errOut.String(), "wk-secret")
	for _, f := range []string{"--base-url", "--api-key", "--tags", "--read-only", "--allow-writes", "--timeout", "--poll-interval", "--format", "--output", "--concurrency", "--seed", "--no-control", "--fail-on-client"} {
		assert.Contains(t, errOut.String(), strings.TrimPrefix(f, "-"))
	}
	assert.Contains(t, errOut.String(), "agentruns-contract docs [--output spec.html]", "the docs command is listed")
}

// statusRecorder notes the status of an answer.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(p)
}

// countingMock serves the mock and counts the requests that create runs.
func countingMock(t *testing.T, opts mockserver.Options) (*httptest.Server, *atomic.Int64, *atomic.Value) {
	var creates atomic.Int64
	var auth atomic.Value
	srv := newMock(t, opts, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if a := r.Header.Get("Authorization"); a != "" {
				auth.Store(a)
			}
			rec := &statusRecorder{ResponseWriter: w}
			next.ServeHTTP(rec, r)
			if r.Method == http.MethodPost && (r.URL.Path == "/agent/run" || r.URL.Path == "/agent/runs") && rec.status == http.StatusOK {
				creates.Add(1)
			}
		})
	})
	return srv, &creates, &auth
}

// Issue 15, point 2: a server named only by OZ_API_BASE_URL is tested, says
// so before anything runs, and gets no run created on it.
func TestAnExportedBaseURLIsTestedReadOnlyAndSaidFirst(t *testing.T) {
	srv, creates, auth := countingMock(t, mockserver.Options{})
	t.Setenv("OZ_API_BASE_URL", srv.URL)
	t.Setenv("WARP_API_KEY", "wk-from-env")
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"--format", "progress"}, &out, &errOut)
	require.NoError(t, err, "%s\n%s", out.String(), errOut.String())
	first, _, _ := strings.Cut(errOut.String(), "\n")
	assert.Equal(t, "testing "+srv.URL+" (from $OZ_API_BASE_URL), read-only: name it with --base-url, or add --allow-writes, to run the scenarios that create runs", first)
	assert.Contains(t, errOut.String(), "key from $WARP_API_KEY")
	assert.Zero(t, creates.Load(), "runs were created on a server the command line did not name")
	assert.Equal(t, "Bearer wk-from-env", auth.Load())
	assert.NotContains(t, errOut.String(), "bundled mock")
}

// The target line says where the server came from, and what may be written.
func TestTargetSaysWhereTheServerCameFrom(t *testing.T) {
	srv, creates, _ := countingMock(t, mockserver.Options{})
	for _, tc := range []struct {
		name     string
		env      string
		args     []string
		want     string
		readOnly bool
	}{
		{"named on the command line", "", []string{"--base-url", srv.URL}, "testing " + srv.URL + " (from --base-url)\n", false},
		{"named on the command line, env set too", "http://127.0.0.1:1", []string{"--base-url", srv.URL}, "testing " + srv.URL + " (from --base-url)\n", false},
		{"from the environment, writes allowed", srv.URL, []string{"--allow-writes"}, "testing " + srv.URL + " (from $OZ_API_BASE_URL)\n", false},
		{"from the environment, read-only asked", srv.URL, []string{"--read-only"}, "testing " + srv.URL + " (from $OZ_API_BASE_URL)\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OZ_API_BASE_URL", tc.env)
			t.Setenv("WARP_API_KEY", "wk-mock-alice")
			before := creates.Load()
			var out, errOut bytes.Buffer
			// @mock-control scenarios create runs; they are quick with the control API.
			args := append([]string{"--tags", "@mock-control and @creates-runs", "--format", "progress"}, tc.args...)
			err := run(context.Background(), args, &out, &errOut)
			if tc.readOnly {
				require.ErrorContains(t, err, "no scenario matches")
			} else {
				require.NoError(t, err, "%s\n%s", out.String(), errOut.String())
			}
			assert.True(t, strings.HasPrefix(errOut.String(), tc.want), errOut.String())
			assert.Equal(t, tc.readOnly, creates.Load() == before, "runs created")
		})
	}
}

// Issue 15, point 3: a wrong target stops with one sentence before any
// scenario runs.
func TestPreflightStopsAtAWrongTarget(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<!doctype html><html><body>" + strings.Repeat("<p>Welcome</p>\n", 800) + "</body></html>"))
	}))
	defer html.Close()
	strict := newMock(t, mockserver.Options{StrictAuth: true}, nil)
	for _, tc := range []struct {
		name, url, want string
	}{
		{"nothing listening", closedURL, "cannot reach " + closedURL + ": dial tcp"},
		{"an HTML server", html.URL, "answered 200 with text/html, not JSON: is " + html.URL + " the API's base URL"},
		{"a key refused", strict.URL, strict.URL + " refused the API key (GET /agent/runs answered 401); check --api-key or WARP_API_KEY"},
		// With a key it knows: like the service, the mock asks for valid
		// credentials before it says a path is unknown.
		{"no API under this prefix", strict.URL + "/v9", "/v9/agent/runs?limit=1 answered 404: there is no runs endpoint under " + strict.URL + "/v9; is the version prefix (such as /api/v1) right?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "wk-not-a-fixture-key"
			if strings.HasSuffix(tc.url, "/v9") {
				key = "wk-mock-alice"
			}
			out, errOut, err := runCmd(t, "--base-url", tc.url, "--api-key", key)
			var pre *runner.PreflightError
			require.ErrorAs(t, err, &pre, "%s\n%s", out, errOut)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "\n", "one sentence")
			assert.Empty(t, out, "no scenario output")
			assert.Equal(t, 2, strings.Count(errOut, "\n"), "only the target and the order were said before:\n%s", errOut)
		})
	}
}

// Issue 15, point 4: Cucumber's tag expressions select scenarios, and
// godog's older ones still do.
func TestCucumberTagExpressions(t *testing.T) {
	for _, tags := range []string{"@mock-control and not @slow", "not (@slow or @creates-runs)", "@mock-control && ~@slow"} {
		t.Run(tags, func(t *testing.T) {
			out, errOut, err := runCmd(t, "--tags", tags, "--format", "progress")
			require.NoError(t, err, "%s\n%s", out, errOut)
			total, passed, _, _ := summaryCounts(t, errOut)
			assert.Positive(t, total)
			assert.Equal(t, total, passed)
		})
	}
}

// scenarioHeaders lists the "Scenario:" lines of pretty output, in order.
func scenarioHeaders(out string) []string {
	var h []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "Scenario: ") {
			h = append(h, strings.TrimSpace(line))
		}
	}
	return h
}

// Issue 15, point 5: at concurrency 4 the pretty output prints each
// scenario whole, with no Go source location.
func TestPrettyOutputAtConcurrencyFour(t *testing.T) {
	out, errOut, err := runCmd(t, "--concurrency", "4", "--tags", "not @slow")
	require.NoError(t, err, "%s\n%s", out, errOut)
	assert.NotRegexp(t, `\.go:\d+`, out, "a Go source location reached the reader")
	assert.NotContains(t, out, "*scenario")
	// Each block: a Scenario line, then only its steps, their tables and
	// messages, up to a blank line.
	blocks := strings.Split(out, "\n\n")
	var scenarios int
	for _, b := range blocks {
		lines := strings.Split(strings.TrimSpace(b), "\n")
		if !strings.HasPrefix(lines[0], "Scenario: ") {
			continue
		}
		scenarios++
		for _, l := range lines[1:] {
			assert.NotContains(t, l, "Scenario", "two scenarios in one block:\n%s", b)
			assert.Regexp(t, `^\s+(✓|-|\|)`, l, "block:\n%s", b)
		}
	}
	total, _, _, _ := summaryCounts(t, errOut)
	assert.Equal(t, total, scenarios)
	assert.Len(t, scenarioHeaders(out), total)
}

// Issue 15, point 6: --seed replays the order the earlier run printed.
func TestSeedReplaysTheOrder(t *testing.T) {
	order := func(seed string) []string {
		out, errOut, err := runCmd(t, "--seed", seed, "--concurrency", "1", "--read-only")
		require.NoError(t, err, "%s\n%s", out, errOut)
		assert.Contains(t, errOut, "seed "+seed+" (--seed "+seed+" replays it)")
		return scenarioHeaders(out)
	}
	first := order("7")
	require.NotEmpty(t, first)
	assert.Equal(t, first, order("7"))
	assert.NotEqual(t, first, order("8"))
	assert.ElementsMatch(t, first, order("8"))
}

// Issue 15, point 6: --no-control tests the mock as if it were a real
// server.
func TestNoControlTestsTheMockAsARealServer(t *testing.T) {
	out, errOut, err := runCmd(t, "--no-control", "--tags", "@mock-control", "--format", "progress")
	require.ErrorIs(t, err, errNothingChecked, "every scenario skipped: %s\n%s", out, errOut)
	total, _, _, skipped := summaryCounts(t, errOut)
	assert.Equal(t, total, skipped)
	assert.Contains(t, errOut, "polling the server")
	assert.Contains(t, errOut, "needs the mock control API")
}

// docs/contract-suite-runner.md says what the command does: every flag, the
// target lines and the pre-flight sentences it quotes.
func TestTheRunnerPageIsTrue(t *testing.T) {
	data, err := os.ReadFile("../../docs/contract-suite-runner.md")
	require.NoError(t, err)
	page := string(data)
	var help bytes.Buffer
	require.ErrorIs(t, run(context.Background(), []string{"--help"}, &bytes.Buffer{}, &help), errHelp)
	flags := regexp.MustCompile(`(?m)^  -([a-z-]+)`).FindAllStringSubmatch(help.String(), -1)
	require.Greater(t, len(flags), 8, help.String())
	for _, f := range flags {
		if f[1] != "api-key" && f[1] != "timeout" { // docs/running-the-suite.md's table has them
			assert.Contains(t, page, "`--"+f[1], "the page does not describe --%s", f[1])
		}
	}
	for _, f := range formats {
		assert.Contains(t, page, "| `"+f.name+"`", "the page does not describe --format %s", f.name)
	}
	for _, line := range []string{
		"testing URL (from --base-url)",
		"testing URL (from $OZ_API_BASE_URL), read-only: name it with --base-url, or add --allow-writes, to run the scenarios that create runs",
		"testing the bundled mock at http://127.0.0.1:PORT (started in this process: no --base-url, no $OZ_API_BASE_URL)",
		"refused the API key (GET /agent/runs answered 401); check --api-key or WARP_API_KEY",
		"is the server running, and is the base URL right?",
		"not JSON: is … the API's base URL, with its version prefix such as /api/v1?",
		"--seed 4284715607176908989 replays it), 4 at a time",
		"exits with status 130",
	} {
		assert.Contains(t, page, line)
	}
}

// --format html writes the report page to --output.
func TestRunWritesAnHTMLReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.html")
	out, errOut, err := runCmd(t, "--tags", "@mock-control", "--format", "html", "--output", path)
	require.NoError(t, err, "%s\n%s", out, errOut)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	page := string(data)
	assert.True(t, strings.HasPrefix(page, "<!doctype html>"))
	assert.Contains(t, page, `<b data-count="failed">0</b> failed`)
	assert.Contains(t, page, "driving the mock&#39;s control API")
	assert.Contains(t, page, `id="state-progression--a-successful-run-passes-through-every-state-in-order"`)
	assert.Contains(t, page, "not selected", "the scenarios the tags left out are on the page too")
}

// docs writes the spec page without running anything.
func TestDocsWritesTheSpecPage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spec.html")
	_, errOut, err := runCmd(t, "docs", "--output", path)
	require.NoError(t, err, errOut)
	files, err := fs.Glob(features.FS, "*.feature")
	require.NoError(t, err)
	assert.Contains(t, errOut, fmt.Sprintf("wrote the spec of %d features to %s", len(files), path))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	page := string(data)
	for _, want := range []string{"Create a run", "Run state progression", `id="get-run--an-unknown-run-is-not-found"`, "no server was called"} {
		assert.Contains(t, page, want)
	}
	assert.NotContains(t, page, `class="badge st-`)

	_, _, err = runCmd(t, "docs", "extra")
	assert.ErrorIs(t, err, errUsage)
}

// Two keys of one team would fail every tenancy scenario with "expected
// status 403, got 200", as if the server leaked runs: the pre-flight sees
// the other key fetch a run of the first key's team and stops, in one
// sentence, before any scenario.
func TestASecondKeyOfTheSameTeamStopsBeforeTheScenarios(t *testing.T) {
	srv := newMock(t, mockserver.Options{}, nil)
	out, errOut, err := runCmd(t, "--base-url", srv.URL, "--api-key", "wk-mock-alice", "--other-api-key", "wk-mock-bob", "--tags", "@two-callers", "--format", "progress")
	var pre *runner.PreflightError
	require.ErrorAs(t, err, &pre, "%s\n%s", out, errOut)
	assert.Regexp(t, `^the --other-api-key sees run [0-9a-f-]{36} that the --api-key's team made, so the two keys belong to one team; `, pre.Sentence)
	assert.NotContains(t, errOut, "scenarios:", "no scenario ran")
	assert.Empty(t, out)
}

// Every flag --help shows, and every --format, is named in the flags table
// of docs/running-the-suite.md, where a server team looks them up.
func TestTheDocsNameEveryFlagOfHelp(t *testing.T) {
	var errOut bytes.Buffer
	require.ErrorIs(t, run(context.Background(), []string{"--help"}, &bytes.Buffer{}, &errOut), errHelp)
	page, err := os.ReadFile("../../docs/running-the-suite.md")
	require.NoError(t, err)
	flags := regexp.MustCompile(`(?m)^  -([a-z-]+)`).FindAllStringSubmatch(errOut.String(), -1)
	require.Greater(t, len(flags), 10, errOut.String())
	for _, f := range flags {
		assert.Contains(t, string(page), "| `--"+f[1]+"` |", "docs/running-the-suite.md's flags table lacks --%s", f[1])
	}
	for _, f := range formats {
		assert.Contains(t, string(page), "`"+f.name+"`", "docs/running-the-suite.md lacks --format %s", f.name)
	}
}

// Each outcome of run ends the command with the status the usage and
// docs/contract-suite-runner.md give it.
func TestExitStatuses(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errHelp, 0},
		{errFailed, 1},
		{errClientBroken, 1},
		{errors.New("cannot reach the server"), 1},
		{errUsage, 2},
		{usageError{errors.New("no API key")}, 2},
		{errNothingChecked, 3},
		{fmt.Errorf("%w: 3 scenarios did not finish", runner.ErrInterrupted), 130},
	} {
		assert.Equal(t, tc.want, exitStatus(tc.err), "%v", tc.err)
	}
	var usage bytes.Buffer
	_, _ = parseFlags([]string{"--help"}, &usage)
	assert.Contains(t, usage.String(), "3 nothing was checked")
}

// Issue 34, point 6: --poll-interval sets how often the suite looks at a
// run when polling, and the summary says how often it looked, and how
// many looks that made.
func TestPollIntervalIsUsedAndReported(t *testing.T) {
	srv := newMock(t, mockserver.Options{Step: 20 * time.Millisecond}, nil)
	out, errOut, err := runCmd(t, "--base-url", srv.URL, "--api-key", "wk-mock-alice", "--no-control", "--poll-interval", "30ms",
		"--tags", "@slow and not @mock-control", "--format", "progress")
	require.NoError(t, err, "%s\n%s", out, errOut)
	assert.Regexp(t, `\(polling the server, a look at a run every 30ms \(--poll-interval\): \d+ looks, seed \d+\)`, errOut)
}

// Issue 34, point 10: a report written to a file leaves the terminal with
// a mark per scenario as it ends, so a long run is never silent.
func TestAReportToAFileShowsProgressOnStderr(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.html")
	out, errOut, err := runCmd(t, "--tags", "@two-callers and not @slow", "--format", "html", "--output", path)
	require.NoError(t, err, "%s\n%s", out, errOut)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "writing the html report to "+path+"; a mark per scenario as it ends")
	total, _, _, _ := summaryCounts(t, errOut)
	assert.Contains(t, errOut, strings.Repeat(".", total)+" "+strconv.Itoa(total)+"\n", "one mark per scenario, then the count")
}

// The summary ends with the client versions' table; a break fails the run
// only for a version --fail-on-client names. The bundled mock serves the
// newest client's surface, which the oldest TypeScript client does not
// read whole (runs in ERROR or BLOCKED, screenshot artifacts).
func TestClientVersionsTableAndFailOnClient(t *testing.T) {
	_, errOut, err := runCmd(t, "--format", "progress")
	require.NoError(t, err, errOut)
	assert.Contains(t, errOut, "Client versions: each success answer as each released official client reads it\nclient version             answers  breaking  verdict\n")
	assert.Regexp(t, `typescript-1\.4\.0-alpha\.6 +[1-9][0-9]* +0  reads every answer`, errOut)
	assert.Regexp(t, `typescript-1\.0\.0-alpha\.8 +[1-9][0-9]* +[1-9][0-9]*  breaks\n`, errOut)

	_, errOut, err = runCmd(t, "--format", "progress", "--fail-on-client", "typescript-1.0.0-alpha.8")
	require.ErrorIs(t, err, errClientBroken)
	assert.Equal(t, 1, exitStatus(err))
	assert.Regexp(t, `typescript-1\.0\.0-alpha\.8 +[1-9][0-9]* +[1-9][0-9]*  BREAKS \(fails the run\)\n`, errOut)
	assert.Contains(t, errOut, "FAILED  answers break typescript-1.0.0-alpha.8, which --fail-on-client promised\n")

	_, errOut, err = runCmd(t, "--format", "progress", "--fail-on-client", "typescript-1.4.0-alpha.6")
	require.NoError(t, err, errOut)
}

// Issue 46, point 2: --max-runs against the bundled mock polled as a real
// server: no more runs than the budget, the rest NOT CHECKED (budget), and
// the summary and the JUnit report say what the pass created, by which
// scenarios.
func TestMaxRunsIsKeptAndSaidInTheSummaryAndJUnit(t *testing.T) {
	report := filepath.Join(t.TempDir(), "contract.xml")
	out, errOut, err := runCmd(t, "--no-control", "--max-runs", "2", "--tags", "@creates-runs and not @slow", "--concurrency", "2",
		"--format", "junit", "--output", report)
	require.NoError(t, err, "%s\n%s", out, errOut)
	m := regexp.MustCompile(`RUNS    (\d+) runs? created \(--max-runs 2\)`).FindStringSubmatch(errOut)
	require.NotNil(t, m, errOut)
	created, _ := strconv.Atoi(m[1])
	assert.LessOrEqual(t, created, 2)
	assert.Contains(t, errOut, "NOT CHECKED what the run budget left out (budget)")
	assert.Contains(t, errOut, "pass --max-runs N (a larger budget of runs) to check it")
	assert.Contains(t, errOut, "a --max-runs larger than 2", "a budget was given: the last line asks for a larger one")
	assert.Contains(t, errOut, "marked: titles begin with [agentruns-contract]")
	data, err := os.ReadFile(report)
	require.NoError(t, err)
	assert.Contains(t, string(data), `<property name="runs" value="`+m[1]+` run`)
	assert.Contains(t, string(data), `not checked: what the run budget left out (budget); --max-runs would check it`)
}
