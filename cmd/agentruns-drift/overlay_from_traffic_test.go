package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/drift"
	"github.com/agentruns/agentruns/proxy"
)

// anythingGoes answers every request 200 with a JSON object, except a
// GET /agent/runs asking ?status=N, answered N: the upstream of the
// hostile requests the overlay must not be broken by.
func anythingGoes(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		status := http.StatusOK
		if n, err := strconv.Atoi(r.URL.Query().Get("status")); err == nil {
			status = n
		}
		if r.Header.Get("Authorization") == "" || r.Method == http.MethodPut && r.URL.Path == "/agent/runs" {
			status = http.StatusUnauthorized
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `{"ok": true}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func send(t *testing.T, method, url string, key bool) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	if key {
		req.Header.Set("Authorization", "Bearer wk-1")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())
}

// Only what an OpenAPI document can hold goes into the overlay: methods
// that are no operation ($REF, FOO, PARAMETERS, SERVERS, DESCRIPTION,
// SUMMARY, QUERY) and statuses outside 100 to 599 are reported in the
// drift with the reason, not written; requests without credentials and
// 401s are no drift at all; and `agentruns-drift apply` applies what the
// proxy wrote.
func TestTheOverlayHoldsOnlyWhatOpenAPICan(t *testing.T) {
	p, err := proxy.New(proxy.Options{Upstream: anythingGoes(t)})
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Close() })

	odd := []string{"$REF", "FOO", "PARAMETERS", "SERVERS", "DESCRIPTION", "SUMMARY", "QUERY"}
	for _, m := range odd {
		send(t, m, srv.URL+"/agent/foo", true)
	}
	send(t, http.MethodGet, srv.URL+"/agent/foo", true) // one the overlay declares
	for _, status := range []int{600, 700, 999} {
		send(t, http.MethodGet, srv.URL+"/agent/runs?status="+strconv.Itoa(status), true)
	}
	send(t, http.MethodGet, srv.URL+"/agent/anonymous", false) // no credentials
	send(t, http.MethodPut, srv.URL+"/agent/runs", true)       // answered 401
	send(t, "$REF", srv.URL+"/agent/anonymous-ref", false)     // both

	srv.Close() // every handler returned: every answer is queued
	require.NoError(t, p.Drain(context.Background()))
	facts := p.Drift().Facts
	notDeclared := map[string]string{}
	for _, f := range facts {
		assert.NotContains(t, f.Operation, "anonymous", "a request without credentials is no drift")
		assert.NotEqual(t, "PUT /agent/runs", f.Operation, "a 401 says nothing of the operation")
		if f.NotDeclared != "" {
			notDeclared[f.Operation+" "+strconv.Itoa(f.Status)] = f.NotDeclared
		}
	}
	for _, m := range odd {
		assert.Contains(t, notDeclared, m+" /agent/foo 200")
	}
	for _, status := range []int{600, 700, 999} {
		assert.Contains(t, notDeclared["GET /agent/runs "+strconv.Itoa(status)], "outside the 100 to 599")
	}
	assert.Len(t, notDeclared, len(odd)+3, "%v", notDeclared)

	dir := t.TempDir()
	ov := filepath.Join(dir, "overlay.yaml")
	f, err := os.Create(ov)
	require.NoError(t, err)
	require.NoError(t, p.WriteOverlay(f))
	require.NoError(t, f.Close())
	written, err := os.ReadFile(ov)
	require.NoError(t, err)
	assert.NotRegexp(t, `(?mi)^\s+['"]?(\$ref|foo|parameters|servers|description|summary|query|600|700|999)['"]?:\s*$`, string(written))
	out := filepath.Join(dir, "openapi.yaml")
	code, _, errOut := runCmd("apply", "--out", out, ov)
	require.Equal(t, exitSame, code, "%s\n%s", errOut, written)
	doc, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(doc), "/agent/foo:")

	var report drift.Report
	b, err := json.Marshal(p.Drift())
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &report))
	assert.Equal(t, len(facts), len(report.Facts))
}
