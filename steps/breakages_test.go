package steps_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentruns/agentruns/mockserver"
)

// Ways to break the mock from outside, by wrapping its handler: the
// mutation test (mutants_test.go) and the broken servers
// (broken_servers_test.go) build on them. A wrapper factory is called afresh
// for each run of the suite, so that a breakage that remembers what it
// answered starts with a clean memory.

// stateless turns a wrapper that remembers nothing into a mutant's wrap.
func stateless(w func(http.Handler) http.Handler) func() func(http.Handler) http.Handler {
	return func() func(http.Handler) http.Handler { return w }
}

// onListQuery rewrites the query of every listing of runs before the mock
// sees it.
func onListQuery(edit func(q url.Values)) func() func(http.Handler) http.Handler {
	return stateless(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && r.URL.Path == "/agent/runs" {
				q := r.URL.Query()
				edit(q)
				r.URL.RawQuery = q.Encode()
			}
			next.ServeHTTP(w, r)
		})
	})
}

// dropParam ignores one filter of the listing.
func dropParam(name string) func() func(http.Handler) http.Handler {
	return onListQuery(func(q url.Values) { q.Del(name) })
}

// shiftTime moves a time filter by d before the mock reads it: a millisecond
// turns a strict bound (the mock keeps milliseconds) into an inclusive one.
func shiftTime(name string, d time.Duration) func() func(http.Handler) http.Handler {
	return onListQuery(func(q url.Values) {
		if t, err := time.Parse(time.RFC3339Nano, q.Get(name)); err == nil {
			q.Set(name, t.Add(d).UTC().Format(time.RFC3339Nano))
		}
	})
}

// onRuns edits every run object of the answers (as editRuns does).
func onRuns(f func(r *http.Request, run map[string]any)) func() func(http.Handler) http.Handler {
	return stateless(rewrite(func(r *http.Request, a *answer) {
		editRuns(a, func(run map[string]any) { f(r, run) })
	}))
}

// onPage edits every page of runs.
func onPage(f func(r *http.Request, runs []any, info map[string]any) []any) func() func(http.Handler) http.Handler {
	return stateless(rewrite(func(r *http.Request, a *answer) {
		if r.Method != http.MethodGet || r.URL.Path != "/agent/runs" || a.status != http.StatusOK {
			return
		}
		var doc struct {
			Runs     []any          `json:"runs"`
			PageInfo map[string]any `json:"page_info"`
		}
		if json.Unmarshal(a.body, &doc) != nil {
			return
		}
		doc.Runs = f(r, doc.Runs, doc.PageInfo)
		a.body, _ = json.Marshal(doc)
	}))
}

// sinceState edits a run from the look after it was first seen in state on.
func sinceState(state string, f func(run map[string]any)) func() func(http.Handler) http.Handler {
	return func() func(http.Handler) http.Handler {
		var mu sync.Mutex
		seen := map[string]bool{}
		return rewrite(func(r *http.Request, a *answer) {
			if r.Method != http.MethodGet {
				return
			}
			editRuns(a, func(run map[string]any) {
				mu.Lock()
				defer mu.Unlock()
				id := fmt.Sprint(run["run_id"])
				if run["state"] == state {
					if seen[id] {
						f(run)
					}
					seen[id] = true
				}
			})
		})
	}
}

// problem replaces an answer with a problem document of another status.
func problem(a *answer, status int, code, title string) {
	a.status = status
	a.header.Set("Content-Type", "application/problem+json")
	a.body, _ = json.Marshal(map[string]any{
		"type":   mockserver.ProblemTypeBase + code,
		"title":  title,
		"status": status,
		"error":  title,
	})
}

func isCancel(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/agent/runs/") && strings.HasSuffix(r.URL.Path, "/cancel")
}

// staleReads answers every other look at a run with what the look before
// the last one answered, as a lagging read replica does: whenever the run
// moved between those two looks, it seems to move back.
func staleReads() func(http.Handler) http.Handler {
	var mu sync.Mutex
	looks := map[string][]map[string]any{}
	return rewrite(func(r *http.Request, a *answer) {
		if r.Method != http.MethodGet {
			return
		}
		editRuns(a, func(run map[string]any) {
			mu.Lock()
			defer mu.Unlock()
			id := fmt.Sprint(run["run_id"])
			seen := looks[id]
			fresh := maps.Clone(run)
			if len(seen)%2 == 1 && len(seen) >= 2 {
				clear(run)
				maps.Copy(run, seen[len(seen)-2])
			}
			looks[id] = append(seen, fresh)
		})
	})
}

// fullLastPageHasNext says there is a next page whenever a page is full, as
// a server that compares the page's size with the limit does; the next page
// it then hands out is empty.
func fullLastPageHasNext() func(http.Handler) http.Handler {
	const endCursor = "mutant-end-of-list"
	return func(next http.Handler) http.Handler {
		inner := rewrite(func(r *http.Request, a *answer) {
			if r.Method != http.MethodGet || r.URL.Path != "/agent/runs" || a.status != http.StatusOK {
				return
			}
			var doc struct {
				Runs     []any          `json:"runs"`
				PageInfo map[string]any `json:"page_info"`
			}
			if json.Unmarshal(a.body, &doc) != nil {
				return
			}
			limit := 20
			if n, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil {
				limit = n
			}
			if len(doc.Runs) == limit && doc.PageInfo["has_next_page"] == false {
				doc.PageInfo["has_next_page"], doc.PageInfo["next_cursor"] = true, endCursor
			}
			a.body, _ = json.Marshal(doc)
		})(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("cursor") == endCursor {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"runs":[],"page_info":{"has_next_page":false}}`))
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
}

func copyAnswer(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, vs := range rec.Header() {
		w.Header()[k] = vs
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}
