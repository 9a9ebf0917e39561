package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/internal/browsertest"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/proxy"
)

// aheadUpstream is the mock behind a server that has moved ahead of the
// document, as the reference server does with Extras (which the proxy's
// tests cannot import): its pages of runs and its runs carry a rollout
// ring, each run's configuration a placement, each run a source outside
// the enum; the models answer 203, which the document does not list for
// them; and it serves GET /agent/runs/{runId}/usage, which the document
// lacks. The placement is long, as real ones are, to show how the page
// keeps a long example readable.
func aheadUpstream(t *testing.T) string {
	m, err := mockserver.New(mockserver.Options{})
	require.NoError(t, err)
	placement := map[string]any{"region": "eu-west-1", "cells": []string{"cell-01.eu-west-1.compute.internal", "cell-02.eu-west-1.compute.internal", "cell-03.eu-west-1.compute.internal", "cell-04.eu-west-1.compute.internal"}}
	ahead := func(run map[string]any) {
		run["rollout_ring"] = "canary"
		run["source"] = "SLACK_WORKFLOW"
		if cfg, ok := run["agent_config"].(map[string]any); ok {
			cfg["placement"] = placement
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, ok := strings.CutPrefix(r.URL.Path, "/agent/runs/"); ok && strings.HasSuffix(id, "/usage") && r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"run_id": strings.TrimSuffix(id, "/usage"), "credits_used": 12})
			return
		}
		rec := httptest.NewRecorder()
		m.ServeHTTP(rec, r)
		status, body := rec.Code, rec.Body.Bytes()
		switch {
		case r.URL.Path == "/agent/models" && status == http.StatusOK:
			status = http.StatusNonAuthoritativeInfo
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/agent/runs") && status == http.StatusOK:
			var doc map[string]any
			require.NoError(t, json.Unmarshal(body, &doc))
			if runs, ok := doc["runs"].([]any); ok {
				doc["rollout_ring"] = "canary"
				for _, run := range runs {
					ahead(run.(map[string]any))
				}
			} else {
				ahead(doc)
			}
			body, _ = json.Marshal(doc)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

const aheadRun = "f29d0da9-953f-48f1-a09f-76b5a170b338"

func aheadProxy(t *testing.T, token string) (*proxy.Proxy, string) {
	p, err := proxy.New(proxy.Options{Upstream: aheadUpstream(t), ControlToken: token})
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Close() })
	readAll(t, srv.URL+"/agent/runs?limit=3&rollout_ring=canary")
	readAll(t, srv.URL+"/agent/runs/"+aheadRun)
	readAll(t, srv.URL+"/agent/runs/"+aheadRun)
	readAll(t, srv.URL+"/agent/models")
	readAll(t, srv.URL+"/agent/runs/"+aheadRun+"/usage")
	require.NoError(t, p.Drain(t.Context()))
	return p, srv.URL
}

