package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/drift"
)

// profileFile writes a profile of one answer of GET /agent/runs/{runId}.
func profileFile(t *testing.T, name, body string) string {
	t.Helper()
	d, err := drift.Embedded()
	require.NoError(t, err)
	p := drift.NewProfile()
	d.Look(drift.Exchange{Method: "GET", Path: "/agent/runs/r1", Status: 200, ContentType: "application/json", Body: []byte(body)}, p.Add)
	b, err := json.Marshal(p.Data())
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), name+".json")
	require.NoError(t, os.WriteFile(file, b, 0o644))
	return file
}

func runCmd(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestCompareExitsOneAndListsTheDifferences(t *testing.T) {
	mock := profileFile(t, "mock", `{"run_id":"a","state":"SUCCEEDED","title":"x"}`)
	real := profileFile(t, "real", `{"run_id":"b","state":"FAILED","title":"y","session_link":"https://example.com/s"}`)
	code, out, _ := runCmd("compare", mock, real)
	assert.Equal(t, exitDiffers, code)
	assert.Contains(t, out, "2 difference(s) between mock")
	assert.Regexp(t, `GET /agent/runs/\{runId\}\s+200\s+field\s+body.session_link\s+—\s+string`, out)
	assert.Regexp(t, `value\s+body.state\s+"SUCCEEDED"\s+"FAILED"`, out)
	assert.NotContains(t, out, "run_id", "ids differ by nature")

	code, out, _ = runCmd("compare", "--json", "--names", "m,r", mock, real)
	assert.Equal(t, exitDiffers, code)
	var got struct {
		Left, Right struct{ Name, File string }
		Differences []drift.Difference
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Len(t, got.Differences, 2)
	assert.Equal(t, "m", got.Left.Name, "the JSON says which side is which")
	assert.Equal(t, real, got.Right.File)

	same := profileFile(t, "again", `{"run_id":"c","state":"SUCCEEDED","title":"z"}`)
	code, out, _ = runCmd("compare", mock, same)
	assert.Equal(t, exitSame, code)
	assert.Contains(t, out, "answered the same traffic alike")
}

func TestCompareRefusesWhatIsNoProfile(t *testing.T) {
	notProfile := filepath.Join(t.TempDir(), "drift.json")
	require.NoError(t, os.WriteFile(notProfile, []byte(`{"facts":[],"distinct":0,"dropped":0}`), 0o644))
	mock := profileFile(t, "mock", `{"run_id":"a"}`)
	code, _, errOut := runCmd("compare", mock, notProfile)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "not a profile")
	code, _, errOut = runCmd("compare", mock)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "two profiles")
	code, _, errOut = runCmd("compare", "--names", "one", mock, mock)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--names")
	code, _, _ = runCmd("nothing")
	assert.Equal(t, exitUsage, code)
}

func TestApplyWritesTheDocumentTheOverlayMakes(t *testing.T) {
	dir := t.TempDir()
	ov := filepath.Join(dir, "overlay.yaml")
	require.NoError(t, os.WriteFile(ov, []byte(`overlay: 1.0.0
info: {title: t, version: "1"}
actions:
  - target: $['components']['schemas']['RunItem']
    update:
      properties:
        rollout_ring: {type: string}
`), 0o644))
	out := filepath.Join(dir, "openapi.yaml")
	code, _, errOut := runCmd("apply", "--out", out, ov)
	require.Equal(t, exitSame, code, errOut)
	doc, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(doc), "rollout_ring")

	require.NoError(t, os.WriteFile(ov, []byte(`overlay: 1.0.0
info: {title: t, version: "1"}
actions:
  - target: $['components']['schemas']['Nothing']
    update: {description: x}
`), 0o644))
	code, _, errOut = runCmd("apply", ov)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "matched zero nodes")
}
