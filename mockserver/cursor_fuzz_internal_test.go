package mockserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver/store"
)

// FuzzSignedCursor signs cursors with the mock session's own key, so the
// fuzzer reaches what no forged cursor can: positions (generation, seq and
// sort key) that are well signed but arbitrary, under every order and
// filter. Whatever they say, the list answers 200 or a 400 problem. It sits
// inside the package only to use the key and encodeCursor; the request
// still goes through the public handler.
func FuzzSignedCursor(f *testing.F) {
	f.Add("limit=2", int64(5), "", false, false)
	f.Add("limit=3&sort_by=title&sort_order=asc", int64(-1), "zzz", true, true)
	f.Add("sort_by=updated_at", int64(1<<62), "2026-03-01T12:00:00.000Z", true, true)
	f.Add("sort_by=agent&name=fz-1", int64(0), "\xff", true, true)
	f.Add("sort_order=asc&created_before=2026-03-01T12:01:00Z", int64(-1<<63), "", true, true)
	s, err := New(Options{ClockMode: VirtualClock, ClockStart: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Step: 10 * time.Second})
	if err != nil {
		f.Fatal(err)
	}
	serve := func(method, target, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, target, nil)
		if body != "" {
			req = httptest.NewRequest(method, target, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer wk-mock-alice")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		return rec
	}
	for i := 0; i < 20; i++ {
		if rec := serve("POST", "/agent/run", `{"prompt":"signed cursor run","config":{"name":"fz-1"}}`); rec.Code != 200 {
			f.Fatalf("create: %d %s", rec.Code, rec.Body)
		}
		serve("POST", "/__mock/clock/advance", `{"by":"4s"}`)
	}
	// The default mock session's generation, as its first page's next position has it.
	first, err := openDefault(f, s).List(s.principals["wk-mock-alice"], store.ListQuery{Limit: 1})
	if err != nil || first.Next == nil {
		f.Fatalf("first page: %+v, %v", first, err)
	}
	generation := first.Next.Generation
	sg := cursorSigner{openDefault(f, s).CursorKey(), ""}
	f.Fuzz(func(t *testing.T, query string, seq int64, key string, sameGeneration, sameQuery bool) {
		v, _ := url.ParseQuery(query) // what the handler will see; parse errors drop pairs there too
		v.Del("cursor")
		c := cursor{Generation: generation + 1, Hash: uint64(seq) * 31, Key: key, Seq: seq}
		if sameGeneration {
			c.Generation = generation
		}
		if _, hash, err := parseListQuery(v, sg); err == nil && sameQuery {
			c.Hash = hash
		}
		v.Set("cursor", encodeCursor(c, sg))
		rec := serve("GET", "/agent/runs?"+v.Encode(), "")
		switch {
		case rec.Code == http.StatusOK:
			var page ListRunsResponse
			if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil {
				t.Fatalf("a page that is not JSON: %v: %s", err, rec.Body)
			}
		case rec.Code == http.StatusBadRequest && rec.Header().Get("Content-Type") == "application/problem+json":
		default:
			t.Fatalf("cursor %+v with %q: answered %d %s", c, v.Encode(), rec.Code, rec.Body)
		}
	})
}
