package proxy

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/rules"
)

func mockUpstream(t testing.TB) string {
	t.Helper()
	m, err := mockserver.New(mockserver.Options{})
	require.NoError(t, err)
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return srv.URL
}

// serveProxy serves a proxy; its second result waits for every exchange
// to have been checked: once the server's handlers have all returned,
// every answer is queued (a caller may read an answer's last byte before
// the proxy has queued it).
func serveProxy(t *testing.T, opts Options) (*Proxy, func() error, string) {
	t.Helper()
	p, err := New(opts)
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Close() })
	return p, func() error { srv.Close(); return p.Drain(context.Background()) }, srv.URL
}

func getWithKey(t *testing.T, url string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer wk-mock-alice")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
}

// Several workers check at once, yet the exchanges of one run are checked
// in the order their answers completed. The workers are held back until
// every answer has completed, then all let go together, so they race: only
// the routing of a run to one worker keeps its exchanges in order. Seven
// runs over four workers: taken in turn, each run's exchanges would land
// on every worker.
func TestEachRunIsCheckedInOrderOnSeveralWorkers(t *testing.T) {
	gate := make(chan struct{})
	var mu sync.Mutex
	order := map[string][]int{}
	p, drained, url := serveProxy(t, Options{Upstream: mockUpstream(t), Workers: 4, beforeCheck: func(x *pending) {
		<-gate
		n, _ := strconv.Atoi(x.query.Get("n"))
		mu.Lock()
		order[runIDOfPath(x.apiPath)] = append(order[runIDOfPath(x.apiPath)], n)
		mu.Unlock()
	}})
	const exchanges = 280
	for i := range exchanges {
		getWithKey(t, fmt.Sprintf("%s/agent/runs/run-%d?n=%d", url, i%7, i))
	}
	close(gate)
	require.NoError(t, drained())

	assert.Len(t, order, 7)
	for run, seen := range order {
		assert.Len(t, seen, exchanges/7, run)
		assert.IsIncreasing(t, seen, "run %s checked out of order", run)
	}
	s := p.Summary()
	assert.Equal(t, exchanges, s.Checked)
	assert.Empty(t, s.Unchecked)
}

func runIDOfPath(p string) string { return firstSegment(p[len("/agent/runs/"):]) }

// Where each kind of exchange is checked: a run's own paths and its
// creation on the run's worker, a session's reset on every worker, a
// page of runs on the next in turn.
func TestExchangesGoToTheWorkerOfTheirRun(t *testing.T) {
	created := &pending{method: http.MethodPost, apiPath: "/agent/run", status: 200, respHeader: http.Header{},
		respBody: &capture{limit: 1 << 20}}
	created.respBody.write([]byte(`{"run_id":"r-1","state":"QUEUED"}`))
	for _, tc := range []struct {
		x        *pending
		key      string
		everyone bool
	}{
		{&pending{method: http.MethodGet, apiPath: "/agent/runs/r-1"}, "r-1", false},
		{&pending{method: http.MethodPost, apiPath: "/agent/runs/r%2D1/cancel"}, "r-1", false},
		{&pending{method: http.MethodPost, apiPath: "/agent/events/r-1"}, "r-1", false},
		{&pending{method: http.MethodPost, apiPath: "/__mock/runs/r-1/state"}, "r-1", false},
		{created, "r-1", false},
		{&pending{method: http.MethodGet, apiPath: "/agent/events", query: map[string][]string{"run_ids": {"r-1"}}}, "r-1", false},
		{&pending{method: http.MethodGet, apiPath: "/agent/events", query: map[string][]string{"run_ids": {"r-2", "r-1"}}}, "r-1,r-2", false},
		{&pending{method: http.MethodPost, apiPath: "/__mock/reset"}, "", true},
		{&pending{method: http.MethodDelete, apiPath: "/__mock/session"}, "", true},
		{&pending{method: http.MethodGet, apiPath: "/__mock/requests"}, "", false},
		{&pending{method: http.MethodGet, apiPath: "/agent/runs"}, "", false},
	} {
		key, everyone := shardKey(tc.x)
		assert.Equal(t, tc.key, key, tc.x.method+" "+tc.x.apiPath)
		assert.Equal(t, tc.everyone, everyone, tc.x.method+" "+tc.x.apiPath)
	}
}

