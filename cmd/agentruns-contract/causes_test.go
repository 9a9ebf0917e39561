package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/internal/suitetest"
	"github.com/agentruns/agentruns/mockserver"
)

// withoutUpdatedAt drops updated_at from every answer of GET
// /agent/runs/{runId}, and from nothing else.
func withoutUpdatedAt(next http.Handler) http.Handler {
	return suitetest.EditFetchedRun(next, func(run map[string]any) { delete(run, "updated_at") })
}

// Issue 34, point 5: one mistake, one cause. A server that drops
// updated_at from one answer fails scenarios in many words (the answer
// itself, a value worked out from it, a run re-read after it ended); the
// summary leads with that one cause, how many scenarios failed from it and
// the first of them, and tells no failure apart from it.
func TestOneDroppedFieldIsOneCause(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts mockserver.Options
		args []string
	}{
		{"driving the mock's clock", mockserver.Options{}, nil},
		{"polling", mockserver.Options{Step: 20 * time.Millisecond}, []string{"--no-control", "--poll-interval", "20ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newMock(t, tc.opts, withoutUpdatedAt)
			args := append([]string{"--base-url", srv.URL, "--api-key", "wk-mock-alice", "--other-api-key", "wk-mock-carol", "--format", "progress"}, tc.args...)
			out, errOut, err := runCmd(t, args...)
			require.ErrorIs(t, err, errFailed, "%s\n%s", out, errOut)
			_, _, failed, _ := summaryCounts(t, errOut)
			require.Greater(t, failed, 10, errOut)
			after := afterCounts(errOut)
			assert.True(t, strings.HasPrefix(after, fmt.Sprintf("CAUSE   %d scenarios failed from GET /agent/runs/{runId} 200: body.updated_at: is required\n", failed)),
				"the summary does not lead with the one cause:\n%s", errOut)
			assert.Equal(t, 1, strings.Count(errOut, "CAUSE "), errOut)
			assert.NotRegexp(t, `(?m)^FAILED `, errOut, "a failure told apart from its cause")
		})
	}
}

// updatedBeforeCreated shows every run a GET of /agent/runs... answers with
// an updated_at one second before its created_at, as a server whose
// durations run backwards would.
func updatedBeforeCreated(next http.Handler) http.Handler {
	var rewrite func(v any)
	rewrite = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if created, err := time.Parse(time.RFC3339Nano, fmt.Sprint(v["created_at"])); err == nil && v["run_id"] != nil {
				v["updated_at"] = created.Add(-time.Second).Format(time.RFC3339Nano)
			}
			for _, x := range v {
				rewrite(x)
			}
		case []any:
			for _, x := range v {
				rewrite(x)
			}
		}
	}
	runs := func(r *http.Request) bool {
		return r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/agent/runs")
	}
	return suitetest.EditAnswers(next, runs, func(_ *http.Request, doc any) { rewrite(doc) })
}

// A server whose runs show updated_at before created_at breaks one rule of
// the suite's invariants, met in scenarios of every kind, each naming its
// own run and times: the summary leads with that one rule as the cause.
func TestOneBrokenRuleIsOneCause(t *testing.T) {
	srv := newMock(t, mockserver.Options{}, updatedBeforeCreated)
	out, errOut, err := runCmd(t, "--base-url", srv.URL, "--api-key", "wk-mock-alice", "--other-api-key", "wk-mock-carol", "--format", "progress")
	require.ErrorIs(t, err, errFailed, "%s\n%s", out, errOut)
	_, _, failed, _ := summaryCounts(t, errOut)
	require.Greater(t, failed, 10, errOut)
	after := afterCounts(errOut)
	assert.True(t, strings.HasPrefix(after, fmt.Sprintf("CAUSE   %d scenarios failed from rule timestamps-ordered: updated_at: ", failed)),
		"the summary does not lead with the broken rule:\n%s", errOut)
	assert.Equal(t, 1, strings.Count(errOut, "CAUSE "), errOut)
	assert.NotRegexp(t, `(?m)^FAILED `, errOut, "a failure told apart from its cause")
}

// afterCounts is the summary after its counts line and the line saying
// whether the newest client's surface was judged, which every run prints
// first: where the causes begin.
func afterCounts(errOut string) string {
	_, after, _ := strings.Cut(errOut, " scenarios: ")
	_, after, _ = strings.Cut(after, "\n")
	for strings.HasPrefix(after, "NEWEST CLIENT ") {
		_, after, _ = strings.Cut(after, "\n")
	}
	return after
}
