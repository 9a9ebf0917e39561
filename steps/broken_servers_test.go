package steps_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/features"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/suiteconfig"
)

// A contract suite that passes against a broken server is worthless. These
// tests break the mock on purpose, by rewriting its answers in a wrapping
// handler (the mock itself is untouched), and check that the suite fails, on
// the scenarios that cover the broken rule and with a message that names it.

// answer is one recorded response of the wrapped server.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// rewrite wraps a handler: edit sees each request and the inner handler's
// answer, and may change the answer. Only API paths are rewritten; the
// control API under /__mock/ passes through.
func rewrite(edit func(r *http.Request, a *answer)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			a := &answer{status: rec.Code, header: rec.Header().Clone(), body: rec.Body.Bytes()}
			if !strings.HasPrefix(r.URL.Path, "/__mock/") {
				edit(r, a)
			}
			for k, vs := range a.header {
				w.Header()[k] = vs
			}
			w.Header().Set("Content-Length", strconv.Itoa(len(a.body)))
			w.WriteHeader(a.status)
			_, _ = w.Write(a.body)
		})
	}
}

// editRuns applies f to every run object in a JSON answer: a create answer, a
// run's details, or each run of a listing.
func editRuns(a *answer, f func(run map[string]any)) {
	if a.status != http.StatusOK {
		return
	}
	var doc map[string]any
	if json.Unmarshal(a.body, &doc) != nil {
		return
	}
	if runs, ok := doc["runs"].([]any); ok {
		for _, r := range runs {
			if m, ok := r.(map[string]any); ok {
				f(m)
			}
		}
	} else if _, ok := doc["run_id"]; ok {
		f(doc)
	}
	a.body, _ = json.Marshal(doc)
}

var runPath = regexp.MustCompile(`^/agent/runs/([^/]+)$`)

// isGetRun tells whether r is GET /agent/runs/{runId}.
func isGetRun(r *http.Request) bool {
	return r.Method == http.MethodGet && runPath.MatchString(r.URL.Path)
}

// repeatCursor makes every page after the first start with the last run of
// the page before, in place of its own first run.
func repeatCursor() func(http.Handler) http.Handler {
	var mu sync.Mutex
	lastOfPage := map[string]any{} // next_cursor -> last run of the page that gave it
	return rewrite(func(r *http.Request, a *answer) {
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
		mu.Lock()
		defer mu.Unlock()
		if prev, ok := lastOfPage[r.URL.Query().Get("cursor")]; ok && len(doc.Runs) > 0 {
			doc.Runs[0] = prev
		}
		if c, _ := doc.PageInfo["next_cursor"].(string); c != "" && len(doc.Runs) > 0 {
			lastOfPage[c] = doc.Runs[len(doc.Runs)-1]
		}
		a.body, _ = json.Marshal(doc)
	})
}

// someFeatures is an fs.FS holding only the named feature files.
func someFeatures(t *testing.T, names ...string) fs.FS {
	t.Helper()
	sub := fstest.MapFS{}
	for _, n := range names {
		data, err := fs.ReadFile(features.FS, n)
		require.NoError(t, err)
		sub[n] = &fstest.MapFile{Data: data}
	}
	return sub
}

type brokenServer struct {
	name string
	wrap func(http.Handler) http.Handler
	// features are the feature files run against it, to keep the test quick.
	features []string
	// mustFail maps scenarios that must fail to a piece of their message.
	mustFail map[string]string
	// mustPass lists scenarios the breakage does not touch.
	mustPass []string
}

