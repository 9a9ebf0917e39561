package mockserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/require"
)

// The fuzz targets drive the public handler in-process (ServeHTTP with a
// recorder): no listener, so many thousands of inputs a second, and no
// internals exported for them. Each asserts what holds for any input: no
// panic (the handler would turn one into a 500), no 5xx, a problem+json
// body naming the fault for every error, and valid JSON otherwise.
//
//	go test -run '^$' -fuzz '^FuzzCreateBody$' -fuzztime 30s ./mockserver/
//
// (make fuzz runs every target.) A crasher lands in testdata/fuzz/<target>/;
// keep it there, as a regression seed, once it is fixed.

// fuzzMock is one mock per fuzzing process, on a virtual clock so every
// input meets the same world.
type fuzzMock struct {
	h     http.Handler
	calls atomic.Int64
	// resetEvery resets the mock every so many requests, so the runs a
	// create target makes do not grow without bound; 0 never resets.
	resetEvery int64
}

func newFuzzMock(f *testing.F) *fuzzMock {
	s, err := mockserver.New(fuzzOptions())
	require.NoError(f, err)
	return &fuzzMock{h: s}
}

// serve answers one request.
func (m *fuzzMock) serve(req *http.Request) *httptest.ResponseRecorder {
	if n := m.calls.Add(1); m.resetEvery > 0 && n%m.resetEvery == 0 {
		m.h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/__mock/reset", nil))
	}
	if req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", "Bearer wk-mock-alice")
	}
	rec := httptest.NewRecorder()
	m.h.ServeHTTP(rec, req)
	return rec
}

// checkAnswer holds for every answer to every input.
func checkAnswer(t *testing.T, rec *httptest.ResponseRecorder, what string) {
	t.Helper()
	body := rec.Body.Bytes()
	if rec.Code >= 500 {
		t.Fatalf("%s: answered %d: %s", what, rec.Code, body)
	}
	if rec.Code >= 400 {
		require.Equal(t, "application/problem+json", rec.Header().Get("Content-Type"), "%s: %s", what, body)
		var p mockserver.Problem
		require.NoError(t, json.Unmarshal(body, &p), "%s: %s", what, body)
		require.Equal(t, rec.Code, p.Status, what)
		require.NotEmpty(t, p.Detail, what)
		require.True(t, strings.HasPrefix(p.Type, mockserver.ProblemTypeBase), what)
		return
	}
	require.True(t, json.Valid(body), "%s: %d %s", what, rec.Code, body)
}

func FuzzCreateBody(f *testing.F) {
	for _, seed := range []struct{ body, contentType, fate string }{
		{`{"prompt":"Fix the flaky login test"}`, "application/json", ""},
		{`{"prompt":"x","title":"t","team":true,"conversation_id":"c"}`, "application/json; charset=utf-8", "state=FAILED; error_code=insufficient_credits"},
		{`{"skill":"acme/skills:tools/review/SKILL.md","config":{"name":"n","model_id":"m"}}`, "application/json", "step=1s"},
		{`{"prompt":"x","config":{"mcp_servers":{"a":{"url":"https://a.example","headers":{"k":"v"}},"b":{"command":"npx","args":["-y"],"env":{"K":"V"}},"c":{"warp_id":"0c4bd1b8-5f7e-4a57-9a39-2f5a0f7d9e11"}}}}`, "application/json", ""},
		{`{"prompt":"x","images":[{"data":"aGk=","mime_type":"image/png"}]}`, "application/vnd.api+json", "state=ERROR; retryable=true; queued=1s"},
		{`{"config":{"skill_spec":"a/b:c","computer_use_enabled":false,"worker_host":"w","base_prompt":"b","environment_id":"e"}}`, "application/json", ""},
		{`{"prompt":"x","prompt":1}`, "application/json", ""},
		{`{"prompt":"`, "application/json", ""},
		{`[]`, "application/json", ""},
		{`null`, "application/json", ""},
		{"{\"prompt\":\"\xff\"}", "application/json", ""},
		{`{"prompt":"x"}`, "text/plain", ""},
		{`{"prompt":"x"}`, "", "colour=red"},
		{``, "application/json", ""},
		{`{"prompt":"\u0000\ud800"}`, "application/json", "message=a;b"},
	} {
		f.Add([]byte(seed.body), seed.contentType, seed.fate)
	}
	m := newFuzzMock(f)
	m.resetEvery = 2000
	f.Fuzz(func(t *testing.T, body []byte, contentType, fate string) {
		req := httptest.NewRequest("POST", "/agent/run", bytes.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		if fate != "" {
			req.Header.Set(mockserver.FateHeader, fate)
		}
		rec := m.serve(req)
		checkAnswer(t, rec, "create")
		if rec.Code != http.StatusOK {
			return
		}
		// A run that was created can be shown, whatever it was created from.
		var created mockserver.RunAgentResponse
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &created))
		rec = m.serve(httptest.NewRequest("GET", "/agent/runs/"+created.RunID, nil))
		checkAnswer(t, rec, "get")
		require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body)
	})
}

