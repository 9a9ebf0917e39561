package steps_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/refserver"
	"github.com/agentruns/agentruns/report"
	"github.com/agentruns/agentruns/runner"
	"github.com/agentruns/agentruns/steps"
	"github.com/agentruns/agentruns/suiteconfig"
)

// What a full pass costs a team (issue: the suite at a real server's
// price): the runs the suite creates against a server of the published
// document, with every option a team gives it, counted by the suite's run
// book and by the server itself.

// refFailingPrompt is the prompt the reference server fails when asked to.
const refFailingPrompt = "Contract suite run that fails"

// fullPass gives the suite every option against the reference server: a
// second team's key, a failing prompt, the plan's identities.
func fullPass(c *suiteconfig.Config) {
	c.OtherAPIKey = refserver.OtherTeamKeyPrefix + "suite"
	c.FailingPrompt, c.IdentityPlan = refFailingPrompt, refserverPlan
	c.Tags = "not @newest-client"
	runFeaturesOnly(c)
}

// Issue 46, points 1 and 5: a full pass counts every run it creates, as
// the server does, and marks each (a title prefix; the metadata key where
// the server keeps metadata); --prompt replaces every prompt but those of
// the scenarios about their runs' bodies (@runs-as-written) and the
// failing prompt.
func TestAFullPassCountsAndMarksTheRunsItCreates(t *testing.T) {
	const cheap = "Reply with the word done"
	srv := refserver.New(refserver.Options{Step: 20 * time.Millisecond, Published: true, FailingPrompt: refFailingPrompt})
	var creates atomic.Int64 // creates the server answered 200, counted at its door
	hs := httptest.NewServer(countCreates(srv, &creates))
	t.Cleanup(hs.Close)
	res, out := runSuite(t, hs.URL+"/api/v1", func(c *suiteconfig.Config) {
		fullPass(c)
		c.Prompt = cheap
	})
	assertAllPassed(t, res, out)
	runs := res.Report.Runs
	assert.Equal(t, srv.Created(), runs.Created, "the suite's count of the runs it created against the server's")
	assert.Equal(t, srv.Created(), int(creates.Load()), "runs created, as the server and its door counted them")
	assert.LessOrEqual(t, int(creates.Load()), fullPassRuns, "runs a full pass creates against a server of the published document, as the server counted them")
	asWritten := 0 // runs of the scenarios whose bodies are sent as written
	tagged := map[string]bool{}
	for _, s := range res.Scenarios {
		tagged[s.Name] = hasAnyTag(s.Tags, "@runs-as-written")
	}
	for _, s := range runs.ByScenario {
		if tagged[s.Scenario] {
			asWritten += s.Runs
		}
	}
	created := 0
	for _, key := range []string{"wk-mock-alice", refserver.OtherTeamKeyPrefix + "suite"} {
		for _, r := range apiRuns(t, hs.URL+"/api/v1", key) {
			created++
			title, prompt := r["title"].(string), r["prompt"].(string)
			if !strings.HasPrefix(title, "["+steps.RunMarker+"] ") {
				asWritten--
				continue
			}
			assert.Contains(t, []string{cheap, refFailingPrompt, ""}, prompt, "the prompt of run %s, titled %q", r["run_id"], title)
		}
	}
	assert.Equal(t, runs.Created, created, "runs the API lists as created through it")
	assert.Zero(t, asWritten, "runs without the marker but those of @runs-as-written scenarios")
	assert.Contains(t, runs.Marker, "titles begin with ["+steps.RunMarker+"]")
	t.Logf("%s", runs.Cost())
	for _, s := range runs.ByScenario {
		t.Logf("%3d  %s", s.Runs, s.Scenario)
	}
}

// fullPassRuns is the most runs a full pass may create against a server
// of the published document, counted by the server: 237 before runs were
// shared, 86 when only the listings shared theirs, and 40 or fewer now
// that every scenario which only looks at a run shares it (a scenario's
// runs vary with how its server's runs end).
const fullPassRuns = 40

