package buildfiles

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile("../../" + path)
	require.NoError(t, err)
	return string(data)
}

// makeVar returns the default of a "NAME ?= value" line of the Makefile.
func makeVar(t *testing.T, makefile, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + ` \?= (\S+)$`).FindStringSubmatch(makefile)
	require.NotNil(t, m, "the Makefile sets no %s", name)
	return m[1]
}

// Issue 15, point 7: `make test` fuzzes for a count of inputs, which cannot
// end in "context deadline exceeded" on a busy machine; `make fuzz` stays
// time-bounded.
func TestMakeTestFuzzesACountAndMakeFuzzADuration(t *testing.T) {
	mk := read(t, "Makefile")
	smoke := makeVar(t, mk, "FUZZ_SMOKE_TIME")
	assert.Regexp(t, `^[1-9][0-9]*x$`, smoke, "make test must fuzz a count of inputs")
	long := makeVar(t, mk, "FUZZTIME")
	_, err := time.ParseDuration(long)
	assert.NoError(t, err, "make fuzz must fuzz for a duration, not %q", long)

	readme := read(t, "README.md")
	assert.Contains(t, readme, "`FUZZ_SMOKE_TIME` (default "+smoke+")")
	assert.Contains(t, readme, "`FUZZTIME` (default "+long)

	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make to ask what `make test` runs")
	}
	out, err := exec.Command("make", "-C", "../..", "-n", "fuzz-smoke").CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), "-fuzztime "+smoke)
	assert.NotRegexp(t, `-fuzztime [0-9]+(s|m|h)\b`, string(out))
}

// .ci/run installs what a clean machine lacks for `make test`, xmllint
// included, and runs it as CI.
func TestCIInstallsXmllintAndRunsMakeTest(t *testing.T) {
	ci := read(t, ".ci/run")
	assert.Contains(t, ci, "command -v xmllint")
	assert.Contains(t, ci, "libxml2-utils")
	assert.True(t, strings.HasSuffix(strings.TrimSpace(ci), "CI=true make test"), "make test is what .ci/run runs")
}
