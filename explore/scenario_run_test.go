package explore_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/explore"
	"github.com/agentruns/agentruns/internal/suitetest"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/rules"
	"github.com/agentruns/agentruns/suiteconfig"
)

// A printed scenario is real: pasted into a feature and run by the suite,
// it fails on a server that has the bug the finding shows and passes on
// the mock. The findings are built by hand as the exploration hands them
// back, with the answers the broken server gave; the ids in them are not
// the ones the server gives when the scenario runs, so they must be
// carried by name.
func TestAPrintedScenarioFailsOnItsBugAndPassesOnTheMock(t *testing.T) {
	for _, tc := range []struct {
		name    string
		finding explore.Finding
		bug     func(http.Handler) http.Handler
		fails   string // in the failing scenario's message
	}{
		{
			name: "a listing shows a run outside its state filter",
			finding: explore.Finding{
				Cause:  "listing shows a run outside its filter",
				Detail: "GET /agent/runs?state=QUEUED listed run f29d0da9 in state SUCCEEDED.",
				Calls: []explore.Call{{Method: "GET", Path: "/agent/runs", Query: url.Values{"state": {"QUEUED"}}, Status: 200,
					Answer: []byte(`{"runs":[{"run_id":"f29d0da9-953f-48f1-a09f-76b5a170b338","state":"SUCCEEDED"}],"page_info":{"has_next_page":false}}`)}},
			},
			bug:   dropQuery("state"),
			fails: "state",
		},
		{
			name: "a valid listing answers 500",
			finding: explore.Finding{
				Cause: "server error on a valid request",
				Calls: []explore.Call{{Method: "GET", Path: "/agent/runs", Query: url.Values{"limit": {"3"}, "sort_by": {"created_at"}}, Status: 500}},
			},
			bug:   serverErrorOn("sort_by"),
			fails: "500",
		},
		{
			name: "a state outside the enum is taken",
			finding: explore.Finding{
				Cause: "invalid request accepted",
				Calls: []explore.Call{{Method: "GET", Path: "/agent/runs", Query: url.Values{"state": {"DONE"}}, Invalid: "query parameter state outside its enum", Status: 200}},
			},
			bug:   dropQuery("state"),
			fails: "4xx",
		},
		{
			name: "a get disagrees with the listing that showed the run",
			finding: explore.Finding{
				Cause: "two looks at a run disagree",
				Calls: []explore.Call{
					{Method: "POST", Path: "/agent/run", Body: []byte(`{"prompt": "say hello", "config": {"name": "explored {label}"}}`), Status: 200,
						Answer: []byte(`{"run_id":"` + runID + `","state":"QUEUED"}`)},
					{Method: "GET", Path: "/agent/runs", Query: url.Values{"name": {"explored {label}"}}, Status: 200,
						Answer: []byte(`{"runs":[{"run_id":"` + runID + `","title":"say hello"}],"page_info":{"has_next_page":false}}`)},
					{Method: "GET", Path: "/agent/runs/" + runID, Status: 200, Answer: []byte(`{"run_id":"` + runID + `","title":"another title"}`)},
				},
			},
			bug:   getShowsAnotherTitle,
			fails: "title",
		},
		{
			name: "a walk shows a run twice",
			finding: explore.Finding{
				Cause: rules.WalkNeverRepeats,
				Calls: []explore.Call{
					{Method: "GET", Path: "/agent/runs", Query: url.Values{"sort_by": {"created_at"}, "limit": {"3"}}, Status: 200,
						Answer: []byte(`{"runs":[{"run_id":"` + runID + `"}],"page_info":{"has_next_page":true,"next_cursor":"eyJhIjoxfQ+/=="}}`)},
					{Method: "GET", Path: "/agent/runs", Query: url.Values{"sort_by": {"created_at"}, "limit": {"3"}, "cursor": {"eyJhIjoxfQ+/=="}}, Status: 200,
						Answer: []byte(`{"runs":[{"run_id":"` + runID + `"}],"page_info":{"has_next_page":false}}`)},
				},
			},
			bug:   dropQuery("cursor"),
			fails: "walk-never-repeats",
		},
		{
			name: "a replaced schedule keeps its last change",
			finding: explore.Finding{
				Cause: "a change did not move the resource's last change",
				Calls: []explore.Call{
					{Method: "POST", Path: "/agent/schedules", Body: []byte(`{"name": "nightly", "cron_schedule": "0 3 * * *", "prompt": "p"}`), Status: 201,
						Answer: []byte(`{"id":"sched-1234567","name":"nightly","updated_at":"2026-01-01T00:00:00Z","created_at":"2026-01-01T00:00:00Z"}`)},
					{Method: "PUT", Path: "/agent/schedules/sched-1234567", Body: []byte(`{"name": "nightly", "cron_schedule": "0 4 * * *", "prompt": "p", "enabled": true}`), Status: 200,
						Answer: []byte(`{"id":"sched-1234567","name":"nightly","updated_at":"2026-01-01T00:00:00Z","created_at":"2026-01-01T00:00:00Z"}`)},
				},
			},
			bug:   replaceKeepsUpdatedAt,
			fails: "later than the remembered",
		},
		{
			name: "another team's listing shows the team's run",
			finding: explore.Finding{
				Cause: "another team's runs are listed",
				Calls: []explore.Call{
					{Method: "POST", Path: "/agent/run", Body: []byte(`{"prompt": "say hello", "config": {"name": "explored listing"}}`), Status: 200, Answer: []byte(`{"run_id":"` + runID + `","state":"QUEUED"}`)},
					{Team: explore.OtherTeam, Method: "GET", Path: "/agent/runs", Query: url.Values{"name": {"explored listing"}}, Status: 200,
						Answer: []byte(`{"runs":[{"run_id":"` + runID + `"}],"page_info":{"has_next_page":false}}`)},
				},
			},
			bug:   otherTeamReadsAlicesRuns,
			fails: "which the scenario's own key created",
		},
		{
			name: "a walk skips a run",
			finding: explore.Finding{
				Cause: "a walk through the pages skips a run",
				Calls: []explore.Call{
					{Method: "POST", Path: "/agent/run", Body: []byte(`{"prompt": "one", "config": {"name": "explored walk"}}`), Status: 200, Answer: []byte(`{"run_id":"` + runID + `"}`)},
					{Method: "POST", Path: "/agent/run", Body: []byte(`{"prompt": "two", "config": {"name": "explored walk"}}`), Status: 200, Answer: []byte(`{"run_id":"11111111-2222-4333-8444-555555555555"}`)},
					{Method: "GET", Path: "/agent/runs", Query: url.Values{"name": {"explored walk"}, "limit": {"1"}, "sort_by": {"created_at"}}, Status: 200,
						Answer: []byte(`{"runs":[{"run_id":"11111111-2222-4333-8444-555555555555"}],"page_info":{"has_next_page":true,"next_cursor":"c1"}}`)},
					{Method: "GET", Path: "/agent/runs", Query: url.Values{"name": {"explored walk"}, "limit": {"1"}, "sort_by": {"created_at"}, "cursor": {"c1"}}, Status: 200,
						Answer: []byte(`{"runs":[],"page_info":{"has_next_page":false}}`)},
				},
			},
			bug:   pagesAfterTheFirstEmpty,
			fails: "ended without run",
		},
		{
			// Shown only after the mock's clock moved: the scenario moves
			// it as the exploration did, or the run would still be live.
			name: "an ended run's get is a server error",
			finding: explore.Finding{
				Cause: "server error on a valid request",
				Calls: []explore.Call{
					{Method: "POST", Path: "/agent/run", Body: []byte(`{"prompt": "say hello"}`), Status: 200, Answer: []byte(`{"run_id":"` + runID + `","state":"QUEUED"}`)},
					{Clock: time.Hour, Status: 200},
					{Method: "GET", Path: "/agent/runs/" + runID, Status: 500},
				},
			},
			bug:   endedRunIsAServerError,
			fails: "500",
		},
		{
			name: "another team reads the team's run",
			finding: explore.Finding{
				Cause: "another team's call was not refused",
				Calls: []explore.Call{
					{Method: "POST", Path: "/agent/run", Body: []byte(`{"prompt": "say hello"}`), Status: 200, Answer: []byte(`{"run_id":"` + runID + `","state":"QUEUED"}`)},
					{Team: explore.OtherTeam, Method: "GET", Path: "/agent/runs/" + runID, Status: 200, Answer: []byte(`{"run_id":"` + runID + `"}`)},
				},
			},
			bug:   otherTeamReadsAlicesRuns,
			fails: "403",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			feature, run := pasted(t, tc.finding)
			passed, out := run(tc.bug)
			assert.False(t, passed, "the scenario passed on the broken server:\n%s\n%s", feature, out)
			assert.Contains(t, out, tc.fails)
			t.Logf("on the broken server: %s", strings.SplitN(out, "\n", 2)[0])
			passed, out = run(nil)
			assert.True(t, passed, "the scenario failed on the mock:\n%s\n%s", feature, out)
		})
	}
}

