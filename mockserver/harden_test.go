package mockserver_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
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

// Regression tests of the mock's hardening (docs/reliability.md): each
// fails on a mock without the limit it names.

// 1. A session name is checked before anything is opened, and every name
// the mock accepts survives a save and a load byte for byte.
func TestSessionNamesAreCheckedAndSurviveARestart(t *testing.T) {
	s1 := newServer(t, mockserver.Options{ClockMode: mockserver.VirtualClock, ClockStart: clockStart})
	c := serve(t, s1)
	for _, bad := range []string{"\xff", "\xfe", "a\xffb", "caf\u00e9", "with space", strings.Repeat("x", 129)} {
		for _, path := range []string{"/agent/runs", "/__mock/info"} {
			r := c.in(bad).do("GET", path, nil)
			require.Equal(t, http.StatusBadRequest, r.status, "session %q on %s: %s", bad, path, r.body)
			assert.Contains(t, r.problem(t).Detail, mockserver.SessionHeader)
		}
	}
	good := []string{"job-a", strings.Repeat("x", 128), `!"#$%&'()*+,-./:;<=>?@[\]^_{|}~`, "0"}
	want := map[string]string{}
	for _, name := range good {
		want[name] = c.in(name).create(map[string]any{"prompt": "kept across a restart"}).RunID
	}
	state := saved(t, s1)
	s2 := newServer(t, mockserver.Options{ClockMode: mockserver.VirtualClock, ClockStart: clockStart})
	require.NoError(t, s2.Load(bytes.NewReader(state)), "a mock loads every file it saved")
	c2 := serve(t, s2)
	for name, id := range want {
		assert.Equal(t, id, c2.in(name).get(id).RunID, "session %q", name)
	}

	// A file naming a session the mock would refuse was not written by it.
	forged := bytes.Replace(state, []byte(`"name":"job-a"`), []byte(`"name":"job a"`), 1)
	require.NotEqual(t, state, forged)
	assert.ErrorIs(t, newServer(t, mockserver.Options{}).Load(bytes.NewReader(forged)), mockserver.ErrBadStateFile)
}

// 2. The clock stays within what RFC 3339 writes: a move past year 9999 is
// a 400, the clock keeps its instant, and saving still works.
func TestClockStaysWithinRFC3339(t *testing.T) {
	for _, mode := range []mockserver.ClockMode{mockserver.VirtualClock, mockserver.RealClock} {
		t.Run(string(mode), func(t *testing.T) {
			wall := &fakeWall{now: clockStart}
			s := newServer(t, mockserver.Options{ClockMode: mode, ClockStart: clockStart, Wall: wall.Now})
			c := serve(t, s).on(t)
			id := c.create(map[string]any{"prompt": "before the end of time"}).RunID
			r := c.do("PUT", "/__mock/clock", map[string]string{"now": "9999-12-31T23:30:00Z"})
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			for _, by := range []string{"1h", "30m", "2562047h"} {
				r = c.do("POST", "/__mock/clock/advance", map[string]string{"by": by})
				require.Equal(t, http.StatusBadRequest, r.status, "advance %s: %s", by, r.body)
				assert.Contains(t, r.problem(t).Detail, "9999-12-31T23:59:59.999Z")
			}
			r = c.do("PUT", "/__mock/clock", map[string]string{"now": "9999-12-31T23:59:59.9999Z"})
			require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
			r = c.do("PUT", "/__mock/clock", map[string]string{"now": "9999-12-31T23:59:59.999Z"})
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			wall.Add(time.Hour) // a real clock runs into the end and stands there
			var clk mockserver.ClockInfo
			c.do("GET", "/__mock/clock", nil).json(t, &clk)
			assert.Equal(t, "9999-12-31T23:59:59.999Z", clk.Now)
			run := c.get(id)
			assert.Equal(t, mockserver.State("SUCCEEDED"), run.State)
			var buf bytes.Buffer
			require.NoError(t, s.Save(&buf), "saving works at the end of the range")
			require.NoError(t, newServer(t, mockserver.Options{Wall: wall.Now}).Load(&buf))
		})
	}
}

// 3. No clock input makes the clock, or a run's state, go back: moves as
// large as a Duration holds pile up without wrapping around.
func TestHugeClockMovesNeverGoBack(t *testing.T) {
	for _, mode := range []mockserver.ClockMode{mockserver.VirtualClock, mockserver.RealClock} {
		t.Run(string(mode), func(t *testing.T) {
			wall := &fakeWall{now: clockStart}
			c := newMock(t, mockserver.Options{ClockMode: mode, ClockStart: clockStart, Step: time.Second, Wall: wall.Now}).on(t)
			id := c.create(map[string]any{"prompt": "finishes early"}).RunID
			c.advance(10 * time.Second)
			require.Equal(t, mockserver.State("SUCCEEDED"), c.get(id).State)
			last := ""
			for i := 0; ; i++ {
				r := c.do("POST", "/__mock/clock/advance", map[string]string{"by": "2562047h"})
				if r.status == http.StatusBadRequest {
					require.Greater(t, i, 20, "about 27 moves of 292 years fit before year 9999")
					break
				}
				require.Equal(t, http.StatusOK, r.status, "%s", r.body)
				var clk mockserver.ClockInfo
				r.json(t, &clk)
				require.Greater(t, clk.Now, last, "the clock went back after move %d", i+1)
				last = clk.Now
				require.Equal(t, mockserver.State("SUCCEEDED"), c.get(id).State, "after move %d", i+1)
			}
		})
	}
}

