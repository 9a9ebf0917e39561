package buildfiles

import (
	"os"
	"os/exec"
	"path/filepath"
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

	readme := read(t, "docs/mock-flags.md")
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

// .ci/run installs what a clean machine lacks for `make test`, xmllint,
// podman and haproxy included, and runs it as CI, then the image's test
// (which make test leaves out for its time).
func TestCIInstallsXmllintAndRunsMakeTest(t *testing.T) {
	ci := read(t, ".ci/run")
	for _, tool := range []string{"xmllint", "podman", "haproxy"} {
		assert.Contains(t, ci, "command -v "+tool)
	}
	assert.Contains(t, ci, "libxml2-utils")
	assert.True(t, strings.HasSuffix(strings.TrimSpace(ci), ciCommands), "make test, then make test-image, is what .ci/run runs")
}

// ciCommands end .ci/run: the README's test command, then the image's test.
const ciCommands = "CI=true make test\nCI=true make test-image"

// Issue 34, point 10: the README's "Two commands" are two: one builds and
// runs the suite against the bundled mock, one runs every test; both are
// targets of the Makefile, and the second is what CI runs.
func TestTheReadmeGivesTwoCommands(t *testing.T) {
	readme := read(t, "README.md")
	_, section, ok := strings.Cut(readme, "## Two commands\n")
	require.True(t, ok, "the README has no \"Two commands\" section")
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, _ := strings.Cut(section, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	var commands []string
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		commands = append(commands, strings.TrimSpace(cmd))
	}
	require.Equal(t, []string{"make contract", "make test"}, commands)

	mk := read(t, "Makefile")
	assert.Regexp(t, `(?m)^contract: build\n\tbin/agentruns-contract$`, mk, "make contract builds, then runs the suite on the bundled mock")
	assert.Regexp(t, `(?m)^test: `, mk)
	assert.True(t, strings.HasSuffix(strings.TrimSpace(read(t, ".ci/run")), ciCommands))
}

// docs/testing-your-client.md quotes the curl script that
// clients/typescript/test runs, line for line, so the page stays true.
func TestTheClientPageQuotesTheCurlScriptTheTestsRun(t *testing.T) {
	page := read(t, "docs/testing-your-client.md")
	script := read(t, "clients/typescript/test/readme-curl.sh")
	n := 0
	for _, line := range strings.Split(script, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "# The curl example") ||
			strings.HasPrefix(line, "# very file") || strings.HasPrefix(line, "# internal/buildfiles") {
			continue
		}
		assert.Contains(t, page, line+"\n", "the page does not quote this line of readme-curl.sh")
		n++
	}
	assert.Greater(t, n, 10)
	for _, name := range []string{"clients/typescript/test/retries.test.js", "ExampleSession_AddFault", "mockserver/example_test.go"} {
		assert.Contains(t, page, name)
	}
}

// Every docs page the README links exists, and every page in docs/ is
// linked from the README.
func TestTheReadmeLinksEveryDocsPage(t *testing.T) {
	readme := read(t, "README.md")
	pages, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	require.NotEmpty(t, pages)
	for _, p := range pages {
		assert.Contains(t, readme, "](docs/"+filepath.Base(p), "README does not link %s", filepath.Base(p))
	}
	for _, m := range regexp.MustCompile(`\]\((docs/[a-z0-9-]+\.md)`).FindAllStringSubmatch(readme, -1) {
		_, err := os.Stat("../../" + m[1])
		assert.NoError(t, err, "README links %s", m[1])
	}
}
