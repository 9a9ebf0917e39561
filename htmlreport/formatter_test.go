package htmlreport_test

import (
	"bytes"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/htmlreport"
	"github.com/agentruns/agentruns/report"
)

// hostile is what a server might send back inside an error: markup that
// would run if the page did not escape it.
const hostile = `</pre><script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">`

var testFeatures = fstest.MapFS{
	"billing.feature": {Data: []byte(`@billing
Feature: Billing
  Runs cost credits.

  Second paragraph of the description.

  Scenario: A run is charged
    Given a run with:
      | prompt | Fix the build |
    When it ends
    Then the bill says "1 credit"

  @mock-control
  Scenario: Credits run out
    Given a run
    Then it fails

  @mock-control
  Scenario Outline: A forced <state> run is billed nothing
    Given a run in <state>
    Then it fails

    Examples:
      | state  |
      | FAILED |
      | ERROR  |

  Scenario Outline: A <state> run is billed <amount>
    Given a run in <state>
    Then the bill says "<amount>"
    And the server answers:
      """json
      {"state": "<state>"}
      """

    Examples:
      | state     | amount   |
      | SUCCEEDED | 1 credit |
      | FAILED    | broken   |
`)},
	"unselected.feature": {Data: []byte(`Feature: Left out
  @never
  Scenario: Not selected
    Given a run
`)},
}

// lineOf is the line of text in the billing feature.
func lineOf(t *testing.T, text string) int {
	t.Helper()
	for i, l := range strings.Split(string(testFeatures["billing.feature"].Data), "\n") {
		if strings.TrimSpace(l) == text {
			return i + 1
		}
	}
	t.Fatalf("no line %q in billing.feature", text)
	return 0
}

// runReport hands the formatter a run of testFeatures as the suite's
// collector would, "~@never" leaving out the unselected feature, and
// returns the page.
func runReport(t *testing.T) string {
	t.Helper()
	const skipReason = "needs the mock control API (@mock-control), which the server does not offer"
	step := func(kw, text string, st report.Status) report.Step {
		return report.Step{Keyword: kw, Text: text, Status: st, Line: lineOf(t, kw+text)}
	}
	skipped := func(name, line string, steps ...report.Step) report.Scenario {
		return report.Scenario{Feature: "Billing", URI: "billing.feature", Line: lineOf(t, line), Name: name,
			Tags: []string{"@billing", "@mock-control"}, Status: report.Skipped, Message: skipReason, Steps: steps}
	}
	charged := step("Given ", "a run with:", report.Passed)
	charged.Table = [][]string{{"prompt", "Fix the build"}}
	broken := step("Then ", `the bill says "<amount>"`, report.Failed)
	broken.Text, broken.Message = `the bill says "broken"`, "expected 1 credit, got "+hostile
	answers := step("And ", "the server answers:", report.Skipped)
	answers.DocString = `{"state": "FAILED"}`
	run := report.Run{
		Name: "agentruns-contract", Target: "http://127.0.0.1:9/api/v1?<b>bold</b>", Mode: "polling the server",
		Tags: "~@never", Seed: 42, Start: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC), Duration: 3 * time.Second,
		Scenarios: []report.Scenario{
			{Feature: "Billing", URI: "billing.feature", Line: lineOf(t, "Scenario: A run is charged"), Name: "A run is charged",
				Tags: []string{"@billing"}, Status: report.Passed, Duration: 1500 * time.Millisecond, Steps: []report.Step{
					charged, step("When ", "it ends", report.Passed), step("Then ", `the bill says "1 credit"`, report.Passed)}},
			skipped("Credits run out", "Scenario: Credits run out",
				step("Given ", "a run", report.Skipped), step("Then ", "it fails", report.Skipped)),
			skipped("A forced FAILED run is billed nothing", "| FAILED |"),
			skipped("A forced ERROR run is billed nothing", "| ERROR  |"),
			{Feature: "Billing", URI: "billing.feature", Line: lineOf(t, "| SUCCEEDED | 1 credit |"), Name: "A SUCCEEDED run is billed 1 credit",
				Tags: []string{"@billing"}, Status: report.Passed, Duration: 2 * time.Millisecond},
			{Feature: "Billing", URI: "billing.feature", Line: lineOf(t, "| FAILED    | broken   |"), Name: "A FAILED run is billed broken",
				Tags: []string{"@billing"}, Status: report.Failed, Message: broken.Message, Duration: 40 * time.Millisecond,
				Steps: []report.Step{step("Given ", "a run in <state>", report.Passed), broken, answers}},
		},
	}
	run.Scenarios[5].Steps[0].Text = "a run in FAILED"
	var out bytes.Buffer
	f := htmlreport.New(&out, testFeatures)
	for _, sc := range run.Scenarios {
		require.NoError(t, f.Scenario(sc))
	}
	require.NoError(t, f.Close(run))
	return out.String()
}

