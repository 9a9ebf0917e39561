package explore_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/explore"
	"github.com/agentruns/agentruns/internal/suitetest"
	"github.com/agentruns/agentruns/mockserver"
)

// Broken servers: the mock with one thing wrong, made by an http.Handler
// around it. The exploration must find each, with a short sequence.

func onListQuery(edit func(r *http.Request)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && r.URL.Path == "/agent/runs" {
				edit(r)
			}
			next.ServeHTTP(w, r)
		})
	}
}

func onListAnswer(edit func(r *http.Request, doc map[string]any)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet || r.URL.Path != "/agent/runs" {
				next.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			var doc map[string]any
			body := rec.Body.Bytes()
			if rec.Code == http.StatusOK && json.Unmarshal(body, &doc) == nil {
				edit(r, doc)
				body, _ = json.Marshal(doc)
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.WriteHeader(rec.Code)
			_, _ = w.Write(bytes.TrimSpace(body))
		})
	}
}

var brokenServers = []struct {
	name  string
	wrap  func(http.Handler) http.Handler
	cause string
}{
	{"the state filter is ignored", onListQuery(func(r *http.Request) {
		q := r.URL.Query()
		q.Del("state")
		r.URL.RawQuery = q.Encode()
	}), ""},
	{"an odd limit is a 500", func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil && n%2 == 1 && r.URL.Path == "/agent/runs" {
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = w.Write([]byte(`{"type":"about:blank","title":"Internal error","status":500}`))
				return
			}
			next.ServeHTTP(w, r)
		})
	}, ""},
	{"an unknown sort_by is accepted", onListQuery(func(r *http.Request) {
		q := r.URL.Query()
		if s := q.Get("sort_by"); s != "" && s != "updated_at" && s != "created_at" && s != "title" && s != "agent" {
			q.Del("sort_by")
		}
		r.URL.RawQuery = q.Encode()
	}), ""},
	{"a run is repeated on the next page", onListAnswer(func(r *http.Request, doc map[string]any) {
		runs, _ := doc["runs"].([]any)
		if r.URL.Query().Get("cursor") != "" && len(runs) > 0 {
			doc["runs"] = append(runs[:len(runs):len(runs)], runs[0])
		}
	}), ""},
}

func TestBrokenServersAreFound(t *testing.T) {
	for _, b := range brokenServers {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			mock := suitetest.NewMock(t, mockserver.Options{}, b.wrap)
			res := exploredWith(t, explore.Options{BaseURL: mock.URL, APIKey: "wk-mock-alice", OtherAPIKey: "wk-mock-carol",
				Steps: 400, Seed: 1, MaxFindings: 1, ShrinkCalls: 2000})
			t.Log(describe(res))
			require.NotEmpty(t, res.Findings)
			// Shrunk: the shortest finding takes a few calls, not a sequence.
			shortest := len(res.Findings[0].Calls)
			for _, f := range res.Findings {
				shortest = min(shortest, len(f.Calls))
			}
			require.LessOrEqual(t, shortest, 3, describe(res))
		})
	}
}
