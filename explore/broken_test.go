package explore_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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
	return onAnswers(func(r *http.Request) bool { return r.Method == http.MethodGet && r.URL.Path == "/agent/runs" },
		func(r *http.Request, doc any) {
			if m, ok := doc.(map[string]any); ok {
				edit(r, m)
			}
		})
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
				Steps: 1500, Seed: 1, MaxFindings: 1, ShrinkCalls: 6000})
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

// onAnswers edits the JSON answers to the requests match picks.
func onAnswers(match func(r *http.Request) bool, edit func(r *http.Request, doc any)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler { return suitetest.EditAnswers(next, match, edit) }
}

// appliedButRefused applies the other team's (carol's) writes that match
// as if the first team (alice) had sent them, then answers carol as the
// mock does: refused.
func appliedButRefused(match func(r *http.Request) bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer wk-mock-carol" || r.Method == http.MethodGet || !match(r) {
				next.ServeHTTP(w, r)
				return
			}
			body, _ := io.ReadAll(r.Body)
			as := r.Clone(r.Context())
			as.Header.Set("Authorization", "Bearer wk-mock-alice")
			as.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(httptest.NewRecorder(), as)
			r.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(w, r)
		})
	}
}

func underSchedule(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/agent/schedules/") }

// The tenancy and last-change findings (resources.go), each with its cause.
func TestBrokenResourcesAreFound(t *testing.T) {
	for _, b := range []struct {
		name  string
		wrap  func(http.Handler) http.Handler
		cause string
	}{
		{"a schedule's updated_at never moves", onAnswers(
			func(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/agent/schedules") },
			func(_ *http.Request, doc any) {
				var edit func(v any)
				edit = func(v any) {
					switch v := v.(type) {
					case map[string]any:
						if v["cron_schedule"] != nil && v["created_at"] != nil {
							v["updated_at"] = v["created_at"]
						}
						for _, x := range v {
							edit(x)
						}
					case []any:
						for _, x := range v {
							edit(x)
						}
					}
				}
				edit(doc)
			}), explore.CauseLastChange},
		{"another team's refused schedule change is applied", appliedButRefused(underSchedule), explore.CauseOtherTeamChange},
		{"another team's schedule listing shows every team's", func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet && r.URL.Path == "/agent/schedules" && r.Header.Get("Authorization") == "Bearer wk-mock-carol" {
					r = r.Clone(r.Context())
					r.Header.Set("Authorization", "Bearer wk-mock-alice") // no team filter: alice's schedules too
				}
				next.ServeHTTP(w, r)
			})
		}, explore.CauseOtherTeamShown},
	} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			mock := suitetest.NewMock(t, mockserver.Options{}, b.wrap)
			res := exploredWith(t, explore.Options{BaseURL: mock.URL, APIKey: "wk-mock-alice", OtherAPIKey: "wk-mock-carol",
				Steps: 2000, Seed: 1, MaxFindings: 1, ShrinkCalls: 8000})
			t.Log(describe(res))
			require.NotEmpty(t, res.Findings)
			require.Equal(t, b.cause, res.Findings[0].Cause, describe(res))
			require.LessOrEqual(t, len(res.Findings[0].Calls), 4, describe(res))

			// Its scenario, pasted into a feature, fails on the broken
			// server and passes on the mock.
			feature, run := pasted(t, res.Findings[0])
			passed, why := run(b.wrap)
			assert.False(t, passed, "the scenario passes on the broken server:\n%s", feature)
			t.Log("on the broken server: " + strings.SplitN(why, "\n", 2)[0])
			passed, why = run(nil)
			assert.True(t, passed, "the scenario fails on the mock: %s\n%s", why, feature)
		})
	}
}
