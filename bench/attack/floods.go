package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The floods of the newer resources (messages, the event log, the request
// journal, schedules). Each runs against a mock of its own, started for it,
// and prints the mock's memory before and after, so a figure measured on
// one build can be compared with the same figure on another.

const floodAddr = "127.0.0.1:4691"

var floodNames = []string{"journal", "messages", "events", "schedules", "trickle"}

var floods = map[string]func(m *floodMock){
	"journal":   journalFlood,
	"messages":  messagesFlood,
	"events":    eventsFlood,
	"schedules": schedulesFlood,
	"trickle":   trickleFlood,
}

// floodMock is one started mock and the client the floods use. The mock
// keeps its state in a file of its own, saved only when it stops, so a
// flood can measure what a restart costs.
type floodMock struct {
	bin, state string
	cmd        *exec.Cmd
	pid        int
	began      time.Time
	cpu0       time.Duration
}

func runFlood(bin, name string, flood func(*floodMock)) {
	dir, err := os.MkdirTemp("", "attack-flood-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	m := &floodMock{bin: bin, state: filepath.Join(dir, "state.json")}
	m.start()
	defer m.kill()
	m.report(name+": idle", "")
	flood(m)
}

func (m *floodMock) start() {
	m.cmd = exec.Command(m.bin, "--addr", floodAddr, "--quiet", "--strict-auth", "--control-token", "ctl",
		"--state-file", m.state, "--save-every", "0")
	if err := m.cmd.Start(); err != nil {
		panic(err)
	}
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", floodAddr); err == nil {
			c.Close()
			break
		}
		if i > 600 {
			panic("the mock did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
	m.pid, m.began, m.cpu0 = m.cmd.Process.Pid, time.Now(), cpuTime(m.cmd.Process.Pid)
}

func (m *floodMock) kill() { _ = m.cmd.Process.Kill(); _ = m.cmd.Wait() }

// restart stops the mock as an operator would (SIGTERM: it saves), starts
// it again on the saved file, and says how large the file was and how long
// the save and the load took.
func (m *floodMock) restart() string {
	t0 := time.Now()
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	_ = m.cmd.Wait()
	stopped := time.Since(t0)
	var size int64
	if fi, err := os.Stat(m.state); err == nil {
		size = fi.Size()
	}
	t0 = time.Now()
	m.start()
	return fmt.Sprintf("state file %.1f MiB; stop and save %v, start and load %v", float64(size)/(1<<20),
		stopped.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))
}

func (m *floodMock) report(name, extra string) {
	rss, hwm := mem(m.pid)
	fmt.Printf("%-58s rss %4d MB  peak %4d MB  cpu %6.2fs  wall %6.2fs  %s\n", name, rss>>10, hwm>>10,
		(cpuTime(m.pid) - m.cpu0).Seconds(), time.Since(m.began).Seconds(), extra)
}

var floodClient = &http.Client{Timeout: 2 * time.Minute}

// do sends one request as Alice (or with the control token, for /__mock/)
// in session, and returns the status and body.
func (m *floodMock) do(method, path, session, body string) (int, []byte) {
	req, _ := http.NewRequest(method, "http://"+floodAddr+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	auth := "Bearer wk-mock-alice"
	if strings.HasPrefix(path, "/__mock/") {
		auth = "Bearer ctl"
	}
	req.Header.Set("Authorization", auth)
	if session != "" {
		req.Header.Set("X-Mock-Session", session)
	}
	resp, err := floodClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// statuses counts the statuses of a flood's requests, for its line.
type statuses map[int]int

func (s statuses) String() string {
	var parts []string
	for _, code := range []int{0, 200, 201, 400, 403, 404, 409, 413, 429, 500} {
		if s[code] > 0 {
			parts = append(parts, fmt.Sprintf("%d×%d", s[code], code))
		}
	}
	return "statuses " + strings.Join(parts, " ")
}

func (m *floodMock) runIDs(session string, n int) []string {
	m.do("PUT", "/__mock/clock", session, `{"mode":"virtual"}`)
	ids := make([]string, 0, n)
	for range n {
		_, b := m.do("POST", "/agent/run", session, `{"prompt":"a recipient"}`)
		var out struct {
			RunID string `json:"run_id"`
		}
		if json.Unmarshal(b, &out) == nil && out.RunID != "" {
			ids = append(ids, out.RunID)
		}
	}
	return ids
}

// journalFlood: 8 sessions of 500 authenticated requests with 60 KB paths,
// each journaled.
func journalFlood(m *floodMock) {
	long := "/agent/runs/" + strings.Repeat("a", 60<<10)
	st := statuses{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 500 {
				code, _ := m.do("GET", long, "journal-"+strconv.Itoa(i), "")
				mu.Lock()
				st[code]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	_, b := m.do("GET", "/__mock/requests", "journal-0", "")
	m.report("journal: 8 sessions × 500 requests of 60 KB paths", fmt.Sprintf("%v; one journal lists %d KiB", st, len(b)>>10))
}

// messagesFlood: a 128 KiB message to 100 runs, sent 12 times; a 64 KiB
// one likewise; 10,000 small messages to one run; then a restart.
func messagesFlood(m *floodMock) {
	ids := m.runIDs("messages", 100)
	m.report("messages: 100 runs created", "")
	to, _ := json.Marshal(ids)
	for _, size := range []int{128 << 10, 64 << 10} {
		big := `{"to":` + string(to) + `,"sender_run_id":"` + ids[0] + `","subject":"flood","body":"` + strings.Repeat("m", size) + `"}`
		st := statuses{}
		for range 12 {
			code, _ := m.do("POST", "/agent/messages", "messages", big)
			st[code]++
		}
		m.report(fmt.Sprintf("messages: %d KiB to 100 runs, 12 times", size>>10), st.String())
	}
	small := `{"to":["` + ids[1] + `"],"sender_run_id":"` + ids[0] + `","subject":"s","body":"a small message"}`
	st := statuses{}
	for range 10000 {
		code, _ := m.do("POST", "/agent/messages", "messages", small)
		st[code]++
	}
	m.report("messages: 10,000 small messages to one run", st.String())
	_, b := m.do("GET", "/agent/messages/"+ids[1], "messages", "")
	m.report("messages: one run's inbox read", fmt.Sprintf("%d KiB answered", len(b)>>10))
	how := m.restart()
	m.report("messages: after a restart", how)
}

// eventsFlood: 60 reports alternating BLOCKED and INPROGRESS, each with a
// ref_id and an execution_id of 450 KB; then one poll of the whole log.
func eventsFlood(m *floodMock) {
	ids := m.runIDs("events", 1)
	if len(ids) == 0 {
		m.report("events: no run created", "")
		return
	}
	field := strings.Repeat("e", 450<<10)
	st := statuses{}
	for i := range 60 {
		kind := "run_in_progress"
		if i%2 == 1 {
			kind = "run_blocked"
		}
		code, _ := m.do("POST", "/agent/events/"+ids[0], "events",
			`{"event_type":"`+kind+`","ref_id":"`+field+`","execution_id":"`+field+`"}`)
		st[code]++
	}
	m.report("events: 60 reports with 2 × 450 KB fields", st.String())
	code, b := m.do("GET", "/agent/events?run_ids="+ids[0]+"&limit=500", "events", "")
	m.report("events: one poll of the log", fmt.Sprintf("status %d, %d KiB answered", code, len(b)>>10))
	// Within the field bound: 20,000 reports of 1 KiB ids on one run.
	field = strings.Repeat("e", 1<<10)
	st = statuses{}
	for i := range 20000 {
		kind := "run_in_progress"
		if i%2 == 1 {
			kind = "run_blocked"
		}
		code, _ := m.do("POST", "/agent/events/"+ids[0], "events",
			`{"event_type":"`+kind+`","ref_id":"`+field+`","execution_id":"`+field+`"}`)
		st[code]++
	}
	m.report("events: 20,000 reports with 2 × 1 KiB fields", st.String())
	code, b = m.do("GET", "/agent/events?run_ids="+ids[0]+"&limit=500", "events", "")
	m.report("events: one poll of 500", fmt.Sprintf("status %d, %d KiB answered", code, len(b)>>10))
}

// schedulesFlood: 150 schedules with 900 KB prompts and names of 1 KB,
// then one listing and 200 clock moves of a minute that start nothing.
// (A schedule firing every minute for a day of clock would start 216,000
// runs: that measures runs, not schedules.)
func schedulesFlood(m *floodMock) {
	m.do("PUT", "/__mock/clock", "schedules", `{"mode":"virtual","now":"2026-03-01T04:00:00Z"}`)
	prompt := strings.Repeat("p", 900<<10)
	st := statuses{}
	for i := range 150 {
		code, _ := m.do("POST", "/agent/schedules", "schedules",
			`{"name":"`+strconv.Itoa(i)+strings.Repeat("n", 1000)+`","cron_schedule":"0 3 * * *","prompt":"`+prompt+`"}`)
		st[code]++
	}
	m.report("schedules: 150 schedules of 900 KB prompts", st.String())
	code, b := m.do("GET", "/agent/schedules", "schedules", "")
	m.report("schedules: one listing", fmt.Sprintf("status %d, %d KiB answered", code, len(b)>>10))
	t0 := time.Now()
	for range 200 {
		m.do("POST", "/__mock/clock/advance", "schedules", `{"by":"1m"}`)
	}
	m.report("schedules: 200 clock moves of a minute", fmt.Sprintf("in %v", time.Since(t0).Round(time.Millisecond)))
	// Within the size bounds: 150 schedules of 16 KiB prompts, in a session of their own.
	prompt = strings.Repeat("p", 16<<10)
	st = statuses{}
	for i := range 150 {
		code, _ := m.do("POST", "/agent/schedules", "schedules-small",
			`{"name":"`+strconv.Itoa(i)+strings.Repeat("n", 250)+`","cron_schedule":"0 3 * * *","prompt":"`+prompt+`"}`)
		st[code]++
	}
	m.report("schedules: 150 schedules of 16 KiB prompts", st.String())
	code, b = m.do("GET", "/agent/schedules", "schedules-small", "")
	m.report("schedules: one listing of those", fmt.Sprintf("status %d, %d KiB answered", code, len(b)>>10))
}

// trickleFlood: 256 connections trickling create bodies, and a read
// meanwhile.
func trickleFlood(m *floodMock) {
	var conns []net.Conn
	for range 256 {
		c, err := net.Dial("tcp", floodAddr)
		if err != nil {
			break
		}
		fmt.Fprintf(c, "POST /agent/run HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wk-mock-alice\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
		conns = append(conns, c)
	}
	time.Sleep(500 * time.Millisecond)
	t0 := time.Now()
	code, _ := m.do("GET", "/agent/runs?limit=1", "", "")
	m.report("trickle: 256 bodies trickling, one read meanwhile", fmt.Sprintf("read answered %d in %v", code, time.Since(t0).Round(time.Millisecond)))
	for _, c := range conns {
		c.Close()
	}
}