// 5. Requests waiting on a delay fault give their in-flight slot back, and a
// trickled body is cut off after the body timeout: neither locks other
// mock sessions or the control API out.
func TestDelaysAndSlowBodiesDoNotHoldInFlightSlots(t *testing.T) {
	onBothListeners(t, testDelaysAndSlowBodiesDoNotHoldInFlightSlots)
}

func testDelaysAndSlowBodiesDoNotHoldInFlightSlots(t *testing.T, serve func(testing.TB, http.Handler) *client) {
	s := newServer(t, mockserver.Options{ClockMode: mockserver.VirtualClock, ClockStart: clockStart, BodyTimeout: 300 * time.Millisecond})
	c := serve(t, mockserver.LimitInFlight(s, 2))
	r := c.in("slow").do("POST", "/__mock/faults", map[string]any{"path": "/agent/runs", "delay": "1m"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for range 2 { // as many as the cap
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, "GET", c.base+"/agent/runs", nil)
			req.Header.Set("Authorization", "Bearer wk-mock-alice")
			req.Header.Set(mockserver.SessionHeader, "slow")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	// Both are waiting once both were injected; the control API answers meanwhile.
	waiting := false
	for deadline := time.Now().Add(patience); !waiting && time.Now().Before(deadline); {
		r := c.in("slow").do("GET", "/__mock/faults", nil)
		var rules []mockserver.FaultRule
		if r.status == http.StatusOK {
			r.json(t, &rules)
			waiting = rules[0].Injected == 2
		}
		runtime.Gosched()
	}
	require.True(t, waiting, "the control API stayed reachable while both delayed requests waited")
	assert.Equal(t, http.StatusOK, c.in("other").do("GET", "/agent/runs", nil).status, "another session is served")

	// A body that stops coming is answered once the body timeout passes.
	conn, err := net.Dial("tcp", strings.TrimPrefix(c.base, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /agent/run HTTP/1.1\r\nHost: mock\r\nAuthorization: Bearer wk-mock-alice\r\n"+
		"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"prompt\":")
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "the mock answers a stalled body instead of waiting for it")
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), "did not arrive within 300ms")
}

// 6 and 9. A request journal entry and a request's log line repeat at most
// a bounded part of what the client sent.
func TestJournalAndLogKeepABoundedPartOfEachRequest(t *testing.T) {
	var logs syncbuf.Buffer
	c := newMock(t, mockserver.Options{Logger: debugLogger(&logs)})
	long := "/agent/runs/" + strings.Repeat("a", 16<<10)
	session := strings.Repeat("s", 128)
	r := c.in(session).do("GET", long, nil)
	require.Equal(t, http.StatusBadRequest, r.status)
	r = c.do("GET", long, nil, "Authorization", "") // not authenticated: not journaled
	require.Equal(t, http.StatusUnauthorized, r.status)
	var attempts []mockserver.Attempt
	c.in(session).do("GET", "/__mock/requests", nil).json(t, &attempts)
	require.Len(t, attempts, 1)
	assert.LessOrEqual(t, len(attempts[0].Path), 260, "the journal keeps the start of the path")
	assert.True(t, strings.HasPrefix(long, strings.TrimSuffix(attempts[0].Path, "…")))
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	require.NotEmpty(t, lines)
	for _, line := range lines {
		assert.Less(t, len(line), 1024, "a request's log line: %.200s…", line)
	}
}

// A full journal costs what its entries list, not the requests they came
// from: an entry keeps copies of the method and path, never substrings that
// would pin a whole request line (up to the 64 KiB of headers) in memory.
func TestAFullJournalHoldsOnlyWhatItLists(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	long := strings.Repeat("q", 60<<10)
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	c.do("GET", "/agent/runs", nil) // the session and its journal exist
	before := heap()
	const requests = 500 // a journal's worth
	for i := range requests {
		// Each request line is its own 60 KB; the journal keeps its path.
		c.do("GET", "/agent/runs?q="+strconv.Itoa(i)+long, nil)
	}
	grown := int64(heap()) - int64(before)
	var attempts []mockserver.Attempt
	c.do("GET", "/__mock/requests", nil).json(t, &attempts)
	require.Len(t, attempts, requests)
	// 500 entries of at most about 400 bytes each, with room for the
	// runtime's own noise; pinned request lines would be 30 MB.
	assert.Less(t, grown, int64(2<<20), "the heap grew by %d bytes for %d journal entries", grown, requests)
}

