package deploy_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Three replicas of the mock behind HAProxy, configured by the shipped
// deploy/haproxy.cfg, all on loopback. The contract suite runs through the
// balancer (four scenarios at once, each in a mock session of its own, so
// the sessions spread over the replicas), then one replica is stopped
// (SIGTERM: it saves its state file) and started again, and the suite runs
// once more. Both runs must pass, and every run created before the restart
// must be found afterwards through the balancer, in its own session.
func TestReplicasBehindHAProxyKeepTheirSessionsAcrossARestart(t *testing.T) {
	needTool(t, "haproxy", "the replicas cannot be balanced here")
	if testing.Short() {
		t.Skip("runs the contract suite twice through three processes; not in -short")
	}
	dir := t.TempDir()
	bin := buildCommands(t, dir)

	replicas := make([]*replica, 3)
	env := os.Environ()
	for i := range replicas {
		replicas[i] = &replica{bin: filepath.Join(bin, "agentruns-mock"), addr: freeAddr(t), state: filepath.Join(dir, fmt.Sprintf("mock%d.json", i+1))}
		replicas[i].start(t)
		env = append(env, fmt.Sprintf("AGENTRUNS_MOCK%d=%s", i+1, replicas[i].addr))
	}
	base := startBalancer(t, env)

	contract := filepath.Join(bin, "agentruns-contract")
	suite := func(name string) {
		out, err := exec.Command(contract, "--base-url", base, "--api-key", "wk-mock-alice", "--other-api-key", "wk-mock-carol",
			"--failing-prompt", "Contract suite run that fails: [mock:fail]", "--identity-plan", "3",
			"--concurrency", "4", "--format", "progress").CombinedOutput()
		require.NoError(t, err, "the %s run of the suite through the balancer:\n%s", name, out)
	}
	suite("first")

	// Runs in several sessions, by two teams, through the balancer.
	type made struct{ session, key, id string }
	var runs []made
	for s := range 8 {
		session := fmt.Sprintf("team-ci-%d", s)
		for _, key := range []string{"wk-mock-alice", "wk-mock-carol"} {
			var created struct {
				RunID string `json:"run_id"`
			}
			body := call(t, http.MethodPost, base+"/agent/run", session, key, `{"prompt":"kept across a restart"}`, http.StatusOK)
			require.NoError(t, json.Unmarshal(body, &created))
			runs = append(runs, made{session, key, created.RunID})
		}
	}
	// Each session lives on exactly one replica.
	home := map[string]*replica{}
	for _, r := range runs {
		var on []*replica
		for _, rep := range replicas {
			if status("http://"+rep.addr+"/agent/runs/"+r.id, r.session, r.key) == http.StatusOK {
				on = append(on, rep)
			}
		}
		require.Len(t, on, 1, "session %s on one replica", r.session)
		home[r.session] = on[0]
	}
	spread := map[*replica]bool{}
	for _, rep := range home {
		spread[rep] = true
	}
	assert.Greater(t, len(spread), 1, "the sessions spread over the replicas")
	// The control API and the dashboard, through the balancer, for a session.
	info := call(t, http.MethodGet, base+"/__mock/info", runs[0].session, "", "", http.StatusOK)
	assert.Contains(t, string(info), `"session":"`+runs[0].session+`"`)
	journal := call(t, http.MethodGet, base+"/__mock/requests", runs[0].session, "", "", http.StatusOK)
	assert.Contains(t, string(journal), "/agent/run", "the session's journal shows its create")
	page := call(t, http.MethodGet, base+"/__mock/ui/", "", "", "", http.StatusOK)
	assert.Contains(t, string(page), "<html")

	// One replica stops, its state saved; its sessions fail meanwhile.
	down := home[runs[0].session]
	down.stop(t)
	// It fails as the mock answers a brief outage (the document's
	// ServiceUnavailable), not with HAProxy's HTML page, which the contract
	// would reject.
	resp, err := request(http.MethodGet, base+"/agent/runs/"+runs[0].id, runs[0].session, runs[0].key, "")
	require.NoError(t, err)
	outage, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "a session of a stopped replica fails until it is back")
	assert.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"), "%s", outage)
	assert.NotEmpty(t, resp.Header.Get("Retry-After"), "the 503 says when to retry")
	var problem struct {
		Type, Title, Error string
		Status             int
	}
	require.NoError(t, json.Unmarshal(outage, &problem), "%s", outage)
	assert.Equal(t, 503, problem.Status)
	assert.True(t, problem.Type != "" && problem.Title != "" && problem.Error != "", "the members the document requires: %s", outage)
	down.start(t)

	suite("second")
	for _, r := range runs {
		assert.Equal(t, http.StatusOK, status(base+"/agent/runs/"+r.id, r.session, r.key),
			"run %s of session %s (replica %s) after the restart", r.id, r.session, home[r.session].addr)
	}
	restarted := 0
	for _, r := range runs {
		if home[r.session] == down {
			restarted++
		}
	}
	assert.Positive(t, restarted, "the restarted replica held runs")
}

