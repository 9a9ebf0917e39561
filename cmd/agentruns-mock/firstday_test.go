package main

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/internal/syncbuf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixtureDir is a folder holding the embedded fixtures with runs.json
// edited by edit.
func fixtureDir(t *testing.T, edit func(runs string) string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"principals.json", "runs.json", "fates.json"} {
		b, err := fs.ReadFile(fixtures.Embedded(), name)
		require.NoError(t, err)
		if name == "runs.json" {
			b = []byte(edit(string(b)))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o600))
	}
	return dir
}

// startErr runs the mock with args and returns why it refused to start:
// the error, or what flag printed for a wrong command line.
func startErr(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncbuf.Buffer
	err := run(ctx, append([]string{"--addr", "127.0.0.1:0"}, args...), &stderr, func(string) {
		t.Error("the mock started listening")
		cancel()
	})
	require.Error(t, err)
	if err == errUsage {
		return stderr.String()
	}
	return err.Error()
}

// Edited fixtures are checked at start as the API's answers are: against
// the OpenAPI document's schemas, with unknown fields refused, the file and
// the run named.
func TestEditedFixturesAreCheckedAtStart(t *testing.T) {
	const alice = `"run_id": "f29d0da9-953f-48f1-a09f-76b5a170b338"`
	for _, tc := range []struct {
		name, from, to string
		want           []string
	}{
		{"a state the API does not have", `"state": "SUCCEEDED"`, `"state": "DONE"`, []string{"runs.json", "f29d0da9-953f-48f1-a09f-76b5a170b338", "body.state"}},
		{"a misspelt run field", alice, alice + `, "modle_id": "gpt-5"`, []string{"runs.json", "run 1", "f29d0da9-953f-48f1-a09f-76b5a170b338", `unknown field "modle_id"`}},
		{"a misspelt agent_config field", `"model_id": "auto",`, `"modle_id": "auto",`, []string{"runs.json", "f29d0da9-953f-48f1-a09f-76b5a170b338", "agent_config", `unknown field "modle_id"`}},
		{"a bad duration", `"created_ago": "10020m"`, `"created_ago": "a week"`, []string{"runs.json", "f29d0da9-953f-48f1-a09f-76b5a170b338", `"a week"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := fixtureDir(t, func(runs string) string {
				require.Contains(t, runs, tc.from)
				return strings.Replace(runs, tc.from, tc.to, 1)
			})
			msg := startErr(t, "--fixtures", dir)
			for _, w := range append(tc.want, dir) {
				assert.Contains(t, msg, w)
			}
		})
	}
	// Unchanged, they load.
	m := startRun(t, "--fixtures", fixtureDir(t, func(s string) string { return s }))
	m.must(200, "GET", "/agent/runs/f29d0da9-953f-48f1-a09f-76b5a170b338", "wk-mock-alice", "")
}

func TestAMissingFixturesFolderIsNamed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "no-such-folder")
	msg := startErr(t, "--fixtures", dir)
	assert.Contains(t, msg, "--fixtures "+dir+": no such folder")
}

// --max-runs cannot be negative.
func TestNegativeMaxRunsIsRefused(t *testing.T) {
	assert.Contains(t, startErr(t, "--max-runs", "-1"), "flag --max-runs: want a whole number, 0 or more")
}

// --help prints the flags and exits 0.
func TestHelpExitsZero(t *testing.T) {
	out, err := self("--help").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "-max-runs")
	assert.NotContains(t, string(out), "agentruns-mock: flag: help requested")
	var exit *exec.ExitError
	assert.NotErrorAs(t, err, &exit)
}

// "listening" is news, not a warning, and --quiet does not hide it.
func TestListeningIsLoggedAtInfo(t *testing.T) {
	for _, args := range [][]string{nil, {"--quiet"}} {
		m := startRun(t, args...)
		line := ""
		for _, l := range strings.Split(m.stderr.String(), "\n") {
			if strings.Contains(l, "listening") {
				line = l
			}
		}
		assert.Contains(t, line, "level=INFO", "%v: %s", args, m.stderr)
	}
}

// The start-up line gives the dashboard's address and says whether the
// control API is open to anyone who can reach the port.
func TestStartUpLineShowsTheDashboardAndTheControlAPI(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		control, board string
	}{
		{nil, "control=open", `dashboard=http://127\.0\.0\.1:\d+/__mock/ui/`},
		{[]string{"--control-token", "T"}, "control=token", `dashboard=http://127\.0\.0\.1:\d+/__mock/ui/`},
		{[]string{"--no-control"}, "control=off", `dashboard="off \(--no-control\)"`},
	} {
		m := startRun(t, tc.args...)
		line := ""
		for _, l := range strings.Split(m.stderr.String(), "\n") {
			if strings.Contains(l, "listening") {
				line = l
			}
		}
		assert.Contains(t, line, tc.control, "%v", tc.args)
		assert.Regexp(t, tc.board, line, "%v", tc.args)
	}
}

// The mock's flags are checked as the contract runner's are: each wrong
// value named with the form expected, negative durations and sizes and
// conflicting flags refused, all with exit status 2 and a one-line hint
// rather than the whole usage.
func TestWrongFlagsSayWhatIsExpected(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--step", "5"}, "a duration with its unit, such as 2s"},
		{[]string{"--step", "-1s"}, "a duration of 0 or more"},
		{[]string{"--queued", "2562047h"}, "at most 8760h"},
		{[]string{"--link-lifetime", "200h"}, "at most 168h"},
		{[]string{"--body-timeout", "-3s"}, "a duration of 0 or more"},
		{[]string{"--shutdown-timeout", "-1s"}, "a duration of 0 or more"},
		{[]string{"--max-body", "-5"}, "a number of bytes, 1 or more"},
		{[]string{"--max-inflight", "many"}, "a whole number, 0 or more"},
		{[]string{"--max-runs", "-1"}, "a whole number, 0 or more"},
		{[]string{"--clock", "wall"}, "want real or virtual"},
		{[]string{"--quiet=maybe"}, "--quiet: want true or false"},
		{[]string{"--no-control", "--control-token", "t"}, "give one or the other"},
		{[]string{"--save-every", "1s"}, "--state-file, which is not given"},
		{[]string{"stray"}, "unexpected arguments: stray"},
		{[]string{"--proxy", "http://127.0.0.1:1", "--clock", "virtual"}, "--clock"},
		{[]string{"--addr", "nonsense"}, "--addr \"nonsense\": want host:port"},
		{[]string{"--addr", ":99999"}, "want a port from 0 to 65535"},
		{[]string{"--healthcheck", "nonsense"}, "want the URL of a running server"},
		{[]string{"--proxy", "http://127.0.0.1:1", "--proxy-document", "nowhere.yaml"}, "want served, published, newest"},
	} {
		out, err := self(c.args...).CombinedOutput()
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "%v: %s", c.args, out)
		assert.Equal(t, 2, exit.ExitCode(), "%v: %s", c.args, out)
		assert.Contains(t, string(out), c.want, c.args)
		assert.NotContains(t, string(out), "-idle-timeout", "%v: not the whole usage", c.args)
		assert.Less(t, strings.Count(string(out), "\n"), 4, "%v: %s", c.args, out)
		assert.True(t, strings.HasSuffix(string(out), usageHint+"\n"), "%v: ends with the hint docs/mock-flags.md promises: %s", c.args, out)
	}
}

// --help starts by saying what the command is, then its exit statuses.
func TestHelpDescribesTheCommand(t *testing.T) {
	out, err := self("--help").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.True(t, strings.HasPrefix(string(out), "Usage: agentruns-mock [flags]\n       agentruns-mock proxy URL [flags]   (the same as --proxy URL)\n\nServes a stateful mock"), "%s", out)
	assert.Contains(t, string(out), "2 the command line is wrong")
	assert.NotContains(t, string(out), "Usage of agentruns-mock")
}