// 7. Fault and fate rules are capped per session, and so are a pattern's
// size, its compiled size and the text it runs over.
func TestRulesAndPatternsAreCapped(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	for i := range 100 {
		require.Equal(t, http.StatusOK, c.do("POST", "/__mock/faults", map[string]any{"path": "/nowhere/" + strconv.Itoa(i), "status": 503}).status)
		require.Equal(t, http.StatusOK, c.do("POST", "/__mock/fates", map[string]any{"prompt_pattern": "^nothing " + strconv.Itoa(i) + "$", "state": "FAILED"}).status)
	}
	r := c.do("POST", "/__mock/faults", map[string]any{"path": "/x", "status": 503})
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	assert.Contains(t, r.problem(t).Detail, "maximum of 100")
	r = c.do("POST", "/__mock/fates", map[string]any{"prompt_pattern": "x", "state": "FAILED"})
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	assert.Contains(t, r.problem(t).Detail, "maximum of 100")

	d := c.in("patterns")
	for pattern, why := range map[string]string{
		strings.Repeat("a", 1025): "limit is 1024",
		`((ab|cd|ef|gh){30}){30}`: "instructions",
		`(\pL\pN){999}`:           "instructions",
	} {
		r = d.do("POST", "/__mock/fates", map[string]any{"prompt_pattern": pattern, "state": "FAILED"})
		require.Equal(t, http.StatusBadRequest, r.status, "%.40s: %s", pattern, r.body)
		assert.Contains(t, r.problem(t).Detail, why)
	}
	r = d.do("POST", "/__mock/faults", map[string]any{"path": strings.Repeat("*", 1025), "status": 503})
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)

	// A pattern sees the first 4096 bytes of a prompt.
	require.Equal(t, http.StatusOK, d.do("POST", "/__mock/fates", map[string]any{"prompt_pattern": "marker", "state": "FAILED"}).status)
	d.advance(time.Hour)
	early := d.create(map[string]any{"prompt": strings.Repeat("x", 4000) + " marker"}).RunID
	late := d.create(map[string]any{"prompt": strings.Repeat("x", 4100) + " marker"}).RunID
	d.advance(time.Hour)
	assert.Equal(t, mockserver.State("FAILED"), d.get(early).State)
	assert.Equal(t, mockserver.State("SUCCEEDED"), d.get(late).State)
}

// 16. With the control API off, its headers are refused too.
func TestNoControlRefusesTheControlHeaders(t *testing.T) {
	c := newMock(t, mockserver.Options{DisableControl: true})
	for _, h := range [][2]string{{mockserver.SessionHeader, "job-a"}, {mockserver.FaultHeader, "status=503"}, {mockserver.FateHeader, "state=FAILED"}} {
		r := c.do("POST", "/agent/run", map[string]any{"prompt": "p"}, h[0], h[1])
		require.Equal(t, http.StatusBadRequest, r.status, "%s: %s", h[0], r.body)
		assert.Contains(t, r.problem(t).Detail, h[0])
	}
	assert.Equal(t, http.StatusOK, c.do("POST", "/agent/run", map[string]any{"prompt": "p"}).status)
}

// 11. A query the mock cannot read completely is a 400 naming what is
// wrong, never a 200 with a filter, limit or cursor dropped.
func TestQueriesThatDoNotParseAreRefused(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	many := strings.Repeat("x=1&", 10_000) + "state=QUEUED"
	for _, tc := range []struct{ path, names string }{
		{"/agent/runs?state=BOGUS%zz", "state"},
		{"/agent/runs?limit=1%zz", "limit"},
		{"/agent/runs?cursor=%", "cursor"},
		{"/agent/runs?st%zzate=QUEUED", "st%zzate"},
		{"/agent/runs?state=QUEUED;limit=1", "';'"},
		{"/agent/runs?" + many, "10001 parameters"},
		{"/__mock/requests?limit=%zz", "limit"},
	} {
		r := c.do("GET", tc.path, nil)
		require.Equal(t, http.StatusBadRequest, r.status, "%.80s: %.200s", tc.path, r.body)
		assert.Contains(t, r.problem(t).Detail, tc.names, "%.80s", tc.path)
	}
	// Well-formed queries, repeated parameters and encoded ';' included, still work.
	assert.Equal(t, http.StatusOK, c.do("GET", "/agent/runs?state=QUEUED&state=SUCCEEDED&limit=2", nil).status)
	assert.Equal(t, http.StatusOK, c.do("GET", "/agent/runs?q=a%3Bb", nil).status)
}

// The query cap counts names, not repeats: an events poll may name the 500
// runs the document allows, while a query of more than 100 names, or of
// more parameters than any operation reads, is still refused.
func TestTheQueryCapLetsAnEventsPollNameItsRuns(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	run := "f29d0da9-953f-48f1-a09f-76b5a170b338" // Alice's fixture run
	runIDs := func(n int) string { return strings.TrimSuffix(strings.Repeat("run_ids="+run+"&", n), "&") }
	r := c.do("GET", "/agent/events?"+runIDs(500)+"&since=0&limit=500", nil)
	require.Equal(t, http.StatusOK, r.status, "%.300s", r.body)
	r = c.do("GET", "/agent/events?"+runIDs(501), nil)
	require.Equal(t, http.StatusBadRequest, r.status, "%.300s", r.body)
	assert.Contains(t, r.problem(t).Detail, "run_ids")

	var names strings.Builder
	for i := range 101 {
		fmt.Fprintf(&names, "p%d=1&", i)
	}
	r = c.do("GET", "/agent/runs?"+names.String()+"limit=1", nil)
	require.Equal(t, http.StatusBadRequest, r.status, "%.300s", r.body)
	assert.Contains(t, r.problem(t).Detail, "102 names")
}

