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
	"github.com/agentruns/agentruns/proxy"
)

// aheadUpstream is the mock behind a server that has moved ahead of the
// document: its pages of runs and its runs carry a rollout ring, and each
// run's configuration a placement, none of which the document declares.
// The placement is long, as real ones are, to show how the page keeps a
// long example readable.
func aheadUpstream(t *testing.T) string {
	placement := map[string]any{"region": "eu-west-1", "cells": []string{"cell-01.eu-west-1.compute.internal", "cell-02.eu-west-1.compute.internal", "cell-03.eu-west-1.compute.internal", "cell-04.eu-west-1.compute.internal"}}
	ahead := func(run map[string]any) {
		run["rollout_ring"] = "canary"
		if cfg, ok := run["agent_config"].(map[string]any); ok {
			cfg["placement"] = placement
		}
	}
	return rewritingUpstream(t, func(r *http.Request, status int, body []byte) []byte {
		if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/agent/runs") || status != http.StatusOK {
			return body
		}
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
		return body
	})
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
	require.NoError(t, p.Drain(t.Context()))
	return p, srv.URL
}

// The dashboard's Drift panel lists each fact the traffic showed and the
// document does not say, with its operation, status, location, types,
// count and example, read with the control token; the overlay downloads
// with the same token. Nothing of it is a violation.
func TestDashboardShowsDriftInABrowser(t *testing.T) {
	const token = "ctl-drift-1"
	p, base := aheadProxy(t, token)

	ctx := browsertest.Tab(t)
	browsertest.Do(t, ctx, chromedp.Navigate(base+"/__mock/proxy/ui/#token="+token))
	facts := p.Drift().Facts
	// A filter the document lacks; the page's own member, and two of a run
	// in both the page and the run's details.
	require.Len(t, facts, 6, "%+v", facts)
	browsertest.WaitFor(t, ctx, `document.querySelectorAll("#drift tbody tr.drift-row").length === 6`)
	table := browsertest.Text(t, ctx, "#drift")
	for _, want := range []string{
		"response-field", "GET /agent/runs/{runId}", "body.rollout_ring", "body.agent_config.placement",
		"GET /agent/runs", "body.runs[].rollout_ring", "body.runs[].agent_config.placement", `"canary"`, "string", "object",
		"query-parameter", "query.rollout_ring", "request",
	} {
		assert.Contains(t, table, want)
	}
	// The run's details were read twice: its facts were seen twice.
	row := browsertest.Eval[string](t, ctx, `Array.from(document.querySelectorAll("#drift tbody tr")).find(function (tr) {
		return tr.cells[1].textContent === "GET /agent/runs/{runId}" && tr.cells[3].textContent === "body.rollout_ring" }).innerText`)
	assert.Contains(t, row, "200")
	assert.Contains(t, row, "2")
	assert.Contains(t, browsertest.Text(t, ctx, "#drift-count"), "distinct")
	assert.Zero(t, p.Summary().Violations, "drift is no violation")
	// A long example is cut, whole in its title, and the table fits the
	// page's width.
	title := browsertest.Eval[string](t, ctx, `Array.from(document.querySelectorAll("#drift td.example")).map(function (td) { return td.title }).find(function (s) { return s.indexOf("cell-01") >= 0 })`)
	assert.Contains(t, title, `"region":"eu-west-1"`)
	assert.True(t, browsertest.Eval[bool](t, ctx, `document.getElementById("drift").offsetWidth <= document.querySelector(".panel-drift .scroll").clientWidth`),
		"the drift table fits its panel at %d px", browsertest.Width)
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
	var want bytes.Buffer
	require.NoError(t, p.WriteOverlay(&want))
	assert.Contains(t, string(saved), "overlay: 1.0.0")
	assert.Contains(t, string(saved), "rollout_ring")
	assert.Equal(t, firstLines(want.String(), 3), firstLines(string(saved), 3))
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

// The HTML report lists the drift as its own section, beside the rules:
// the run passes all the same.
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
	assert.Contains(t, page, `id="verdict">All passed</div>`, "drift fails nothing")
}
