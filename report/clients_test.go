package report_test

import (
	"bytes"
	"testing"

	"github.com/joshdk/go-junit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/internal/junitcheck"
	"github.com/agentruns/agentruns/report"
)

func clientVersions() []report.ClientVersion {
	br := report.ClientBreak{Operation: "GET /agent/runs/{runId}", Field: "state", Expected: "one of QUEUED, SUCCEEDED", Got: `string "ERROR"`}
	return []report.ClientVersion{
		{Name: "python-0.11.0", Checked: 12, Broken: 0},
		{Name: "typescript-1.0.0-alpha.8", Checked: 20, Broken: 3, First: []report.ClientBreak{br}},
		{Name: "typescript-1.4.0-alpha.6", Checked: 15, Broken: 2, First: []report.ClientBreak{br}, Fails: true},
		{Name: "typescript-9.9.9", Checked: 0},
	}
}

// JUnit has a test case per client version: passed when it reads every
// answer, failed when it breaks and the run promised it, skipped (saying
// how many answers break it) when it breaks and the run did not.
func TestJUnitHasATestCasePerClientVersion(t *testing.T) {
	var out bytes.Buffer
	run := aRun()
	run.Clients = clientVersions()
	require.NoError(t, report.NewJUnit(&out, report.Options{}).Close(run))
	junitcheck.Validate(t, out.Bytes())
	_, tests := junitcheck.Totals(t, out.Bytes())
	byName := map[string]junit.Test{}
	for _, tc := range tests {
		if tc.Classname == "client versions" {
			byName[tc.Name] = tc
		}
	}
	require.Len(t, byName, 4)
	assert.Equal(t, junit.StatusPassed, byName["python-0.11.0"].Status)
	assert.Equal(t, junit.StatusSkipped, byName["typescript-1.0.0-alpha.8"].Status)
	assert.Equal(t, "3 of 20 answers break typescript-1.0.0-alpha.8; not a failure unless the suite's run promises this version (agentruns-contract --fail-on-client typescript-1.0.0-alpha.8; the proxy reports, it does not fail on a version)", byName["typescript-1.0.0-alpha.8"].Message)
	assert.Equal(t, junit.StatusFailed, byName["typescript-1.4.0-alpha.6"].Status)
	assert.Equal(t, "2 of 15 answers break typescript-1.4.0-alpha.6", byName["typescript-1.4.0-alpha.6"].Message)
	assert.Contains(t, byName["typescript-1.4.0-alpha.6"].SystemOut, `GET /agent/runs/{runId} state: expected one of QUEUED, SUCCEEDED, got string "ERROR"`)
	assert.Equal(t, junit.StatusSkipped, byName["typescript-9.9.9"].Status)
}

func TestClientTableNamesEachVersionAndItsFirstBreaks(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, report.WriteClientTable(&out, clientVersions()))
	assert.Equal(t, `client version             answers  breaking  verdict
python-0.11.0                   12         0  reads every answer
typescript-1.0.0-alpha.8        20         3  breaks
                          GET /agent/runs/{runId} state: expected one of QUEUED, SUCCEEDED, got string "ERROR"
typescript-1.4.0-alpha.6        15         2  BREAKS (fails the run)
                          GET /agent/runs/{runId} state: expected one of QUEUED, SUCCEEDED, got string "ERROR"
typescript-9.9.9                 0         0  not reached
`, out.String())
}
