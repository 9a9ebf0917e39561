package mockserver

// Benchmarks of the mock at scale, for `make bench` (see bench/run.sh and the
// README's "Performance" section). They go through Server.ServeHTTP, in
// process, so they measure what a client of the mock pays (routing, the
// OpenAPI request check, the store and JSON encoding) without the network.
//
//	go test -run '^$' -bench . -benchmem ./mockserver/
//
// Nothing here asserts a time: the figures are read by people, not tests.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver/store"
)

// benchSizes are the store sizes the scale benchmarks run at;
// BENCH_SIZES (such as "10000,100000") picks others.
var benchSizes = sizesFromEnv(os.Getenv("BENCH_SIZES"), []int{10_000, 100_000, 1_000_000})

func sizesFromEnv(s string, def []int) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return def
	}
	return out
}

// benchPrompts are prompts of the length people give a coding agent: a few
// sentences saying what to change and how to check it.
var benchPrompts = []string{
	"The login integration test in web/auth fails about one run in ten on CI with a timeout waiting for the session cookie. Find the race between the cookie write and the redirect, fix it, and run the test 50 times to show it no longer flakes. (ticket %d)",
	"Update all minor and patch versions of our Go dependencies, regenerate go.sum, and make sure `make test` still passes. If a dependency changed its API, adapt our code rather than pinning the old version, and list what changed in the pull request. (ticket %d)",
	"Summarise the pull requests merged since the v2.3.0 tag into release notes grouped by area (API, web app, CLI, docs). Keep each entry to one line, link the pull request, and call out anything that breaks compatibility. (ticket %d)",
	"Add pagination to the /admin/users endpoint: accept limit and cursor query parameters, return page_info with has_next_page and next_cursor, keep the default page at 50 users, and add tests for the first, a middle and the last page. (ticket %d)",
	"Our nightly export job runs out of memory on accounts with more than a million events. Profile it, stream the rows instead of loading them all, and keep the output byte for byte identical to what it writes today. (ticket %d)",
}

var (
	benchNames   = []string{"triage", "dependency-bumps", "release-notes", "flaky-tests", "docs", "security-review", "refactor", "onboarding"}
	benchModels  = []string{"claude-4-sonnet", "gpt-5", "auto"}
	benchEnvs    = []string{"env-web-app", "env-backend", "env-mobile"}
	benchBase    = "You are a careful engineer. Keep changes small, explain them, and never push to main."
	benchKeys    = []string{"wk-mock-alice", "wk-mock-bob", "wk-mock-ci-bot", "wk-mock-carol"}
	benchFilters = "limit=100&state=FAILED&name=flaky-tests"
)

// benchRequest is the create body for run i: a distinct prompt and a config
// as a client sends one.
func benchRequest(i int) string {
	cfg := fmt.Sprintf(`{"name":%q,"environment_id":%q`, benchNames[(i/5)%len(benchNames)], benchEnvs[(i/3)%len(benchEnvs)])
	if i%3 != 0 {
		cfg += fmt.Sprintf(`,"model_id":%q`, benchModels[(i/2)%len(benchModels)])
	}
	if i%4 == 0 {
		cfg += fmt.Sprintf(`,"base_prompt":%q`, benchBase)
	}
	return fmt.Sprintf(`{"prompt":%q,"config":%s}}`, fmt.Sprintf(benchPrompts[i%len(benchPrompts)], i), cfg)
}

// benchFate is how run i ends: mostly SUCCEEDED, 15% FAILED, 5% ERROR.
func benchFate(i int) string {
	switch i % 20 {
	case 3, 11, 17:
		return "state=FAILED; error_code=insufficient_credits"
	case 7:
		return "state=ERROR"
	}
	return ""
}