// pasted prints f's scenario (no step may be missing) and pastes it into a
// feature of its own; run runs the suite with only that feature against
// the mock wrapped in wrap (nil for the mock itself), and says whether it
// passed, with its message and output.
func pasted(t *testing.T, f explore.Finding) (feature string, run func(wrap func(http.Handler) http.Handler) (bool, string)) {
	t.Helper()
	feature, missing := explore.Scenario(f)
	require.Empty(t, missing, feature)
	t.Log("\n" + feature)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "finding.feature"), []byte(feature), 0o644))
	return feature, func(wrap func(http.Handler) http.Handler) (bool, string) {
		srv := suitetest.NewMock(t, mockserver.Options{}, wrap)
		res, out := suitetest.RunSuite(t, srv.URL, func(c *suiteconfig.Config) { c.Features, c.Tags = os.DirFS(dir), explore.ExploredTag })
		require.Len(t, res.Scenarios, 1, out)
		return res.Passed(), res.Scenarios[0].Message + "\n" + out
	}
}

// dropQuery is a server that ignores a query parameter of the listing of
// runs, as if it did not know it.
func dropQuery(param string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && r.URL.Path == "/agent/runs" {
				q := r.URL.Query()
				q.Del(param)
				r = r.Clone(r.Context())
				r.URL.RawQuery = q.Encode()
			}
			next.ServeHTTP(w, r)
		})
	}
}

