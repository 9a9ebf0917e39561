package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/clientcheck"
	"github.com/agentruns/agentruns/internal/browsertest"
	"github.com/agentruns/agentruns/proxy"
)

// harnessUpstream is the mock answering every listed run with a harness
// the Python client does not declare (it knows claude and oz); the
// TypeScript clients read it. (The mock's fixtures hold a BLOCKED run,
// a state the oldest TypeScript client does not know.)
func harnessUpstream(t *testing.T) string {
	return rewritingUpstream(t, func(r *http.Request, status int, body []byte) []byte {
		if r.Method == http.MethodGet && r.URL.Path == "/agent/runs" && status == http.StatusOK {
			var doc map[string]any
			require.NoError(t, json.Unmarshal(body, &doc))
			for _, run := range doc["runs"].([]any) {
				run.(map[string]any)["agent_config"] = map[string]any{"harness": map[string]any{"type": "gemini"}}
			}
			body, _ = json.Marshal(doc)
		}
		return body
	})
}

// The proxy tallies live traffic per client version: GET /__mock/proxy
// names each version with its answers checked and those that break it,
// the JUnit report has a test case per version and the HTML page the
// table; DELETE /__mock/proxy starts the tally afresh.
func TestProxyTalliesClientVersions(t *testing.T) {
	p, err := proxy.New(proxy.Options{Upstream: harnessUpstream(t)})
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Close() })
	for _, path := range []string{"/agent/runs?limit=5", "/agent/runs?limit=5", "/agent/models"} { // no version calls the last
		readAll(t, srv.URL+path)
	}
	require.NoError(t, p.Drain(context.Background()))

	byVersion := map[string]clientcheck.Count{}
	for _, c := range p.Summary().Clients {
		byVersion[c.Version] = c
	}
	require.Len(t, byVersion, 3)
	for name, c := range byVersion {
		assert.Equal(t, 2, c.Checked, name)
	}
	assert.Equal(t, 2, byVersion["python-0.11.0"].Broken)
	assert.Equal(t, []clientcheck.Break{{Operation: "GET /agent/runs", Field: "runs[].agent_config.harness.type", Expected: "one of claude, oz", Got: `string "gemini"`}},
		byVersion["python-0.11.0"].First, "the same break is listed once")
	assert.Equal(t, []clientcheck.Break{{Operation: "GET /agent/runs", Field: "runs[].state", Expected: "one of CANCELLED, CLAIMED, FAILED, INPROGRESS, PENDING, QUEUED, SUCCEEDED", Got: `string "BLOCKED"`}},
		byVersion["typescript-1.0.0-alpha.8"].First)
	assert.Zero(t, byVersion["typescript-1.4.0-alpha.6"].Broken)

	var junit bytes.Buffer
	require.NoError(t, p.WriteJUnit(&junit))
	assert.Contains(t, junit.String(), `<testsuite name="client versions" tests="3" failures="0" errors="0" skipped="2"`)
	assert.Contains(t, junit.String(), `2 of 2 answers break python-0.11.0`)
	var page bytes.Buffer
	require.NoError(t, p.WriteHTML(&page))
	assert.Contains(t, page.String(), `<tr data-client="python-0.11.0" class="client-broken">`)

	summary := controlJSON(t, srv.URL, http.MethodGet)
	assert.Contains(t, summary, `"version": "python-0.11.0"`)
	assert.Contains(t, summary, `"field": "runs[].agent_config.harness.type"`)
	controlJSON(t, srv.URL, http.MethodDelete)
	for _, c := range p.Summary().Clients {
		assert.Zero(t, c.Checked, c.Version)
		assert.Empty(t, c.First, c.Version)
	}
}

// readAll gets url and reads the whole answer. harnessUpstream answers
// chunked, so the answer's end reaches the caller only once the proxy's
// handler has returned, the exchange queued for checking: Drain then
// waits for its check.
func readAll(t *testing.T, url string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer wk-mock-alice")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
}

func controlJSON(t *testing.T, base, method string) string {
	t.Helper()
	req, err := http.NewRequest(method, base+"/__mock/proxy", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return string(body)
}

// The client versions' panel fits the dashboard at its width: a first
// break's long expected value (every state of a run) wraps within its
// cell rather than pushing the table past its panel.
func TestTheClientVersionsPanelFitsTheDashboard(t *testing.T) {
	p, err := proxy.New(proxy.Options{Upstream: harnessUpstream(t)})
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Close() })
	readAll(t, srv.URL+"/agent/runs?limit=5")
	require.NoError(t, p.Drain(context.Background()))

	ctx := browsertest.Tab(t)
	browsertest.Do(t, ctx, chromedp.Navigate(srv.URL+"/__mock/proxy/ui/"))
	browsertest.WaitFor(t, ctx, `document.querySelectorAll("#clients tbody tr[data-client]").length === 3`)
	assert.Contains(t, browsertest.Text(t, ctx, "#clients"), "one of CANCELLED, CLAIMED, FAILED, INPROGRESS, PENDING, QUEUED, SUCCEEDED")
	assert.True(t, browsertest.Eval[bool](t, ctx, `document.getElementById("clients").offsetWidth <= document.querySelector(".panel-clients .scroll").clientWidth`),
		"the client versions' table fits its panel at %d px", browsertest.Width)
	assert.True(t, browsertest.Eval[bool](t, ctx, `document.getElementById("clients-panel").getBoundingClientRect().right <= window.innerWidth`),
		"the panel fits the window at %d px", browsertest.Width)
	browsertest.Eval[bool](t, ctx, `(window.scrollTo(0, document.getElementById("clients-panel").getBoundingClientRect().top + window.scrollY - document.querySelector(".bar").offsetHeight - 16), true)`)
	browsertest.Screenshot(t, ctx, "proxy-clients")
}