// A session's reset is checked after everything before it, on every
// worker, and before everything after it: the rules then judge the runs
// after it in the session's new world.
func TestAResetIsCheckedBetweenWhatCameBeforeAndAfter(t *testing.T) {
	gate := make(chan struct{})
	var mu sync.Mutex
	var order []string
	_, drained, url := serveProxy(t, Options{Upstream: mockUpstream(t), Workers: 3, beforeCheck: func(x *pending) {
		<-gate
		mu.Lock()
		order = append(order, x.method+" "+x.apiPath)
		mu.Unlock()
	}})
	for i := range 12 {
		getWithKey(t, fmt.Sprintf("%s/agent/runs/before-%d", url, i))
	}
	resp, err := http.Post(url+"/__mock/reset", "", nil)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	for i := range 12 {
		getWithKey(t, fmt.Sprintf("%s/agent/runs/after-%d", url, i))
	}
	close(gate)
	require.NoError(t, drained())
	require.Len(t, order, 25)
	assert.Equal(t, "POST /__mock/reset", order[12], "the reset is checked 13th: %v", order)
}

// With backpressure a full queue holds the caller back instead of letting
// its exchange pass unchecked. The queues hold a single byte, so every
// exchange beyond the one being checked finds them full.
func TestBackpressureLeavesNothingUnchecked(t *testing.T) {
	traffic := func(url string) int {
		var wg sync.WaitGroup
		const callers, each = 8, 10
		for range callers {
			wg.Go(func() {
				for range each {
					getWithKey(t, url+"/agent/runs?limit=5")
				}
			})
		}
		wg.Wait()
		return callers * each
	}

	p, drained, url := serveProxy(t, Options{Upstream: mockUpstream(t), Workers: 2, QueueBytes: 1, Backpressure: true})
	n := traffic(url)
	require.NoError(t, drained())
	s := p.Summary()
	assert.Equal(t, n, s.Exchanges)
	assert.Equal(t, n, s.Checked)
	assert.Empty(t, s.Unchecked)

	// The same traffic without it: nothing fits, nothing is checked.
	p, drained, url = serveProxy(t, Options{Upstream: mockUpstream(t), Workers: 2, QueueBytes: 1})
	n = traffic(url)
	require.NoError(t, drained())
	s = p.Summary()
	assert.Equal(t, n, s.Exchanges)
	assert.Zero(t, s.Checked)
	assert.Equal(t, n, s.Unchecked["the check queue was full"])
}

// The proxy lists the rules it applies to the traffic, and no rule only
// the suite applies (an empty filter judged against the same listing
// without it): a rule listed with 0 violations would claim a check that
// never ran.
func TestTheProxyListsOnlyTheRulesItApplies(t *testing.T) {
	p, err := New(Options{Upstream: "http://127.0.0.1:1"})
	require.NoError(t, err)
	defer p.Close()
	listed := map[string]bool{}
	for _, r := range p.Summary().Rules {
		listed[r.ID] = true
	}
	assert.False(t, listed[rules.EmptyFilterIsNoFilter], "the suite alone applies it")
	assert.True(t, listed[rules.ListingMatchesFilters])
	assert.True(t, listed[rules.ResponseFollowsDocument])
}

// A look that only a follow-up could explain (a run QUEUED again with its
// first started_at) is held, not dropped: with no follow-up seen, it is
// a violation once the traffic is drained.
func TestALookOnlyAFollowupExplainsIsJudgedAtTheEnd(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"run_id":"r1","task_id":"r1","title":"t","prompt":"p","state":"QUEUED",` +
			`"created_at":"2026-01-01T10:00:00Z","updated_at":"2026-01-01T10:00:05Z","started_at":"2026-01-01T10:00:01Z"}`))
	}))
	t.Cleanup(upstream.Close)
	p, drained, url := serveProxy(t, Options{Upstream: upstream.URL})
	getWithKey(t, url+"/agent/runs/r1")
	require.NoError(t, drained())
	var rules []string
	for _, f := range p.Summary().Latest {
		rules = append(rules, f.Rule)
	}
	assert.Contains(t, rules, "started-at-fits-state")
}