// 14. A cursor is good in the mock session, and the incarnation of it,
// that issued it: another session, a reset, or a session closed and opened
// again refuse it with a 400 saying why; a restart with the state saved
// keeps it good.
func TestCursorsAreBoundToTheirSession(t *testing.T) {
	opts := mockserver.Options{MaxSessions: 2}
	s := newServer(t, opts)
	c := serve(t, s)
	a := c.in("cursor-a")
	for range 3 {
		a.create(map[string]any{"prompt": "page me"})
	}
	next := func(cl *client) string {
		page := cl.list("limit=1")
		require.True(t, page.PageInfo.HasNextPage)
		return page.PageInfo.NextCursor
	}
	refused := func(cl *client, cur, why string) {
		t.Helper()
		r := cl.do("GET", "/agent/runs?limit=1&cursor="+cur, nil)
		require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
		assert.Contains(t, r.problem(t).Detail, why)
	}
	cur := next(a)
	assert.Equal(t, http.StatusOK, a.do("GET", "/agent/runs?limit=1&cursor="+cur, nil).status, "good where it was issued")
	refused(c.in("cursor-b"), cur, "another mock session")
	refused(c, cur, "another mock session")

	// A restart that keeps the state keeps the cursor good.
	var saved bytes.Buffer
	require.NoError(t, s.Save(&saved))
	s2 := newServer(t, opts)
	require.NoError(t, s2.Load(bytes.NewReader(saved.Bytes())))
	c2 := serve(t, s2)
	assert.Equal(t, http.StatusOK, c2.in("cursor-a").do("GET", "/agent/runs?limit=1&cursor="+cur, nil).status, "good after a restart with the state")

	// A reset starts a new incarnation.
	require.Equal(t, http.StatusOK, a.do("POST", "/__mock/reset", nil).status)
	refused(a, cur, "reset or closed")

	// So does a session closed to make room and opened again.
	a.create(map[string]any{"prompt": "page me"})
	a.create(map[string]any{"prompt": "page me"})
	cur = next(a)
	c.in("cursor-c").list("")
	c.in("cursor-d").list("") // two sessions open at most: cursor-a is closed
	refused(a, cur, "reset or closed")
}

// 8. One page of runs costs a bounded number of bytes whatever limit is
// asked for: a page over the budget ends early with has_next_page and a
// cursor, and walking on still yields every run once.
func TestAPageOfRunsHasAByteBudget(t *testing.T) {
	c := newMock(t, mockserver.Options{}).in("big-pages")
	big := strings.Repeat("a long prompt ", 700<<10/14) // about 700 KB
	created := map[string]bool{}
	for range 5 {
		created[c.create(map[string]any{"prompt": big, "config": map[string]any{"name": "big"}}).RunID] = true
	}
	seen := map[string]int{}
	cursor, pages := "", 0
	for {
		q := "name=big&sort_by=created_at&limit=500"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		r := c.do("GET", "/agent/runs?"+q, nil)
		require.Equal(t, http.StatusOK, r.status)
		assert.LessOrEqual(t, len(r.body), 2<<20+800<<10, "the page's bytes stay within the budget plus one run")
		var page mockserver.ListRunsResponse
		r.json(t, &page)
		require.NotEmpty(t, page.Runs, "a page always holds at least one run")
		for _, run := range page.Runs {
			seen[run.RunID]++
		}
		pages++
		if !page.PageInfo.HasNextPage {
			break
		}
		cursor = page.PageInfo.NextCursor
	}
	assert.Greater(t, pages, 1, "the 3.5 MB of runs did not fit one page")
	assert.Len(t, seen, len(created))
	for id := range created {
		assert.Equal(t, 1, seen[id], "run %s listed once", id)
	}
}

// 15. A walk in creation order sees every run exactly once while the runs
// progress and the clock moves between pages (the promise
// docs/reliability.md makes; orders by updated_at make none).
func TestACreationOrderWalkSeesEachRunOnceWhileRunsProgress(t *testing.T) {
	c := newMock(t, mockserver.Options{}).in("moving-walk")
	want := map[string]bool{}
	for i := range 30 {
		want[c.create(map[string]any{"prompt": "walk " + strconv.Itoa(i), "config": map[string]any{"name": "walk"}}).RunID] = true
		c.advance(time.Second)
	}
	for _, order := range []string{"desc", "asc"} {
		seen, cursor := map[string]int{}, ""
		for {
			q := "name=walk&sort_by=created_at&sort_order=" + order + "&limit=4"
			if cursor != "" {
				q += "&cursor=" + cursor
			}
			page := c.list(q)
			for _, r := range page.Runs {
				seen[r.RunID]++
			}
			// Runs move on and new ones arrive between pages.
			c.advance(7 * time.Second)
			c.create(map[string]any{"prompt": "late", "config": map[string]any{"name": "walk"}})
			if !page.PageInfo.HasNextPage {
				break
			}
			cursor = page.PageInfo.NextCursor
		}
		for id := range want {
			assert.Equal(t, 1, seen[id], "%s: run %s", order, id)
		}
	}
}

