package proxy

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/openapi"
	"github.com/agentruns/agentruns/rules"
)

// identityServer answers POST /agent/identities with an agent as a server
// of the published document shows it (the four fields it requires) and,
// when newest, GET /agent/identities/{uid}, an operation only the newest
// client has, with the same agent; without newest it is 404.
func identityServer(t *testing.T, newest bool) string {
	t.Helper()
	const agent = `{"uid":"agent-1","name":"Release bot","available":true,"created_at":"2026-05-01T08:00:00Z"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/api/v1/agent/identities":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(agent))
		case r.Method == http.MethodGet && r.URL.Path == "/api/v1/agent/identities/agent-1" && newest:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(agent))
		default:
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"type":"https://docs.warp.dev/reference/api-and-sdk/troubleshooting/errors/resource_not_found","title":"Resource not found","status":404,"detail":"no such operation","error":"Resource not found (no such operation)"}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/api/v1"
}

// send sends one request with a key through the proxy.
func send(t *testing.T, method, url, body string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer wk-mock-alice")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
}

// A server built to the published document shows an agent without the
// fields only the newest client requires (five: updated_at,
// default_runner_uid, memory, secrets, skills). By default the proxy judges by
// the surface the server serves: it never served the newest client's own
// operations (GET /agent/identities/{uid} is 404), so the published view
// judges it and it broke nothing. Held to the newest client's document by
// name, the same traffic breaks it.
func TestTheProxyJudgesAServerOfThePublishedDocumentByThePublishedDocument(t *testing.T) {
	for _, tc := range []struct {
		doc        Document
		violations int
		says       string
	}{
		{ServedSurface, 0, "the published document: the upstream has served none"},
		{PublishedDocument, 0, "the published document (named)"},
		{NewestDocument, 10, "the newest client's document (named)"},
	} {
		t.Run(string(tc.doc), func(t *testing.T) {
			p, drained, url := serveProxy(t, Options{Upstream: identityServer(t, false), Document: tc.doc})
			send(t, http.MethodPost, url+"/agent/identities", `{"name":"Release bot"}`)
			send(t, http.MethodGet, url+"/agent/identities/agent-1", "")
			send(t, http.MethodPost, url+"/agent/identities", `{"name":"Release bot"}`)
			require.NoError(t, drained())
			s := p.Summary()
			assert.Equal(t, tc.violations, violationsOf(s, rules.ResponseFollowsDocument), "%+v", s.Latest)
			assert.Contains(t, s.Document, tc.says)
		})
	}
}

// A server that serves the newest client's surface is held to it: once it
// answered GET /agent/identities/{uid}, an agent without the newest
// client's fields breaks the document, that answer and those after it.
func TestTheProxyHoldsAServerOfTheNewestSurfaceToIt(t *testing.T) {
	p, drained, url := serveProxy(t, Options{Upstream: identityServer(t, true), Workers: 1})
	send(t, http.MethodPost, url+"/agent/identities", `{"name":"Release bot"}`)
	send(t, http.MethodGet, url+"/agent/identities/agent-1", "")
	send(t, http.MethodPost, url+"/agent/identities", `{"name":"Release bot"}`)
	require.NoError(t, drained())
	s := p.Summary()
	// Five fields only the newest client requires, missing from each of
	// the two answers judged after the first.
	require.Equal(t, 10, s.Violations, "%+v", s.Latest)
	assert.Equal(t, "GET /agent/identities/agent-1", s.Latest[0].Request)
	assert.Equal(t, "body.default_runner_uid", s.Latest[0].Field)
	assert.Equal(t, "POST /agent/identities", s.Latest[9].Request)
	assert.Contains(t, s.Document, "the upstream serves its surface (GET /agent/identities/{uid} answered 200)")
}

// A document named by its file judges the upstream, and one that is no
// OpenAPI document is refused as the proxy starts.
func TestTheProxyHoldsTheUpstreamToADocumentFile(t *testing.T) {
	dir := t.TempDir()
	published, err := openapi.PublishedView(openapi.Document)
	require.NoError(t, err)
	file := filepath.Join(dir, "published.yaml")
	require.NoError(t, os.WriteFile(file, published, 0o644))
	doc, err := ParseDocument(file)
	require.NoError(t, err)
	p, drained, url := serveProxy(t, Options{Upstream: identityServer(t, true), Document: doc})
	send(t, http.MethodGet, url+"/agent/identities/agent-1", "")
	require.NoError(t, drained())
	assert.Zero(t, p.Summary().Violations)
	assert.Equal(t, file, p.Summary().Document)

	_, err = ParseDocument(filepath.Join(dir, "missing.yaml"))
	assert.ErrorContains(t, err, "want served, published, newest or an OpenAPI document's file")
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("not: an openapi document\n"), 0o644))
	doc, err = ParseDocument(bad)
	require.NoError(t, err)
	_, err = New(Options{Upstream: "http://127.0.0.1:1", Document: doc})
	assert.ErrorContains(t, err, bad)
}

func violationsOf(s Summary, rule string) int {
	for _, r := range s.Rules {
		if r.ID == rule {
			return r.Violations
		}
	}
	return -1
}