// startBalancer starts HAProxy with the shipped haproxy.cfg, the replicas'
// addresses in env, and returns its base URL once it answers.
func startBalancer(t *testing.T, env []string) string {
	t.Helper()
	balancer := freeAddr(t)
	lb := exec.Command("haproxy", "-db", "-f", "haproxy.cfg")
	lb.Env = append(env, "AGENTRUNS_BIND="+balancer)
	var lbLog bytes.Buffer
	lb.Stdout, lb.Stderr = &lbLog, &lbLog
	require.NoError(t, lb.Start())
	exited := make(chan struct{})
	go func() { _ = lb.Wait(); close(exited) }()
	t.Cleanup(func() { _ = lb.Process.Kill(); <-exited })
	base := "http://" + balancer
	require.True(t, eventually(func() bool {
		select {
		case <-exited:
			return true
		default:
			return status(base+"/openapi.yaml", "", "") == http.StatusOK
		}
	}), "haproxy never answered")
	select {
	case <-exited:
		require.FailNow(t, "haproxy exited", lbLog.String())
	default:
	}
	return base
}

// buildCommands compiles the two commands into dir/bin.
func buildCommands(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "bin")
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(goCmd, "build", "-o", bin+string(filepath.Separator), "../cmd/agentruns-mock", "../cmd/agentruns-contract").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// replica is one mock process with its own state file, on a fixed address
// so that it comes back where the balancer expects it.
type replica struct {
	bin, addr, state string
	cmd              *exec.Cmd
}

func (r *replica) start(t *testing.T) {
	t.Helper()
	r.cmd = exec.Command(r.bin, "--addr", r.addr, "--state-file", r.state, "--quiet")
	log, err := r.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, r.cmd.Start())
	cmd := r.cmd
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitListening(t, log)
}

// stop sends SIGTERM and waits for the process to end, its state saved.
func (r *replica) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, r.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, r.cmd.Wait(), "the replica on %s stopped with an error", r.addr)
}

// waitListening reads a mock's log until it says it listens; the rest is
// drained.
func waitListening(t *testing.T, log io.Reader) {
	t.Helper()
	sc := bufio.NewScanner(log)
	var seen bytes.Buffer
	for sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "listening") {
			go func() { _, _ = io.Copy(io.Discard, log) }()
			return
		}
	}
	require.FailNow(t, "the mock exited before it listened", seen.String())
}

// freeAddr is a loopback address no one listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

var client = &http.Client{Timeout: time.Minute}

