// Command attack runs the hostile inputs of the hardening work against a
// built agentruns-mock and prints what they cost it: resident memory (now
// and peak, from /proc), CPU time, and the latency of a legitimate request
// meanwhile. It asserts nothing; Linux only.
//
//	go build -o /tmp/agentruns-mock ./cmd/agentruns-mock
//	go run ./bench/attack /tmp/agentruns-mock
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

const addr = "127.0.0.1:4690"

var base = "http://" + addr

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: attack path/to/agentruns-mock [flood...]")
		os.Exit(2)
	}
	if len(os.Args) > 2 { // only the floods named, each on a fresh mock
		for _, name := range os.Args[2:] {
			f, ok := floods[name]
			if !ok {
				fmt.Fprintf(os.Stderr, "no flood %q; there are %s\n", name, strings.Join(floodNames, ", "))
				os.Exit(2)
			}
			runFlood(os.Args[1], name, f)
		}
		return
	}
	cmd := exec.Command(os.Args[1], "--addr", addr, "--quiet", "--strict-auth", "--control-token", "ctl")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if i > 200 {
			panic("the mock did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
	report := func(name string, began time.Time, cpu0 time.Duration, extra string) {
		rss, hwm := mem(pid)
		fmt.Printf("%-58s rss %4d MB  peak %4d MB  cpu %6.2fs  wall %6.2fs  %s\n", name, rss>>10, hwm>>10, (cpuTime(pid) - cpu0).Seconds(), time.Since(began).Seconds(), extra)
	}
	alice := "Bearer wk-mock-alice"
	do := func(method, path, auth, body string, h ...string) (int, []byte) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		for i := 0; i+1 < len(h); i += 2 {
			req.Header.Set(h[i], h[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	began, cpu0 := time.Now(), cpuTime(pid)
	report("idle", began, cpu0, "")

	// 1. Session names that are not visible ASCII.
	st, _ := do("GET", "/agent/runs", alice, "", "X-Mock-Session", "\xff")
	report("1. X-Mock-Session \\xff", began, cpu0, "status "+strconv.Itoa(st))
	// 2, 3. Clock past 9999, huge advances.
	do("PUT", "/__mock/clock", "Bearer ctl", `{"mode":"virtual"}`, "X-Mock-Session", "clk")
	s2, _ := do("PUT", "/__mock/clock", "Bearer ctl", `{"now":"9999-12-31T23:30:00Z"}`, "X-Mock-Session", "clk")
	s3, _ := do("POST", "/__mock/clock/advance", "Bearer ctl", `{"by":"1h"}`, "X-Mock-Session", "clk")
	s4, _ := do("POST", "/__mock/clock/advance", "Bearer ctl", `{"by":"2562047h"}`, "X-Mock-Session", "clk2")
	s5, _ := do("POST", "/__mock/clock/advance", "Bearer ctl", `{"by":"2562047h"}`, "X-Mock-Session", "clk2")
	report("2,3. clock to 9999 +1h; 2562047h twice", began, cpu0, fmt.Sprintf("statuses %d %d %d %d", s2, s3, s4, s5))

	// 4. 1,001 unauthenticated requests with fresh session names.
	do("POST", "/agent/run", alice, `{"prompt":"keep me"}`, "X-Mock-Session", "legit")
	began, cpu0 = time.Now(), cpuTime(pid)
	for i := range 1001 {
		do("GET", "/agent/runs", "", "", "X-Mock-Session", "evil-"+strconv.Itoa(i))
	}
	_, b := do("GET", "/agent/runs", alice, "", "X-Mock-Session", "legit")
	report("4. 1,001 unauthenticated fresh sessions", began, cpu0, "legit run kept: "+strconv.FormatBool(bytes.Contains(b, []byte("keep me"))))

	// 5. 256 unauthenticated delay faults, 64 authenticated ones, and a
	// control request meanwhile.
	began, cpu0 = time.Now(), cpuTime(pid)
	var wg sync.WaitGroup
	for i := range 320 {
		auth := ""
		if i >= 256 {
			auth = alice
		}
		wg.Add(1)
		go func() { defer wg.Done(); do("GET", "/agent/runs", auth, "", "X-Mock-Fault", "delay=5s") }()
	}
	time.Sleep(500 * time.Millisecond)
	t0 := time.Now()
	sc, _ := do("GET", "/__mock/info", "Bearer ctl", "")
	lat := time.Since(t0)
	wg.Wait()
	report("5. 320 delay faults (256 unauthenticated)", began, cpu0, fmt.Sprintf("control request meanwhile: %d in %v", sc, lat.Round(time.Millisecond)))

	// 6. 2,000 unauthenticated requests with 60 KB paths into one session.
	began, cpu0 = time.Now(), cpuTime(pid)
	long := "/agent/runs/" + strings.Repeat("a", 60<<10)
	for range 2000 {
		do("GET", long, "", "", "X-Mock-Session", "journal")
	}
	report("6. 2,000 unauthenticated 60 KB paths", began, cpu0, "")

	// 7. Rules past the cap, a 33 KB pattern, a costly pattern over a long prompt.
	began, cpu0 = time.Now(), cpuTime(pid)
	refused := 0
	for i := range 1000 {
		if s, _ := do("POST", "/__mock/faults", "Bearer ctl", `{"path":"/agent/x`+strconv.Itoa(i)+`","status":503}`, "X-Mock-Session", "rules"); s == 400 {
			refused++
		}
	}
	sBig, _ := do("POST", "/__mock/fates", "Bearer ctl", `{"prompt_pattern":"`+strings.Repeat("(a|b)", 33<<10/5)+`","state":"FAILED"}`, "X-Mock-Session", "rules")
	sRe, _ := do("POST", "/__mock/fates", "Bearer ctl", `{"prompt_pattern":"`+strings.Repeat("(a*)*", 44)+`z","state":"FAILED"}`, "X-Mock-Session", "re")
	report("7. 1,000 fault rules, 33 KB pattern", began, cpu0, fmt.Sprintf("rules refused %d; 33 KB pattern %d; costly pattern %d", refused, sBig, sRe))
	began, cpu0 = time.Now(), cpuTime(pid)
	prompt := strings.Repeat("a", 25000)
	for range 20 {
		do("POST", "/agent/run", alice, `{"prompt":"`+prompt+`"}`, "X-Mock-Session", "re")
	}
	report("7. 20 creates, 25,000-char prompts, costly pattern", began, cpu0, "")

	// 8. Runs of 700 KB prompts and six slow readers of limit=500 pages.
	big := strings.Repeat("x", 700<<10)
	for range 40 {
		do("POST", "/agent/run", alice, `{"prompt":"`+big+`"}`, "X-Mock-Session", "big")
	}
	began, cpu0 = time.Now(), cpuTime(pid)
	var readers sync.WaitGroup
	for range 6 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "GET /agent/runs?limit=500 HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nX-Mock-Session: big\r\n\r\n", alice)
			r := bufio.NewReaderSize(c, 1024)
			buf := make([]byte, 1024)
			for i := 0; i < 30; i++ { // read slowly for three seconds
				if _, err := r.Read(buf); err != nil {
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		}()
	}
	readers.Wait()
	_, page := do("GET", "/agent/runs?limit=500", alice, "", "X-Mock-Session", "big")
	report("8. 40 runs of 700 KB, six slow limit=500 readers", began, cpu0, fmt.Sprintf("one page: %d bytes", len(page)))

	// 11, 12, 14.
	s11, _ := do("GET", "/agent/runs?state=BOGUS%zz", alice, "")
	s11b, _ := do("GET", "/agent/runs?"+strings.Repeat("x=1&", 10001), alice, "")
	c, _ := net.Dial("tcp", addr)
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n", strings.Repeat("a", 80<<10))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	ct := ""
	if err == nil {
		ct = strconv.Itoa(resp.StatusCode) + " " + resp.Header.Get("Content-Type")
	}
	c.Close()
	_, pb := do("GET", "/agent/runs?limit=1", alice, "", "X-Mock-Session", "cur-a")
	cur := ""
	if i := bytes.Index(pb, []byte(`"next_cursor":"`)); i >= 0 {
		cur = string(pb[i+15:])
		cur = cur[:strings.IndexByte(cur, '"')]
	}
	s14, _ := do("GET", "/agent/runs?limit=1&cursor="+cur, alice, "", "X-Mock-Session", "cur-b")
	fmt.Printf("11. bad escape: %d; 10,001 parameters: %d   12. 80 KB header: %s   14. cursor of another session: %d\n", s11, s11b, ct, s14)

	// The floods of the newer resources, each on a fresh mock so its
	// figures stand alone.
	cmd.Process.Kill()
	cmd.Wait()
	for _, name := range floodNames {
		runFlood(os.Args[1], name, floods[name])
	}
}

// mem is VmRSS and VmHWM in KiB.
func mem(pid int) (rss, hwm int) {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "VmRSS:" {
			rss, _ = strconv.Atoi(f[1])
		}
		if len(f) >= 2 && f[0] == "VmHWM:" {
			hwm, _ = strconv.Atoi(f[1])
		}
	}
	return rss, hwm
}

// cpuTime is the process's user plus system time (clock ticks of 10 ms).
func cpuTime(pid int) time.Duration {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.Atoi(f[11])
	k, _ := strconv.Atoi(f[12])
	return time.Duration(u+k) * 10 * time.Millisecond
}