// 13. The control token and API keys are checked alike (RFC 7235): the
// scheme is required and its case does not matter.
func TestControlTokenSchemeIsRequiredAndCaseInsensitive(t *testing.T) {
	c := newMock(t, mockserver.Options{ControlToken: "ctl"})
	for auth, want := range map[string]int{"Bearer ctl": 200, "bearer ctl": 200, "BEARER ctl": 200, "ctl": 401, "Basic ctl": 401} {
		assert.Equal(t, want, c.do("GET", "/__mock/info", nil, "Authorization", auth).status, "control %q", auth)
	}
	for auth, want := range map[string]int{"bearer wk-mock-alice": 200, "wk-mock-alice": 401} {
		assert.Equal(t, want, c.do("GET", "/agent/runs", nil, "Authorization", auth).status, "API %q", auth)
	}
}

// The dashboard's refusals read as every other refusal of the mock: a file
// it does not have is a 404 problem, a method it does not take a 405
// problem with Allow.
func TestDashboardRefusalsAreProblems(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	r := c.do("GET", "/__mock/ui/no-such-file.js", nil)
	require.Equal(t, http.StatusNotFound, r.status, "%s", r.body)
	assert.Contains(t, r.problem(t).Detail, "no-such-file.js")
	for _, method := range []string{"POST", "DELETE", "OPTIONS"} {
		r = c.do(method, "/__mock/ui/", nil)
		require.Equal(t, http.StatusMethodNotAllowed, r.status, "%s: %s", method, r.body)
		assert.Contains(t, r.problem(t).Detail, method)
		assert.Equal(t, "GET, HEAD", r.header.Get("Allow"))
	}
	assert.Equal(t, http.StatusOK, c.do("GET", "/__mock/ui/app.js", nil).status, "the files it has are served as before")
}

// trickle opens a connection and sends a create whose body stops after
// sent bytes, a prompt of length bytes; it returns the connection (closed
// with the test) and the rest of the body.
func trickle(t *testing.T, base string, length, sent int) (net.Conn, string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	body := `{"prompt":"` + strings.Repeat("t", length) + `"}`
	_, err = io.WriteString(conn, "POST /agent/run HTTP/1.1\r\nHost: mock\r\nAuthorization: Bearer wk-mock-alice\r\n"+
		"Content-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body[:sent])
	require.NoError(t, err)
	return conn, body[sent:]
}

// patience bounds a wait for a condition that a correct mock meets in
// milliseconds: far beyond what any busy machine stretches that to, so it
// only ends a wait on a mock that never meets it.
const patience = 2 * time.Minute

// eventually retries probe until it is true, for up to patience; it waits
// for a condition, never for a time.
func eventually(probe func() bool) bool {
	for deadline := time.Now().Add(patience); time.Now().Before(deadline); runtime.Gosched() {
		if probe() {
			return true
		}
	}
	return false
}

// A body that is still arriving holds no in-flight slot: clients trickling
// bodies, as many as the cap, lock nobody out, however long the body
// timeout; once a body has arrived, its request takes a slot again and is
// answered. The bodies being received are bounded by bytes instead.
func TestTrickledBodiesHoldNoInFlightSlot(t *testing.T) {
	onBothListeners(t, testTrickledBodiesHoldNoInFlightSlot)
}

func testTrickledBodiesHoldNoInFlightSlot(t *testing.T, serve func(testing.TB, http.Handler) *client) {
	s := newServer(t, mockserver.Options{BodyTimeout: time.Hour})
	const places = 3
	// Counts the creates past the limiter, so each trickle is known to be
	// in before the next is sent: entering takes a place for a moment.
	var entered atomic.Int32
	c := serve(t, mockserver.LimitInFlight(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			entered.Add(1)
		}
		s.ServeHTTP(w, r)
	}), places))
	var conns []net.Conn
	var rests []string
	for i := range places + 1 {
		conn, rest := trickle(t, c.base, 40, 10)
		conns, rests = append(conns, conn), append(rests, rest)
		require.True(t, eventually(func() bool { return entered.Load() == int32(i+1) }), "trickle %d entered", i)
	}
	served := eventually(func() bool { return c.do("GET", "/agent/runs?limit=1", nil).status == http.StatusOK })
	require.True(t, served, "other callers are served while bodies trickle in")
	assert.True(t, eventually(func() bool { return c.do("GET", "/__mock/info", nil).status == http.StatusOK }))
	for i, conn := range conns {
		_, err := io.WriteString(conn, rests[i])
		require.NoError(t, err)
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, "the finished body is answered: %s", body)
	}
}

