package explore_test

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/explore"
	"github.com/agentruns/agentruns/internal/browsertest"
	"github.com/agentruns/agentruns/internal/junitcheck"
)

func TestMain(m *testing.M) { browsertest.Main(m) }

const base = "https://api.example.test/api/v1"

// exploration is a result with three findings of two causes, one of them
// with markup in what the server said, that a page must show as text.
func exploration() explore.Result {
	listing := explore.Call{Method: "GET", Path: "/agent/runs", Query: url.Values{"state": {"QUEUED"}}, Status: 200}
	return explore.Result{
		Seed:  1234,
		Calls: 500,
		Findings: []explore.Finding{
			{Cause: "server error on a valid request", Detail: "GET /agent/runs?limit=3 answered 500", Seed: 1234,
				Calls: []explore.Call{{Method: "GET", Path: "/agent/runs", Query: url.Values{"limit": {"3"}}, Status: 500}}},
			{Cause: "listing shows a run outside its filter", Detail: "the listing showed <b>run</b> f29d in SUCCEEDED\nsecond line", Seed: 1234, Calls: []explore.Call{listing}},
			{Cause: "server error on a valid request", Detail: "POST /agent/run answered 502", Seed: 1234,
				Calls: []explore.Call{{Method: "POST", Path: "/agent/run", Body: []byte(`{"prompt":"it's"}`), Status: 502}}},
		},
		Created:   map[string]int{"runs": 2, "schedules": 1, "agent identities": 0},
		Unreached: map[string]string{"DELETE /agent/identities/{uid}": "nothing to call it on"},
	}
}

func TestTheSummarySaysWhatWasSentAndFoundByCause(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, explore.WriteSummary(&b, exploration(), base))
	out := b.String()
	t.Log("\n" + out)
	for _, want := range []string{
		"Exploration of " + base + ": 500 calls, reads and writes\n",
		"Created: 2 runs, 1 schedule\n",
		"Replay: agentruns-contract --explore --seed 1234\n",
		"Not called:\n  DELETE /agent/identities/{uid}: nothing to call it on\n",
		"3 findings, by cause:\n",
		"\nserver error on a valid request (2)\n",
		"\nlisting shows a run outside its filter (1)\n",
		"       When I send the request \"GET /agent/runs?limit=3\"\n",
		"       curl -sS --globoff '" + base + "/agent/runs?limit=3'",
	} {
		assert.Contains(t, out, want)
	}
	assert.Less(t, strings.Index(out, "server error on a valid request (2)"), strings.Index(out, "listing shows a run outside its filter (1)"), "the cause with more findings comes first")

	b.Reset()
	require.NoError(t, explore.WriteSummary(&b, explore.Result{Seed: 7, Calls: 1, ReadOnly: true}, base))
	assert.Equal(t, "Exploration of "+base+": 1 call, reads only (--read-only)\nCreated: nothing\nReplay: agentruns-contract --explore --seed 7\n\nNo finding.\n", b.String())
}

// The JUnit report validates against the schema the suite's is held to,
// and a CI server reads one failed test case per finding.
func TestTheJUnitReportHasATestCasePerFinding(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, explore.WriteJUnit(&b, exploration(), base))
	junitcheck.Validate(t, b.Bytes())
	totals, tests := junitcheck.Totals(t, b.Bytes())
	assert.Equal(t, 4, totals.Tests)
	assert.Equal(t, 3, totals.Failed)
	assert.Equal(t, 1, totals.Passed)
	var failed []string
	for _, tc := range tests {
		if tc.Error != nil {
			failed = append(failed, tc.Classname+" | "+tc.Name)
			assert.Contains(t, tc.Error.Error(), "Scenario:", tc.Name)
		}
	}
	assert.Equal(t, []string{
		"server error on a valid request | 1. GET /agent/runs: GET /agent/runs?limit=3 answered 500",
		"server error on a valid request | 2. POST /agent/run: POST /agent/run answered 502",
		"listing shows a run outside its filter | 1. GET /agent/runs: the listing showed <b>run</b> f29d in SUCCEEDED",
	}, failed)
	assert.Contains(t, b.String(), `<property name="seed" value="1234"></property>`)

	b.Reset()
	require.NoError(t, explore.WriteJUnit(&b, explore.Result{Seed: 7}, base))
	junitcheck.Validate(t, b.Bytes())
	totals, _ = junitcheck.Totals(t, b.Bytes())
	assert.Equal(t, 1, totals.Passed)
}

