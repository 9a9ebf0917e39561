package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/features"
)

func runCmd(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	t.Setenv("OZ_API_BASE_URL", "")
	t.Setenv("WARP_API_KEY", "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	err = run(ctx, args, &out, &errOut)
	return out.String(), errOut.String(), err
}

// With no base URL the command starts the bundled mock and verifies it.
func TestRunVerifiesTheBundledMock(t *testing.T) {
	out, errOut, err := runCmd(t, "--tags", "@mock-control", "--format", "progress", "--concurrency", "8")
	require.NoError(t, err, "%s\n%s", out, errOut)
	assert.Contains(t, errOut, "verifying the bundled mock at http://127.0.0.1:")
	assert.Contains(t, errOut, "0 failed, 0 skipped")
	assert.Contains(t, errOut, "driving the mock's control API")
	assert.Contains(t, out, "scenarios (")
}

// --format junit writes a JUnit report to --output; --read-only leaves out
// the scenarios that create runs.
func TestRunWritesJUnitInReadOnlyMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "contract.xml")
	out, errOut, err := runCmd(t, "--read-only", "--format", "junit", "--output", path)
	require.NoError(t, err, "%s\n%s", out, errOut)
	assert.Contains(t, errOut, "read-only: scenarios tagged @creates-runs were left out")

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var report struct {
		Tests  int `xml:"tests,attr"`
		Suites []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name   string `xml:"name,attr"`
				Status string `xml:"status,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(data, &report), string(data))
	var names []string
	for _, s := range report.Suites {
		for _, c := range s.Cases {
			names = append(names, c.Name)
			assert.Equal(t, "passed", c.Status, c.Name)
		}
	}
	assert.Contains(t, names, "An unknown run is not found")
	assert.Contains(t, names, "A bad limit of 0 is refused with 400")
	assert.NotContains(t, names, "A prompt alone starts a queued run", "a @creates-runs scenario ran in read-only mode")
}

// A server that breaks the contract makes the command fail and say where.
func TestRunFailsAgainstABrokenServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"message": "not here"}`))
	}))
	defer srv.Close()
	out, errOut, err := runCmd(t, "--base-url", srv.URL, "--api-key", "wk-test", "--read-only", "--format", "progress")
	require.ErrorIs(t, err, errFailed, "%s\n%s", out, errOut)
	assert.Contains(t, errOut, "FAILED  get_run.feature: An unknown run is not found")
	assert.Contains(t, errOut, "application/problem+json")
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
		{"bad format", []string{"--format", "yaml", "--base-url", "http://127.0.0.1:1", "--api-key", "k"}, `format "yaml"`},
		{"no key for a real server", []string{"--base-url", "http://127.0.0.1:1"}, "no API key"},
		{"bad base URL", []string{"--base-url", "ftp://example.com", "--api-key", "k"}, "want http(s)://host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, err := runCmd(t, tc.args...)
			require.Error(t, err)
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
	for _, f := range []string{"--base-url", "--api-key", "--tags", "--read-only", "--timeout", "--format", "--output", "--concurrency"} {
		assert.Contains(t, errOut.String(), strings.TrimPrefix(f, "-"))
	}
}

// The environment supplies the base URL and the key when the flags do not.
func TestRunReadsTheEnvironment(t *testing.T) {
	var gotAuth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth.Store(r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	t.Setenv("OZ_API_BASE_URL", srv.URL)
	t.Setenv("WARP_API_KEY", "wk-from-env")
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"--read-only", "--tags", "@nothing-has-this-tag"}, &out, &errOut)
	require.ErrorContains(t, err, "no scenario matches")
	assert.NotContains(t, errOut.String(), "bundled mock")

	err = run(context.Background(), []string{"--read-only", "--format", "progress"}, &out, &errOut)
	require.ErrorIs(t, err, errFailed)
	assert.Equal(t, "Bearer wk-from-env", gotAuth.Load())
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
