package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/report"
)

func TestPrettyPrintsEachScenarioAsTheFeatureReads(t *testing.T) {
	var out bytes.Buffer
	f := report.NewPretty(&out, report.Options{})
	run := aRun()
	run.Scenarios[0].Steps[0].Table = [][]string{{"run", "prompt"}, {"alpha", "Fix the login test"}}
	run.Scenarios[0].Steps[1].DocString = "{\n  \"prompt\": \"x\"\n}"
	for _, sc := range run.Scenarios {
		require.NoError(t, f.Scenario(sc))
	}
	require.NoError(t, f.Close(run))
	want := `
Feature: Listing runs

  Scenario: A created run appears  # list_runs.feature:20
    ✓ Given I created 1 run
        | run   | prompt             |
        | alpha | Fix the login test |
    ✓ Then the listing holds 1 run
        """
        {
          "prompt": "x"
        }
        """

  Scenario: A bad limit is refused  # list_runs.feature:9
    ✓ When I list runs with "limit=0"
    ✗ Then the response status is 400
        expected status 400, got 200
          body: {"runs":[]} <&> ` + "\x1b[31m" + `
    - And the response is a problem

Feature: How a run progresses

  Scenario: A run ends as the mock chose  # state_progression.feature:30
    skipped: needs the mock control API (@mock-control)
`
	assert.True(t, strings.HasPrefix(out.String(), want), out.String())
	assert.Contains(t, out.String(), "interrupted: the run was stopped before this scenario could finish")
	assert.Contains(t, out.String(), "    ? Then the run sings\n        step is undefined\n")
	assert.True(t, strings.HasSuffix(out.String(), "\n5 scenarios (1 passed, 1 failed, 1 skipped, 1 interrupted, 1 undefined) in 2s\n"), out.String())
	assert.NotContains(t, out.String(), "\x1b[32m", "no colours unless asked")
}

func TestPrettyColoursOnlyWhenAsked(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, report.NewPretty(&out, report.Options{Colors: true}).Scenario(aRun().Scenarios[0]))
	assert.Contains(t, out.String(), "\x1b[32m✓\x1b[0m")
}

func TestProgressPrintsACharacterPerScenarioThenWhatDidNotPass(t *testing.T) {
	var out bytes.Buffer
	f := report.NewProgress(&out, report.Options{})
	run := aRun()
	for _, sc := range run.Scenarios {
		require.NoError(t, f.Scenario(sc))
	}
	require.NoError(t, f.Close(run))
	s := out.String()
	assert.True(t, strings.HasPrefix(s, ".FSIU 5\n"), s)
	assert.Contains(t, s, "Scenario: A bad limit is refused")
	assert.Contains(t, s, "Scenario: A step nobody wrote")
	assert.NotContains(t, s, "Scenario: A created run appears", "passed scenarios are not repeated")
	assert.NotContains(t, s, "Scenario: A run ends as the mock chose", "skipped scenarios are in the summary, not repeated")
}
