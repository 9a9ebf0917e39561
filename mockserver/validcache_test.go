package mockserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestRememberedGETsAnswerAsValidatedOnes checks the verdict cache of
// validate: whatever the cache holds, every request gets the answer it gets
// from the validator with an empty cache.
func TestRememberedGETsAnswerAsValidatedOnes(t *testing.T) {
	s := newVirtualServer(t)
	answer := func(target string) (int, string) {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		r.Header.Set("Authorization", "Bearer wk-mock-alice")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		body, _ := io.ReadAll(w.Result().Body)
		return w.Code, string(body)
	}
	first, _ := answer("/agent/runs?limit=1")
	if first != http.StatusOK {
		t.Fatalf("first page: %d", first)
	}
	var page ListRunsResponse
	{
		r := httptest.NewRequest(http.MethodGet, "/agent/runs?limit=1", nil)
		// The handler alone: the pipeline would warm the cache.
		out := s.listRuns(&call{r: r, session: openDefault(t, s), principal: s.principals["wk-mock-alice"]})
		if out.problem != nil {
			t.Fatal(out.problem)
		}
		if err := json.Unmarshal(out.body.(jsonAppender).appendJSON(nil), &page); err != nil {
			t.Fatal(err)
		}
	}
	cursor := page.PageInfo.NextCursor
	id := page.Runs[0].RunID
	probes := []string{
		"/agent/runs/" + id, "/api/v1/agent/runs/" + id, "/agent/runs/no-such-run", "/agent/runs/",
		"/agent/runs/a%2Fb", "/agent/runs/" + id + "?x=1",
		"/agent/runs", "/agent/runs?limit=1", "/agent/runs?limit=0", "/agent/runs?limit=501", "/agent/runs?limit=x",
		"/agent/runs?limit=1&cursor=" + cursor, "/agent/runs?limit=1&cursor=forged.cursor", "/agent/runs?limit=1&cursor=%00",
		"/agent/runs?limit=1&cursor=" + cursor + "&cursor=" + cursor,
		"/agent/runs?state=FAILED", "/agent/runs?state=NOPE", "/agent/runs?state=FAILED,ERROR", "/agent/runs?state=FAILED&state=ERROR",
		"/agent/runs?created_after=2026-01-01T00:00:00Z", "/agent/runs?created_after=yesterday",
		"/agent/runs?sort_by=title&sort_order=asc", "/agent/runs?sort_by=nope", "/agent/runs?artifact_type=PLAN",
		"/agent/events?run_ids=" + id, "/agent/events?run_ids=" + id + "&since=0", "/agent/events?run_ids=" + id + "&since=x",
		"/agent/events?run_ids=" + id + "&since=-1", "/agent/events?run_ids=" + id + "&limit=0", "/agent/events",
		"/agent/events?run_ids=no-such-run", "/api/v1/agent/events?run_ids=" + id + "&since=1",
		"/agent/schedules", "/agent/schedules?x=1", "/agent/models", "/agent/environments", "/agent", "/agent?sort=x",
		"/agent/identities", "/agent/runs/" + id + "/conversation", "/agent/messages/" + id,
	}
	cold := map[string]string{}
	for _, p := range probes {
		s.acceptedGETs.Forget()
		code, body := answer(p)
		cold[p] = http.StatusText(code) + " " + body
	}
	// Warm the cache with every probe, then ask each again, twice.
	for range 2 {
		for _, p := range probes {
			code, body := answer(p)
			if got := http.StatusText(code) + " " + body; got != cold[p] {
				t.Errorf("%s with a warm cache:\n got %s\nwant %s", p, got, cold[p])
			}
		}
	}
}

func TestGetVerdictKey(t *testing.T) {
	cases := []struct {
		path, query, key string
		ok               bool
	}{
		{"/agent/runs/abc", "", "get?", true},
		{"/agent/runs/abc", "x=1", "get?x=1", true},
		{"/agent/runs/", "", "", false},
		{"/agent/runs/a%2Fb", "", "", false},
		{"/agent/runs/abc/cancel", "", "", false},
		{"/agent/runs", "limit=2&cursor=eyJn.abc_-&cursor=%00", "list?limit=2&cursor=&cursor=%00", true},
		{"/agent/run", "", "", false},
	}
	for _, c := range cases {
		b, ok := appendVerdictKey(nil, c.path, c.query, false)
		key := string(b)
		if key != c.key || ok != c.ok {
			t.Errorf("appendVerdictKey(%q, %q) = %q, %v; want %q, %v", c.path, c.query, key, ok, c.key, c.ok)
		}
	}
	if key, ok := appendVerdictKey(nil, "/agent/events", "run_ids=a&since=2", true); string(key) != "GET /agent/events?run_ids=a&since=2" || !ok {
		t.Errorf("an events poll: %q, %v", key, ok)
	}
}
