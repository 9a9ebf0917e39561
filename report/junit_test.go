package report_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/joshdk/go-junit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/internal/junitcheck"
	"github.com/agentruns/agentruns/report"
)

// aRun has one scenario of each outcome, over two features.
func aRun() report.Run {
	start := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	step := func(kw, text string, st report.Status, msg string) report.Step {
		return report.Step{Keyword: kw, Text: text, Status: st, Message: msg}
	}
	return report.Run{
		Name: "agentruns-contract", Target: "http://127.0.0.1:4010", Seed: 42, Start: start, Duration: 2 * time.Second,
		Scenarios: []report.Scenario{
			{Feature: "Listing runs", URI: "list_runs.feature", Line: 20, Name: "A created run appears", Status: report.Passed,
				Start: start, Duration: 300 * time.Millisecond,
				Steps: []report.Step{step("Given ", "I created 1 run", report.Passed, ""), step("Then ", "the listing holds 1 run", report.Passed, "")}},
			{Feature: "Listing runs", URI: "list_runs.feature", Line: 9, Name: "A bad limit is refused", Status: report.Failed,
				Message: "expected status 400, got 200", Start: start.Add(time.Second), Duration: 100 * time.Millisecond,
				Steps: []report.Step{
					step("When ", "I list runs with \"limit=0\"", report.Passed, ""),
					step("Then ", "the response status is 400", report.Failed, "expected status 400, got 200\n  body: {\"runs\":[]} <&> \x1b[31m"),
					step("And ", "the response is a problem", report.Skipped, ""),
				}},
			{Feature: "How a run progresses", URI: "state_progression.feature", Line: 30, Name: "A run ends as the mock chose", Status: report.Skipped,
				Message: "needs the mock control API (@mock-control)", Duration: -time.Millisecond, // a clock that went back
				Steps: []report.Step{step("Given ", "the mock will end my next run in \"FAILED\"", report.Skipped, "")}},
			{Feature: "How a run progresses", URI: "state_progression.feature", Line: 40, Name: "A run is watched", Status: report.Interrupted,
				Message: "the run was stopped before this scenario could finish",
				Steps:   []report.Step{step("When ", "I watch the run until it reaches a terminal state", report.Failed, "context canceled")}},
			{Feature: "How a run progresses", URI: "state_progression.feature", Line: 50, Name: "A step nobody wrote", Status: report.Undefined,
				Steps: []report.Step{step("Then ", "the run sings", report.Undefined, "step is undefined")}},
		},
	}
}

func TestJUnitReportValidatesAndReadsRight(t *testing.T) {
	var out bytes.Buffer
	f := report.NewJUnit(&out, report.Options{})
	run := aRun()
	for _, sc := range run.Scenarios {
		require.NoError(t, f.Scenario(sc))
	}
	require.NoError(t, f.Close(run))
	data := out.Bytes()

	junitcheck.Validate(t, data)
	tot, tests := junitcheck.Totals(t, data)
	assert.Equal(t, junit.Totals{Tests: 5, Passed: 1, Skipped: 2, Failed: 1, Error: 1, Duration: tot.Duration}, tot)
	byName := map[string]junit.Test{}
	for _, tc := range tests {
		byName[tc.Name] = tc
		assert.NotEmpty(t, tc.Classname, tc.Name)
	}
	assert.Equal(t, junit.StatusFailed, byName["A bad limit is refused"].Status)
	assert.Equal(t, "Listing runs", byName["A bad limit is refused"].Classname)
	assert.Equal(t, `Then the response status is 400: expected status 400, got 200`, byName["A bad limit is refused"].Message)
	assert.Equal(t, junit.StatusSkipped, byName["A run ends as the mock chose"].Status)
	assert.Equal(t, "needs the mock control API (@mock-control)", byName["A run ends as the mock chose"].Message)
	assert.Equal(t, junit.StatusSkipped, byName["A run is watched"].Status)
	assert.Contains(t, byName["A run is watched"].Message, "interrupted")
	assert.Equal(t, junit.StatusError, byName["A step nobody wrote"].Status)

	s := string(data)
	assert.Equal(t, 1, strings.Count(s, "<failure"), "one failure per failed case")
	assert.Equal(t, 1, strings.Count(s, "<error"), "errors only for undefined, pending or ambiguous steps")
	assert.Contains(t, s, `<testsuites name="agentruns-contract" tests="5" failures="1" errors="1" skipped="2" time="2.000" timestamp="2026-11-23T10:00:00">`)
	assert.Contains(t, s, `<testsuite name="How a run progresses" tests="3" failures="0" errors="1" skipped="2" time="0.000"`)
	assert.Contains(t, s, `<property name="seed" value="42">`)
	assert.NotContains(t, s, "\x1b", "control characters are not XML")
	// Cases come in the order of the feature file.
	assert.Less(t, strings.Index(s, "A bad limit is refused"), strings.Index(s, "A created run appears"))
}

