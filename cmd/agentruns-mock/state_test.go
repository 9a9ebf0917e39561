package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentruns/agentruns/internal/syncbuf"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// view is what a mock shows of its sessions: each team's runs, in order and
// in full, and each session's clock.
func (m *mock) view(sessions ...string) map[string]string {
	m.t.Helper()
	out := map[string]string{}
	for _, s := range sessions {
		out[s+" clock"] = string(m.must(200, "GET", "/__mock/clock", "", "", mockserver.SessionHeader, s))
		for _, key := range []string{"wk-mock-alice", "wk-mock-carol", "wk-anyone"} {
			runs, err := json.Marshal(m.runsOf(key, s))
			require.NoError(m.t, err)
			out[s+" "+key] = string(runs)
		}
	}
	return out
}

// Runs made before a SIGTERM are all back after a restart, in the same
// states, with the same messages, configs, creators, teams and order.
func TestStateFileSurvivesARestart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "state.json")
	args := []string{"--state-file", file, "--clock", "virtual", "--quiet"}
	m := startProcess(t, args...)
	for _, s := range []string{"", "job-7"} {
		h := []string{mockserver.SessionHeader, s}
		first := m.create("wk-mock-alice", `{"prompt":"Fix the flaky login test","config":{"name":"flaky","mcp_servers":{"gh":{"url":"https://mcp.example.com"}}}}`, h...)
		m.create("wk-mock-bob", `{"prompt":"team run","team":true}`, h...)
		m.create("wk-mock-carol", `{"skill":"acme/skills:triage"}`, h...)
		m.create("wk-anyone", `{"prompt":"will fail"}`, append(h, mockserver.FateHeader, "state=FAILED; error_code=budget_exceeded; message=Over budget; step=1s")...)
		m.must(200, "POST", "/__mock/clock/advance", "", `{"by":"2500ms"}`, h...)
		cancelled := m.create("wk-mock-alice", `{"prompt":"to cancel"}`, h...)
		m.must(200, "POST", "/agent/runs/"+cancelled+"/cancel", "wk-mock-alice", "", h...)
		m.must(200, "POST", "/__mock/clock/advance", "", `{"by":"3s"}`, h...)
		// The first run has been claimed: its conversation can be continued.
		var run struct {
			ConversationID string `json:"conversation_id"`
		}
		require.NoError(t, json.Unmarshal(m.must(200, "GET", "/agent/runs/"+first, "wk-mock-alice", "", h...), &run))
		require.NotEmpty(t, run.ConversationID)
		m.create("wk-mock-bob", `{"prompt":"carry on","team":true,"conversation_id":"`+run.ConversationID+`"}`, h...)
	}
	m.must(200, "POST", "/__mock/clock/advance", "", `{"by":"1h"}`, mockserver.SessionHeader, "job-7")
	before := m.view("", "job-7")
	require.NoError(t, m.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, m.wait(), "a clean exit:\n%s", m.stderr)
	assert.Contains(t, m.stderr.String(), "state saved")

	again := startProcess(t, args...)
	assert.Contains(t, again.stderr.String(), "state loaded")
	assert.Equal(t, before, again.view("", "job-7"))
	// And time goes on from there, identically for old runs and new.
	again.must(200, "POST", "/__mock/clock/advance", "", `{"by":"30s"}`)
	for _, r := range again.runsOf("wk-anyone", "") {
		if r.Prompt == "will fail" {
			assert.Equal(t, mockserver.Failed, r.State)
			assert.Equal(t, "budget_exceeded", r.StatusMessage.ErrorCode)
		}
	}
}

// SIGKILL at any moment, even mid-write, leaves a file that loads: the old
// one or the new one. Every restart has at least the runs the one before
// it loaded, and only runs that were created.
func TestStateFileSurvivesSIGKILLDuringWrites(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "state.json")
	args := []string{"--state-file", file, "--save-every", "2ms", "--clock", "virtual", "--quiet"}
	var created sync.Map
	known := map[string]bool{}
	fixtureRuns := map[string]bool{} // what the first start, with no file, shows
	rng := rand.New(rand.NewSource(1))
	midWrite := 0
	const rounds = 4
	for round := 0; round < rounds; round++ {
		m := startProcess(t, args...)
		loaded := map[string]bool{}
		for _, key := range []string{"wk-mock-alice", "wk-mock-carol"} {
			for _, r := range m.runsOf(key, "") {
				loaded[r.RunID] = true
			}
		}
		for id := range known {
			assert.True(t, loaded[id], "round %d: run %s, loaded before, is lost", round, id)
		}
		if round == 0 {
			fixtureRuns = loaded
		}
		for id := range loaded {
			_, ok := created.Load(id)
			assert.True(t, ok || fixtureRuns[id], "round %d: run %s was never created", round, id)
		}
		known = loaded
		temps, _ := filepath.Glob(filepath.Join(dir, ".state.json.tmp-*"))
		assert.Empty(t, temps, "round %d: temporary files are cleaned up at start", round)

		// Load it with writes, then kill it without warning.
		var stop atomic.Bool
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				key := []string{"wk-mock-alice", "wk-mock-carol"}[g%2]
				for i := 0; !stop.Load(); i++ {
					a := m.call("POST", "/agent/run", key, fmt.Sprintf(`{"prompt":"round %d writer %d run %d %s"}`, round, g, i, strings.Repeat("x", 200)))
					if a.err != nil {
						return // killed
					}
					var out mockserver.RunAgentResponse
					if json.Unmarshal(a.body, &out) == nil && out.RunID != "" {
						created.Store(out.RunID, true)
					}
				}
			}(g)
		}
		time.Sleep(time.Duration(300+rng.Intn(500)) * time.Millisecond)
		require.NoError(t, m.cmd.Process.Kill())
		_ = m.wait()
		stop.Store(true)
		wg.Wait()
		if temps, _ := filepath.Glob(filepath.Join(dir, ".state.json.tmp-*")); len(temps) > 0 {
			midWrite++
		}
	}
	t.Logf("%d rounds, %d killed in the middle of a write", rounds, midWrite)
	final := startProcess(t, args...)
	n := len(final.runsOf("wk-mock-alice", "")) + len(final.runsOf("wk-mock-carol", ""))
	assert.Greater(t, n, len(known)-1, "the last file loads too")
}

