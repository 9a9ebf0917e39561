package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/internal/junitcheck"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/proxy"
)

// The proxy refuses to start without an upstream it can name, and refuses
// the mock's own flags beside it.
func TestProxyFlagsAreChecked(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--proxy", ""}, "needs the upstream server's URL"},
		{[]string{"--proxy", "staging.example.com"}, "absolute http:// or https:// URL"},
		{[]string{"--proxy", "https://user:pw@staging.example.com"}, "without credentials"},
		{[]string{"--record", t.TempDir()}, "--record needs --proxy URL"},
		{[]string{"--proxy-junit", "x.xml"}, "--proxy-junit needs --proxy URL"},
		{[]string{"--proxy", "https://staging.example.com", "--state-file", "runs.json"}, "--state-file shapes the mock's own runs"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			assert.Contains(t, startErr(t, tc.args...), tc.want)
		})
	}
}

// upstream is a mock that drops the title of every run it shows when asked
// by id, and notes every path it is asked for.
type upstream struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func newUpstream(t *testing.T) *upstream {
	m, err := mockserver.New(mockserver.Options{})
	require.NoError(t, err)
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.paths = append(u.paths, r.URL.Path)
		u.mu.Unlock()
		rec := httptest.NewRecorder()
		m.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/agent/runs/") && rec.Code == http.StatusOK {
			var run map[string]any
			require.NoError(t, json.Unmarshal(body, &run))
			delete(run, "title")
			body, _ = json.Marshal(run)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	}))
	t.Cleanup(u.Close)
	return u
}

// The whole proxy mode through the command: forwarded traffic checked,
// the control API under /__mock/proxy kept home and behind the token, the
// reports and the recording written on exit, the exit an error because the
// upstream broke the contract, and no key or signature in anything kept.
func TestProxyModeChecksReportsAndRecords(t *testing.T) {
	up := newUpstream(t)
	dir := t.TempDir()
	junit, html, rec := filepath.Join(dir, "proxy.xml"), filepath.Join(dir, "proxy.html"), filepath.Join(dir, "recorded")
	m := startRun(t, "--proxy", up.URL, "--record", rec, "--proxy-junit", junit, "--proxy-html", html, "--control-token", "ctl-SECRET-1")

	const run = "f29d0da9-953f-48f1-a09f-76b5a170b338" // a fixture run of Alice's, with artifacts
	detail := m.must(200, "GET", "/agent/runs/"+run, "wk-mock-alice", "")
	assert.NotContains(t, string(detail), `"title":"Fix flaky login test"`, "the answer passes through as the upstream gave it")
	m.must(200, "GET", "/agent/runs?limit=5", "wk-mock-alice", "")
	m.must(400, "GET", "/agent/runs?limit=0", "wk-mock-alice", "")

	// A signed download, through the proxy.
	var full struct {
		Artifacts []struct {
			Type string `json:"artifact_type"`
			Data struct {
				UID string `json:"artifact_uid"`
			} `json:"data"`
		} `json:"artifacts"`
	}
	require.NoError(t, json.Unmarshal(detail, &full))
	var signature string
	for _, a := range full.Artifacts {
		if a.Type != "SCREENSHOT" {
			continue
		}
		var art struct {
			Data struct {
				DownloadURL string `json:"download_url"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal(m.must(200, "GET", "/agent/artifacts/"+a.Data.UID, "wk-mock-alice", ""), &art))
		u, err := url.Parse(art.Data.DownloadURL)
		require.NoError(t, err)
		signature = u.Query().Get("signature")
		m.must(200, "GET", u.Path+"?"+u.RawQuery, "", "")
	}
	require.NotEmpty(t, signature, "the fixture run has a screenshot")

	// The proxy's own control API: behind the token, never forwarded.
	m.must(401, "GET", "/__mock/proxy", "", "")
	var s proxy.Summary
	require.NoError(t, json.Unmarshal(m.must(200, "GET", "/__mock/proxy", "ctl-SECRET-1", ""), &s))
	assert.Positive(t, s.Violations)
	assert.Equal(t, 1, s.OffDocument, "limit=0 is off the document, and was refused: no violation")
	found := map[string]int{}
	for _, r := range s.Rules {
		found[r.ID] = r.Violations
	}
	assert.Positive(t, found["response-follows-document"])
	assert.Zero(t, found["invalid-request-refused"])
	var journal []proxy.Entry
	require.NoError(t, json.Unmarshal(m.must(200, "GET", "/__mock/proxy/requests", "ctl-SECRET-1", ""), &journal))
	require.NotEmpty(t, journal)
	assert.Equal(t, "/agent/runs/"+run, journal[0].Path)
	assert.Contains(t, journal[0].Violations, "response-follows-document")
	m.must(200, "GET", "/__mock/proxy/report.html", "ctl-SECRET-1", "")
	m.must(200, "GET", "/__mock/proxy/ui/", "", "")
	up.mu.Lock()
	for _, p := range up.paths {
		assert.False(t, strings.HasPrefix(p, "/__mock/proxy"), "forwarded %s", p)
	}
	up.mu.Unlock()

	m.stop()
	err := m.wait(30 * time.Second)
	require.Error(t, err, "the upstream broke the contract: the command fails")
	assert.Contains(t, err.Error(), "broke the contract")

	data, err := os.ReadFile(junit)
	require.NoError(t, err)
	junitcheck.Validate(t, data)
	assert.Contains(t, string(data), "response-follows-document")
	page, err := os.ReadFile(html)
	require.NoError(t, err)
	assert.Contains(t, string(page), "Contract check of live traffic")
	set, err := fixtures.Load(os.DirFS(rec))
	require.NoError(t, err)
	assert.NotEmpty(t, set.Runs)

	kept := []string{m.stderr.String(), string(data), string(page)}
	for _, name := range []string{"principals.json", "runs.json"} {
		b, err := os.ReadFile(filepath.Join(rec, name))
		require.NoError(t, err)
		kept = append(kept, string(b))
	}
	for _, k := range kept {
		for _, secret := range []string{"wk-mock-alice", "SECRET", "Bearer", signature} {
			assert.NotContains(t, k, secret)
		}
	}
}