var brokenServers = []brokenServer{
	{
		name:     "a wrong state name",
		features: []string{"create_run.feature", "list_runs.feature", "get_run.feature"},
		wrap: rewrite(func(r *http.Request, a *answer) {
			editRuns(a, func(run map[string]any) {
				if run["state"] == "QUEUED" {
					run["state"] = "WAITING"
				}
			})
		}),
		mustFail: map[string]string{
			"A prompt alone starts a queued run":                                 "body.state",
			"Filtering by state returns only runs in those states: state=QUEUED": "body.state",
		},
		mustPass: []string{"An unknown run is not found"},
	},
	{
		name:     "a missing required field",
		features: []string{"create_run.feature", "list_runs.feature"},
		wrap: rewrite(func(r *http.Request, a *answer) {
			editRuns(a, func(run map[string]any) { delete(run, "title") })
		}),
		mustFail: map[string]string{
			"A run started through the API reports API as its source and gets a title": "title",
			"A listing has runs and page information":                                  "title",
		},
		mustPass: []string{"A prompt alone starts a queued run"},
	},
	{
		name:     "task_id different from run_id",
		features: []string{"create_run.feature", "list_runs.feature"},
		wrap: rewrite(func(r *http.Request, a *answer) {
			editRuns(a, func(run map[string]any) { run["task_id"] = "task-" + run["run_id"].(string) })
		}),
		// Only runs created by the scenario are held to it: a listing may
		// show old runs whose task_id differs (the document allows it).
		mustFail: map[string]string{
			"task_id is the same as run_id":                       `"task_id" to equal its "run_id"`,
			"Both create paths behave the same: POST /agent/run":  `"task_id" to equal its "run_id"`,
			"Both create paths behave the same: POST /agent/runs": `"task_id" to equal its "run_id"`,
		},
		mustPass: []string{"A created run appears in the listing"},
	},
	{
		name:     "a list that ignores a filter (model_id)",
		features: []string{"list_runs.feature"},
		wrap: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				q := r.URL.Query()
				q.Del("model_id")
				r.URL.RawQuery = q.Encode()
				next.ServeHTTP(w, r)
			})
		},
		mustFail: map[string]string{
			"Filtering by model_id returns only the matching runs": `has agent_config.model_id "claude-4-sonnet", but the listing asked for model_id=gpt-5`,
		},
		mustPass: []string{
			"Filtering by name returns only the matching runs",
			"Filtering by creator returns only the matching runs",
		},
	},
	{
		name:     "a cursor that repeats a run",
		features: []string{"list_runs.feature"},
		wrap:     repeatCursor(),
		mustFail: map[string]string{
			"Walking every page with the cursor yields each run exactly once": "listed more than once",
		},
		mustPass: []string{"limit caps the size of a page"},
	},
	{
		name:     "a state that moves backwards",
		features: []string{"state_progression.feature"},
		wrap: rewrite(func(r *http.Request, a *answer) {
			if isGetRun(r) {
				editRuns(a, func(run map[string]any) {
					if run["state"] == "INPROGRESS" {
						run["state"] = "PENDING"
					}
				})
			}
		}),
		mustFail: map[string]string{
			"A run moves only forward until it reaches a terminal state": "moved backwards: expected a state at least as far as CLAIMED",
			"A successful run passes through every state in order":       "PENDING",
			// Every look at a run is held to the rules of any run, so a
			// scenario that only looked twice sees it too.
			"Terminal states never change": "moved backwards",
		},
	},
	{
		name:     "an error that is not a problem document",
		features: []string{"errors.feature", "get_run.feature", "list_runs.feature", "create_run.feature"},
		wrap: rewrite(func(r *http.Request, a *answer) {
			if a.status >= 400 {
				a.header.Set("Content-Type", "application/json")
				a.body = []byte(`{"message": "something went wrong"}`)
			}
		}),
		mustFail: map[string]string{
			"An unknown run is not found":                                      "problem document: expected a non-empty string",
			"A bad limit of 0 is refused with 400":                             "problem document: expected a non-empty string",
			"Cancelling an unknown run is not found":                           "problem document: expected a non-empty string",
			"A create request with no prompt and no skill is refused with 400": "problem document: expected a non-empty string",
		},
		mustPass: []string{"A prompt alone starts a queued run"},
	},
	{
		name:     "a 200 for an unknown run",
		features: []string{"get_run.feature", "create_run.feature"},
		wrap: rewrite(func(r *http.Request, a *answer) {
			if isGetRun(r) && a.status == http.StatusNotFound {
				id := runPath.FindStringSubmatch(r.URL.Path)[1]
				now := time.Now().UTC().Format(time.RFC3339)
				a.status = http.StatusOK
				a.header.Set("Content-Type", "application/json")
				a.body, _ = json.Marshal(map[string]any{
					"run_id": id, "task_id": id, "title": "Ghost", "prompt": "Boo",
					"state": "QUEUED", "created_at": now, "updated_at": now,
				})
			}
		}),
		mustFail: map[string]string{
			"An unknown run is not found": "expected status 404, got 200",
		},
		mustPass: []string{"task_id is the same as run_id"},
	},
	{
		name:     "a problem whose status differs from the HTTP status",
		features: []string{"get_run.feature", "errors.feature"},
		wrap: rewrite(func(r *http.Request, a *answer) {
			if a.status >= 400 {
				a.body = bytes.Replace(a.body, []byte(`"status":`+strconv.Itoa(a.status)), []byte(`"status":500`), 1)
			}
		}),
		mustFail: map[string]string{
			"An unknown run is not found": `expected "status" 404 (the HTTP status), got 500`,
		},
	},
	{
		name:     "a cancel that does not cancel",
		features: []string{"state_progression.feature"},
		wrap: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if m := regexp.MustCompile(`^/agent/runs/([^/]+)/cancel$`).FindStringSubmatch(r.URL.Path); m != nil && r.Header.Get("Authorization") != "" {
					w.Header().Set("Content-Type", "application/json")
					_, _ = w.Write([]byte(strconv.Quote(m[1])))
					return
				}
				next.ServeHTTP(w, r)
			})
		},
		mustFail: map[string]string{
			"A cancelled run is CANCELLED, and cancelling it again is refused": `"state" to be "CANCELLED", got "SUCCEEDED"`,
		},
	},
	{
		name:     "a cancel refused while the run is still going",
		features: []string{"state_progression.feature", "list_runs.feature"},
		wrap: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/cancel") && r.Header.Get("Authorization") != "" && !strings.Contains(r.URL.Path, "/__mock/") {
					w.Header().Set("Content-Type", "application/problem+json")
					w.WriteHeader(http.StatusBadRequest)
					_, _ = w.Write([]byte(`{"type":"https://docs.warp.dev/reference/api-and-sdk/troubleshooting/errors/invalid_request","title":"Invalid request","status":400,"error":"Invalid request (the run is already finished)"}`))
					return
				}
				next.ServeHTTP(w, r)
			})
		},
		mustFail: map[string]string{
			"A cancelled run is CANCELLED, and cancelling it again is refused": "got 400 while run",
			"Runs can be ordered by their last update, newest first":           "got 400 while run",
		},
		mustPass: []string{"A listing has runs and page information"},
	},
	{
		name:     "a list that ignores sort_order",
		features: []string{"list_runs.feature"},
		wrap: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				q := r.URL.Query()
				q.Del("sort_order")
				r.URL.RawQuery = q.Encode()
				next.ServeHTTP(w, r)
			})
		},
		mustFail: map[string]string{
			"Runs can be listed oldest first":                        "oldest first",
			"Runs can be ordered by their last update, oldest first": "is older than listed run",
		},
		mustPass: []string{"Runs can be ordered by their last update, newest first"},
	},
	{
		name:     "a listing without has_next_page",
		features: []string{"list_runs.feature"},
		wrap: rewrite(func(r *http.Request, a *answer) {
			if r.URL.Path == "/agent/runs" && a.status == http.StatusOK {
				a.body = bytes.Replace(a.body, []byte(`"has_next_page":`), []byte(`"more":`), 1)
			}
		}),
		mustFail: map[string]string{
			"A listing has runs and page information": "has_next_page",
		},
	},
	{
		name:     "no session link once claimed",
		features: []string{"get_run.feature", "state_progression.feature"},
		wrap: rewrite(func(r *http.Request, a *answer) {
			editRuns(a, func(run map[string]any) { delete(run, "session_link") })
		}),
		mustFail: map[string]string{
			"A run's session, once shown, is a UUID with a link":   "session_link",
			"A successful run passes through every state in order": "no session_link although it is CLAIMED",
		},
	},
	{
		name:     "a terminal run that changes afterwards",
		features: []string{"state_progression.feature"},
		wrap: func() func(http.Handler) http.Handler {
			var mu sync.Mutex
			seen := map[string]int{}
			return rewrite(func(r *http.Request, a *answer) {
				if !isGetRun(r) {
					return
				}
				editRuns(a, func(run map[string]any) {
					if run["state"] != "SUCCEEDED" {
						return
					}
					mu.Lock()
					defer mu.Unlock()
					// The second look at a finished run sees it failed.
					if seen[run["run_id"].(string)]++; seen[run["run_id"].(string)] > 1 {
						run["state"] = "FAILED"
						run["status_message"] = map[string]any{"message": "changed my mind", "error_code": "internal_error"}
					}
				})
			})
		}(),
		mustFail: map[string]string{
			"Terminal states never change": `was seen SUCCEEDED`,
		},
	},
	{
		name:     "events numbered anew at every poll",
		features: []string{"events.feature"},
		wrap: func() func(http.Handler) http.Handler {
			var mu sync.Mutex
			polls := 0
			return rewrite(editEvents(func(evs []map[string]any) {
				mu.Lock()
				defer mu.Unlock()
				polls++
				for _, e := range evs {
					e["sequence"] = e["sequence"].(float64) + float64(1000*polls)
				}
			}))
		}(),
		mustFail: map[string]string{
			`Events do not change from poll to poll, and "since" skips what was seen`: "came back different",
		},
		mustPass: []string{"A finished run's events end with the event of its final state"},
	},
	{
		name:     "events newest first",
		features: []string{"events.feature"},
		wrap: rewrite(editEvents(func(evs []map[string]any) {
			for i, j := 0, len(evs)-1; i < j; i, j = i+1, j-1 {
				evs[i], evs[j] = evs[j], evs[i]
			}
		})),
		mustFail: map[string]string{
			"A finished run's events end with the event of its final state": "increasing sequence order",
			"A run that ends in FAILED has the event run_failed":            "expected the events run_in_progress, run_failed",
		},
	},
	{
		name:     "an end reported before it happened",
		features: []string{"events.feature"},
		// The newest event of every poll says the run succeeded, whatever
		// the run's state: an end reported before (or instead of) the one
		// that happened.
		wrap: rewrite(editEvents(func(evs []map[string]any) {
			if len(evs) > 0 {
				evs[len(evs)-1]["event_type"] = "run_succeeded"
			}
		})),
		mustFail: map[string]string{
			"A run's events follow it as it moves, each stamped with the moment its state began": "expected the events run_in_progress,",
			"A run that ends in ERROR has the event run_errored":                                 "expected the events run_in_progress, run_errored",
			"A cancelled run's last event is run_cancelled":                                      "later its events still do not report it",
		},
	},
	{
		name:     "a reported event that moves a finished run back",
		features: []string{"events.feature"},
		wrap: rewrite(func(r *http.Request, a *answer) {
			if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/agent/events/") && a.status == http.StatusBadRequest {
				a.status, a.body = http.StatusOK, []byte(`{"sequence": 99}`)
				a.header.Set("Content-Type", "application/json")
			}
		}),
		mustFail: map[string]string{
			"An event that would move a finished run is refused: run_in_progress": "expected status 400",
			"An event that would move a finished run is refused: run_cancelled":   "expected status 400",
		},
		mustPass: []string{"A reported event moves the run forward and is polled with what the reporter sent"},
	},
	{
		name:     "another team's runs listed",
		features: []string{"tenancy.feature", "list_runs.feature"},
		wrap:     listsOtherTeamsRuns,
		mustFail: map[string]string{
			"Another team's run is never listed, by name":               "created with another team's key",
			"Another team's run is never listed, by name, oldest first": "created with another team's key",
		},
		mustPass: []string{"Another team's run cannot be fetched", "Walking every page with the cursor yields each run exactly once"},
	},
	{
		name:     "another team's run readable and cancellable",
		features: []string{"tenancy.feature"},
		wrap: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rec := httptest.NewRecorder()
				next.ServeHTTP(rec, r)
				if rec.Code == http.StatusForbidden {
					rec = asOtherTeam(next, r)
				}
				for k, vs := range rec.Header() {
					w.Header()[k] = vs
				}
				w.WriteHeader(rec.Code)
				_, _ = w.Write(rec.Body.Bytes())
			})
		},
		mustFail: map[string]string{
			"Another team's run cannot be fetched":   "expected status 403, got 200",
			"Another team's run cannot be cancelled": "expected status 403, got 400",
		},
		mustPass: []string{"Another team's run is never listed, by name"},
	},
	{
		name:     "time bounds that include their instant",
		features: []string{"list_rules.feature"},
		wrap:     shiftTime("created_after", -time.Millisecond)(),
		mustFail: map[string]string{
			"The time filters are strict: created_after leaves out a run created at its instant": "should not be listed",
		},
		mustPass: []string{"The time filters are strict: created_before leaves out a run created at its instant"},
	},
	{
		name:     "has_next_page on a full last page",
		features: []string{"list_rules.feature"},
		wrap:     fullLastPageHasNext(),
		mustFail: map[string]string{
			"A single page that is exactly full says there is no next page": "page 2 of 2 (GET /agent/runs?",
			"A last page that is exactly full says there is no next page":   "said there was a next page although it held the last runs (pages of 3, 3, 0 runs)",
		},
		mustPass: []string{"Pages of 4 hold each run once, in creation order"},
	},
	{
		name:     "a default page of 50 runs",
		features: []string{"list_rules.feature"},
		wrap: onListQuery(func(q url.Values) {
			if !q.Has("limit") {
				q.Set("limit", "50")
			}
		})(),
		mustFail: map[string]string{
			"Without a limit, a page holds at most 20 runs": "expected at most 20 runs, got 2",
		},
		mustPass: []string{"A limit of 500, the largest, is accepted"},
	},
	{
		name:     "filters joined by OR",
		features: []string{"list_rules.feature"},
		wrap: func(next http.Handler) http.Handler {
			// Each filter alone, then the union of the pages: what a server
			// that ORs its filters lists.
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				q := r.URL.Query()
				if r.Method != http.MethodGet || r.URL.Path != "/agent/runs" || len(q) < 2 {
					next.ServeHTTP(w, r)
					return
				}
				union, seen := []any{}, map[any]bool{}
				for name := range q {
					one := url.Values{name: q[name]}
					r2 := r.Clone(r.Context())
					r2.URL.RawQuery = one.Encode()
					rec := httptest.NewRecorder()
					next.ServeHTTP(rec, r2)
					var page struct{ Runs []map[string]any }
					_ = json.Unmarshal(rec.Body.Bytes(), &page)
					for _, run := range page.Runs {
						if !seen[run["run_id"]] {
							seen[run["run_id"]] = true
							union = append(union, run)
						}
					}
				}
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(map[string]any{"runs": union, "page_info": map[string]any{"has_next_page": false}})
			})
		},
		mustFail: map[string]string{
			"Filters combine with AND: every filter at once": "but the listing asked for",
			"Filters combine with AND: name and model_id":    "but the listing asked for model_id=gpt-5",
		},
	},
}