// The page shows each scenario's outcome, the failure's message where it
// happened, the skip's reason, and what the tags left out.
func TestReportShowsOutcomesAndReasons(t *testing.T) {
	page := runReport(t)
	require.True(t, strings.HasPrefix(page, "<!doctype html>"), page[:min(len(page), 200)])

	has(t, page, `<b data-count="passed">2</b> passed`)
	has(t, page, `<b data-count="failed">1</b> failed`)
	has(t, page, `<b data-count="skipped">3</b> skipped`)
	has(t, page, `<b data-count="notrun">1</b> not selected`)

	// Anchors a CI job can link to, stable across runs.
	for _, id := range []string{"billing", "billing--a-run-is-charged", "billing--credits-run-out",
		"billing--a-state-run-is-billed-amount", "billing--a-state-run-is-billed-amount--failed-broken", "unselected--not-selected"} {
		has(t, page, `id="`+id+`"`)
	}
	has(t, page, "needs the mock control API (@mock-control), which the server does not offer")
	has(t, page, "expected 1 credit, got ")
	has(t, page, `Failed</b> at “<span class="failed-step">the bill says &#34;broken&#34;</span>”`)
	// The spec's parts: descriptions, tables, doc strings, examples.
	has(t, page, "Second paragraph of the description.")
	has(t, page, "<td>Fix the build</td>")
	has(t, page, `data-media-type="json"`)
	has(t, page, "{&#34;state&#34;: &#34;FAILED&#34;}", "a row's steps as run, placeholders filled in")
	has(t, page, "Not selected by this run's tags.")
	has(t, page, `data-tags="@billing @mock-control"`)
	// An outline skipped for one reason says it once, not on every row.
	has(t, page, "<b>Skipped</b>, every example: ")
	assert.Equal(t, 2, strings.Count(page, "which the server does not offer"), "one plain scenario, one outline")
	// Each scenario's own duration, as the other reports time it.
	has(t, page, `<span class="duration">1.5s</span>`)
	has(t, page, `<span class="duration">40 ms</span>`)
	hasNot(t, page, "&lt;1 ms")
}

// Everything a server sent back is text on the page, never markup.
func TestReportEscapesWhatTheServerSent(t *testing.T) {
	page := runReport(t)
	hasNot(t, page, "<script>window.pwned")
	hasNot(t, page, "<img src=x")
	hasNot(t, page, "<b>bold</b>")
	has(t, page, "&lt;/pre&gt;&lt;script&gt;window.pwned = 1&lt;/script&gt;&lt;img src=x onerror=&#34;window.pwned = 2&#34;&gt;")
	assert.Equal(t, 1, strings.Count(page, "<script>"), "only the page's own script")
}

// The spec page is the same features with no outcomes at all.
func TestSpecPageHasNoOutcomes(t *testing.T) {
	spec, err := htmlreport.Parse(testFeatures)
	require.NoError(t, err)
	require.Len(t, spec, 2)
	assert.Equal(t, "Billing", spec[0].Name)
	var out bytes.Buffer
	require.NoError(t, htmlreport.WriteSpec(&out, "Billing: behaviour", spec))
	page := out.String()
	has(t, page, "<title>Billing: behaviour</title>")
	has(t, page, `id="billing--a-run-is-charged"`)
	has(t, page, "<td>Fix the build</td>")
	has(t, page, "no server was called")
	hasNot(t, page, `class="badge st-passed"`)
	hasNot(t, page, `data-status="passed"`)
	hasNot(t, page, `class="status-filter"`)
}

func TestParseNamesABrokenFile(t *testing.T) {
	_, err := htmlreport.Parse(fstest.MapFS{"bad.feature": {Data: []byte("Feature: x\n  Scenario: y\n    Given z\n  Oops\n")}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad.feature")
}

// has and hasNot check the page without printing all of it on failure.
func has(t *testing.T, page, want string, msg ...any) {
	t.Helper()
	if !strings.Contains(page, want) {
		t.Errorf("the page lacks %q %v", want, msg)
	}
}

func hasNot(t *testing.T, page, unwanted string, msg ...any) {
	t.Helper()
	if i := strings.Index(page, unwanted); i >= 0 {
		t.Errorf("the page holds %q: …%s… %v", unwanted, page[max(0, i-80):min(len(page), i+len(unwanted)+80)], msg)
	}
}

// A run that skipped scenarios an option would have run is not "All
// passed": the verdict counts them and the page names the flag.
func TestReportWithAvoidableSkipsIsNotAllPassed(t *testing.T) {
	page := func(needs *report.Need) string {
		run := report.Run{Start: time.Now(), Scenarios: []report.Scenario{
			{URI: "billing.feature", Line: lineOf(t, "Scenario: A run is charged"), Name: "A run is charged", Status: report.Passed},
			{URI: "billing.feature", Line: lineOf(t, "Scenario: Credits run out"), Name: "Credits run out", Status: report.Skipped,
				Message: "needs a key of another team: pass --other-api-key", Needs: needs},
		}}
		var out bytes.Buffer
		f := htmlreport.New(&out, testFeatures)
		require.NoError(t, f.Close(run))
		return out.String()
	}
	withoutOption := page(&report.Need{Flag: "--other-api-key", What: "one team never sees another team's runs"})
	hasNot(t, withoutOption, "All passed")
	has(t, withoutOption, `id="verdict">Passed, 1 not checked</div>`)
	has(t, withoutOption, `<li data-flag="--other-api-key"><span class="what">one team never sees another team&#39;s runs</span> (1 skipped): run again with <code>--other-api-key</code> to check it</li>`)

	serverRuledOut := page(nil)
	has(t, serverRuledOut, `id="verdict">All passed</div>`)
	hasNot(t, serverRuledOut, `id="not-checked"`)
}