func request(method, url, session, key, body string) (*http.Response, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	if session != "" {
		req.Header.Set("X-Mock-Session", session)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return client.Do(req)
}

// status is the status a GET answers, 0 when it could not be asked.
func status(url, session, key string) int {
	resp, err := request(http.MethodGet, url, session, key, "")
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// call makes a request that must answer want, and returns its body.
func call(t *testing.T, method, url, session, key, body string, want int) []byte {
	t.Helper()
	resp, err := request(method, url, session, key, body)
	require.NoError(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, want, resp.StatusCode, "%s %s: %s", method, url, got)
	return got
}

// eventually retries probe until it is true, for at most two minutes: a
// wait for a condition that a working process meets in milliseconds.
func eventually(probe func() bool) bool {
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); runtime.Gosched() {
		if probe() {
			return true
		}
	}
	return false
}

// The balancer reads the routing headers as the mock does: a session or
// an API key given twice is refused by both with the same problem (which
// of two to read is a choice each would make its own way), an API key
// lands on one replica however its scheme is spelled or spaced, and a
// request HAProxy itself cannot read is refused with a problem, not its
// HTML page.
func TestTheBalancerReadsTheRoutingHeadersAsTheMockDoes(t *testing.T) {
	needTool(t, "haproxy", "the replicas cannot be balanced here")
	dir := t.TempDir()
	bin := buildCommands(t, dir)
	env := os.Environ()
	for i := range 3 {
		r := &replica{bin: filepath.Join(bin, "agentruns-mock"), addr: freeAddr(t), state: filepath.Join(dir, fmt.Sprintf("mock%d.json", i+1))}
		r.start(t)
		env = append(env, fmt.Sprintf("AGENTRUNS_MOCK%d=%s", i+1, r.addr))
	}
	base := startBalancer(t, env)

	// send makes a request with the headers given, in pairs, each added
	// (so a name may come twice), and returns its status and problem.
	send := func(method, path, body string, headers ...string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		require.NoError(t, err)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Add(headers[i], headers[i+1])
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		var got map[string]any
		if resp.StatusCode >= 400 {
			assert.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"), "%s %s: %s", method, path, raw)
			require.NoError(t, json.Unmarshal(raw, &got), "%s", raw)
		} else {
			require.NoError(t, json.Unmarshal(raw, &got), "%s", raw)
		}
		return resp.StatusCode, got
	}

	for _, twice := range [][]string{
		{"Authorization", "Bearer wk-mock-alice", "X-Mock-Session", "s1", "X-Mock-Session", "s2"},
		{"Authorization", "Bearer wk-mock-alice", "Authorization", "Bearer wk-mock-carol"},
	} {
		code, p := send("GET", "/agent/runs", "", twice...)
		assert.Equal(t, http.StatusBadRequest, code)
		assert.Equal(t, "header "+twice[len(twice)-2]+" appears 2 times: send it once", p["detail"], "the balancer answers as the mock would")
		assert.Equal(t, "https://docs.warp.dev/reference/api-and-sdk/troubleshooting/errors/invalid_request", p["type"])
	}

	// Runs made without a session, each by its own key: found again with
	// the key spelled otherwise, so on the replica that made it.
	for i := range 6 {
		key := fmt.Sprintf("wk-routing-%d", i)
		code, run := send("POST", "/agent/runs", `{"prompt":"Which replica am I on?"}`, "Authorization", "Bearer "+key)
		require.Equal(t, http.StatusOK, code, "%v", run)
		for _, spelled := range []string{"bearer " + key, "BEARER   " + key, "Bearer \t " + key} {
			code, got := send("GET", "/agent/runs/"+run["run_id"].(string), "", "Authorization", spelled)
			assert.Equal(t, http.StatusOK, code, "%q: %v", spelled, got)
		}
	}

	// Headers over what the mock reads reach it, and it answers 431 with
	// a problem; as many header lines as fit reach it too, and are served.
	huge := []string{"Authorization", "Bearer wk-mock-alice", "X-Padding", strings.Repeat("a", 100<<10)}
	code, p := send("GET", "/agent/runs", "", huge...)
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, code, "100 KiB of headers")
	assert.Contains(t, p["detail"], "the request's headers are larger than the mock accepts")
	many := []string{"Authorization", "Bearer wk-mock-alice"}
	for i := range 1000 {
		many = append(many, fmt.Sprintf("X-Padding-%d", i), "a")
	}
	code, p = send("GET", "/agent/runs", "", many...)
	assert.Equal(t, http.StatusOK, code, "1,000 headers: %v", p)
}
