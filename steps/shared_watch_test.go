package steps_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/rules"
	"github.com/agentruns/agentruns/runner"
	"github.com/agentruns/agentruns/suiteconfig"
)

// Issue 46, point 1: a run the server ends on its own, watched once from
// its creation, is shared by the scenarios that only look at it, and each
// judges its whole history. One scenario at a time, create_run.feature's
// scenario makes and watches the run first; the progression scenarios
// join once it has ended, create nothing, and judge every state its watch
// saw. On a server that moves a run backwards they fail all the same: the
// watch that made the run saw the move, and no sharer passes on it.
func TestALateSharerJudgesTheWholeHistoryOfTheRunItShares(t *testing.T) {
	const (
		maker    = "task_id is the same as run_id"
		forward  = "A run moves only forward until it reaches a terminal state"
		terminal = "Terminal states never change"
	)
	suite := func(wrap func(http.Handler) http.Handler) (runner.Result, map[string]int, string) {
		srv := newMock(t, mockserver.Options{Step: 40 * time.Millisecond, DisableControl: true}, wrap)
		res, out := runSuite(t, srv.URL, func(c *suiteconfig.Config) {
			c.Features = someFeatures(t, "create_run.feature", "state_progression.feature")
			c.Concurrency = 1
		})
		made := map[string]int{}
		for _, s := range res.Report.Runs.ByScenario {
			made[s.Scenario] = s.Runs
		}
		return res, made, out
	}

	res, made, out := suite(nil)
	assertAllPassed(t, res, out)
	assert.Equal(t, 1, made[maker], "the scenario that made and watched the shared run")
	for _, name := range []string{forward, terminal} {
		got, ok := res.Find(name)
		require.True(t, ok, name)
		assert.Equal(t, runner.Passed, got.Status, "%s: %s", name, got.Message)
		assert.Zero(t, made[name], "runs %q created: it shares the run the other scenario watched", name)
	}

	// The first two answers that would show a run ended show it INPROGRESS,
	// then PENDING: every watch, however far apart its polls (a loaded
	// machine skips the states a run passes through quickly), sees the run
	// move backwards before it sees it end.
	var mu sync.Mutex
	endedAnswers := map[string]int{}
	backwards := rewrite(func(r *http.Request, a *answer) {
		if isGetRun(r) {
			editRuns(a, func(run map[string]any) {
				state, _ := run["state"].(string)
				if !rules.IsTerminal(state) {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				id, _ := run["run_id"].(string)
				endedAnswers[id]++
				switch endedAnswers[id] {
				case 1:
					run["state"] = "INPROGRESS"
				case 2:
					run["state"] = "PENDING"
				}
			})
		}
	})
	res, _, out = suite(backwards)
	for _, name := range []string{maker, forward, terminal} {
		got, ok := res.Find(name)
		require.True(t, ok, name)
		assert.Equal(t, runner.Failed, got.Status, "%s\n%s", name, out)
		assert.Contains(t, got.Message, "backwards", name)
	}
}
