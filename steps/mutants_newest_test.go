//go:build !race

package steps_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Mutants of the newest client's surface, each a mistake a server team
// could make on a rule of rules/newest.go: what a follow-up does by the
// state of its run, what a new execution keeps, what the derived fields
// mean and when they stop, what an empty filter means. Like the others
// they wrap the unbroken mock, remembering per run what a wrong server
// would.
//
// Not here, for want of a situation the suite can make without a flag it
// does not have yet: the executor and creator filters answered one for the
// other, and on_behalf_of ignored, need a run created by an agent on a
// member's behalf (an agent's key); ancestor_run_id needs child runs, which
// no scenario creates yet. Their rules (ListingMatchesQuery's executor,
// OnBehalfOf, AncestorListing) hold in the proxy and in the rules' tests.

var (
	followupsArea = area{"follow-ups", []string{"followups.feature"}}
	derivedArea   = area{"derived fields", []string{"followups.feature", "state_progression.feature", "get_run.feature", "list_rules.feature", "list_runs.feature", "identities.feature", "conversations.feature", "create_run.feature"}}
	newestFilters = area{"newest filters", []string{"list_runs.feature"}}
)

var newestMutants = slices.Concat(
	inArea(followupsArea, []breakage{
		// A follow-up by the state of its run.
		{"accepts a follow-up to a CANCELLED run and does nothing", onFollowup(func(state string, _ map[string]any, a *answer) bool {
			return state == "CANCELLED" && acceptUnheard(a)
		})},
		{"accepts a follow-up to a FAILED or ERROR run and does nothing", onFollowup(func(state string, _ map[string]any, a *answer) bool {
			return (state == "FAILED" || state == "ERROR") && acceptUnheard(a)
		})},
		{"refuses a follow-up to an ended run that did not succeed", onFollowup(func(state string, _ map[string]any, a *answer) bool {
			if state != "CANCELLED" && state != "FAILED" && state != "ERROR" {
				return false
			}
			problem(a, http.StatusBadRequest, "invalid_request", "Only a run that succeeded can be continued; start a new run")
			return true
		})},
		{"refuses a follow-up to a run not started yet", onFollowup(func(state string, _ map[string]any, a *answer) bool {
			if state != "QUEUED" && state != "PENDING" && state != "CLAIMED" {
				return false
			}
			problem(a, http.StatusBadRequest, "invalid_request", "The run has not started yet; send the follow-up once it works")
			return true
		})},
		{"starts a running run over from QUEUED on a follow-up", sentBackAfterFollowup},

		// What a new execution keeps.
		{"a restarted run resets run_time", afterRestart(func(before, run map[string]any) {
			if d, ok := isoSeconds(run["run_time"]); ok {
				b, _ := isoSeconds(before["run_time"])
				run["run_time"] = fmt.Sprintf("PT%.3fS", max(0, d-b))
			}
		})},
		{"a restarted run's request_usage starts again from zero", afterRestart(func(_, run map[string]any) {
			if u, ok := run["request_usage"].(map[string]any); ok {
				zero(u)
			}
		})},
		{"a restarted run takes the follow-up as its prompt", afterRestart(func(before, run map[string]any) {
			run["prompt"] = "Follow-up to: " + fmt.Sprint(before["prompt"])
		})},
		{"a restarted run shows a new conversation_id", afterRestart(func(_, run map[string]any) {
			if c, ok := run["conversation_id"].(string); ok {
				run["conversation_id"] = c + "-2"
			}
		})},
	}),
	inArea(derivedArea, []breakage{
		// The derived fields' definitions.
		{"run_time counts from the creation, not from the start", onRuns(func(_ *http.Request, run map[string]any) {
			c, err1 := time.Parse(time.RFC3339Nano, fmt.Sprint(run["created_at"]))
			u, err2 := time.Parse(time.RFC3339Nano, fmt.Sprint(run["updated_at"]))
			if err1 == nil && err2 == nil {
				run["run_time"] = fmt.Sprintf("PT%.3fS", u.Sub(c).Seconds())
			}
		})},
		{"is_run_type_cancellable is true for LOCAL and GITHUB_ACTION runs", onRuns(func(_ *http.Request, run map[string]any) {
			run["is_run_type_cancellable"] = true
		})},
		{"is_run_type_cancellable turns false once the run has ended", onRuns(func(_ *http.Request, run map[string]any) {
			switch run["state"] {
			case "SUCCEEDED", "FAILED", "ERROR", "CANCELLED":
				run["is_run_type_cancellable"] = false
			}
		})},

		// They stop with the run.
		{"run_time keeps counting after the run ended", countsOnAfterTheEnd(func(run map[string]any, since time.Duration) {
			if d, ok := isoSeconds(run["run_time"]); ok {
				run["run_time"] = fmt.Sprintf("PT%.3fS", d+since.Seconds())
			}
		})},
		{"request_usage keeps growing after the run ended", countsOnAfterTheEnd(func(run map[string]any, since time.Duration) {
			if u, ok := run["request_usage"].(map[string]any); ok {
				if n, ok := u["total_tokens"].(float64); ok {
					u["total_tokens"] = n + float64(since.Milliseconds())
				}
			}
		})},
	}),
	inArea(newestFilters, []breakage{
		// An empty filter value.
		{"an empty executor= lists no runs", onListQuery(func(q url.Values) {
			if q.Has("executor") && q.Get("executor") == "" {
				q.Set("executor", "nobody")
			}
		})},
		{"an empty creator= lists no runs", onListQuery(func(q url.Values) {
			if q.Has("creator") && q.Get("creator") == "" {
				q.Set("creator", "nobody")
			}
		})},
	}),
)

