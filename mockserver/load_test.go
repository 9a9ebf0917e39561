package mockserver_test

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stateRank orders states as the API promises they move: forward only.
var stateRank = map[mockserver.State]int{
	mockserver.Queued: 0, mockserver.Pending: 1, mockserver.Claimed: 2, mockserver.InProgress: 3, mockserver.Blocked: 3,
	mockserver.Succeeded: 4, mockserver.Failed: 4, mockserver.Errored: 4, mockserver.Cancelled: 4,
}

// observation is a run's state as one response showed it. start and end
// are ticks of one counter taken before the request and after the answer:
// when a.end < b.start, a certainly happened before b.
type observation struct {
	start, end int64
	state      mockserver.State
	updatedAt  string // "" when the response does not show it (create, cancel)
	via        string
}

type loadRun struct {
	id      string
	team    string
	created int64 // tick once the create was answered
	obs     []observation
}

// loadTest drives a mock over real HTTP from many goroutines and records
// what every response showed, to check the invariants afterwards.
type loadTest struct {
	t      *testing.T
	base   string
	client *http.Client
	tick   atomic.Int64
	ops    atomic.Int64
	fails  atomic.Int64

	mu       sync.Mutex
	runs     map[string]*loadRun
	byTeam   map[string][]string // created runs, in the order their creates were answered
	fixtures map[string]string   // fixture run id -> team
	walks    int
	// listed is every run a list showed, with the team that listed it; a
	// run can be listed before its create is answered, so the teams are
	// compared once every create is.
	listed []struct{ id, team string }
}

var loadKeys = map[string]string{ // API key -> team
	"wk-mock-alice": "team-acme", "wk-mock-bob": "team-acme", "wk-mock-carol": "team-globex", "wk-mock-nightly": "team-globex",
}

func otherTeam(team string) string {
	if team == "team-acme" {
		return "team-globex"
	}
	return "team-acme"
}

// call sends one request and counts it; a transport error (a dropped
// connection, a refused one) is a failure of the test.
func (lt *loadTest) call(method, path, body, key string, headers ...string) (int, []byte, int64, int64) {
	start := lt.tick.Add(1)
	lt.ops.Add(1)
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, lt.base+path, rd)
	if err != nil {
		panic(err) // the test built a bad URL
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := lt.client.Do(req)
	if err != nil {
		lt.fails.Add(1)
		lt.t.Errorf("%s %s: %v", method, path, err)
		return 0, nil, start, lt.tick.Add(1)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		lt.fails.Add(1)
		lt.t.Errorf("%s %s: reading: %v", method, path, err)
	}
	if resp.StatusCode >= 500 {
		lt.fails.Add(1)
		lt.t.Errorf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, raw, start, lt.tick.Add(1)
}

func (lt *loadTest) observe(id string, o observation) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if r, ok := lt.runs[id]; ok {
		r.obs = append(r.obs, o)
	}
}

// pick returns a run created so far by the team, or "".
func (lt *loadTest) pick(rng *rand.Rand, team string) string {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	ids := lt.byTeam[team]
	if len(ids) == 0 {
		return ""
	}
	return ids[rng.Intn(len(ids))]
}

