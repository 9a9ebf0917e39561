package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentruns/agentruns/internal/syncbuf"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// asMainEnv makes the test binary act as agentruns-mock itself, so the
// tests can start, signal and kill a real process without building one
// (and with the same build flags, -race included).
const asMainEnv = "AGENTRUNS_MOCK_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// mock is one agentruns-mock, in this process (run) or in a child process.
type mock struct {
	t      *testing.T
	base   string
	stderr *syncbuf.Buffer
	stop   func()     // graceful: cancel the context, or SIGTERM
	done   chan error // run's result, or the process's exit
	cmd    *exec.Cmd  // nil in-process
}

// startRun calls run in this process on a free port.
func startRun(t *testing.T, args ...string) *mock {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m := &mock{t: t, stderr: &syncbuf.Buffer{}, stop: cancel, done: make(chan error, 1)}
	ready := make(chan string, 1)
	go func() {
		m.done <- run(ctx, append([]string{"--addr", "127.0.0.1:0"}, args...), m.stderr, func(addr string) { ready <- addr })
	}()
	// No deadline of its own: a start-up is as slow as the machine is busy,
	// and one that never listens is caught by go test's -timeout.
	select {
	case addr := <-ready:
		m.base = "http://" + addr
	case err := <-m.done:
		t.Fatalf("run: %v\n%s", err, m.stderr)
	}
	t.Cleanup(func() {
		cancel()
		err := <-m.done
		m.done <- err
	})
	return m
}

var listening = regexp.MustCompile(`url=(http://\S+)`)

// self is a command running agentruns-mock: this test binary as main.
func self(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asMainEnv+"=1")
	return cmd
}

// startProcess runs agentruns-mock as a child process on a free port.
func startProcess(t *testing.T, args ...string) *mock {
	t.Helper()
	cmd := self(append([]string{"--addr", "127.0.0.1:0"}, args...)...)
	m := &mock{t: t, stderr: &syncbuf.Buffer{}, done: make(chan error, 1), cmd: cmd}
	cmd.Stderr = m.stderr
	require.NoError(t, cmd.Start())
	m.stop = func() { _ = cmd.Process.Signal(os.Interrupt) }
	go func() { m.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-m.done
	})
	for m.base == "" { // until it listens or exits (go test's -timeout bounds a hang)
		if match := listening.FindStringSubmatch(m.stderr.String()); match != nil {
			m.base = match[1]
			break
		}
		select {
		case err := <-m.done:
			m.done <- err
			t.Fatalf("agentruns-mock exited at start: %v\n%s", err, m.stderr)
		case <-time.After(10 * time.Millisecond):
		}
	}
	return m
}

// wait waits for the mock to end and returns its result. It has no
// deadline of its own, so a busy machine fails nothing: a mock that never
// ends is caught by go test's -timeout.
func (m *mock) wait() error {
	m.t.Helper()
	err := <-m.done
	m.done <- err // for Cleanup
	return err
}

type answer struct {
	status int
	header http.Header
	body   []byte
	err    error
}

// call sends one request; body is sent as JSON when not empty.
func (m *mock) call(method, path, key, body string, headers ...string) answer {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, m.base+path, rd)
	if err != nil {
		return answer{err: err}
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: raw, err: err}
}

// must sends a request that must be answered with want.
func (m *mock) must(want int, method, path, key, body string, headers ...string) []byte {
	m.t.Helper()
	a := m.call(method, path, key, body, headers...)
	require.NoError(m.t, a.err)
	require.Equal(m.t, want, a.status, "%s %s: %s", method, path, a.body)
	return a.body
}

func (m *mock) create(key, body string, headers ...string) string {
	m.t.Helper()
	var out mockserver.RunAgentResponse
	require.NoError(m.t, json.Unmarshal(m.must(200, "POST", "/agent/run", key, body, headers...), &out))
	return out.RunID
}

// runsOf reads every page of a team's runs in a session.
func (m *mock) runsOf(key, session string) []mockserver.RunItem {
	m.t.Helper()
	var all []mockserver.RunItem
	cursor := ""
	for {
		q := "/agent/runs?limit=100"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		var page mockserver.ListRunsResponse
		require.NoError(m.t, json.Unmarshal(m.must(200, "GET", q, key, "", mockserver.SessionHeader, session), &page))
		all = append(all, page.Runs...)
		if !page.PageInfo.HasNextPage {
			return all
		}
		cursor = page.PageInfo.NextCursor
	}
}