// The dashboard's Drift panel lists each fact the traffic showed and the
// document does not say, with its operation, status, location, types,
// count and example, read with the control token; the overlay downloads
// with the same token.
func TestDashboardShowsDriftInABrowser(t *testing.T) {
	const token = "ctl-drift-1"
	p, base := aheadProxy(t, token)

	ctx := browsertest.Tab(t)
	browsertest.Do(t, ctx, chromedp.Navigate(base+"/__mock/proxy/ui/#token="+token))
	// Each kind of drift but a request's member and a content type: the
	// filter, the members of the page and of a run, the source outside its
	// enum, the models' 203 and the usage, each as often as it was seen.
	want := []string{
		"status GET /agent/models 203 status 1",
		`enum-value GET /agent/runs 200 body.runs[].source "SLACK_WORKFLOW" · string 3`,
		"query-parameter GET /agent/runs request query.rollout_ring string 1",
		"response-field GET /agent/runs 200 body.rollout_ring string 1",
		"response-field GET /agent/runs 200 body.runs[].agent_config.placement object 3",
		"response-field GET /agent/runs 200 body.runs[].rollout_ring string 3",
		`enum-value GET /agent/runs/{runId} 200 body.source "SLACK_WORKFLOW" · string 2`,
		"response-field GET /agent/runs/{runId} 200 body.agent_config.placement object 2",
		"response-field GET /agent/runs/{runId} 200 body.rollout_ring string 2",
		"operation GET /agent/runs/{runId}/usage 200 /agent/runs/{runId}/usage 1",
	}
	browsertest.WaitFor(t, ctx, `document.querySelectorAll("#drift tbody tr.drift-row").length === `+strconv.Itoa(len(want)))
	rows := browsertest.Eval[[]string](t, ctx, `Array.from(document.querySelectorAll("#drift tbody tr.drift-row")).map(function (tr) {
		return Array.from(tr.cells).slice(0, 6).map(function (td) { return td.textContent }).filter(Boolean).join(" ") })`)
	assert.Equal(t, want, rows)
	assert.Contains(t, browsertest.Text(t, ctx, "#drift"), `"canary"`, "an example")
	assert.Equal(t, "(10 distinct)", browsertest.Text(t, ctx, "#drift-count"))
	// The members and the filter are no violation; the value outside its
	// enum, the status and the operation the document lacks are also
	// violations, in their own panel.
	for _, v := range p.Summary().Latest {
		assert.NotContains(t, v.Field, "rollout_ring", "%+v", v)
		assert.NotContains(t, v.Field, "placement", "%+v", v)
	}
	// A long example is cut, whole in its title, and the table fits the
	// page's width.
	title := browsertest.Eval[string](t, ctx, `Array.from(document.querySelectorAll("#drift td.example")).map(function (td) { return td.title }).find(function (s) { return s.indexOf("cell-01") >= 0 })`)
	assert.Contains(t, title, `"region":"eu-west-1"`)
	assert.True(t, browsertest.Eval[bool](t, ctx, `document.getElementById("drift").offsetWidth <= document.querySelector(".panel-drift .scroll").clientWidth`),
		"the drift table fits its panel at %d px", browsertest.Width)
	// The panel at the top of the window, under the page's bar.
	browsertest.Eval[bool](t, ctx, `(window.scrollTo(0, document.getElementById("drift-panel").getBoundingClientRect().top + window.scrollY - document.querySelector(".bar").offsetHeight - 16), true)`)
	browsertest.Screenshot(t, ctx, "proxy-drift")

	// The overlay, fetched with the token and saved.
	dir := t.TempDir()
	progress := chromedp.Events(ctx, browser.DownloadProgress)
	browsertest.Do(t, ctx, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: ptr(true),
		})
		return err
	}), chromedp.Click(chromedp.CSS("#drift-overlay")))
	var saved []byte
	for ev, err := range progress {
		require.NoError(t, err)
		if ev.State == browser.DownloadProgressStateCanceled {
			t.Fatal("the overlay's download was cancelled")
		}
		if ev.State == browser.DownloadProgressStateCompleted {
			saved, err = os.ReadFile(filepath.Join(dir, ev.GUID))
			require.NoError(t, err)
			break
		}
	}
	var served bytes.Buffer
	require.NoError(t, p.WriteOverlay(&served))
	assert.Contains(t, string(saved), "overlay: 1.0.0")
	assert.Contains(t, string(saved), "rollout_ring")
	assert.Equal(t, firstLines(served.String(), 3), firstLines(string(saved), 3))
}

func ptr[T any](v T) *T { return &v }

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// With nothing undocumented seen, the panel says so.
func TestDashboardSaysWhenNothingDrifted(t *testing.T) {
	asDocumented := func(_ *http.Request, _ int, body []byte) []byte { return body }
	p, err := proxy.New(proxy.Options{Upstream: rewritingUpstream(t, asDocumented)})
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Close() })
	readAll(t, srv.URL+"/agent/runs/"+aheadRun)

	ctx := browsertest.Tab(t)
	browsertest.Do(t, ctx, chromedp.Navigate(srv.URL+"/__mock/proxy/ui/"))
	browsertest.WaitFor(t, ctx, `document.querySelectorAll("#journal tbody tr:not(.empty)").length >= 1 && document.querySelector("#drift tbody tr.empty") !== null`)
	assert.Contains(t, browsertest.Text(t, ctx, "#drift"), "Nothing undocumented seen yet")
	assert.Empty(t, browsertest.Text(t, ctx, "#drift-count"))
}

// The HTML report lists the drift as its own section, beside the rules,
// and fails no scenario for it.
func TestHTMLReportListsTheDrift(t *testing.T) {
	p, _ := aheadProxy(t, "")
	var out bytes.Buffer
	require.NoError(t, p.WriteHTML(&out))
	page := out.String()
	assert.Contains(t, page, `<div class="drift" id="drift">`)
	assert.Contains(t, page, `<span data-distinct="`+strconv.Itoa(p.Drift().Distinct)+`">`)
	assert.Contains(t, page, `<td>response-field</td><td><code>GET /agent/runs/{runId}</code></td><td>200</td>
          <td><code>body.rollout_ring</code></td><td><code>string</code></td><td>2</td>`)
	assert.Contains(t, page, `<td><code>body.runs[].agent_config.placement</code></td><td><code>object</code></td>`)
	assert.Contains(t, page, `<code>&#34;canary&#34;</code>`)
	assert.Equal(t, len(p.Drift().Facts), strings.Count(page, `<tr data-kind="`))
	assert.Contains(t, page, `<td>operation</td><td><code>GET /agent/runs/{runId}/usage</code></td><td>200</td>`)
	assert.Contains(t, page, `<td>status</td><td><code>GET /agent/models</code></td><td>203</td>`)
	// Drift fails nothing: the scenarios that failed are the rules broken.
	broken := 0
	for _, r := range p.Summary().Rules {
		if r.Violations > 0 {
			broken++
		}
	}
	assert.Contains(t, page, `<b data-count="failed">`+strconv.Itoa(broken)+`</b> failed`)
}