// newBenchServer is a mock with a virtual clock whose default mock session
// holds the fixtures plus n runs, made as POST /agent/run makes them (decoded
// from a JSON body, so every run owns its strings, as over HTTP) but without
// the HTTP round trip. The clock moves a second per run, so all but the
// newest few runs have finished; 2% are cancelled while queued.
func newBenchServer(tb testing.TB, n int) (*Server, *benchFill) {
	tb.Helper()
	s, err := New(Options{ClockMode: VirtualClock, ClockStart: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		tb.Fatal(err)
	}
	f := &benchFill{session: openDefault(tb, s)}
	f.fill(tb, s, 0, n)
	return s, f
}

// benchFill is the default mock session of a bench server and the runs the
// fill made in it, in order.
type benchFill struct {
	session *store.Session
	ids     []string
	teams   []string
}

func (f *benchFill) fill(tb testing.TB, s *Server, from, to int) {
	tb.Helper()
	for i := from; i < to; i++ {
		p := s.principals[benchKeys[(i/7)%len(benchKeys)]]
		req := httptest.NewRequest(http.MethodPost, "/agent/run", nil)
		if f := benchFate(i); f != "" {
			req.Header.Set(FateHeader, f)
		}
		out := s.createRun(&call{r: req, session: f.session, principal: p, body: []byte(benchRequest(i))})
		if out.problem != nil {
			tb.Fatalf("create %d: %v", i, out.problem)
		}
		id := out.body.(RunAgentResponse).RunID
		f.ids, f.teams = append(f.ids, id), append(f.teams, p.Team)
		if i%50 == 13 {
			if err := f.session.Cancel(p, id); err != nil {
				tb.Fatalf("cancel %d: %v", i, err)
			}
		}
		if _, err := f.session.Advance(time.Second); err != nil {
			tb.Fatal(err)
		}
	}
}

// discardWriter is the cheapest http.ResponseWriter that still keeps the
// status, so the figures are the server's and not a recorder's.
type discardWriter struct {
	h      http.Header
	status int
	n      int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) WriteHeader(code int)        { d.status = code }
func (d *discardWriter) Write(b []byte) (int, error) { d.n += len(b); return len(b), nil }
func (d *discardWriter) reset()                      { clear(d.h); d.status, d.n = 0, 0 }

func newDiscard() *discardWriter { return &discardWriter{h: http.Header{}} }

// serve answers one request and fails the benchmark unless it got want.
func serve(b *testing.B, s *Server, w *discardWriter, r *http.Request, want int) {
	w.reset()
	s.ServeHTTP(w, r)
	if w.status != want && !(want == 200 && w.status == 0) {
		b.Fatalf("%s %s: status %d, want %d", r.Method, r.URL, w.status, want)
	}
}

// reportLatency adds the median and 99th percentile of the samples.
func reportLatency(b *testing.B, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(samples[len(samples)*99/100].Nanoseconds()), "p99-ns")
}

// timed runs fn b.N times and reports the per-call latency percentiles.
func timed(b *testing.B, fn func(i int)) {
	samples := make([]time.Duration, 0, min(b.N, 1<<20))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		fn(i)
		if len(samples) < cap(samples) {
			samples = append(samples, time.Since(t0))
		}
	}
	b.StopTimer()
	reportLatency(b, samples)
}

func authorized(r *http.Request) *http.Request {
	r.Header.Set("Authorization", "Bearer wk-mock-alice")
	return r
}