// A request in flight when the shutdown starts is answered in full; new
// connections are refused from then on, and run returns cleanly.
func TestGracefulShutdownFinishesRequestsInFlight(t *testing.T) {
	m := startRun(t)
	slow := make(chan answer, 1)
	began := time.Now()
	go func() {
		slow <- m.call("GET", "/agent/runs?limit=3", "wk-mock-alice", "", mockserver.FaultHeader, "delay=1500ms")
	}()
	time.Sleep(300 * time.Millisecond) // the slow request is in the handler by now
	m.stop()
	a := <-slow
	require.NoError(t, a.err, "the request in flight is not cut off")
	assert.Equal(t, http.StatusOK, a.status, "%s", a.body)
	var page mockserver.ListRunsResponse
	require.NoError(t, json.Unmarshal(a.body, &page))
	assert.Len(t, page.Runs, 3)
	assert.GreaterOrEqual(t, time.Since(began), 1500*time.Millisecond)
	require.NoError(t, m.wait())
	assert.Error(t, m.call("GET", "/agent/runs", "wk-mock-alice", "").err, "no new requests after the shutdown")
	assert.Contains(t, m.stderr.String(), "shutting down")
}

// A request still running at --shutdown-timeout is cut off, and the state
// is saved all the same.
func TestShutdownTimeoutCutsOffAndStillSaves(t *testing.T) {
	file := t.TempDir() + "/state.json"
	m := startRun(t, "--shutdown-timeout", "200ms", "--state-file", file, "--clock", "virtual")
	id := m.create("wk-mock-alice", `{"prompt":"kept"}`)
	go m.call("GET", "/agent/runs", "wk-mock-alice", "", mockserver.FaultHeader, "delay=1m")
	time.Sleep(200 * time.Millisecond)
	began := time.Now()
	m.stop()
	require.NoError(t, m.wait())
	assert.Less(t, time.Since(began), 30*time.Second, "cut off, not waited for: the request's delay is a minute")
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Contains(t, string(raw), id)
}

// A client too slow with its headers or body, or one idling on a
// keep-alive connection, cannot hold a connection; an answer that cannot be
// written in time is abandoned. Each timeout is tested alone, with the
// others at their defaults (5s and more), so each must do its own work.
func TestSlowClientsCannotHoldTheServer(t *testing.T) {
	for _, tc := range []struct {
		name, flag string
		write      func(w io.Writer) error
	}{
		{"headers never finished", "--read-header-timeout", func(w io.Writer) error {
			_, err := io.WriteString(w, "GET /agent/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wk-mock-alice\r\n")
			return err
		}},
		{"a body trickled", "--read-timeout", func(w io.Writer) error {
			_, err := io.WriteString(w, "POST /agent/run HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wk-mock-alice\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
			for i := 0; err == nil && i < 3; i++ {
				time.Sleep(100 * time.Millisecond)
				_, err = io.WriteString(w, " ")
			}
			return err
		}},
		{"idle after an answer", "--idle-timeout", func(w io.Writer) error {
			_, err := io.WriteString(w, "GET /openapi.yaml HTTP/1.1\r\nHost: x\r\n\r\n")
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := startRun(t, tc.flag, "400ms")
			conn, err := net.Dial("tcp", strings.TrimPrefix(m.base, "http://"))
			require.NoError(t, err)
			defer conn.Close()
			require.NoError(t, tc.write(conn))
			// Read until the server ends the connection. Our own deadline
			// only keeps a server that never does from hanging the test: it
			// is far beyond the server's 400ms, which no busy machine
			// stretches that far.
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(2*time.Minute)))
			_, err = io.Copy(io.Discard, conn)
			assert.NoError(t, err, "the server, not our deadline, ends the connection")
		})
	}
	t.Run("an answer later than the write timeout", func(t *testing.T) {
		m := startRun(t, "--write-timeout", "400ms")
		a := m.call("GET", "/agent/runs", "wk-mock-alice", "", mockserver.FaultHeader, "delay=1500ms")
		assert.Error(t, a.err, "no late answer: status %d", a.status)
		m.must(200, "GET", "/agent/runs", "wk-mock-alice", "")
	})
}