// The bytes of bodies being received are capped: past the budget a body
// is refused with a retryable 429, and the budget is free again once the
// body holding it goes.
func TestBodiesBeingReceivedHaveAByteBudget(t *testing.T) {
	s := newServer(t, mockserver.Options{BodyTimeout: time.Hour, BodyBudget: 100})
	c := serve(t, s)
	stalled, _ := trickle(t, c.base, 200, 90)
	// The stalled body holds about 90 bytes once read; a create of 40
	// bytes more is then over the budget.
	refused := eventually(func() bool {
		return c.do("POST", "/agent/run", `{"prompt":"over the body budget"}`).status == http.StatusTooManyRequests
	})
	require.True(t, refused, "a body over the budget is refused")
	r := c.do("POST", "/agent/run", `{"prompt":"over the body budget"}`)
	require.Equal(t, http.StatusTooManyRequests, r.status, "%s", r.body)
	p := r.problem(t)
	assert.True(t, p.Retryable)
	assert.Contains(t, p.Detail, "100 bytes")
	require.NoError(t, stalled.Close())
	created := eventually(func() bool {
		return c.do("POST", "/agent/run", `{"prompt":"within the body budget"}`).status == http.StatusOK
	})
	assert.True(t, created, "the budget is given back when the stalled body goes")
}

// schedule creates a schedule in c's session and returns it.
func schedule(t *testing.T, c *client, cron string) mockserver.ScheduledAgentItem {
	t.Helper()
	r := c.do("POST", "/agent/schedules", map[string]any{"name": "nightly", "cron_schedule": cron, "prompt": "triage"})
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	var sc mockserver.ScheduledAgentItem
	r.json(t, &sc)
	return sc
}