// otherTeam is a fixture key of another team than the key's.
func otherTeam(authorization string) string {
	switch strings.TrimPrefix(authorization, "Bearer ") {
	case "wk-mock-carol", "wk-mock-nightly":
		return "wk-mock-alice"
	}
	return "wk-mock-carol"
}

// asOtherTeam answers r as the mock answers it for a caller of another team.
func asOtherTeam(next http.Handler, r *http.Request) *httptest.ResponseRecorder {
	r2 := r.Clone(r.Context())
	r2.Header.Set("Authorization", "Bearer "+otherTeam(r.Header.Get("Authorization")))
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r2)
	return rec
}

// listsOtherTeamsRuns puts at the top of every first page of runs the runs
// the same listing shows another team: a server that forgot the team in its
// list query, while still refusing another team's run asked for by id.
func listsOtherTeamsRuns(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/agent/runs" || r.Header.Get("Authorization") == "" {
			next.ServeHTTP(w, r)
			return
		}
		q := r.URL.Query()
		theirs := httptest.NewRecorder()
		if q.Get("cursor") == "" { // their cursors are not ours: add theirs to first pages
			theirs = asOtherTeam(next, r)
		}
		rewrite(func(_ *http.Request, a *answer) {
			var doc, their map[string]any
			if a.status != http.StatusOK || json.Unmarshal(a.body, &doc) != nil || json.Unmarshal(theirs.Body.Bytes(), &their) != nil {
				return
			}
			runs, _ := doc["runs"].([]any)
			more, _ := their["runs"].([]any)
			// Theirs come first (the runs are newest), and the page keeps
			// its size.
			all := append(more, runs...)
			if n, err := strconv.Atoi(q.Get("limit")); err == nil && n < len(all) {
				all = all[:n]
			}
			doc["runs"] = all
			a.body, _ = json.Marshal(doc)
		})(next).ServeHTTP(w, r)
	})
}

