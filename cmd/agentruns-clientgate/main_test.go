package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/openapi"
)

func write(t *testing.T, name string, doc []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, doc, 0o644))
	return p
}

func gate(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	status := run(args, &out, &errOut)
	return status, out.String(), errOut.String()
}

func TestTheGateExitsByWhetherAClientVersionBreaks(t *testing.T) {
	base := write(t, "base.yaml", openapi.Document)
	status, out, _ := gate(base, base)
	assert.Equal(t, exitNoneBroken, status)
	assert.Contains(t, out, "no client version breaks")

	noTitle := write(t, "next.yaml", []byte(strings.Replace(string(openapi.Document),
		"required: [run_id, task_id, title, state, prompt, created_at, updated_at]",
		"required: [run_id, task_id, state, prompt, created_at, updated_at]", 1)))
	status, out, _ = gate(base, noTitle)
	assert.Equal(t, exitBroken, status)
	assert.Contains(t, out, "ERROR GET /agent/runs/{runId} [response-property-became-optional]\n")
	assert.Contains(t, out, "    breaks typescript-1.0.0-alpha.8: requires title in GET /agent/runs/{runId}\n")
	assert.Contains(t, out, "client versions broken: python-0.11.0, typescript-1.0.0-alpha.8, typescript-1.4.0-alpha.6\n")
}

func TestTheGateRefusesABadCommandLine(t *testing.T) {
	status, _, errOut := gate("only-one.yaml")
	assert.Equal(t, exitUsage, status)
	assert.Contains(t, errOut, "want two documents, BASE and REVISION; got 1 arguments")
	status, _, errOut = gate("base.yaml", "next.yaml", "--all")
	assert.Equal(t, exitUsage, status)
	assert.Contains(t, errOut, "--all comes after a document: give flags before BASE and REVISION")
	status, _, errOut = gate("missing.yaml", "missing.yaml")
	assert.Equal(t, exitUsage, status)
	assert.Contains(t, errOut, "missing.yaml")
	status, _, errOut = gate("--help")
	assert.Equal(t, exitNoneBroken, status)
	assert.Contains(t, errOut, "python-0.11.0, typescript-1.0.0-alpha.8, typescript-1.4.0-alpha.6")
	bad := write(t, "bad.yaml", []byte("openapi: [not, a, document"))
	status, _, errOut = gate(bad, bad)
	assert.Equal(t, exitUsage, status)
	assert.Contains(t, errOut, "BASE "+bad+": not a readable OpenAPI 3.x document: neither YAML nor JSON")
}

// A gate given what is no document must fail, not pass: with an empty
// BASE it would otherwise find nothing broken for ever.
func TestTheGateRefusesWhatIsNoReadableDocument(t *testing.T) {
	good := write(t, "base.yaml", openapi.Document)
	doc := string(openapi.Document)
	for _, c := range []struct{ name, content, says string }{
		{"empty.yaml", "", "the file is empty"},
		{"drift.json", `{"facts":[],"distinct":0,"dropped":0}`, "a drift report"},
		{"swagger.yaml", "swagger: '2.0'\ninfo: {title: t, version: '1'}\npaths: {}\n", "Swagger 2.0"},
		{"overlay.yaml", "overlay: 1.0.0\ninfo: {title: t, version: '1'}\nactions:\n  - target: $.info\n    update: {x-a: 1}\n", "an overlay"},
		{"v4.yaml", strings.Replace(doc, "openapi: 3.1.0", "openapi: 4.0.0", 1), `OpenAPI "4.0.0"`},
		{"cyclic.yaml", strings.Replace(doc, "    RunItem:\n", "    Loop: {$ref: '#/components/schemas/Loop'}\n    RunItem:\n      $ref: '#/components/schemas/Loop'\n    Unused:\n", 1), "cycle"},
		{"status.yaml", strings.Replace(doc, `"200":`, `"abc":`, 1), "abc"},
		{"noslash.yaml", strings.Replace(doc, "\n  /agent/runs:\n", "\n  agent/runs:\n", 1), "agent/runs"},
	} {
		bad := write(t, c.name, []byte(c.content))
		for i, args := range [][]string{{bad, good}, {good, bad}} {
			status, out, errOut := gate(args...)
			assert.Equal(t, exitUsage, status, "%s as %d: %s%s", c.name, i, out, errOut)
			assert.Contains(t, errOut, []string{"BASE ", "REVISION "}[i]+bad+": not a readable OpenAPI 3.x document: ", c.name)
			assert.Contains(t, errOut, c.says, c.name)
			assert.Empty(t, out, c.name)
		}
	}
}

func TestTheGateReadsABoundedFile(t *testing.T) {
	good := write(t, "base.yaml", openapi.Document)
	status, _, errOut := gate("/dev/zero", good)
	assert.Equal(t, exitUsage, status)
	assert.Contains(t, errOut, "BASE /dev/zero: larger than 64 MiB")
}