// A cron with no tick ahead is refused with a 400 naming it, on create,
// update and resume, changing nothing; and a state file the mock wrote
// always loads, an enabled schedule whose ticks have run out included.
func TestACronThatNeverFiresIsRefusedAndStateAlwaysLoads(t *testing.T) {
	s := newServer(t, mockserver.Options{})
	c := serve(t, s)
	for _, cron := range []string{"0 0 30 2 *", "0 0 31 4 *", "0 0 31 11 *"} {
		r := c.do("POST", "/agent/schedules", map[string]any{"name": "never", "cron_schedule": cron, "prompt": "p"})
		require.Equal(t, http.StatusBadRequest, r.status, "%s: %s", cron, r.body)
		assert.Contains(t, r.problem(t).Detail, cron)
	}
	sc := schedule(t, c, "0 3 * * *")
	r := c.do("PUT", "/agent/schedules/"+sc.ID, map[string]any{"name": "never", "cron_schedule": "0 0 30 2 *", "prompt": "p", "enabled": true})
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	assert.Contains(t, r.problem(t).Detail, "0 0 30 2 *")
	var got mockserver.ScheduledAgentItem
	c.do("GET", "/agent/schedules/"+sc.ID, nil).json(t, &got)
	assert.Equal(t, "0 3 * * *", got.CronSchedule, "a refused update changes nothing")
	r = c.do("POST", "/agent/schedules", map[string]any{"name": "paused", "cron_schedule": "0 0 30 2 *", "prompt": "p", "enabled": false})
	require.Equal(t, http.StatusCreated, r.status, "a paused schedule never fires anyway: %s", r.body)
	var paused mockserver.ScheduledAgentItem
	r.json(t, &paused)
	r = c.do("POST", "/agent/schedules/"+paused.ID+"/resume", nil)
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	assert.Contains(t, r.problem(t).Detail, "0 0 30 2 *")

	// The clock moves to the end of 9999: the schedule has no tick left,
	// shows next_run null, and its state saves and loads.
	r = c.do("PUT", "/__mock/clock", map[string]string{"now": "9999-12-31T23:59:59Z"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	c.do("GET", "/agent/schedules/"+sc.ID, nil).json(t, &got)
	assert.Nil(t, got.History.NextRun)
	s2 := newServer(t, mockserver.Options{})
	require.NoError(t, s2.Load(bytes.NewReader(saved(t, s))), "a mock loads every file it saved")
	c2 := serve(t, s2)
	c2.do("GET", "/agent/schedules/"+sc.ID, nil).json(t, &got)
	assert.True(t, got.Enabled)
	assert.Nil(t, got.History.NextRun)
	r = c2.do("POST", "/agent/schedules", map[string]any{"name": "too late", "cron_schedule": "* * * * *", "prompt": "p"})
	require.Equal(t, http.StatusBadRequest, r.status, "no tick is left before the end of the clock: %s", r.body)
}

// Schedules fire after 2262-04-11, where nanoseconds since 1970 overflow,
// and a clock moved across centuries does not hang the catch-up.
func TestSchedulesFireAcrossTheCenturies(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	r := c.do("PUT", "/__mock/clock", map[string]string{"now": "2262-04-12T00:00:00Z"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	nightly := schedule(t, c, "0 3 * * *")
	c.advance(24 * time.Hour)
	var got mockserver.ScheduledAgentItem
	c.do("GET", "/agent/schedules/"+nightly.ID, nil).json(t, &got)
	require.NotNil(t, got.History.LastRan, "the schedule fired in 2262")
	assert.Equal(t, "2262-04-12T03:00:00.000Z", *got.History.LastRan)

	yearly := schedule(t, c, "0 0 1 1 *")
	r = c.do("PUT", "/__mock/clock", map[string]string{"now": "9990-06-01T00:00:00Z"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	c.do("GET", "/agent/schedules/"+yearly.ID, nil).json(t, &got)
	require.NotNil(t, got.History.LastRan)
	assert.Equal(t, "9990-01-01T00:00:00.000Z", *got.History.LastRan)
}

// The inbox reads its parameters as runs and events do: a parameter
// repeated with another value is a 400 naming it, never the first taken.
func TestTheInboxRefusesConflictingRepeats(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	run := "f29d0da9-953f-48f1-a09f-76b5a170b338"
	for _, tc := range []struct{ query, name string }{
		{"limit=5&limit=6", "limit"},
		{"unread=true&unread=false", "unread"},
		{"since=2026-01-01T00:00:00Z&since=2026-02-01T00:00:00Z", "since"},
	} {
		r := c.do("GET", "/agent/messages/"+run+"?"+tc.query, nil)
		require.Equal(t, http.StatusBadRequest, r.status, "%s: %s", tc.query, r.body)
		assert.Contains(t, r.problem(t).Detail, tc.name)
	}
	assert.Equal(t, http.StatusOK, c.do("GET", "/agent/messages/"+run+"?limit=5&limit=5", nil).status, "the same value repeated is one")
}

// Keys issued for an agent through the control API are capped, as rules
// are: past the cap a 400 says so, and the keys issued keep working.
func TestAgentKeysAreCapped(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	var agents struct {
		Agents []struct {
			UID string `json:"uid"`
		} `json:"agents"`
	}
	r := c.do("GET", "/agent/identities", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r.json(t, &agents)
	require.NotEmpty(t, agents.Agents)
	uid := agents.Agents[0].UID
	var first mockserver.AgentKey
	for i := range 100 {
		r = c.do("POST", "/__mock/identities/"+uid+"/keys", nil)
		require.Equal(t, http.StatusCreated, r.status, "key %d: %s", i, r.body)
		if i == 0 {
			r.json(t, &first)
		}
	}
	r = c.do("POST", "/__mock/identities/"+uid+"/keys", nil)
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	assert.Contains(t, r.problem(t).Detail, "100 keys")
	assert.Equal(t, http.StatusOK, c.as(first.APIKey).do("GET", "/agent/runs?limit=1", nil).status)
}

// A reported event's ref_id and execution_id are bounded: the log keeps
// every event, so an id the size of a body would stay for good.
func TestReportedEventFieldsAreBounded(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	id := c.create(map[string]any{"prompt": "reports its progress"}).RunID
	for _, field := range []string{"ref_id", "execution_id"} {
		r := c.do("POST", "/agent/events/"+id, map[string]any{"event_type": "run_in_progress", field: strings.Repeat("e", 1025)})
		require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
		assert.Contains(t, r.problem(t).Detail, field)
	}
	r := c.do("POST", "/agent/events/"+id, map[string]any{"event_type": "run_in_progress", "ref_id": strings.Repeat("e", 1024)})
	assert.Equal(t, http.StatusOK, r.status, "%s", r.body)
}

// A message sent to many runs is stored once: the state file holds its
// body once, not once per recipient. A message is bounded in size (a 400
// naming the limit) and a run's inbox in count (a 429 that says retrying
// will not help); a refused send stores nothing.
func TestAMessageIsStoredOnceAndBounded(t *testing.T) {
	s := newServer(t, mockserver.Options{})
	c := serve(t, s)
	from := c.create(map[string]any{"prompt": "lead"}).RunID
	var to []string
	for range 100 {
		to = append(to, c.create(map[string]any{"prompt": "helper"}).RunID)
	}
	body := strings.Repeat("m", 64<<10) // the most a message body may hold
	r := c.do("POST", "/agent/messages", map[string]any{"to": to, "subject": "plan", "body": body, "sender_run_id": from})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, 1, bytes.Count(saved(t, s), []byte(body)), "the state file holds the body once")

	r = c.do("POST", "/agent/messages", map[string]any{"to": to[:1], "subject": "plan", "body": body + "m", "sender_run_id": from})
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	assert.Contains(t, r.problem(t).Detail, "body")
	assert.Contains(t, r.problem(t).Detail, "65536")

	for i := 1; i < 1000; i++ { // a run's inbox holds 1000
		send(t, c, from, to[0])
	}
	r = c.do("POST", "/agent/messages", map[string]any{"to": []string{to[1], to[0]}, "subject": "s", "body": "b", "sender_run_id": from})
	require.Equal(t, http.StatusTooManyRequests, r.status, "%s", r.body)
	assert.False(t, r.problem(t).Retryable)
	assert.Contains(t, r.problem(t).Detail, "to[1]")
	assert.Contains(t, r.problem(t).Detail, "1000 messages")
	assert.Len(t, inbox(t, c, to[1], ""), 1, "the refused send stored nothing")
}

// A poll answers within the byte budget of a page of runs, ending before
// the event that would pass it; polling on from the last sequence gets
// every event once, in order.
func TestAnEventsPollHasAByteBudget(t *testing.T) {
	const budget = 8 << 10
	c := newMock(t, mockserver.Options{MaxPageBytes: budget})
	id := c.create(map[string]any{"prompt": "reports a lot"}).RunID
	id2 := c.create(map[string]any{"prompt": "reports a lot too"}).RunID
	for i := range 20 {
		kind := []string{"run_in_progress", "run_blocked"}[i%2]
		for _, run := range []string{id, id2} {
			r := c.do("POST", "/agent/events/"+run, map[string]any{"event_type": kind, "ref_id": strings.Repeat("r", 1024), "execution_id": strings.Repeat("x", 1024)})
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		}
	}
	var all []mockserver.RunEvent
	since, polls := int64(0), 0
	for ; polls < 100; polls++ {
		r := c.do("GET", fmt.Sprintf("/agent/events?run_ids=%s&run_ids=%s&limit=500&since=%d", id, id2, since), nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		assert.LessOrEqual(t, len(r.body), budget+3<<10, "the budget plus at most one event")
		var got []mockserver.RunEvent
		r.json(t, &got)
		if len(got) == 0 {
			break
		}
		all = append(all, got...)
		since = got[len(got)-1].Sequence
	}
	assert.Greater(t, polls, 4, "answers ended early")
	require.Len(t, all, 40)
	for i := 1; i < len(all); i++ {
		assert.Less(t, all[i-1].Sequence, all[i].Sequence, "in order, each once")
	}
}

// A run's events in the log are bounded: past the bound a report is
// refused (429, not retryable), never an old event dropped, so the
// sequences a poll answered stay true.
func TestARunsEventsAreBounded(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	id := c.create(map[string]any{"prompt": "blocks forever"}).RunID
	var last int
	var firstSeq mockserver.ReportEventResponse
	for i := 0; ; i++ {
		kind := []string{"run_in_progress", "run_blocked"}[i%2]
		r := c.do("POST", "/agent/events/"+id, map[string]any{"event_type": kind})
		if i == 0 {
			r.json(t, &firstSeq)
		}
		if r.status != http.StatusOK {
			require.Equal(t, http.StatusTooManyRequests, r.status, "%s", r.body)
			assert.False(t, r.problem(t).Retryable)
			assert.Contains(t, r.problem(t).Detail, "1000 events")
			break
		}
		require.Less(t, i, 2000, "reports are bounded")
		last = i
	}
	assert.Equal(t, 999, last, "the first report recorded the run's first event")
	var first []mockserver.RunEvent
	c.do("GET", "/agent/events?run_ids="+id+"&limit=1", nil).json(t, &first)
	require.Len(t, first, 1)
	assert.Equal(t, firstSeq.Sequence, first[0].Sequence, "the oldest event is kept")
}

// Schedules are bounded: a name, a prompt and a configuration in size (a
// 400 naming the field and the limit, on create and replace), and a team's
// count (a 429 that says retrying will not help; deleting one makes room).
// So the listing, which the API does not page, is bounded too.
func TestSchedulesAreBounded(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	body := func(name, prompt string, cfg map[string]any) map[string]any {
		b := map[string]any{"name": name, "cron_schedule": "0 3 * * *", "prompt": prompt}
		if cfg != nil {
			b["agent_config"] = cfg
		}
		return b
	}
	for _, tc := range []struct {
		body        map[string]any
		field, size string
	}{
		{body(strings.Repeat("n", 257), "p", nil), "name", "256"},
		{body("n", strings.Repeat("p", 16<<10+1), nil), "prompt", "16384"},
		{body("n", "p", map[string]any{"base_prompt": strings.Repeat("b", 16<<10)}), "agent_config", "16384"},
	} {
		r := c.do("POST", "/agent/schedules", tc.body)
		require.Equal(t, http.StatusBadRequest, r.status, "%s: %s", tc.field, r.body)
		assert.Contains(t, r.problem(t).Detail, tc.field)
		assert.Contains(t, r.problem(t).Detail, tc.size)
	}
	first := schedule(t, c, "0 3 * * *")
	r := c.do("PUT", "/agent/schedules/"+first.ID, map[string]any{"name": "n", "cron_schedule": "0 3 * * *", "prompt": strings.Repeat("p", 16<<10+1), "enabled": true})
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	assert.Contains(t, r.problem(t).Detail, "prompt")

	big := body(strings.Repeat("n", 256), strings.Repeat("p", 16<<10), nil)
	for i := 1; i < 100; i++ {
		r := c.do("POST", "/agent/schedules", big)
		require.Equal(t, http.StatusCreated, r.status, "schedule %d: %s", i, r.body)
	}
	r = c.do("POST", "/agent/schedules", big)
	require.Equal(t, http.StatusTooManyRequests, r.status, "%s", r.body)
	assert.False(t, r.problem(t).Retryable)
	assert.Contains(t, r.problem(t).Detail, "100 schedules")
	r = c.do("GET", "/agent/schedules", nil)
	require.Equal(t, http.StatusOK, r.status)
	assert.Less(t, len(r.body), 4<<20, "the listing is bounded by the bounds")
	require.Equal(t, http.StatusCreated, c.as("wk-mock-carol").do("POST", "/agent/schedules", big).status, "another team has its own room")
	require.Equal(t, http.StatusOK, c.do("DELETE", "/agent/schedules/"+first.ID, nil).status)
	require.Equal(t, http.StatusCreated, c.do("POST", "/agent/schedules", big).status, "deleting one makes room")
}
