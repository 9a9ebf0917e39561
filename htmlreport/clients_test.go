package htmlreport_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/htmlreport"
	"github.com/agentruns/agentruns/report"
)

// The page shows the client versions' table: each version, its counts,
// whether it fails the run, and its first breaks, escaped.
func TestReportShowsTheClientVersions(t *testing.T) {
	run := report.Run{Name: "agentruns-contract", Clients: []report.ClientVersion{
		{Name: "python-0.11.0", Checked: 7},
		{Name: "typescript-1.0.0-alpha.8", Checked: 9, Broken: 2, First: []report.ClientBreak{
			{Operation: "GET /agent/runs", Field: "runs[].state", Expected: "one of QUEUED", Got: `string "<b>ERROR</b>"`}}},
		{Name: "typescript-1.4.0-alpha.6", Checked: 8, Broken: 1, Fails: true},
	}}
	var out bytes.Buffer
	require.NoError(t, htmlreport.New(&out, testFeatures).Close(run))
	page := out.String()
	has(t, page, `<div class="clients" id="clients">`)
	has(t, page, `<tr data-client="python-0.11.0" class="">`)
	has(t, page, `<td><code>python-0.11.0</code></td><td>7</td><td data-broken="0">0</td>`)
	has(t, page, `<tr data-client="typescript-1.0.0-alpha.8" class="client-broken">`)
	has(t, page, `<code>GET /agent/runs</code> <code>runs[].state</code>: expected one of QUEUED, got string &#34;&lt;b&gt;ERROR&lt;/b&gt;&#34;`)
	has(t, page, `<tr data-client="typescript-1.4.0-alpha.6" class="client-failing">`)
	has(t, page, `<td data-broken="1">1 (fails the run)</td>`)
	// The run failed for the version it promised, though no scenario did.
	has(t, page, `<div class="verdict verdict-failed" id="verdict">1 promised client version(s) broken</div>`)
}

// A page without client versions (a run of an older suite, a spec) has no
// such table.
func TestReportWithoutClientVersionsHasNoTable(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, htmlreport.New(&out, testFeatures).Close(report.Run{Name: "agentruns-contract"}))
	hasNot(t, out.String(), `id="clients"`)
}
