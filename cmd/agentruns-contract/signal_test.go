package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver"
)

// mainEnv makes the test binary run main() instead of the tests, so a test
// can run the command as a process and signal it.
const mainEnv = "AGENTRUNS_CONTRACT_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Issue 15, point 6: Ctrl-C (SIGINT) stops the suite, cancels the runs it
// started, reports the scenarios as interrupted, not failed, and exits
// non-zero.
func TestCtrlCCancelsTheRunsAndExitsInterrupted(t *testing.T) {
	var (
		mu      sync.Mutex
		ids     []string
		polled  = make(chan struct{})
		onePoll sync.Once
	)
	// Runs never move on their own: only a cancel ends them.
	srv := newMock(t, mockserver.Options{Step: time.Hour}, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			if r.Method == http.MethodPost && (r.URL.Path == "/agent/run" || r.URL.Path == "/agent/runs") && rec.Code == http.StatusOK {
				var created struct {
					RunID string `json:"run_id"`
				}
				if json.Unmarshal(rec.Body.Bytes(), &created) == nil {
					mu.Lock()
					ids = append(ids, created.RunID)
					mu.Unlock()
				}
			}
			for k, vs := range rec.Header() {
				w.Header()[k] = vs
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
			if rest, ok := strings.CutPrefix(r.URL.Path, "/agent/runs/"); ok && r.Method == http.MethodGet && !strings.Contains(rest, "/") {
				onePoll.Do(func() { close(polled) })
			}
		})
	})

	cmd := exec.Command(os.Args[0], "--base-url", srv.URL, "--api-key", "wk-mock-alice", "--no-control",
		"--concurrency", "1", "--tags", "@creates-runs and not @mock-control", "--format", "progress")
	cmd.Env = append(os.Environ(), mainEnv+"=1", "OZ_API_BASE_URL=", "WARP_API_KEY=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	select {
	case <-polled: // a scenario is watching a run it created
	case err := <-exited:
		t.Fatalf("the suite ended before it was interrupted: %v\n%s\n%s", err, stdout.String(), stderr.String())
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("no run was ever watched\n%s", stderr.String())
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	var err error
	select {
	case err = <-exited:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("the suite did not stop on SIGINT\n%s", stderr.String())
	}
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "want a non-zero exit, got %v\n%s", err, stderr.String())
	assert.Equal(t, 130, exit.ExitCode(), stderr.String())
	assert.Contains(t, stderr.String(), "interrupted")
	assert.Contains(t, stderr.String(), " 0 failed", stderr.String())
	assert.NotContains(t, stderr.String(), "FAILED", stderr.String())

	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, ids)
	for _, id := range ids {
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/agent/runs/"+id, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer wk-mock-alice")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var run struct {
			State string `json:"state"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&run))
		resp.Body.Close()
		assert.Equal(t, "CANCELLED", run.State, "run %s was left running", id)
	}
}