// --max-inflight caps requests answered at once; the rest get a 429 problem.
// (That a body still arriving holds no place is mockserver's test.)
func TestMaxInFlightFlag(t *testing.T) {
	m := startRun(t, "--max-inflight", "1")
	var busy atomic.Pointer[answer]
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5000 && busy.Load() == nil; i++ {
				if a := m.call("GET", "/agent/runs", "wk-mock-alice", ""); a.status == http.StatusTooManyRequests {
					busy.Store(&a)
				} else if a.err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	a := busy.Load()
	require.NotNil(t, a, "concurrent requests over the cap were refused")
	assert.Equal(t, "application/problem+json", a.header.Get("Content-Type"))
	assert.Equal(t, "1", a.header.Get("Retry-After"))
	require.Eventually(t, func() bool {
		return m.call("GET", "/agent/runs", "wk-mock-alice", "").status == http.StatusOK
	}, 5*time.Second, 20*time.Millisecond, "the place is free again")
}

// The security and capacity flags reach the server.
func TestFlagsReachTheServer(t *testing.T) {
	m := startRun(t, "--max-runs", "1", "--strict-auth", "--control-token", "ctl-token")
	m.create("wk-mock-alice", `{"prompt":"the last one that fits"}`)
	a := m.call("POST", "/agent/run", "wk-mock-alice", `{"prompt":"one too many"}`)
	assert.Equal(t, http.StatusTooManyRequests, a.status, "%s", a.body)
	assert.Equal(t, "false", a.header.Get("X-Should-Retry"))
	m.must(401, "GET", "/agent/runs", "wk-unknown", "")
	m.must(401, "GET", "/__mock/info", "", "")
	m.must(200, "GET", "/__mock/info", "ctl-token", "")

	off := startRun(t, "--no-control")
	off.must(404, "GET", "/__mock/info", "", "")
	off.must(404, "POST", "/__mock/reset", "", "")
	off.must(200, "GET", "/agent/runs", "wk-anyone", "")
}

// Keys and tokens never reach the log the mock writes.
func TestTheLogHoldsNoTokens(t *testing.T) {
	m := startRun(t, "--control-token", "ctl-SECRET-1")
	id := m.create("wk-mock-alice", `{"prompt":"x"}`)
	// An unknown key is a user of the fixture team, Alice's: it sees her run.
	m.must(200, "GET", "/agent/runs/"+id, "wk-SECRET-unknown-2", "")
	m.must(401, "GET", "/agent/runs", "", "", "Authorization", "Basic U0VDUkVULTM6cA==")
	m.must(200, "GET", "/__mock/info", "ctl-SECRET-1", "")
	m.must(401, "GET", "/__mock/info", "SECRET-4", "")
	m.stop()
	require.NoError(t, m.wait())
	out := m.stderr.String()
	require.GreaterOrEqual(t, strings.Count(out, "msg=request"), 5, "requests are logged: %s", out)
	for _, secret := range []string{"wk-mock-alice", "SECRET", "U0VDUkVULTM6cA==", "Bearer", "Basic"} {
		assert.NotContains(t, out, secret)
	}
}

// 12. What net/http refuses before any handler sees the request (oversized
// headers, a request line it cannot parse, an HTTP version it does not
// speak, a transfer coding it does not know) is a problem+json answer too.
func TestServerRefusalsAreProblems(t *testing.T) {
	m := startRun(t, "--quiet")
	for _, tc := range []struct {
		name, raw string
		status    int
	}{
		{"headers too large", "GET /agent/runs HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 80<<10) + "\r\n\r\n", 431},
		{"malformed request line", "GET\r\nHost: x\r\n\r\n", 400},
		{"malformed header", "GET /agent/runs HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n", 400},
		{"unknown HTTP version", "GET /agent/runs HTTP/9.9\r\nHost: x\r\n\r\n", 505},
		{"unknown transfer coding", "POST /agent/run HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(m.base, "http://"))
			require.NoError(t, err)
			defer conn.Close()
			go func() { _, _ = io.WriteString(conn, tc.raw) }()
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err)
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, tc.status, resp.StatusCode, "%s", raw)
			assert.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
			var p mockserver.Problem
			require.NoError(t, json.Unmarshal(raw, &p), "%s", raw)
			assert.Equal(t, tc.status, p.Status)
			assert.True(t, strings.HasPrefix(p.Type, mockserver.ProblemTypeBase), p.Type)
			assert.NotEmpty(t, p.Detail)
			assert.False(t, p.Retryable)
		})
	}
	m.must(200, "GET", "/agent/runs", "wk-mock-alice", "")
}