// The page parses as HTML, and shows each scenario as printed.
func TestThePageShowsTheFindingsByCause(t *testing.T) {
	var b bytes.Buffer
	r := exploration()
	require.NoError(t, explore.WriteHTML(&b, r, base))

	// Read with a forgiving HTML reader, the way the page's elements nest.
	dec := xml.NewDecoder(bytes.NewReader(b.Bytes()))
	dec.Strict, dec.AutoClose, dec.Entity = false, xml.HTMLAutoClose, xml.HTMLEntity
	var sections, articles int
	var pres []string
	inPre := false
	var pre strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		switch el := tok.(type) {
		case xml.StartElement:
			switch el.Name.Local {
			case "section":
				sections++
			case "article":
				articles++
			case "pre":
				inPre = true
				pre.Reset()
			case "b":
				t.Errorf("what the server said was written as markup")
			}
		case xml.CharData:
			if inPre {
				pre.Write(el)
			}
		case xml.EndElement:
			if el.Name.Local == "pre" {
				inPre = false
				pres = append(pres, pre.String())
			}
		}
	}
	assert.Equal(t, 2, sections)
	assert.Equal(t, 3, articles)
	feature, _ := explore.Scenario(r.Findings[0])
	require.Len(t, pres, 6)
	assert.Equal(t, feature, pres[0], "the scenario is shown as printed")
	assert.Equal(t, explore.Curl(r.Findings[0].Calls[0], base)+"\n", pres[1])
}

// In a browser, the page shows what it says: the findings by cause, each
// scenario to copy as printed.
func TestThePageInABrowser(t *testing.T) {
	var b bytes.Buffer
	r := exploration()
	require.NoError(t, explore.WriteHTML(&b, r, base))
	path := filepath.Join(t.TempDir(), "explore.html")
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o600))

	ctx := browsertest.Tab(t)
	browsertest.Do(t, ctx, chromedp.Navigate("file://"+path), chromedp.WaitVisible(`#calls`))
	assert.Equal(t, "500 calls", browsertest.Text(t, ctx, "#calls"))
	assert.Equal(t, "agentruns-contract --explore --seed 1234", browsertest.Text(t, ctx, "#replay"))
	assert.Equal(t, []string{"server error on a valid request (2)", "listing shows a run outside its filter (1)"},
		browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll("section.cause h2")].map(h => h.textContent)`))
	feature, _ := explore.Scenario(r.Findings[1])
	assert.Equal(t, feature, browsertest.Eval[string](t, ctx, `document.querySelector("#cause-listing-shows-a-run-outside-its-filter pre.scenario").textContent`))
	assert.Contains(t, browsertest.Text(t, ctx, "#cause-listing-shows-a-run-outside-its-filter .detail"), "<b>run</b>")
	browsertest.Screenshot(t, ctx, "explore-report")
}

// The summary says which run budget applied and whether the other team's
// key made any call: a clean exploration that never used it says nothing
// of tenancy.
func TestTheSummarySaysTheRunBudgetAndTheOtherTeamsCalls(t *testing.T) {
	summary := func(r explore.Result) string {
		var b strings.Builder
		require.NoError(t, explore.WriteSummary(&b, r, "http://server"))
		return b.String()
	}
	r := explore.Result{Calls: 300, RunBudget: explore.DefaultMaxRuns, RunBudgetDefault: true, OtherTeam: true}
	out := summary(r)
	assert.Contains(t, out, "300 calls (0 with the other team's key)")
	assert.Contains(t, out, "Run budget: 20 runs (the default off the mock; --max-runs to change it)\n")
	assert.Contains(t, out, "Tenancy: the other team's key made no call, so tenancy was not explored")

	r.OtherTeamCalls, r.RunBudget, r.RunBudgetDefault = 40, 5, false
	out = summary(r)
	assert.Contains(t, out, "300 calls (40 with the other team's key)")
	assert.Contains(t, out, "Run budget: 5 runs (--max-runs)\n")
	assert.NotContains(t, out, "Tenancy:")

	r.RunBudget = 0
	assert.Contains(t, summary(r), "Run budget: none (on a server with the mock's control API")

	r.ReadOnly = true
	assert.NotContains(t, summary(r), "Run budget:", "a read-only exploration starts no run")
}