// A state file that exists but cannot be used stops the mock at start with
// a clear error; it is never replaced by an empty store, and never touched.
func TestUnusableStateFileIsAStartupError(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	m := startRun(t, "--state-file", good, "--clock", "virtual")
	m.create("wk-mock-alice", `{"prompt":"x"}`)
	m.stop()
	require.NoError(t, m.wait())
	valid, err := os.ReadFile(good)
	require.NoError(t, err)

	for _, tc := range []struct {
		name, content, want string
	}{
		{"garbage", "\x00\x01 not json", "not a valid agentruns mock state"},
		{"empty", "", "empty"},
		{"truncated", string(valid[:len(valid)/2]), "not a valid agentruns mock state"},
		{"another program's JSON", `{"runs":[]}`, "not a valid agentruns mock state"},
		{"a directory", "", "is a directory"},
		{"in a missing folder", "", "no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.json")
			switch tc.name {
			case "a directory":
				require.NoError(t, os.Mkdir(path, 0o755))
			case "in a missing folder":
				path = filepath.Join(t.TempDir(), "missing", "state.json")
			default:
				require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o600))
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var stderr syncbuf.Buffer
			err := run(ctx, []string{"--addr", "127.0.0.1:0", "--state-file", path}, &stderr, func(string) {
				t.Error("the mock started listening")
				cancel()
			})
			require.Error(t, err)
			assert.Contains(t, err.Error(), path, "the error names the file")
			assert.Contains(t, err.Error(), tc.want)
			if tc.name != "a directory" && tc.name != "in a missing folder" {
				after, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Equal(t, tc.content, string(after), "the file is left as it was")
			}
		})
	}
	// The real binary: exit status 1 and the reason on stderr.
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte("{"), 0o600))
	p := startProcessExpectingExit(t, "--state-file", bad)
	assert.Contains(t, p, "not a valid agentruns mock state")
}

// startProcessExpectingExit runs agentruns-mock, which must fail at start;
// it returns what it wrote.
func startProcessExpectingExit(t *testing.T, args ...string) string {
	t.Helper()
	out, err := self(append([]string{"--addr", "127.0.0.1:0"}, args...)...).CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s", out)
	assert.Equal(t, 1, exit.ExitCode())
	return string(out)
}

// The periodic save writes only when something changed, and then soon.
func TestPeriodicSaveOnlyWhenSomethingChanged(t *testing.T) {
	file := filepath.Join(t.TempDir(), "state.json")
	m := startRun(t, "--state-file", file, "--save-every", "50ms", "--clock", "virtual")
	time.Sleep(300 * time.Millisecond)
	_, err := os.Stat(file)
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing changed, nothing written")

	id := m.create("wk-mock-alice", `{"prompt":"first"}`)
	var first os.FileInfo
	require.Eventually(t, func() bool { first, err = os.Stat(file); return err == nil }, 5*time.Second, 10*time.Millisecond)
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Contains(t, string(raw), id)
	assert.Equal(t, os.FileMode(0o600), first.Mode().Perm(), "the file holds prompts: owner only")

	m.must(200, "GET", "/agent/runs/"+id, "wk-mock-alice", "") // reads change nothing
	time.Sleep(300 * time.Millisecond)
	same, err := os.Stat(file)
	require.NoError(t, err)
	assert.True(t, os.SameFile(first, same), "no rewrite while nothing changes")

	m.must(200, "POST", "/__mock/clock/advance", "", `{"by":"1m"}`)
	require.Eventually(t, func() bool {
		now, err := os.Stat(file)
		return err == nil && !os.SameFile(first, now)
	}, 5*time.Second, 10*time.Millisecond, "a clock move is saved")
}
