package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/drift"
	"github.com/agentruns/agentruns/openapi"
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

// Each file apply cannot read is refused with exit 2 and a message that
// says what it was given, never applied as if it were something else.
func TestApplyRefusesWhatItCannotRead(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	overlay := file("overlay.yaml", "overlay: 1.0.0\ninfo: {title: t, version: '1'}\nactions:\n  - target: $.info\n    update: {x-seen: 1}\n")
	doc := string(openapi.Document)
	for _, c := range []struct {
		name string
		args []string
		says string
	}{
		{"an empty overlay", []string{file("empty.yaml", "")}, "not an overlay: the file is empty"},
		{"a document as the overlay", []string{file("openapi.yaml", doc)}, "an OpenAPI document, not an overlay"},
		{"a drift report as the overlay", []string{file("drift.json", `{"facts":[],"distinct":0,"dropped":0}`)}, "a drift report, not an overlay: the overlay is what --proxy-overlay or GET /__mock/proxy/drift/overlay.yaml writes"},
		{"a profile as the overlay", []string{file("profile.json", `{"operations":{}}`)}, "a traffic profile"},
		{"an overlay removing the document", []string{file("remove.yaml", "overlay: 1.0.0\ninfo: {title: t, version: '1'}\nactions:\n  - target: $\n    remove: true\n")},
			"action 1 removes the whole document (target $)"},
		{"an overlay with no overlay member", []string{file("plain.yaml", "actions: []\n")}, `not an overlay: it has no "overlay" member`},
		{"an endless overlay", []string{"/dev/zero"}, "/dev/zero: larger than 64 MiB"},
		{"an empty document", []string{"--document", file("empty-doc.yaml", ""), overlay}, "not a readable OpenAPI 3.x document: the file is empty"},
		{"an overlay as the document", []string{"--document", overlay, overlay}, "an overlay, not an OpenAPI document"},
		{"a drift report as the document", []string{"--document", file("drift2.json", `{"facts":[]}`), overlay}, "a drift report"},
		{"Swagger 2.0", []string{"--document", file("swagger.yaml", "swagger: '2.0'\ninfo: {title: t, version: '1'}\npaths: {}\n"), overlay}, "Swagger 2.0"},
		{"OpenAPI 4", []string{"--document", file("v4.yaml", strings.Replace(doc, "openapi: 3.1.0", "openapi: 4.0.0", 1)), overlay}, `OpenAPI "4.0.0"`},
		{"cyclic $refs", []string{"--document", file("cyclic.yaml", strings.Replace(doc, "    RunItem:\n",
			"    Loop: {$ref: '#/components/schemas/Loop'}\n    RunItem:\n      $ref: '#/components/schemas/Loop'\n    Unused:\n", 1)), overlay}, "cycle"},
		{"status abc", []string{"--document", file("status.yaml", strings.Replace(doc, `"200":`, `"abc":`, 1)), overlay}, "abc"},
		{"a path without its slash", []string{"--document", file("noslash.yaml", strings.Replace(doc, "\n  /agent/runs:\n", "\n  agent/runs:\n", 1)), overlay}, "agent/runs"},
		{"an endless document", []string{"--document", "/dev/zero", overlay}, "/dev/zero: larger than 64 MiB"},
	} {
		code, out, errOut := runCmd(append([]string{"apply"}, c.args...)...)
		assert.Equal(t, exitUsage, code, c.name)
		assert.Contains(t, errOut, c.says, c.name)
		assert.Empty(t, out, c.name)
	}
}

func TestCompareRefusesWhatItCannotRead(t *testing.T) {
	dir := t.TempDir()
	mock := profileFile(t, "mock", `{"run_id":"a"}`)
	for _, c := range []struct{ name, content, says string }{
		{"empty.json", "", "not a profile: the file is empty"},
		{"list.json", "[]", "not a profile"},
		{"openapi.yaml", string(openapi.Document), "not a profile"},
	} {
		p := filepath.Join(dir, c.name)
		require.NoError(t, os.WriteFile(p, []byte(c.content), 0o644))
		code, _, errOut := runCmd("compare", mock, p)
		assert.Equal(t, exitUsage, code, c.name)
		assert.Contains(t, errOut, c.says, c.name)
	}
	code, _, errOut := runCmd("compare", mock, "/dev/zero")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "/dev/zero: larger than 64 MiB")
}

// Member names and values come from traffic: compare writes them so that
// a terminal shows them rather than acting on them.
func TestCompareWritesNoTerminalEscapes(t *testing.T) {
	mock := profileFile(t, "mock", `{"run_id":"a","state":"SUCCEEDED"}`)
	real := profileFile(t, "real", "{\"run_id\":\"b\",\"state\":\"SUCCEEDED\",\"x\\u001b]0;owned\\u0007\\u001b[2J\\u009b31m\":\"\\u202egnp.exe\\u009b31m\"}")
	code, out, _ := runCmd("compare", mock, real)
	assert.Equal(t, exitDiffers, code)
	assert.Contains(t, out, `body.x\x1b]0;owned\x07\x1b[2J\u009b31m`)
	for _, r := range out {
		assert.False(t, r < 0x20 && r != '\n' || r >= 0x7f && r < 0xa0 || r == '\u202e', "compare wrote %q", r)
	}

	// --json too, where encoding/json escapes only the C0 controls: the
	// same names, C1 controls (U+009B, a one-character CSI), DEL and text
	// reordering written as \u escapes, decoding to what was seen.
	csi := profileFile(t, "csi", "{\"run_id\":\"b\",\"state\":\"SUCCEEDED\",\"x\\u009b2J\\u007f\\u0085\\u2066y\":\"\\u202egnp.exe\\u009b31m\"}")
	code, out, _ = runCmd("compare", "--json", mock, csi)
	assert.Equal(t, exitDiffers, code)
	assert.Contains(t, out, `body.x\u009b2J\u007f\u0085\u2066y`)
	for _, r := range out {
		assert.False(t, r < 0x20 && r != '\n' || r >= 0x7f && r < 0xa0 || r == '\u202e' || r == '\u2066', "compare --json wrote %q", r)
	}
	var got struct {
		Differences []drift.Difference `json:"differences"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	var locations []string
	for _, d := range got.Differences {
		locations = append(locations, d.Location)
	}
	assert.Contains(t, locations, "body.x\u009b2J\u007f\u0085\u2066y", "the escapes are JSON's: the names read back as seen")
}