func (lt *loadTest) create(rng *rand.Rand, key string, g, i int) {
	fate := []string{"", "", "", "state=FAILED; error_code=budget_exceeded", "state=ERROR"}[rng.Intn(5)]
	fate = strings.TrimPrefix(fate+fmt.Sprintf("; step=%dms", 500+rng.Intn(3000)), "; ")
	body := fmt.Sprintf(`{"prompt":"load run %d-%d","config":{"name":"load"}}`, g, i)
	status, raw, start, end := lt.call("POST", "/agent/run", body, key, mockserver.FateHeader, fate)
	if !assert.Equal(lt.t, http.StatusOK, status, "create: %s", raw) {
		return
	}
	var out mockserver.RunAgentResponse
	if !assert.NoError(lt.t, json.Unmarshal(raw, &out)) {
		return
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if _, dup := lt.runs[out.RunID]; dup {
		lt.t.Errorf("run id %s handed out twice", out.RunID)
		return
	}
	team := loadKeys[key]
	lt.runs[out.RunID] = &loadRun{id: out.RunID, team: team, created: end,
		obs: []observation{{start: start, end: end, state: out.State, via: "create"}}}
	lt.byTeam[team] = append(lt.byTeam[team], out.RunID)
}

func (lt *loadTest) get(id, key string) {
	status, raw, start, end := lt.call("GET", "/agent/runs/"+id, "", key)
	if loadKeys[key] != lt.teamOf(id) {
		assert.Equal(lt.t, http.StatusForbidden, status, "another team's run: %s", raw)
		return
	}
	if !assert.Equal(lt.t, http.StatusOK, status, "get: %s", raw) {
		return
	}
	var it mockserver.RunItem
	if assert.NoError(lt.t, json.Unmarshal(raw, &it)) {
		lt.observe(id, observation{start: start, end: end, state: it.State, updatedAt: it.UpdatedAt, via: "get"})
	}
}

func (lt *loadTest) teamOf(id string) string {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if r, ok := lt.runs[id]; ok {
		return r.team
	}
	return lt.fixtures[id]
}

func (lt *loadTest) cancel(id, key string) {
	status, raw, start, end := lt.call("POST", "/agent/runs/"+id+"/cancel", "", key)
	switch status {
	case http.StatusOK:
		lt.observe(id, observation{start: start, end: end, state: mockserver.Cancelled, via: "cancel"})
	case http.StatusConflict: // being handed to a worker
		lt.observe(id, observation{start: start, end: end, state: mockserver.Pending, via: "cancel"})
	case http.StatusBadRequest: // already finished
	default:
		lt.t.Errorf("cancel: %d %s", status, raw)
	}
}

// walk pages through every run of the key's team under query and checks
// the walk is complete: every run created before it started appears
// exactly once, and no other team's run appears at all.
func (lt *loadTest) walk(key, query string, limit int) map[string]int {
	team := loadKeys[key]
	lt.mu.Lock()
	startTick := lt.tick.Load()
	var want []string
	for _, id := range lt.byTeam[team] {
		if lt.runs[id].created < startTick {
			want = append(want, id)
		}
	}
	lt.mu.Unlock()
	seen := map[string]int{}
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 1000 {
			lt.t.Errorf("walk %q never ends", query)
			return seen
		}
		q := fmt.Sprintf("%s&limit=%d", query, limit)
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		status, raw, start, end := lt.call("GET", "/agent/runs?"+q, "", key)
		if !assert.Equal(lt.t, http.StatusOK, status, "walk %s: %s", q, raw) {
			return seen
		}
		var page mockserver.ListRunsResponse
		if !assert.NoError(lt.t, json.Unmarshal(raw, &page)) {
			return seen
		}
		for _, it := range page.Runs {
			seen[it.RunID]++
			lt.observe(it.RunID, observation{start: start, end: end, state: it.State, updatedAt: it.UpdatedAt, via: "list"})
			lt.mu.Lock()
			lt.listed = append(lt.listed, struct{ id, team string }{it.RunID, team})
			lt.mu.Unlock()
		}
		if !page.PageInfo.HasNextPage {
			break
		}
		cursor = page.PageInfo.NextCursor
	}
	for id, n := range seen {
		assert.Equal(lt.t, 1, n, "walk %q shows run %s %d times", query, id, n)
	}
	for _, id := range want {
		assert.Equal(lt.t, 1, seen[id], "walk %q misses run %s", query, id)
	}
	lt.mu.Lock()
	lt.walks++
	lt.mu.Unlock()
	return seen
}

// checkRun verifies one run's observations: ordered pairs never go back,
// a finished run never changes, and a state shows one updated_at.
func checkRun(t *testing.T, r *loadRun) {
	for _, a := range r.obs {
		for _, b := range r.obs {
			if a.end >= b.start { // not certainly a before b
				if a.state == b.state && a.updatedAt != "" && b.updatedAt != "" && a.state != mockserver.Blocked {
					assert.Equal(t, a.updatedAt, b.updatedAt, "run %s: %s entered at two times", r.id, a.state)
				}
				continue
			}
			if stateRank[a.state] > stateRank[b.state] {
				t.Errorf("run %s went back from %s (%s) to %s (%s)", r.id, a.state, a.via, b.state, b.via)
			}
			if stateRank[a.state] == 4 && a.state != b.state {
				t.Errorf("run %s finished %s (%s), then showed %s (%s)", r.id, a.state, a.via, b.state, b.via)
			}
			if a.updatedAt != "" && b.updatedAt != "" && a.updatedAt > b.updatedAt {
				t.Errorf("run %s: updated_at went back from %s to %s", r.id, a.updatedAt, b.updatedAt)
			}
		}
	}
}