// countCreates counts the creates next answers 200: POST /agent/run and
// POST /agent/runs, under the document's base path.
func countCreates(next http.Handler, n *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		p := strings.TrimPrefix(r.URL.Path, "/api/v1")
		if r.Method == http.MethodPost && (p == "/agent/run" || p == "/agent/runs") && rec.Code == http.StatusOK {
			n.Add(1)
		}
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// apiRuns lists the runs created through the API that key's team sees.
func apiRuns(t *testing.T, base, key string) []map[string]any {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/agent/runs?limit=500&source=API", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var page struct {
		Runs     []map[string]any `json:"runs"`
		PageInfo struct {
			HasNextPage bool `json:"has_next_page"`
		} `json:"page_info"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&page))
	require.False(t, page.PageInfo.HasNextPage, "more than 500 runs")
	return page.Runs
}

// Issue 46, point 2: --max-runs is never passed, and what it leaves out is
// NOT CHECKED (budget), never passed; the reports say so.
func TestTheRunBudgetIsNeverPassedAndWhatItLeavesOutIsNotChecked(t *testing.T) {
	const budget = 10
	srv := refserver.New(refserver.Options{Step: 20 * time.Millisecond, Published: true, FailingPrompt: refFailingPrompt})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	res, out := runSuite(t, hs.URL+"/api/v1", func(c *suiteconfig.Config) {
		fullPass(c)
		c.MaxRuns = budget
	})
	assert.LessOrEqual(t, srv.Created(), budget, "runs the server saw created")
	assert.Equal(t, srv.Created(), res.Report.Runs.Created)
	assert.Empty(t, res.Failed(), out)
	var leftOut int
	for _, s := range res.Scenarios {
		if s.Needs != nil && s.Needs.Flag == "--max-runs" {
			leftOut++
			assert.Equal(t, runner.Skipped, s.Status, s.Name)
			assert.Contains(t, s.Message, "NOT CHECKED (budget)", s.Name)
		}
	}
	assert.Greater(t, leftOut, 10, "scenarios the budget left out\n%s", out)
	assert.Contains(t, res.Report.NotChecked(), "--max-runs")
	assert.Contains(t, res.Report.Runs.Cost(), "(--max-runs 10)")
	t.Logf("%d scenarios left out by a budget of %d runs; %s", leftOut, budget, res.Report.Runs.Cost())
}

// Issue 46, point 2: a budget that cannot make a shared set of runs whole
// makes none of it, and every scenario sharing the set is NOT CHECKED
// (budget): none is judged on part of the runs its arrangement asks for.
// The budgets cut the sets at different places (the seven runs of the
// filters among them).
func TestABudgetMakesASharedSetWholeOrNotAtAll(t *testing.T) {
	for _, budget := range []int{5, 15, 30, 60} {
		t.Run(fmt.Sprintf("--max-runs %d", budget), func(t *testing.T) {
			srv := refserver.New(refserver.Options{Step: 20 * time.Millisecond, Published: true, FailingPrompt: refFailingPrompt})
			hs := httptest.NewServer(srv)
			t.Cleanup(hs.Close)
			res, out := runSuite(t, hs.URL+"/api/v1", func(c *suiteconfig.Config) {
				fullPass(c)
				c.MaxRuns = budget
			})
			assert.LessOrEqual(t, srv.Created(), budget, "runs the server saw created")
			assert.Empty(t, res.Failed(), out)
			// The scenarios sharing a set, by their arrangement: all
			// passed, or all left out by the budget.
			verdicts := map[string]map[string][]string{}
			for _, s := range res.Report.Scenarios {
				if !hasAnyTag(s.Tags, "@shares-runs") || s.Status == report.Skipped && s.Needs == nil {
					continue
				}
				key := givenSteps(s)
				if hasAnyTag(s.Tags, "@runs-as-written") {
					key = "(as written)\n" + key // its runs are not the others' (marker.go)
				}
				verdict := string(s.Status)
				if s.Needs != nil && s.Needs.Flag == "--max-runs" {
					verdict = "NOT CHECKED (budget)"
				}
				if verdicts[key] == nil {
					verdicts[key] = map[string][]string{}
				}
				verdicts[key][verdict] = append(verdicts[key][verdict], s.Name)
			}
			for key, byVerdict := range verdicts {
				assert.Len(t, byVerdict, 1, "the scenarios sharing the runs of\n%s\n%v", key, byVerdict)
			}
			t.Logf("--max-runs %d: %d runs created", budget, srv.Created())
		})
	}
}

// givenSteps is the text of a reported scenario's arrangement: its steps
// up to the first When or Then, tables included.
func givenSteps(s report.Scenario) string {
	var b strings.Builder
	for i, st := range s.Steps {
		k := strings.TrimSpace(st.Keyword)
		if k == "When" || k == "Then" || i == 0 && k != "Given" {
			break
		}
		b.WriteString(st.Text + "\n")
		for _, row := range st.Table {
			b.WriteString("|" + strings.Join(row, "|") + "\n")
		}
	}
	return b.String()
}