// newVirtualServer is a mock of the embedded fixtures on a virtual clock
// at 2026-03-01 12:00 UTC, for the tests that look inside the server.
func newVirtualServer(tb testing.TB) *Server {
	s, err := New(Options{ClockMode: VirtualClock, ClockStart: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func openDefault(tb testing.TB, s *Server) *store.Session {
	ms, err := s.store.Open("")
	if err != nil {
		tb.Fatal(err)
	}
	return ms
}

// benchServers keeps the filled servers, so the benchmarks of one `go test`
// share each size's fill (a million runs take a while to make).
var benchServers = map[int]*Server{}
var benchFills = map[int]*benchFill{}

func forEachSize(b *testing.B, fn func(b *testing.B, s *Server, f *benchFill, n int)) {
	for _, n := range benchSizes {
		b.Run("runs="+strconv.Itoa(n), func(b *testing.B) {
			s := benchServers[n]
			if s == nil {
				s, benchFills[n] = newBenchServer(b, n)
				benchServers[n] = s
			}
			runtime.GC()
			fn(b, s, benchFills[n], n)
		})
	}
}

// BenchmarkCreate is POST /agent/run with a realistic body, one of 64 in
// turn, as a client that sends the same few requests again and again.
func BenchmarkCreate(b *testing.B) { benchCreate(b, 64) }

// BenchmarkCreateDistinct is BenchmarkCreate with more bodies in turn than
// the OpenAPI check remembers (openapi's acceptedBodiesMax), so every body
// is decoded and validated: the cost of a create whose body is new.
func BenchmarkCreateDistinct(b *testing.B) { benchCreate(b, 4096) }

func benchCreate(b *testing.B, distinct int) {
	forEachSize(b, func(b *testing.B, s *Server, f *benchFill, n int) {
		w := newDiscard()
		base := f.session.Len()
		bodies := make([][]byte, distinct)
		for i := range bodies {
			bodies[i] = []byte(benchRequest(n + i))
		}
		r := authorized(httptest.NewRequest(http.MethodPost, "/agent/run", nil))
		r.Header.Set("Content-Type", "application/json")
		chunk := max(n/10, 1000) // the store stays within 10% of n
		timed(b, func(i int) {
			if i > 0 && i%chunk == 0 {
				b.StopTimer()
				f.session.Truncate(base)
				b.StartTimer()
			}
			body := bodies[i%len(bodies)]
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
			serve(b, s, w, r, http.StatusOK)
		})
		f.session.Truncate(base)
	})
}

// BenchmarkGet is GET /agent/runs/{id} on runs spread over the store.
func BenchmarkGet(b *testing.B) {
	forEachSize(b, func(b *testing.B, s *Server, f *benchFill, n int) {
		w := newDiscard()
		var reqs []*http.Request
		for i := len(f.ids) - 1; i >= 0 && len(reqs) < 1024; i -= max(n/1024, 1) {
			if f.teams[i] == "team-acme" {
				reqs = append(reqs, authorized(httptest.NewRequest(http.MethodGet, "/agent/runs/"+f.ids[i], nil)))
			}
		}
		timed(b, func(i int) { serve(b, s, w, reqs[i%len(reqs)], http.StatusOK) })
	})
}

// BenchmarkListFiltered is one page of 100 runs with a state and a name
// filter: GET /agent/runs?limit=100&state=FAILED&name=flaky-tests, which
// about 1 in 70 of the stored runs match (1 in 53 of those the caller's team
// sees). The p50-ns metric is the median the target is about.
func BenchmarkListFiltered(b *testing.B) {
	forEachSize(b, func(b *testing.B, s *Server, _ *benchFill, n int) {
		w := newDiscard()
		r := authorized(httptest.NewRequest(http.MethodGet, "/agent/runs?"+benchFilters, nil))
		serve(b, s, w, r, http.StatusOK)
		if w.n < 100*500 {
			b.Fatalf("the page has %d bytes: fewer than 100 runs?", w.n)
		}
		timed(b, func(int) { serve(b, s, w, r, http.StatusOK) })
	})
}

// BenchmarkListDefault is the first page of GET /agent/runs?limit=20, the
// request of the load test in bench/run.sh.
func BenchmarkListDefault(b *testing.B) {
	forEachSize(b, func(b *testing.B, s *Server, _ *benchFill, n int) {
		w := newDiscard()
		r := authorized(httptest.NewRequest(http.MethodGet, "/agent/runs?limit=20", nil))
		timed(b, func(int) { serve(b, s, w, r, http.StatusOK) })
	})
}

// BenchmarkHeapPerRun reports the live heap each stored run costs, after a
// GC, with the prompts and configs of newBenchServer. Run it with
// -benchtime=1x: it measures once whatever b.N is.
func BenchmarkHeapPerRun(b *testing.B) {
	for _, n := range benchSizes[1:] {
		b.Run("runs="+strconv.Itoa(n), func(b *testing.B) {
			s, f := newBenchServer(b, 0)
			f.ids, f.teams = make([]string, 0, n), make([]string, 0, n)
			before := liveHeap()
			f.fill(b, s, 0, n)
			after := liveHeap()
			runtime.KeepAlive(s)
			b.ReportMetric(float64(after-before)/float64(n), "B/run") // the fill's own lists were made before
			var prompt int
			for _, id := range f.ids {
				v, _ := f.session.Run(id)
				prompt += len(v.Run.Prompt)
			}
			b.ReportMetric(float64(prompt)/float64(len(f.ids)), "prompt-B/run")
			// A full collection with nothing to free is the marking every GC
			// cycle does at this size: the tax a big store puts on latency.
			start := time.Now()
			runtime.GC()
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000, "gc-ms")
			runtime.KeepAlive(s)
			for range b.N { // nothing to repeat; the figure is the one above
			}
		})
	}
}

// BenchmarkHeapPerSession is the live heap an isolated mock session takes
// once opened (X-Mock-Session) with the default fixtures and its first
// page answered: what each concurrent CI job costs a shared mock, before
// the runs it creates (BenchmarkHeapPerRun). 500 sessions, half the most a
// mock keeps open.
func BenchmarkHeapPerSession(b *testing.B) {
	const n = 500
	s, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	w := newDiscard()
	before := liveHeap()
	for i := range n {
		r := authorized(httptest.NewRequest(http.MethodGet, "/agent/runs?limit=1", nil))
		r.Header.Set(SessionHeader, "bench-session-"+strconv.Itoa(i))
		serve(b, s, w, r, http.StatusOK)
	}
	after := liveHeap()
	runtime.KeepAlive(s)
	b.ReportMetric(float64(after-before)/n, "B/session")
	for range b.N { // nothing to repeat; the figure is the one above
	}
}

func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkStartup is New with the embedded fixtures and the first request
// answered, as a test suite that starts an in-process mock pays it.
func BenchmarkStartup(b *testing.B) {
	timed(b, func(int) {
		s, err := New(Options{})
		if err != nil {
			b.Fatal(err)
		}
		w := newDiscard()
		serve(b, s, w, authorized(httptest.NewRequest(http.MethodGet, "/agent/runs?limit=1", nil)), http.StatusOK)
	})
}

// TestBenchHelpers keeps the benchmark helpers honest: the bodies are valid
// create requests and the fill makes the mix the benchmarks describe.
func TestBenchHelpers(t *testing.T) {
	s, f := newBenchServer(t, 400)
	counts := map[State]int{}
	for _, id := range f.ids {
		v, err := f.session.Run(id)
		if err != nil {
			t.Fatal(err)
		}
		counts[v.Snap.State]++
	}
	if counts[Failed] < 30 || counts[Errored] < 15 || counts[Cancelled] < 5 || counts[Succeeded] < 250 {
		t.Fatalf("unexpected mix of states: %v", counts)
	}
	q, _, aerr := parseListQuery(mustQuery(t, benchFilters), cursorSigner{f.session.CursorKey(), ""})
	if aerr != nil {
		t.Fatal(aerr)
	}
	page, err := f.session.List(s.principals["wk-mock-alice"], q)
	if err != nil || len(page.Runs) == 0 {
		t.Fatalf("filtered page: %v runs, %v", len(page.Runs), err)
	}
	for _, v := range page.Runs {
		it := runItem(v, s.sessionLinkBase)
		if it.State != Failed || it.AgentConfig.Name != "flaky-tests" || !strings.Contains(it.Prompt, "ticket") {
			t.Fatalf("run %s does not match the filters: %+v", it.RunID, it)
		}
	}
	keep := f.session.Len() - 100
	f.session.Truncate(keep)
	if n := f.session.Len(); n != keep {
		t.Fatalf("truncate to %d left %d runs", keep, n)
	}
	for _, id := range f.ids[len(f.ids)-100:] {
		if _, err := f.session.Run(id); !errors.Is(err, store.ErrRunNotFound) {
			t.Fatalf("run %s outlived the truncate: %v", id, err)
		}
	}
}

func mustQuery(t *testing.T, raw string) map[string][]string {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "/agent/runs?"+raw, nil)
	return r.URL.Query()
}

// BenchmarkListOrders is a page of 20 in every order the listing has, a
// filtered page in the default order, and a deep page: the page of 20 that a
// cursor points to after 5,000 runs of the default order. Each is measured
// at every size of benchSizes; the targets compare the sizes with each other.
func BenchmarkListOrders(b *testing.B) {
	queries := []struct{ name, query string }{
		{"updated_at-desc", "limit=20"},
		{"updated_at-asc", "limit=20&sort_order=asc"},
		{"created_at-desc", "limit=20&sort_by=created_at"},
		{"created_at-asc", "limit=20&sort_by=created_at&sort_order=asc"},
		{"title-asc", "limit=20&sort_by=title&sort_order=asc"},
		{"title-desc", "limit=20&sort_by=title"},
		{"agent-asc", "limit=20&sort_by=agent&sort_order=asc"},
		{"agent-desc", "limit=20&sort_by=agent"},
		{"state-failed", "limit=20&state=FAILED"},
		{"deep-cursor", "deep"},
	}
	forEachSize(b, func(b *testing.B, s *Server, _ *benchFill, n int) {
		for _, q := range queries {
			b.Run(q.name, func(b *testing.B) {
				w := newDiscard()
				raw := q.query
				if raw == "deep" {
					raw = "limit=20&cursor=" + url.QueryEscape(deepCursor(b, s, 5_000))
				}
				r := authorized(httptest.NewRequest(http.MethodGet, "/agent/runs?"+raw, nil))
				timed(b, func(int) { serve(b, s, w, r, http.StatusOK) })
			})
		}
	})
}

// deepCursor follows the default order's cursors past depth runs and
// returns the cursor there.
func deepCursor(b *testing.B, s *Server, depth int) string {
	cursor := ""
	for seen := 0; seen < depth; seen += 500 {
		raw := "limit=500"
		if cursor != "" {
			raw += "&cursor=" + url.QueryEscape(cursor)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, authorized(httptest.NewRequest(http.MethodGet, "/agent/runs?"+raw, nil)))
		var page struct {
			PageInfo struct {
				NextCursor string `json:"next_cursor"`
			} `json:"page_info"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || page.PageInfo.NextCursor == "" {
			b.Fatalf("page after %d runs: %d %s", seen, rec.Code, truncate(rec.Body.String(), 200))
		}
		cursor = page.PageInfo.NextCursor
	}
	return cursor
}

// BenchmarkEventsPoll is GET /agent/events for 5 runs from the middle of
// the store since the start of the log: the log holds about five events
// per stored run.
func BenchmarkEventsPoll(b *testing.B) {
	forEachSize(b, func(b *testing.B, s *Server, f *benchFill, n int) {
		w := newDiscard()
		v := url.Values{}
		for i := n / 2; i < len(f.ids) && len(v["run_ids"]) < 5; i++ {
			if f.teams[i] == "team-acme" {
				v.Add("run_ids", f.ids[i])
			}
		}
		r := authorized(httptest.NewRequest(http.MethodGet, "/agent/events?"+v.Encode(), nil))
		timed(b, func(int) { serve(b, s, w, r, http.StatusOK) })
	})
}

// BenchmarkSchedulesList is GET /agent/schedules in a store of n runs: the
// listing of the fixtures' schedules, caught up to the clock.
func BenchmarkSchedulesList(b *testing.B) {
	forEachSize(b, func(b *testing.B, s *Server, _ *benchFill, n int) {
		w := newDiscard()
		r := authorized(httptest.NewRequest(http.MethodGet, "/agent/schedules", nil))
		timed(b, func(int) { serve(b, s, w, r, http.StatusOK) })
	})
}

// BenchmarkStartupStateFile is a start with a state file of 100,000 runs
// (BENCH_STARTUP_RUNS picks another size): New, Load of the file and the
// first answered page, as `agentruns-mock --state-file` pays it before it
// serves. It also reports the file's size and the live heap per run once
// loaded. Run it with a small -benchtime (make bench uses 3x).
// BENCH_STARTUP_FILE names a path to keep the file at, to time a start of
// the built mock with it (bench/startup).
func BenchmarkStartupStateFile(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("BENCH_STARTUP_RUNS")); err == nil && v > 0 {
		n = v
	}
	b.Run("runs="+strconv.Itoa(n), func(b *testing.B) {
		src, _ := newBenchServer(b, n)
		var file bytes.Buffer
		if err := src.Save(&file); err != nil {
			b.Fatal(err)
		}
		src = nil
		path := b.TempDir() + "/state.json"
		if err := os.WriteFile(path, file.Bytes(), 0o600); err != nil {
			b.Fatal(err)
		}
		if keep := os.Getenv("BENCH_STARTUP_FILE"); keep != "" {
			if err := os.WriteFile(keep, file.Bytes(), 0o600); err != nil {
				b.Fatal(err)
			}
		}
		size := float64(file.Len()) / (1 << 20)
		file = bytes.Buffer{}
		start := func() *Server {
			s, err := New(Options{ClockMode: VirtualClock})
			if err != nil {
				b.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			err = s.Load(f)
			f.Close()
			if err != nil {
				b.Fatal(err)
			}
			serve(b, s, newDiscard(), authorized(httptest.NewRequest(http.MethodGet, "/agent/runs?limit=20", nil)), http.StatusOK)
			return s
		}
		// The heap a loaded store keeps is measured on a start of its own:
		// the full collections it takes would otherwise count as start-up
		// CPU. The timed starts then begin, as a process does, with nothing
		// else live.
		before := liveHeap()
		s := start()
		heap := float64(liveHeap()-before) / float64(n)
		runtime.KeepAlive(s)
		s = nil
		runtime.GC()
		cpu0 := cpuTime()
		timed(b, func(int) { start() })
		// CPU time (user and system, every thread) moves far less than wall
		// time on a busy machine: a start on idle cores takes about this.
		b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
		b.ReportMetric(heap, "loaded-B/run")
		b.ReportMetric(size, "file-MiB")
	})
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