var followupPath = regexp.MustCompile(`^/agent/runs/([^/]+)/followups$`)

// lookThrough asks next for run id as r's caller would, and answers the
// run's details (nil if refused).
func lookThrough(next http.Handler, r *http.Request, id string) map[string]any {
	get := httptest.NewRequest(http.MethodGet, "/agent/runs/"+id, nil).WithContext(r.Context())
	for _, h := range []string{"Authorization", sessionHeader} {
		get.Header.Set(h, r.Header.Get(h))
	}
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, get)
	var doc map[string]any
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &doc) != nil {
		return nil
	}
	return doc
}

const sessionHeader = "X-Mock-Session"

// onFollowup lets decide answer a follow-up in place of the mock, from the
// state the run is in: when it returns true the mock never hears of it.
func onFollowup(decide func(state string, run map[string]any, a *answer) bool) func() func(http.Handler) http.Handler {
	return stateless(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			m := followupPath.FindStringSubmatch(r.URL.Path)
			if r.Method == http.MethodPost && m != nil {
				if run := lookThrough(next, r, m[1]); run != nil {
					a := &answer{status: http.StatusOK, header: http.Header{}}
					if decide(fmt.Sprint(run["state"]), run, a) {
						writeAnswer(w, a)
						return
					}
				}
			}
			next.ServeHTTP(w, r)
		})
	})
}

// acceptUnheard answers 200 {}, as an accepted follow-up is answered.
func acceptUnheard(a *answer) bool {
	a.status = http.StatusOK
	a.header.Set("Content-Type", "application/json")
	a.body = []byte(`{}`)
	return true
}

func writeAnswer(w http.ResponseWriter, a *answer) {
	for k, vs := range a.header {
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(a.body)))
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

