package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/drift"
	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/internal/junitcheck"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/openapi"
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
		{[]string{"--proxy-backpressure"}, "--proxy-backpressure needs --proxy URL"},
		{[]string{"--proxy-drift", "drift.json"}, "--proxy-drift needs --proxy URL"},
		{[]string{"--proxy-overlay", "o.yaml"}, "--proxy-overlay needs --proxy URL"},
		{[]string{"--proxy-profile", "p.json"}, "--proxy-profile needs --proxy URL"},
		{[]string{"--proxy", "https://staging.example.com", "--state-file", "runs.json"}, "--state-file shapes the mock's own runs"},
		{[]string{"--proxy-document", "published"}, "--proxy-document needs --proxy URL"},
		{[]string{"--proxy", "https://staging.example.com", "--proxy-document", "nowhere.yaml"}, "want served, published, newest or an OpenAPI document's file"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			assert.Contains(t, startErr(t, tc.args...), tc.want)
		})
	}
}

// "agentruns-mock proxy URL" is "--proxy URL": the same configuration,
// the same refusals, and "proxy" elsewhere on the line stays an
// unexpected argument.
func TestTheProxyVerbIsTheProxyFlag(t *testing.T) {
	verb, err := parseFlags([]string{"proxy", "https://staging.example.com/api/v1", "--addr", "127.0.0.1:0", "--proxy-backpressure"}, io.Discard)
	require.NoError(t, err)
	flag, err := parseFlags([]string{"--proxy", "https://staging.example.com/api/v1", "--addr", "127.0.0.1:0", "--proxy-backpressure"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, flag.proxy, verb.proxy)
	assert.Equal(t, "https://staging.example.com/api/v1", verb.proxy.upstream)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy"}, "proxy needs the URL of the server it stands in front of"},
		{[]string{"proxy", "--addr", "127.0.0.1:0"}, "proxy needs the URL of the server it stands in front of"},
		{[]string{"proxy", "staging.example.com"}, "absolute http:// or https:// URL"},
		{[]string{"--addr", "127.0.0.1:0", "proxy", "https://staging.example.com"}, "unexpected arguments: proxy"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stderr strings.Builder
			_, err := parseFlags(tc.args, &stderr)
			require.ErrorIs(t, err, errUsage)
			assert.Contains(t, err.Error()+stderr.String(), tc.want)
		})
	}
}

// upstream is the mock, its answers changed by rewrite, noting every path
// it is asked for.
type upstream struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func rewritingUpstream(t *testing.T, rewrite func(r *http.Request, status int, body []byte) []byte) *upstream {
	m, err := mockserver.New(mockserver.Options{})
	require.NoError(t, err)
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.paths = append(u.paths, r.URL.Path)
		u.mu.Unlock()
		rec := httptest.NewRecorder()
		m.ServeHTTP(rec, r)
		body := rewrite(r, rec.Code, rec.Body.Bytes())
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

// newUpstream is the mock dropping the title of every run it shows when
// asked by id.
func newUpstream(t *testing.T) *upstream {
	return rewritingUpstream(t, func(r *http.Request, status int, body []byte) []byte {
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/agent/runs/") && status == http.StatusOK {
			var run map[string]any
			require.NoError(t, json.Unmarshal(body, &run))
			delete(run, "title")
			body, _ = json.Marshal(run)
		}
		return body
	})
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

	assert.Contains(t, m.stderr.String(), "dashboard="+m.base+"/__mock/proxy/ui/", "the start-up line names the dashboard")

	m.stop()
	err := m.wait()
	require.Error(t, err, "the upstream broke the contract: the command fails")
	assert.Contains(t, err.Error(), "broke the contract")
	assert.Contains(t, err.Error(), junit+" and "+html+" say where", "the exit names the reports written")
	assert.NotContains(t, err.Error(), "GET /__mock/proxy", "the control API is gone by then")
	assert.Contains(t, m.stderr.String(), `extras_left_out`, "the recording's summary in the names the docs use")
	assert.Regexp(t, `proxy checked the traffic"? .*reports="?`+regexp.QuoteMeta(junit+" and "+html),
		m.stderr.String(), "the last line names the reports, whatever the traffic did")

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

// Without a report flag, the exit names the first violation and the flags
// that keep a report; a status the document does not list for the
// operation reads as the statuses it does list and the one answered.
func TestProxyExitWithoutReportsNamesTheFirstViolation(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusMethodNotAllowed)
		_, _ = w.Write([]byte(`{"type":"about:blank","title":"Method not allowed","status":405,"error":"no"}`))
	}))
	t.Cleanup(up.Close)
	// Held to the newest client's document: judged by what it serves, a
	// 405 to that client's own GET of an identity is a server of the
	// published document saying it does not have it.
	m := startRun(t, "--proxy", up.URL, "--proxy-document", "newest")
	m.must(405, "GET", "/agent/identities/agent-1", "wk-live", "")
	m.stop()
	err := m.wait()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "GET /agent/identities/agent-1 → 405: response-follows-document, status: expected one of the documented statuses 200, 400, 401, 403, 404, 429, 500, 503, got 405")
	assert.Contains(t, err.Error(), "give --proxy-junit FILE or --proxy-html FILE")
}

