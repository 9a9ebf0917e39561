package proxy_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/internal/browsertest"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/proxy"
)

func TestMain(m *testing.M) { browsertest.Main(m) }

// faultyUpstream is the mock with three faults a staging server might
// have: failed runs listed without their error_code, a run's details
// without its title, and a default model that is not among the models.
func faultyUpstream(t *testing.T) string {
	return rewritingUpstream(t, func(r *http.Request, status int, body []byte) []byte {
		if r.URL.Path == "/agent/models" && status == http.StatusOK {
			var doc map[string]any
			require.NoError(t, json.Unmarshal(body, &doc))
			doc["default_model_id"] = "a-model-nobody-has"
			body, _ = json.Marshal(doc)
		}
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/agent/runs") && status == http.StatusOK {
			var doc map[string]any
			require.NoError(t, json.Unmarshal(body, &doc))
			if runs, ok := doc["runs"].([]any); ok {
				for _, run := range runs {
					if sm, ok := run.(map[string]any)["status_message"].(map[string]any); ok {
						delete(sm, "error_code")
					}
				}
			} else {
				delete(doc, "title")
			}
			body, _ = json.Marshal(doc)
		}
		return body
	})
}

// rewritingUpstream is the mock behind a server that hands each answer's
// body to rewrite (with the request and its status) and sends what it
// returns, with the mock's headers: the faulty servers the proxy's tests
// stand it in front of.
func rewritingUpstream(t *testing.T, rewrite func(r *http.Request, status int, body []byte) []byte) string {
	m, err := mockserver.New(mockserver.Options{})
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	t.Cleanup(srv.Close)
	return srv.URL
}

// The dashboard, served by the proxy, shows each violation with its
// request, rule, field, expected and got, the count per rule, and the
// journal marking the answers that broke a rule; the mock's own panels
// (clock, sessions, fault and fate rules) are not there.
func TestDashboardShowsViolationsInABrowser(t *testing.T) {
	p, err := proxy.New(proxy.Options{Upstream: faultyUpstream(t)})
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Close() })
	readAll(t, srv.URL+"/agent/runs?state=FAILED&limit=5")
	readAll(t, srv.URL+"/agent/runs/f29d0da9-953f-48f1-a09f-76b5a170b338")
	readAll(t, srv.URL+"/agent/models")

	ctx := browsertest.Tab(t)
	browsertest.Do(t, ctx, chromedp.Navigate(srv.URL+"/__mock/proxy/ui/"))
	browsertest.WaitFor(t, ctx, `document.querySelectorAll("#violations tbody tr.bad").length >= 3 && document.querySelectorAll("#journal tbody tr").length >= 3`)
	counts := browsertest.Text(t, ctx, "#rule-counts")
	assert.Contains(t, counts, "ended-run-says-why")
	assert.Contains(t, counts, "response-follows-document")
	assert.Contains(t, counts, "default-model-listed")
	table := browsertest.Text(t, ctx, "#violations")
	assert.Contains(t, table, "GET /agent/runs/f29d0da9-953f-48f1-a09f-76b5a170b338 → 200")
	assert.Contains(t, table, "body.title")
	assert.Contains(t, table, "an error_code on a FAILED run")
	assert.Contains(t, table, `"a-model-nobody-has"`)
	assert.Contains(t, browsertest.Text(t, ctx, "#journal"), "response-follows-document")
	assert.False(t, browsertest.Eval[bool](t, ctx, `document.querySelector(".panel-faults").offsetParent !== null`), "the mock's fault rules are not the proxy's")
	assert.False(t, browsertest.Eval[bool](t, ctx, `document.getElementById("clock").offsetParent !== null`))
	assert.Equal(t, p.Upstream(), browsertest.Text(t, ctx, "#upstream"))
	// A run's details without a title break every client version: each
	// reads it as a required string.
	browsertest.WaitFor(t, ctx, `document.querySelectorAll("#clients tbody tr.bad").length === 3`)
	clients := browsertest.Text(t, ctx, "#clients")
	for _, v := range []string{"python-0.11.0", "typescript-1.0.0-alpha.8", "typescript-1.4.0-alpha.6"} {
		assert.Contains(t, clients, v)
	}
	assert.Contains(t, clients, "GET /agent/runs/{runId} title: expected required string, got missing")
	browsertest.Screenshot(t, ctx, "proxy-dashboard")
}

