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
	assert.Contains(t, errOut, "reading the base document")
}