// A recording replays: what --proxy URL --record DIR writes, --fixtures
// DIR starts on, even when the traffic carried secrets in objects (the
// harness's auth secrets, an MCP server's headers and env).
func TestRecordingReplaysThroughTheCommand(t *testing.T) {
	up := newUpstream(t)
	rec := filepath.Join(t.TempDir(), "recorded")
	m := startRun(t, "--proxy", up.URL, "--record", rec)
	var created struct {
		RunID string `json:"run_id"`
	}
	body := `{"prompt":"Bump the dependencies","config":{"name":"bumps","harness":{"type":"claude"},
		"harness_auth_secrets":{"claude_auth_secret_name":"team-claude-key"},
		"mcp_servers":{"gh":{"url":"https://mcp.example.com/sse","headers":{"Authorization":"Bearer gh-SECRET-1"},"env":{"GH_TOKEN":"gh-SECRET-2"}}}}}`
	require.NoError(t, json.Unmarshal(m.must(200, "POST", "/agent/runs", "wk-mock-alice", body), &created))
	detail := m.must(200, "GET", "/agent/runs/"+created.RunID, "wk-mock-alice", "")
	require.Contains(t, string(detail), "team-claude-key", "the upstream shows the config it was sent")
	m.stop()
	_ = m.wait() // the upstream drops titles: the exit reports it

	replay := startRun(t, "--fixtures", rec)
	var run map[string]any
	require.NoError(t, json.Unmarshal(replay.must(200, "GET", "/agent/runs/"+created.RunID, "wk-anyone", ""), &run))
	cfg := run["agent_config"].(map[string]any)
	assert.Equal(t, map[string]any{"claude_auth_secret_name": "REDACTED"}, cfg["harness_auth_secrets"])
	gh := cfg["mcp_servers"].(map[string]any)["gh"].(map[string]any)
	assert.Equal(t, map[string]any{"Authorization": "REDACTED"}, gh["headers"])
	assert.Equal(t, map[string]any{"GH_TOKEN": "REDACTED"}, gh["env"])
	for _, name := range []string{"runs.json", "principals.json"} {
		data, err := os.ReadFile(filepath.Join(rec, name))
		require.NoError(t, err)
		assert.NotContains(t, string(data), "SECRET")
		assert.NotContains(t, string(data), "team-claude-key")
	}
}

// The drift, its overlay and the profile are written on exit where the
// flags say: what the upstream answered beyond the document, an overlay
// that applies to the document, and the answers' shape.
func TestProxyWritesTheDriftTheOverlayAndTheProfileOnExit(t *testing.T) {
	up := rewritingUpstream(t, func(r *http.Request, status int, body []byte) []byte {
		if r.URL.Path == "/agent/models" && status == http.StatusOK {
			var doc map[string]any
			require.NoError(t, json.Unmarshal(body, &doc))
			doc["region"] = "eu-west-1"
			body, _ = json.Marshal(doc)
		}
		return body
	})
	dir := t.TempDir()
	driftFile, overlayFile, profileFile := filepath.Join(dir, "drift.json"), filepath.Join(dir, "overlay.yaml"), filepath.Join(dir, "profile.json")
	m := startRun(t, "--proxy", up.URL, "--proxy-drift", driftFile, "--proxy-overlay", overlayFile, "--proxy-profile", profileFile)
	m.must(200, "GET", "/agent/models", "wk-mock-alice", "")
	m.stop()
	require.NoError(t, m.wait(), "drift fails nothing")
	assert.Regexp(t, `proxy checked the traffic"? .*drift=1`, m.stderr.String())

	var report drift.Report
	b, err := os.ReadFile(driftFile)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &report))
	require.Len(t, report.Facts, 1)
	assert.Equal(t, "body.region", report.Facts[0].Location)

	ov, err := os.ReadFile(overlayFile)
	require.NoError(t, err)
	applied, err := drift.Apply(openapi.Document, ov)
	require.NoError(t, err)
	assert.Contains(t, string(applied), "region:")

	var profile drift.ProfileData
	b, err = os.ReadFile(profileFile)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &profile))
	require.Len(t, profile.Operations, 1)
	assert.Equal(t, "GET /agent/models", profile.Operations[0].Operation)
}

