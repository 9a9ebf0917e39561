package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/drift"
	"github.com/agentruns/agentruns/openapi"
	"github.com/agentruns/agentruns/proxy"
)

// ringedUpstream is the mock with a member the document does not declare
// on every run it shows.
func ringedUpstream(t *testing.T) string {
	return rewritingUpstream(t, func(r *http.Request, status int, body []byte) []byte {
		if r.URL.Path != "/agent/runs" || status != http.StatusOK {
			return body
		}
		var doc map[string]any
		require.NoError(t, json.Unmarshal(body, &doc))
		for _, run := range doc["runs"].([]any) {
			run.(map[string]any)["rollout_ring"] = "canary"
		}
		body, _ = json.Marshal(doc)
		return body
	})
}

func controlGet(t *testing.T, url, token string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

// The control API serves the drift, the overlay that declares it and the
// profile, behind the control token, and DELETE forgets them.
func TestTheControlAPIServesTheDriftTheOverlayAndTheProfile(t *testing.T) {
	p, err := proxy.New(proxy.Options{Upstream: ringedUpstream(t), ControlToken: "ctl-1"})
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Close() })
	readAll(t, srv.URL+"/agent/runs?limit=3")

	resp, _ := controlGet(t, srv.URL+"/__mock/proxy/drift", "")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	resp, body := controlGet(t, srv.URL+"/__mock/proxy/drift", "ctl-1")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var report drift.Report
	require.NoError(t, json.Unmarshal([]byte(body), &report))
	require.Len(t, report.Facts, 1, body)
	f := report.Facts[0]
	assert.Equal(t, drift.KindResponseField, f.Kind)
	assert.Equal(t, "GET /agent/runs", f.Operation)
	assert.Equal(t, "body.runs[].rollout_ring", f.Location)
	assert.Equal(t, 3, f.Count)
	assert.Equal(t, `"canary"`, f.Example)

	resp, body = controlGet(t, srv.URL+"/__mock/proxy", "ctl-1")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, `"drift": {`)

	resp, body = controlGet(t, srv.URL+"/api/v1/__mock/proxy/drift/overlay.yaml", "ctl-1")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/yaml", resp.Header.Get("Content-Type"))
	assert.Contains(t, body, "overlay: 1.0.0")
	assert.Contains(t, body, "extends: openapi/openapi.yaml")
	assert.Contains(t, body, "target: $['components']['schemas']['RunItem']")
	assert.Contains(t, body, "rollout_ring:")

	resp, body = controlGet(t, srv.URL+"/__mock/proxy/profile", "ctl-1")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var profile drift.ProfileData
	require.NoError(t, json.Unmarshal([]byte(body), &profile))
	require.Len(t, profile.Operations, 1)
	assert.Equal(t, "GET /agent/runs", profile.Operations[0].Operation)
	assert.True(t, strings.Contains(body, `"body.runs[].rollout_ring"`), "the profile holds undocumented members too")

	req, err := http.NewRequest(http.MethodDelete, srv.URL+"/__mock/proxy", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer ctl-1")
	del, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	del.Body.Close()
	assert.Empty(t, p.Drift().Facts)
	assert.Empty(t, p.Profile().Operations)
}

// Member names come from traffic, and the control answers are read with
// curl in a terminal as often as by programs: what a terminal would act
// on (U+009B is a one-character CSI to many; encoding/json writes it as
// it is) is written as a JSON escape, which reads back as the name seen.
func TestTheControlAnswersWriteNoTerminalControl(t *testing.T) {
	const name = "x\u009b2J\u007f\u0085\u202ey"
	upstream := rewritingUpstream(t, func(r *http.Request, status int, body []byte) []byte {
		if r.URL.Path != "/agent/runs" || status != http.StatusOK {
			return body
		}
		var doc map[string]any
		require.NoError(t, json.Unmarshal(body, &doc))
		for _, run := range doc["runs"].([]any) {
			run.(map[string]any)[name] = "\u009b31m"
		}
		body, _ = json.Marshal(doc)
		return body
	})
	p, err := proxy.New(proxy.Options{Upstream: upstream, ControlToken: "ctl-1"})
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Close() })
	readAll(t, srv.URL+"/agent/runs?limit=3")
	require.NoError(t, p.Drain(context.Background()))

	for _, path := range []string{"/__mock/proxy/drift", "/__mock/proxy", "/__mock/proxy/profile"} {
		resp, body := controlGet(t, srv.URL+path, "ctl-1")
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		assert.Contains(t, body, `x\u009b2J\u007f\u0085\u202ey`, path)
		for _, r := range body {
			assert.False(t, r < 0x20 && r != '\n' || r >= 0x7f && r < 0xa0 || r == '\u202e', "%s wrote %q", path, r)
		}
	}
	_, body := controlGet(t, srv.URL+"/__mock/proxy/drift", "ctl-1")
	var report drift.Report
	require.NoError(t, json.Unmarshal([]byte(body), &report))
	require.NotEmpty(t, report.Facts)
	assert.Equal(t, "body.runs[]."+name, report.Facts[0].Location)
}

// Drift is what the upstream does beyond the document it is held to: the
// overlay of a first pass, applied to a copy of the document named with
// --proxy-document, leaves the same traffic no drift (a query parameter
// and a member the embedded document lacks), and the overlay of a proxy
// so held extends that file.
func TestDriftIsJudgedAgainstTheNamedDocument(t *testing.T) {
	upstream := ringedUpstream(t)
	pass := func(opts proxy.Options) *proxy.Proxy {
		t.Helper()
		opts.Upstream = upstream
		p, err := proxy.New(opts)
		require.NoError(t, err)
		srv := httptest.NewServer(p)
		t.Cleanup(func() { srv.Close(); p.Close() })
		readAll(t, srv.URL+"/agent/runs?limit=3&token=page-7")
		require.NoError(t, p.Drain(context.Background()))
		return p
	}
	first := pass(proxy.Options{})
	var locations []string
	for _, f := range first.Drift().Facts {
		locations = append(locations, f.Operation+" "+f.Location)
	}
	require.Contains(t, locations, "GET /agent/runs query.token", "the embedded document has no such parameter")
	require.Contains(t, locations, "GET /agent/runs body.runs[].rollout_ring")
	var overlay bytes.Buffer
	require.NoError(t, first.WriteOverlay(&overlay))
	applied, err := drift.Apply(openapi.Document, overlay.Bytes())
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "applied.yaml")
	require.NoError(t, os.WriteFile(file, applied, 0o644))
	doc, err := proxy.ParseDocument(file)
	require.NoError(t, err)

	second := pass(proxy.Options{Document: doc})
	assert.Empty(t, second.Drift().Facts, "the named document declares what the traffic showed")
	assert.Zero(t, second.Summary().Violations, "%+v", second.Summary().Latest)

	var next bytes.Buffer
	require.NoError(t, second.WriteOverlay(&next))
	assert.Contains(t, next.String(), "extends: "+file)
}
