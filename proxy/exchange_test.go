package proxy

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/rules"
)

// One exchange through the proxy is decoded once, its request and its
// answer each, however many read it: the validator's findings, the rules,
// the dashboard's runs, the client versions and drift. Three exchanges
// with a body each way, over loopback to the mock, on two workers (so an
// idle worker prepares some): a creation, a look at the run, a page.
func TestAnExchangeIsDecodedOnce(t *testing.T) {
	var mu sync.Mutex
	decoded := map[string]map[string]int{} // request -> part -> times
	p, drained, url := serveProxy(t, Options{Upstream: mockUpstream(t), Workers: 2, decoded: func(x *pending, part string) {
		mu.Lock()
		defer mu.Unlock()
		name := x.method + " " + x.apiPath
		if decoded[name] == nil {
			decoded[name] = map[string]int{}
		}
		decoded[name][part]++
	}})
	send := func(method, path, body string) *http.Response {
		req, err := http.NewRequest(method, url+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer wk-mock-alice")
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		return resp
	}
	resp := send(http.MethodPost, "/agent/runs", `{"prompt":"decode me once","metadata":{"n":"1"}}`)
	created := readJSON(t, resp)
	id, _ := created["run_id"].(string)
	require.NotEmpty(t, id)
	readJSON(t, send(http.MethodGet, "/agent/runs/"+id, ""))
	readJSON(t, send(http.MethodGet, "/agent/runs?limit=5", ""))
	require.NoError(t, drained())

	assert.Equal(t, map[string]map[string]int{
		"POST /agent/runs":      {"request": 1, "answer": 1},
		"GET /agent/runs/" + id: {"answer": 1},
		"GET /agent/runs":       {"answer": 1},
	}, decoded)
	s := p.Summary()
	assert.Equal(t, 3, s.Checked)
	assert.Empty(t, s.Unchecked)
	// What each reader made of the one decoded value: the run is on the
	// dashboard, the client versions judged the answers.
	_, seen := p.runs.get(id)
	assert.True(t, seen, "the dashboard's runs keep the run")
	checked := 0
	for _, c := range s.Clients {
		checked += c.Checked
	}
	assert.Positive(t, checked, "the client versions judged the answers")
	assert.Zero(t, s.Violations, "the mock keeps every rule: %v", s.Latest)
}

// With a recorder (an Observer), the answer is still decoded once: with
// its numbers as written, which the recorder keeps, and the rules' view
// converted from it.
func TestARecordedExchangeIsDecodedOnce(t *testing.T) {
	var mu sync.Mutex
	answers := 0
	var seen []any
	p, drained, url := serveProxy(t, Options{Upstream: mockUpstream(t), Observer: observerFunc(func(ex rules.Exchange) {
		seen = append(seen, ex.Decoded.AnswerAsWritten)
	}), decoded: func(x *pending, part string) {
		mu.Lock()
		defer mu.Unlock()
		answers++
	}})
	getWithKey(t, url+"/agent/runs?limit=2")
	require.NoError(t, drained())
	assert.Equal(t, 1, answers)
	require.Len(t, seen, 1)
	page, _ := seen[0].(map[string]any)
	runs, _ := page["runs"].([]any)
	require.NotEmpty(t, runs, "the observer reads the page as written: %v", seen[0])
	assert.Zero(t, p.Summary().Violations, "the rules read the converted view: %v", p.Summary().Latest)
}

type observerFunc func(rules.Exchange)

func (f observerFunc) Observe(ex rules.Exchange) { f(ex) }

func readJSON(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	defer resp.Body.Close()
	var v map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
	return v
}

// The same exchange again (a client polling a run that has not changed)
// is not decoded again: its decoded answer and its drift come from the
// first. Every one is still checked, and the rules see each.
func TestTheSameExchangeAgainIsNotDecodedAgain(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"run_id":"r1","task_id":"r1","title":"t","prompt":"p","state":"QUEUED","undeclared":1,` +
			`"created_at":"2026-01-01T10:00:00Z","updated_at":"2026-01-01T10:00:05Z"}`))
	}))
	t.Cleanup(upstream.Close)
	var mu sync.Mutex
	answers := 0
	p, drained, url := serveProxy(t, Options{Upstream: upstream.URL, decoded: func(x *pending, part string) {
		mu.Lock()
		defer mu.Unlock()
		answers++
	}})
	for range 3 {
		getWithKey(t, url+"/agent/runs/r1")
	}
	require.NoError(t, drained())
	assert.Equal(t, 1, answers)
	s := p.Summary()
	assert.Equal(t, 3, s.Checked)
	require.NotEmpty(t, s.Drift.Facts, "the member the document does not declare")
	for _, f := range s.Drift.Facts {
		assert.Equal(t, 3, f.Count, "every exchange counts: %+v", f)
	}
}

// The same exchange again is judged as the first was: the document's
// findings are taken from memory, yet every exchange counts them; the same
// request line without a key is another exchange (the document's security
// judges it); and once the profile is reset, the members the repeats show
// are in it again.
func TestTheSameExchangeAgainIsJudgedAsTheFirst(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"run_id":"r1","task_id":"r1","title":"t","prompt":"p","state":5,` +
			`"created_at":"2026-01-01T10:00:00Z","updated_at":"2026-01-01T10:00:05Z"}`))
	}))
	t.Cleanup(upstream.Close)
	p, drained, url := serveProxy(t, Options{Upstream: upstream.URL})
	for range 3 {
		getWithKey(t, url+"/agent/runs/r1")
	}
	resp, err := http.Get(url + "/agent/runs/r1")
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.NoError(t, p.Drain(t.Context()))

	s := p.Summary()
	assert.Equal(t, 4, s.Checked)
	stateFindings := 0
	for _, f := range s.Latest {
		if strings.Contains(f.Field, "state") {
			stateFindings++
		}
	}
	assert.Equal(t, 4, stateFindings, "each exchange shows the state off the document: %+v", s.Latest)
	require.Equal(t, 1, s.OffDocument, "only the request without a key is off the document: %+v", s.LatestOffDocument)
	assert.Contains(t, strings.Join(s.LatestOffDocument[0].Issues, " "), "Authorization")

	count := func() (answers int, members int) {
		for _, op := range p.Profile().Operations {
			for _, a := range op.Answers {
				answers += a.Count
				members += len(a.Fields)
			}
		}
		return answers, members
	}
	answers, members := count()
	assert.Equal(t, 4, answers)
	assert.Positive(t, members)
	p.check.profile.Reset()
	getWithKey(t, url+"/agent/runs/r1")
	require.NoError(t, drained())
	again, membersAgain := count()
	assert.Equal(t, 1, again)
	assert.Equal(t, members, membersAgain, "a reset profile holds the repeat's members again")
}
