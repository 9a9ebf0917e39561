//go:build !race

package steps_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/suiteconfig"
)

// The mock, made to take the choices the published document leaves open
// that the mock does not take itself and the reference server does not
// serve: conversations that open with the system's instructions, messaging
// switched off, problems without detail, and an unknown sort order of the
// environments and of the agents ignored rather than refused. Polled as a
// real server, it must pass: the scenarios that hold a server to the
// mock's own choices are @mock-only, and skipped there.
func TestSuitePassesAgainstTheMockMadeToChooseOtherwise(t *testing.T) {
	otherwise := func(next http.Handler) http.Handler {
		systemFirst := editSteps(func(steps []any) []any {
			if len(steps) > 0 {
				if st, ok := steps[0].(map[string]any); ok {
					msgs, _ := st["messages"].([]any)
					first, _ := msgs[0].(map[string]any)
					system := map[string]any{"role": "system", "timestamp": first["timestamp"],
						"content": []any{map[string]any{"type": "text", "text": "You are a careful engineer."}}}
					st["messages"] = append([]any{system}, msgs...)
				}
			}
			return steps
		})
		terse := rewrite(func(_ *http.Request, a *answer) {
			var p map[string]any
			if a.status >= 400 && json.Unmarshal(a.body, &p) == nil && p["detail"] != nil {
				delete(p, "detail")
				p["error"] = p["title"]
				a.body, _ = json.Marshal(p)
			}
		})
		return terse(systemFirst(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.Method == http.MethodPost && r.URL.Path == "/agent/messages":
				rewrite(func(_ *http.Request, a *answer) {
					problem(a, http.StatusNotFound, "resource_not_found", "Resource not found")
				})(http.NotFoundHandler()).ServeHTTP(w, r)
				return
			case r.URL.Path == "/agent" || r.URL.Path == "/agent/environments":
				if q := r.URL.Query(); q.Get("sort_by") == "size" {
					q.Del("sort_by")
					r.URL.RawQuery = q.Encode()
				}
			}
			next.ServeHTTP(w, r)
		})))
	}
	srv := newMock(t, mockserver.Options{Step: 40 * time.Millisecond, DisableControl: true}, otherwise)
	res, out := runSuite(t, srv.URL, nil)
	assertAllPassed(t, res, out)
	for _, s := range res.Skipped() {
		assert.True(t, hasAnyTag(s.Tags, "@mock-control", "@mock-only") || leftToTheServer(s) || skippedForAnOption(s), "%s: %s", s.Name, s.Message)
	}
	passed, _, skipped := res.Count()
	t.Logf("%d scenarios passed, %d skipped, in %s", passed, skipped, res.Duration)
}

// A run that ends in ERROR on its own, when polling, leaves a scenario that
// needed another ending inconclusive: skipped, saying so, not failed. Here
// every accepted cancel is overtaken by a platform error.
func TestARunThatEndsInErrorOnItsOwnIsInconclusive(t *testing.T) {
	erroredInstead := rewrite(func(r *http.Request, a *answer) {
		editRuns(a, func(run map[string]any) {
			if run["state"] == "CANCELLED" {
				run["state"] = "ERROR"
				run["status_message"] = map[string]any{"message": "The worker went away.", "error_code": "internal_error"}
			}
		})
		editEvents(func(evs []map[string]any) {
			for _, e := range evs {
				if e["event_type"] == "run_cancelled" {
					e["event_type"] = "run_errored"
				}
			}
		})(r, a)
	})
	// A second in each state: the cancel that follows a create lands while
	// the run is still queued, and is accepted.
	srv := newMock(t, mockserver.Options{Step: time.Second, DisableControl: true}, erroredInstead)
	res, out := runSuite(t, srv.URL, func(c *suiteconfig.Config) {
		c.Features = someFeatures(t, "state_progression.feature")
		c.Tags = "not @mock-control and not @mock-only"
	})
	assertAllPassed(t, res, out)
	inconclusive := 0
	for _, s := range res.Skipped() {
		if strings.HasPrefix(s.Message, "inconclusive: ") {
			inconclusive++
			assert.Contains(t, s.Message, "ended in ERROR on its own", s.Name)
		}
	}
	assert.Positive(t, inconclusive, "no scenario was left inconclusive:\n%s", out)
}