// countingUpstream is the mock, counting every request it is sent and
// noting their paths.
type countingUpstream struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func (u *countingUpstream) seen() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.paths...)
}

func newCountingUpstream(t *testing.T) *countingUpstream {
	m, err := mockserver.New(mockserver.Options{})
	require.NoError(t, err)
	u := &countingUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.paths = append(u.paths, r.Method+" "+r.URL.RequestURI())
		u.mu.Unlock()
		m.ServeHTTP(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

// Behind the proxy the page shows the runs the traffic showed, from the
// proxy's memory, and asks the upstream for nothing: no poll of its own
// with a key of its own, no favicon, and nothing it does is counted among
// the exchanges checked.
func TestDashboardAsksTheUpstreamForNothing(t *testing.T) {
	up := newCountingUpstream(t)
	p, err := proxy.New(proxy.Options{Upstream: up.URL})
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Close() })
	const run = "f29d0da9-953f-48f1-a09f-76b5a170b338"
	readAll(t, srv.URL+"/agent/runs?limit=3")
	readAll(t, srv.URL+"/agent/runs/"+run)
	require.NoError(t, p.Drain(t.Context()))
	traffic, exchanges := up.seen(), p.Summary().Exchanges
	require.Len(t, traffic, 2)

	ctx := browsertest.Tab(t)
	browsertest.Do(t, ctx, chromedp.Navigate(srv.URL+"/__mock/proxy/ui/"))
	browsertest.WaitFor(t, ctx, `document.querySelectorAll("#runs tbody tr.run-row").length >= 3`)
	browsertest.Do(t, ctx, chromedp.Click(`#runs tbody tr[data-run="`+run+`"]`))
	browsertest.WaitFor(t, ctx, `document.getElementById("run-id").textContent === "`+run+`" && document.querySelector("#run-detail .timeline") !== null`)
	assert.Equal(t, "as the traffic through the proxy showed them", browsertest.Text(t, ctx, "#runs-note"))
	require.NoError(t, p.Drain(t.Context()))

	assert.Equal(t, traffic, up.seen(), "the page sent the upstream nothing")
	assert.Equal(t, exchanges, p.Summary().Exchanges, "nothing of the page's is counted")
}

// The runs the traffic showed, from the proxy's memory: the latest look
// at each, newest first, without a signature; a run never shown is 404;
// /favicon.ico is the proxy's own. None of it reaches the upstream.
func TestProxyServesTheRunsItSaw(t *testing.T) {
	up := newCountingUpstream(t)
	p, err := proxy.New(proxy.Options{Upstream: up.URL})
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Close() })
	const run = "f29d0da9-953f-48f1-a09f-76b5a170b338"
	readAll(t, srv.URL+"/agent/runs/"+run)
	require.NoError(t, p.Drain(t.Context()))
	traffic := up.seen()

	read := func(path string, want int) []byte {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, want, resp.StatusCode, "%s: %s", path, body)
		return body
	}
	var page struct {
		Runs []map[string]any `json:"runs"`
	}
	require.NoError(t, json.Unmarshal(read("/__mock/proxy/runs", 200), &page))
	require.Len(t, page.Runs, 1)
	assert.Equal(t, run, page.Runs[0]["run_id"])
	detail := read("/__mock/proxy/runs/"+run, 200)
	assert.Contains(t, string(detail), `"artifacts"`)
	assert.NotContains(t, string(detail), "signature=", "a download link keeps no signature")
	read("/__mock/proxy/runs/never-seen", 404)
	read("/__mock/proxy/runs?limit=0", 400)
	icon := read("/favicon.ico", 200)
	assert.Contains(t, string(icon), "<svg")
	require.NoError(t, p.Drain(t.Context()))
	assert.Equal(t, traffic, up.seen())
	assert.Equal(t, 1, p.Summary().Exchanges)
}
