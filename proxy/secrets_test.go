package proxy_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/proxy"
	"github.com/agentruns/agentruns/proxy/record"
)

// secretsUpstream is the mock with secrets on every run it lists, at any
// depth: under a member whose own name is harmless but whose parent's
// says secret, under each name of the one list, as a path's query and as
// a bearer token in text. inConfig puts them inside agent_config too.
func secretsUpstream(t *testing.T, inConfig bool) string {
	return rewritingUpstream(t, func(r *http.Request, status int, body []byte) []byte {
		if r.URL.Path != "/agent/runs" || r.Method != http.MethodGet || status != http.StatusOK {
			return body
		}
		var doc map[string]any
		require.NoError(t, json.Unmarshal(body, &doc))
		for _, run := range doc["runs"].([]any) {
			run := run.(map[string]any)
			run["agents"] = []any{map[string]any{"name": "a", "secrets": []any{map[string]any{"name": "n", "value": "s3cr3t-agents-value"}}}}
			run["download"] = "/downloads/a?token=s3cr3t-relative-url"
			run["note"] = "retry with Authorization: Bearer s3cr3t-bearer-text"
			for _, name := range []string{"passphrase", "access_key", "aws_access_key_id", "auth", "bearer", "pwd", "jwt", "session_key"} {
				run[name] = "s3cr3t-" + name
			}
			run["env_vars"] = map[string]any{"HOME": "s3cr3t-env-vars"}
			run["vault"] = map[string]any{"secrets": map[string]any{"deep": map[string]any{"deeper": []any{"s3cr3t-deep"}}}}
			if inConfig {
				cfg, _ := run["agent_config"].(map[string]any)
				if cfg == nil {
					cfg = map[string]any{}
					run["agent_config"] = cfg
				}
				cfg["harness_auth_secrets"] = map[string]any{"raw": "s3cr3t-harness-raw"}
				cfg["credential_strategy"] = "s3cr3t-enum"
			}
		}
		body, _ = json.Marshal(doc)
		return body
	})
}

func control(t *testing.T, method, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer ctl-1")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// outputs reads every place a proxy writes traffic down: its control
// API's answers (the summary the dashboard polls, the drift, the overlay,
// the profile, the runs, the journal, both reports) and, with a
// recorder, every file of the recording.
func outputs(t *testing.T, base, recordDir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, path := range []string{"", "/drift", "/drift/overlay.yaml", "/profile", "/runs", "/requests", "/report.html", "/report.xml"} {
		status, body := control(t, http.MethodGet, base+"/__mock/proxy"+path)
		require.Equal(t, http.StatusOK, status, path)
		out["GET /__mock/proxy"+path] = body
	}
	if recordDir != "" {
		status, body := control(t, http.MethodPost, base+"/__mock/proxy/record")
		require.Equal(t, http.StatusOK, status, body)
		require.NoError(t, filepath.WalkDir(recordDir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			out[path] = string(b)
			return err
		}))
	}
	return out
}

// Nothing secret is written down anywhere: secrets at any depth of the
// answers and in the requests' queries, through a proxy on real HTTP, are
// in none of the drift (JSON and overlay), the profile, the summary, the
// runs, the journal, the reports or the recording.
func TestNoSecretIsWrittenDownAnywhere(t *testing.T) {
	for _, tc := range []struct {
		name     string
		inConfig bool
		record   bool
	}{{"secrets in agent_config too", true, false}, {"recorded", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			opts := proxy.Options{Upstream: secretsUpstream(t, tc.inConfig), ControlToken: "ctl-1"}
			dir := ""
			if tc.record {
				dir = filepath.Join(t.TempDir(), "rec")
				opts.Observer = record.New(dir, 0)
			}
			p, err := proxy.New(opts)
			require.NoError(t, err)
			srv := httptest.NewServer(p)
			t.Cleanup(func() { srv.Close(); p.Close() })

			readAll(t, srv.URL+"/agent/runs?limit=3&sig=s3cr3t-q-sig&auth=s3cr3t-q-auth&code=s3cr3t-q-code&access_token=s3cr3t-q-token")
			readAll(t, srv.URL+"/agent/runs?limit=2")

			out := outputs(t, srv.URL, dir)
			drifted := out["GET /__mock/proxy/drift"]
			require.Contains(t, drifted, "body.runs[].vault", "the secrets reached drift")
			if tc.inConfig {
				require.Contains(t, drifted, "body.runs[].agent_config.harness_auth_secrets.raw")
			} else {
				require.Contains(t, drifted, "query.sig")
			}
			for where, text := range out {
				assert.NotContains(t, text, "s3cr3t", "a secret in %s", where)
			}
			if tc.record {
				assert.Contains(t, out[filepath.Join(dir, "runs.json")], `/downloads/a"`, "a path keeps its address, not its query")
			}
		})
	}
}

// A path with a dot segment, as it is or percent-encoded, is refused with
// a problem and never forwarded: the upstream would resolve it outside its
// base path (/api/v1/../../x is /x).
func TestDotSegmentsNeverReachTheUpstream(t *testing.T) {
	u := newCountingUpstream(t)
	p, err := proxy.New(proxy.Options{Upstream: u.URL + "/api/v1"})
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Close() })
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, path := range []string{"/../../x", "/agent/../../x", "/%2e%2e/%2E%2E/x", "/agent/%2e%2e/x", "/agent/..%2f..%2fx", "/./agent/runs"} {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		_, err = fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer wk-mock-alice\r\nConnection: close\r\n\r\n", path, addr)
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		_ = conn.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, path)
		assert.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"), path)
		assert.Contains(t, string(body), "base path", path)
	}
	assert.Empty(t, u.seen(), "nothing reached the upstream")
	readAll(t, srv.URL+"/agent/runs?limit=1") // and the proxy still serves
	assert.Len(t, u.seen(), 1)
}