// Thousands of mixed operations from many goroutines, over real HTTP, then
// the invariants: no run lost or duplicated, every created run retrievable,
// states only forward, finished runs unchanged, every page walk complete.
func TestLoadKeepsTheInvariants(t *testing.T) {
	if testing.Short() {
		t.Skip("the load test takes a few seconds")
	}
	s := newServer(t, mockserver.Options{})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	lt := &loadTest{t: t, base: srv.URL, runs: map[string]*loadRun{}, byTeam: map[string][]string{}, fixtures: map[string]string{},
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}}
	t.Cleanup(lt.client.CloseIdleConnections)
	fixtureRuns := map[string]int{}
	for key, team := range loadKeys {
		if key == "wk-mock-alice" || key == "wk-mock-carol" {
			_, raw, _, _ := lt.call("GET", "/agent/runs?limit=500", "", key)
			var page mockserver.ListRunsResponse
			require.NoError(t, json.Unmarshal(raw, &page))
			fixtureRuns[team] = len(page.Runs)
			for _, it := range page.Runs {
				lt.fixtures[it.RunID] = team
			}
		}
	}

	const goroutines, iterations = 12, 200
	keys := []string{"wk-mock-alice", "wk-mock-bob", "wk-mock-carol", "wk-mock-nightly"}
	// Orders that running runs do not change, so a walk sees each run once.
	orders := []string{"name=load&sort_by=created_at", "name=load&sort_by=created_at&sort_order=asc", "name=load&sort_by=title", "name=load&sort_by=title&sort_order=asc", "q=load&sort_by=created_at"}
	began := time.Now()
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(g)))
			key := keys[g%len(keys)]
			team := loadKeys[key]
			for i := 0; i < iterations; i++ {
				switch n := rng.Intn(100); {
				case n < 30:
					lt.create(rng, key, g, i)
				case n < 55:
					if id := lt.pick(rng, team); id != "" {
						lt.get(id, key)
					}
				case n < 60:
					if id := lt.pick(rng, otherTeam(team)); id != "" {
						lt.get(id, key) // 403, and never a look inside
					}
				case n < 72:
					if id := lt.pick(rng, team); id != "" {
						lt.cancel(id, key)
					}
				case n < 80:
					by := time.Duration(200+rng.Intn(2800)) * time.Millisecond
					status, raw, _, _ := lt.call("POST", "/__mock/clock/advance", fmt.Sprintf(`{"by":%q}`, by), key)
					assert.Equal(t, http.StatusOK, status, "advance: %s", raw)
				case n < 84:
					lt.walk(key, orders[rng.Intn(len(orders))], 40+rng.Intn(110))
				default:
					q := []string{"name=load&limit=10", "state=SUCCEEDED&state=FAILED&limit=50", "sort_by=updated_at&limit=25", "state=QUEUED&state=PENDING&name=load"}[rng.Intn(4)]
					status, raw, start, end := lt.call("GET", "/agent/runs?"+q, "", key)
					var page mockserver.ListRunsResponse
					if assert.Equal(t, http.StatusOK, status, "list %s: %s", q, raw) && assert.NoError(t, json.Unmarshal(raw, &page)) {
						for _, it := range page.Runs {
							lt.observe(it.RunID, observation{start: start, end: end, state: it.State, updatedAt: it.UpdatedAt, via: "list"})
						}
					}
				}
			}
		}(g)
	}
	wg.Wait()
	loaded := time.Since(began)

	// Every created run is still there, once, in its own team's list only,
	// and retrievable; then time runs out for all of them and finished runs
	// stay as they finished.
	for _, key := range []string{"wk-mock-alice", "wk-mock-carol"} {
		team := loadKeys[key]
		seen := lt.walk(key, "sort_order=asc", 97)
		assert.Len(t, seen, fixtureRuns[team]+len(lt.byTeam[team]), "%s: its fixtures and created runs, nothing lost or added", team)
	}
	for id, r := range lt.runs {
		for key, team := range loadKeys {
			if team == r.team {
				lt.get(id, key)
				break
			}
		}
	}
	for _, advance := range []string{"1h", "24h"} {
		status, raw, _, _ := lt.call("POST", "/__mock/clock/advance", fmt.Sprintf(`{"by":%q}`, advance), "wk-mock-alice")
		require.Equal(t, http.StatusOK, status, "%s", raw)
		lt.walk("wk-mock-alice", "name=load&sort_by=created_at", 500)
		lt.walk("wk-mock-carol", "name=load&sort_by=created_at", 500)
	}
	for _, l := range lt.listed {
		assert.Equal(t, l.team, lt.teamOf(l.id), "a list of %s showed another team's run %s", l.team, l.id)
	}
	for _, r := range lt.runs {
		last := r.obs[len(r.obs)-1]
		assert.Equal(t, 4, stateRank[last.state], "run %s finished a day later", r.id)
		checkRun(t, r)
	}
	assert.Zero(t, lt.fails.Load(), "no dropped connections and no 5xx")
	observations := 0
	for _, r := range lt.runs {
		observations += len(r.obs)
	}
	t.Logf("%d operations over HTTP from %d goroutines in %v (load phase), %v in all; %d runs created, %d observations of their states, %d complete page walks",
		lt.ops.Load(), goroutines, loaded.Round(time.Millisecond), time.Since(began).Round(time.Millisecond), len(lt.runs), observations, lt.walks)
	require.Greater(t, lt.ops.Load(), int64(2000), "thousands of operations")
}
