package proxy_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
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
	m, err := mockserver.New(mockserver.Options{})
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		m.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if r.URL.Path == "/agent/models" && rec.Code == http.StatusOK {
			var doc map[string]any
			require.NoError(t, json.Unmarshal(body, &doc))
			doc["default_model_id"] = "a-model-nobody-has"
			body, _ = json.Marshal(doc)
		}
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/agent/runs") && rec.Code == http.StatusOK {
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

func get(t *testing.T, url string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer wk-mock-alice")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
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
	get(t, srv.URL+"/agent/runs?state=FAILED&limit=5")
	get(t, srv.URL+"/agent/runs/f29d0da9-953f-48f1-a09f-76b5a170b338")
	get(t, srv.URL+"/agent/models")

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
	browsertest.Screenshot(t, ctx, "proxy-dashboard")
}
