package htmlreport_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/htmlreport"
)

// The page lists the drift: each fact with its kind, operation, status
// (or "request"), location, value and types, count, first and last seen
// and its example, escaped; how many were not kept; and the verdict stays
// the outcomes', drift failing nothing.
func TestReportListsTheDrift(t *testing.T) {
	first := time.Date(2026, 11, 28, 1, 2, 3, 123456000, time.UTC)
	page := &htmlreport.Page{Title: "Contract check of live traffic", Run: &htmlreport.Run{
		Server: "http://upstream.test", Counts: htmlreport.Counts{Passed: 3},
		Drift: &htmlreport.Drift{Distinct: 4, Dropped: 1, Facts: []htmlreport.DriftFact{
			{Kind: "response-field", Operation: "GET /agent/runs/{runId}", Status: 200, ContentType: "application/json",
				Location: "body.rollout_ring", Types: []string{"string"}, Count: 3, FirstSeen: first, LastSeen: first.Add(3 * time.Minute),
				Example: `"<canary>"`},
			{Kind: "enum-value", Operation: "GET /agent/runs", Status: 200, Location: "body.runs[].source", Value: `"SLACK_WORKFLOW"`,
				Types: []string{"string"}, Count: 1, FirstSeen: first, LastSeen: first, Example: `"SLACK_WORKFLOW"`},
			{Kind: "content-type", Operation: "GET /agent/models", Status: 200, ContentType: "application/x-ndjson", Location: "content-type",
				Count: 1, FirstSeen: first, LastSeen: first},
			{Kind: "query-parameter", Operation: "GET /agent/runs", Location: "query.ring", Types: []string{"string", "integer"},
				Count: 2, FirstSeen: first, LastSeen: first, Example: `"canary"`},
		}},
	}}
	var out bytes.Buffer
	require.NoError(t, htmlreport.Write(&out, page))
	html := out.String()
	has(t, html, `<div class="drift" id="drift">`)
	has(t, html, `<span data-distinct="4">4 distinct</span> · <span data-dropped="1">1 not kept (past the bound)</span>`)
	has(t, html, `<tr data-kind="response-field">
          <td>response-field</td><td><code>GET /agent/runs/{runId}</code></td><td>200</td>
          <td><code>body.rollout_ring</code></td><td><code>string</code></td><td>3</td>
          <td><time datetime="2026-11-28T01:02:03.123Z">01:02:03.123</time></td>
          <td><time datetime="2026-11-28T01:05:03.123Z">01:05:03.123</time></td>
          <td class="drift-example"><code>&#34;&lt;canary&gt;&#34;</code></td>`)
	has(t, html, `<td><code>body.runs[].source</code></td><td><code>&#34;SLACK_WORKFLOW&#34; · string</code></td>`)
	has(t, html, `<td>query-parameter</td><td><code>GET /agent/runs</code></td><td>request</td>`)
	has(t, html, `<code>string | integer</code>`)
	has(t, html, `<td><code>content-type</code></td><td><code>application/x-ndjson</code></td>`)
	has(t, html, `id="verdict">All passed</div>`)
	hasNot(t, html, `class="drift-none"`)
}

// Drift that is empty says so; a page without drift (the suite's) has no
// such section.
func TestReportSaysWhenNothingDrifted(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, htmlreport.Write(&out, &htmlreport.Page{Title: "x", Run: &htmlreport.Run{Drift: &htmlreport.Drift{}}}))
	has(t, out.String(), `<p class="drift-none">Nothing undocumented was seen`)
	hasNot(t, out.String(), `data-dropped=`)

	out.Reset()
	require.NoError(t, htmlreport.Write(&out, &htmlreport.Page{Title: "x", Run: &htmlreport.Run{}}))
	hasNot(t, out.String(), `id="drift"`)
}