// editEvents applies f to the events of every successful poll.
func editEvents(f func(evs []map[string]any)) func(r *http.Request, a *answer) {
	return func(r *http.Request, a *answer) {
		if r.Method != http.MethodGet || r.URL.Path != "/agent/events" || a.status != http.StatusOK {
			return
		}
		var evs []map[string]any
		if json.Unmarshal(a.body, &evs) != nil {
			return
		}
		f(evs)
		a.body, _ = json.Marshal(evs)
	}
}

// TestSuiteCatchesBrokenServers runs the whole suite against each broken
// server and checks which scenarios fail.
func TestSuiteCatchesBrokenServers(t *testing.T) {
	judgesServers(t)
	for _, bs := range brokenServers {
		t.Run(bs.name, func(t *testing.T) {
			srv := newMock(t, mockserver.Options{}, bs.wrap)
			res, out := runSuite(t, srv.URL, func(c *suiteconfig.Config) { c.Features = someFeatures(t, bs.features...) })
			require.False(t, res.Passed(), "the suite passed against %s\n%s", bs.name, out)
			var failed []string
			for _, f := range res.Failed() {
				failed = append(failed, f.Name)
			}
			t.Logf("%d of %d scenarios failed: %s", len(failed), len(res.Scenarios), strings.Join(failed, "; "))
			for name, msg := range bs.mustFail {
				got, ok := res.Find(name)
				if assert.True(t, ok, "no scenario named %q", name) {
					assert.Equal(t, "failed", string(got.Status), "scenario %q should fail", name)
					assert.Contains(t, got.Message, msg, "scenario %q", name)
				}
			}
			for _, name := range bs.mustPass {
				got, ok := res.Find(name)
				if assert.True(t, ok, "no scenario named %q", name) {
					assert.Equal(t, "passed", string(got.Status), "scenario %q should pass: %s", name, got.Message)
				}
			}
		})
	}
}