// serverErrorOn is a server that breaks on a listing of runs with param.
func serverErrorOn(param string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && r.URL.Path == "/agent/runs" && r.URL.Query().Has(param) {
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = io.WriteString(w, `{"type":"https://docs.warp.dev/errors/internal_error","title":"Internal error","status":500,"error":"Internal error"}`)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// getShowsAnotherTitle is a server whose get of a run shows another title
// than its listing does.
func getShowsAnotherTitle(next http.Handler) http.Handler {
	return suitetest.EditFetchedRun(next, func(run map[string]any) { run["title"] = "another title" })
}

// endedRunIsAServerError is a server whose get of a run that has ended
// answers 500.
func endedRunIsAServerError(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, one := strings.CutPrefix(r.URL.Path, "/agent/runs/")
		if r.Method != http.MethodGet || !one || strings.Contains(rest, "/") {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		var run map[string]any
		if rec.Code == http.StatusOK && json.Unmarshal(rec.Body.Bytes(), &run) == nil && rules.IsTerminal(rules.Str(run["state"])) {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"type":"https://docs.warp.dev/errors/internal_error","title":"Internal error","status":500,"error":"Internal error"}`)
			return
		}
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// otherTeamReadsAlicesRuns is a server that lets carol, of another team,
// read and list the runs of alice's team.
func otherTeamReadsAlicesRuns(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/agent/runs") && r.Header.Get("Authorization") == "Bearer wk-mock-carol" {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer wk-mock-alice")
		}
		next.ServeHTTP(w, r)
	})
}

// replaceKeepsUpdatedAt is a server whose replaced schedule shows the
// time it was created as its last change.
func replaceKeepsUpdatedAt(next http.Handler) http.Handler {
	replaces := func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/agent/schedules/")
	}
	return suitetest.EditAnswers(next, replaces, func(_ *http.Request, doc any) {
		if sched, ok := doc.(map[string]any); ok {
			sched["updated_at"] = sched["created_at"]
		}
	})
}

// pagesAfterTheFirstEmpty is a server whose listing of runs, asked with a
// cursor, is an empty last page.
func pagesAfterTheFirstEmpty(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/agent/runs" && r.URL.Query().Has("cursor") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"runs":[],"page_info":{"has_next_page":false}}`)
			return
		}
		next.ServeHTTP(w, r)
	})
}