// A second recording into the folder of a first leaves nothing of the
// first: a file of the first (its environments, its models) left beside
// the second's runs would describe another world.
func TestASecondRecordingLeavesNoFileOfTheFirst(t *testing.T) {
	up := rewritingUpstream(t, func(_ *http.Request, _ int, body []byte) []byte { return body })
	rec := filepath.Join(t.TempDir(), "recorded")
	first := startRun(t, "--proxy", up.URL, "--record", rec)
	first.must(200, "GET", "/agent/environments", "wk-mock-alice", "")
	first.must(200, "GET", "/agent/models", "wk-mock-alice", "")
	var page struct {
		Runs []struct {
			RunID string `json:"run_id"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal(first.must(200, "GET", "/agent/runs", "wk-mock-alice", ""), &page))
	require.Greater(t, len(page.Runs), 1)
	first.stop()
	require.NoError(t, first.wait())
	for _, name := range []string{"environments.json", "models.json", "runs.json"} {
		require.FileExists(t, filepath.Join(rec, name))
	}

	second := startRun(t, "--proxy", up.URL, "--record", rec)
	kept := page.Runs[0].RunID
	var keptRun struct {
		Config struct {
			ModelID       string `json:"model_id"`
			EnvironmentID string `json:"environment_id"`
		} `json:"agent_config"`
	}
	require.NoError(t, json.Unmarshal(second.must(200, "GET", "/agent/runs/"+kept, "wk-mock-alice", ""), &keptRun))
	second.stop()
	require.NoError(t, second.wait())
	var envs struct {
		Environments []struct {
			UID string `json:"uid"`
		} `json:"environments"`
	}
	if data, err := os.ReadFile(filepath.Join(rec, "environments.json")); err == nil {
		require.NoError(t, json.Unmarshal(data, &envs))
	}
	var envIDs []string
	for _, e := range envs.Environments {
		envIDs = append(envIDs, e.UID)
	}
	if keptRun.Config.EnvironmentID == "" {
		assert.Empty(t, envIDs)
	} else {
		assert.Equal(t, []string{keptRun.Config.EnvironmentID}, envIDs)
	}
	// The first recording's environments and models are gone; only the one the kept run
	// names is listed, added as every model a run names is.
	var models struct {
		Models []struct {
			ID string `json:"id"`
		} `json:"models"`
	}
	if data, err := os.ReadFile(filepath.Join(rec, "models.json")); err == nil {
		require.NoError(t, json.Unmarshal(data, &models))
	}
	var ids []string
	for _, m := range models.Models {
		ids = append(ids, m.ID)
	}
	if keptRun.Config.ModelID == "" {
		assert.Empty(t, ids)
	} else {
		assert.Equal(t, []string{keptRun.Config.ModelID}, ids)
	}
	entries, err := os.ReadDir(rec)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.HasPrefix(e.Name(), ".record-"), "the folder the files were written in is gone: %s", e.Name())
	}

	replay := startRun(t, "--fixtures", rec)
	replay.must(200, "GET", "/agent/runs/"+kept, "wk-anyone", "")
	replay.must(404, "GET", "/agent/runs/"+page.Runs[1].RunID, "wk-anyone", "")
}

// --record into a folder on another file system than its parent's (here
// a link to one, /dev/shm; a mount point is the same case) writes the
// recording: the files are moved into place by a rename, which no file
// system does across to another ("invalid cross-device link").
func TestRecordingOntoAnotherFileSystem(t *testing.T) {
	other, err := os.MkdirTemp("/dev/shm", "agentruns-record-*")
	if err != nil {
		t.Skipf("no second file system to record onto: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(other) })
	dir := t.TempDir()
	if device(t, dir) == device(t, other) {
		t.Skip("/dev/shm is on the file system of the temporary folder")
	}
	rec := filepath.Join(dir, "recorded")
	require.NoError(t, os.Symlink(other, rec))
	up := rewritingUpstream(t, func(_ *http.Request, _ int, body []byte) []byte { return body })
	m := startRun(t, "--proxy", up.URL, "--record", rec)
	m.must(200, "GET", "/agent/runs", "wk-mock-alice", "")
	m.stop()
	require.NoError(t, m.wait())
	assert.FileExists(t, filepath.Join(other, "runs.json"))
	startRun(t, "--fixtures", rec)
}

func device(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return uint64(fi.Sys().(*syscall.Stat_t).Dev)
}