// listSeeds are queries using every parameter, well and badly.
var listSeeds = []string{
	"", "limit=1", "limit=500&sort_order=asc", "state=QUEUED&state=INPROGRESS,SUCCEEDED", "name=fz-1&config_name=fz-1",
	"model_id=gpt-5&creator=user-alice&source=API", "environment_id=env-1&schedule_id=s&skill_spec=a/b:c&skill=a/b:c",
	"artifact_type=PLAN", "q=flaky%20login", "sort_by=title&sort_order=desc", "sort_by=updated_at", "sort_by=agent&limit=2",
	"created_after=2026-03-01T11:00:00Z&created_before=2026-03-01T13:00:00.5%2B01:00&updated_after=2026-01-01T00:00:00Z",
	"limit=0", "limit=%zz", "state=", "cursor=", "cursor=a.b", "q=%ff%fe", "limit=1&limit=1", "sort_by=title&sort_by=agent",
}

// seedRuns gives the list targets something to filter, sort and page.
func seedRuns(f *testing.F, m *fuzzMock) {
	for i := 0; i < 30; i++ {
		body := fmt.Sprintf(`{"prompt":"fuzz run %d flaky login","config":{"name":"fz-%d","model_id":"gpt-5","environment_id":"env-%d"}}`, i, i%3, i%2)
		req := httptest.NewRequest("POST", "/agent/run", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := m.serve(req)
		require.Equal(f, http.StatusOK, rec.Code, "%s", rec.Body)
		req = httptest.NewRequest("POST", "/__mock/clock/advance", strings.NewReader(`{"by":"3s"}`))
		require.Equal(f, http.StatusOK, m.serve(req).Code)
	}
}

func FuzzListQuery(f *testing.F) {
	for _, q := range listSeeds {
		f.Add(q)
	}
	m := newFuzzMock(f)
	seedRuns(f, m)
	f.Fuzz(func(t *testing.T, query string) {
		req := httptest.NewRequest("GET", "/agent/runs", nil)
		req.URL.RawQuery = query
		rec := m.serve(req)
		checkAnswer(t, rec, "list")
		if rec.Code != http.StatusOK {
			return
		}
		// The cursor a page gives is accepted with the query that gave it.
		var page mockserver.ListRunsResponse
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &page))
		if !page.PageInfo.HasNextPage {
			return
		}
		v := req.URL.Query()
		v.Set("cursor", page.PageInfo.NextCursor)
		next := httptest.NewRequest("GET", "/agent/runs", nil)
		next.URL.RawQuery = v.Encode()
		rec = m.serve(next)
		checkAnswer(t, rec, "next page")
		require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body)
	})
}

// FuzzCursor hands the list whatever a client might pass back as a cursor:
// truncated, re-encoded, spliced or made up. (FuzzSignedCursor, inside the
// package, goes past the signature to fuzz the positions themselves.)
func FuzzCursor(f *testing.F) {
	m := newFuzzMock(f)
	seedRuns(f, m)
	// Real cursors, for seeds run without -fuzz (in this process, whose
	// server signed them); a fuzzing worker mutates them all the same.
	for _, q := range []string{"limit=2", "limit=3&sort_by=title", "limit=1&sort_order=asc&name=fz-1"} {
		rec := m.serve(httptest.NewRequest("GET", "/agent/runs?"+q, nil))
		var page mockserver.ListRunsResponse
		require.NoError(f, json.Unmarshal(rec.Body.Bytes(), &page))
		require.True(f, page.PageInfo.HasNextPage)
		f.Add(page.PageInfo.NextCursor, q)
	}
	for _, c := range []string{"", ".", "a.b", "eyJnIjoxfQ.AAAAAAAAAAAAAAAA", strings.Repeat("A", 513), "%", "a.b.c", "\x00.\xff"} {
		f.Add(c, "limit=2")
	}
	f.Fuzz(func(t *testing.T, cursor, query string) {
		req := httptest.NewRequest("GET", "/agent/runs", nil)
		req.URL.RawQuery = query + "&cursor=" + url.QueryEscape(cursor)
		checkAnswer(t, m.serve(req), "list with cursor")
	})
}