// A schema check that accepts anything proves nothing: the old report's
// defects are refused.
func TestJUnitSchemaRefusesTheOldDefects(t *testing.T) {
	junitcheck.Require(t)
	for name, doc := range map[string]string{
		"negative time":        `<testsuites name="s" tests="0" failures="0" errors="0" skipped="0" time="-1.5"/>`,
		"no classname":         `<testsuites name="s" tests="1" failures="0" errors="0" skipped="0" time="0"><testsuite name="f" tests="1" failures="0" errors="0" skipped="0" time="0"><testcase name="c" time="0"/></testsuite></testsuites>`,
		"two outcomes":         `<testsuites name="s" tests="1" failures="1" errors="1" skipped="0" time="0"><testsuite name="f" tests="1" failures="1" errors="1" skipped="0" time="0"><testcase name="c" classname="f" time="0"><failure message="m" type="t"/><error message="m" type="t"/></testcase></testsuite></testsuites>`,
		"status attribute":     `<testsuites name="s" tests="1" failures="0" errors="0" skipped="0" time="0"><testsuite name="f" tests="1" failures="0" errors="0" skipped="0" time="0"><testcase name="c" classname="f" time="0" status=""/></testsuite></testsuites>`,
		"skipped with no why":  `<testsuites name="s" tests="1" failures="0" errors="0" skipped="1" time="0"><testsuite name="f" tests="1" failures="0" errors="0" skipped="1" time="0"><testcase name="c" classname="f" time="0"><skipped/></testcase></testsuite></testsuites>`,
		"counter not a number": `<testsuites name="s" tests="x" failures="0" errors="0" skipped="0" time="0"/>`,
	} {
		t.Run(name, func(t *testing.T) {
			ft := &fakeT{TB: t}
			func() {
				defer func() { _ = recover() }()
				junitcheck.Validate(ft, []byte(xmlHeader+doc))
			}()
			assert.True(t, ft.failed, "the schema accepted a report with %s", name)
		})
	}
}

const xmlHeader = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"

// fakeT records a failure instead of failing the real test.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Fatalf(string, ...any) { f.failed = true; panic("stop") }
func (f *fakeT) Fatal(...any)          { f.failed = true; panic("stop") }

// aRunWithAvoidableSkips is a run that passed where it ran, but skipped two
// scenarios for want of a second key and one for want of a failing prompt.
func aRunWithAvoidableSkips() report.Run {
	other := &report.Need{Flag: "--other-api-key", What: "one team never sees another team's runs"}
	prompt := &report.Need{Flag: "--failing-prompt", What: "a run that fails says why"}
	skipped := func(uri, name, why string, need *report.Need) report.Scenario {
		return report.Scenario{Feature: uri, URI: uri, Name: name, Status: report.Skipped, Message: why, Needs: need}
	}
	return report.Run{Name: "agentruns-contract", Duration: time.Second, Scenarios: []report.Scenario{
		{Feature: "get_run.feature", URI: "get_run.feature", Name: "A run is fetched", Status: report.Passed},
		skipped("tenancy.feature", "Another team's run cannot be fetched", "needs a key of another team", other),
		skipped("tenancy.feature", "Another team's run cannot be cancelled", "needs a key of another team", other),
		skipped("state_progression.feature", "A run that fails says why", "needs a failing prompt", prompt),
		skipped("state_progression.feature", "A forced state", "needs the mock control API", nil),
	}}
}

// A skip an option would have avoided says what was not checked and which
// flag would check it, on the test case and on its feature.
func TestJUnitSaysWhatWasNotChecked(t *testing.T) {
	var out bytes.Buffer
	f := report.NewJUnit(&out, report.Options{})
	run := aRunWithAvoidableSkips()
	require.NoError(t, f.Close(run))
	data := out.Bytes()
	junitcheck.Validate(t, data)
	_, tests := junitcheck.Totals(t, data)
	byName := map[string]string{}
	for _, tc := range tests {
		byName[tc.Name] = tc.Message
	}
	assert.Equal(t, "not checked: one team never sees another team's runs; --other-api-key would check it (needs a key of another team)",
		byName["Another team's run cannot be fetched"])
	assert.Equal(t, "needs the mock control API", byName["A forced state"], "a skip the server rules out is no option's")
	assert.Contains(t, out.String(), `<property name="not_checked" value="not checked: 2 scenarios skipped for want of an option: --other-api-key would run 2 scenarios (one team never sees another team&#39;s runs)"></property>`)
	assert.Contains(t, out.String(), `<property name="not_checked" value="not checked: 1 scenario skipped for want of an option: --failing-prompt would run 1 scenario (a run that fails says why)"></property>`)
}

func TestUncheckedGroupsSkipsByOption(t *testing.T) {
	run := aRunWithAvoidableSkips()
	u := run.Unchecked()
	require.Len(t, u, 2)
	assert.Equal(t, "--failing-prompt", u[0].Flag)
	assert.Len(t, u[0].Scenarios, 1)
	assert.Equal(t, "--other-api-key", u[1].Flag)
	assert.Len(t, u[1].Scenarios, 2)
	assert.Equal(t, "not checked: 3 scenarios skipped for want of an option: --failing-prompt would run 1 scenario (a run that fails says why); "+
		"--other-api-key would run 2 scenarios (one team never sees another team's runs)", run.NotChecked())
	assert.Empty(t, aRun().NotChecked())

	var out bytes.Buffer
	f := report.NewPretty(&out, report.Options{})
	require.NoError(t, f.Close(run))
	assert.Contains(t, out.String(), "\nNot checked: 3 scenarios skipped for want of an option: --failing-prompt would run 1 scenario")
}