// sentBackAfterFollowup: a follow-up to a run at work starts the run over;
// the look after it shows it QUEUED again, as a server that treats every
// follow-up as a new execution would, although the execution under way
// never ended.
func sentBackAfterFollowup() func(http.Handler) http.Handler {
	var mu sync.Mutex
	sentBack := map[string]bool{}
	return func(next http.Handler) http.Handler {
		edit := rewrite(func(r *http.Request, a *answer) {
			if !isGetRun(r) {
				return
			}
			editRuns(a, func(run map[string]any) {
				mu.Lock()
				defer mu.Unlock()
				id := fmt.Sprint(run["run_id"])
				if sentBack[id] && (run["state"] == "INPROGRESS" || run["state"] == "BLOCKED") {
					run["state"] = "QUEUED"
				}
				delete(sentBack, id)
			})
		})(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if m := followupPath.FindStringSubmatch(r.URL.Path); r.Method == http.MethodPost && m != nil {
				if run := lookThrough(next, r, m[1]); run != nil && (run["state"] == "INPROGRESS" || run["state"] == "BLOCKED") {
					mu.Lock()
					sentBack[fmt.Sprint(run["run_id"])] = true
					mu.Unlock()
				}
			}
			edit.ServeHTTP(w, r)
		})
	}
}

// afterRestart edits every look at a run after a follow-up to it while it
// had ended, given the run as it was just before the follow-up.
func afterRestart(f func(before, run map[string]any)) func() func(http.Handler) http.Handler {
	return func() func(http.Handler) http.Handler {
		var mu sync.Mutex
		before := map[string]map[string]any{}
		return func(next http.Handler) http.Handler {
			edit := rewrite(func(r *http.Request, a *answer) {
				if r.Method != http.MethodGet {
					return
				}
				editRuns(a, func(run map[string]any) {
					mu.Lock()
					defer mu.Unlock()
					if b, ok := before[fmt.Sprint(run["run_id"])]; ok {
						f(b, run)
					}
				})
			})(next)
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if m := followupPath.FindStringSubmatch(r.URL.Path); r.Method == http.MethodPost && m != nil {
					if run := lookThrough(next, r, m[1]); run != nil {
						switch run["state"] {
						case "SUCCEEDED", "FAILED", "ERROR", "CANCELLED":
							mu.Lock()
							if _, seen := before[fmt.Sprint(run["run_id"])]; !seen {
								before[fmt.Sprint(run["run_id"])] = run
							}
							mu.Unlock()
						}
					}
				}
				edit.ServeHTTP(w, r)
			})
		}
	}
}

// countsOnAfterTheEnd edits every look at an ended run with the wall time
// since it was first seen ended, as a server that computes a figure up to
// the present rather than to the run's end would.
func countsOnAfterTheEnd(f func(run map[string]any, since time.Duration)) func() func(http.Handler) http.Handler {
	return func() func(http.Handler) http.Handler {
		var mu sync.Mutex
		endedAt := map[string]time.Time{}
		return rewrite(func(r *http.Request, a *answer) {
			if r.Method != http.MethodGet {
				return
			}
			editRuns(a, func(run map[string]any) {
				mu.Lock()
				defer mu.Unlock()
				id := fmt.Sprint(run["run_id"])
				switch run["state"] {
				case "SUCCEEDED", "FAILED", "ERROR", "CANCELLED":
				default:
					delete(endedAt, id) // started again
					return
				}
				if t, ok := endedAt[id]; ok {
					f(run, time.Since(t))
				} else {
					endedAt[id] = time.Now()
				}
			})
		})
	}
}

// isoSeconds reads the mock's run_time ("PT12.345S", "PT2M3S") in seconds.
func isoSeconds(v any) (float64, bool) {
	s, ok := v.(string)
	rest, ok2 := strings.CutPrefix(s, "PT")
	if !ok || !ok2 {
		return 0, false
	}
	total := 0.0
	for _, unit := range []struct {
		sym  string
		secs float64
	}{{"H", 3600}, {"M", 60}, {"S", 1}} {
		if n, after, found := strings.Cut(rest, unit.sym); found {
			f, err := strconv.ParseFloat(n, 64)
			if err != nil {
				return 0, false
			}
			total += f * unit.secs
			rest = after
		}
	}
	return total, rest == ""
}

// zero sets every figure of a usage object, nested ones included, to 0.
func zero(u map[string]any) {
	for k, v := range u {
		switch v := v.(type) {
		case float64:
			u[k] = 0.0
		case map[string]any:
			zero(v)
		}
	}
}
