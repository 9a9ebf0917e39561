package steps_test

import (
	"net/http"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/suiteconfig"
)

// followupsNotFound answers 404 to every follow-up that carries a key, as
// a server without the operation does: the follow-up never reaches the run.
func followupsNotFound(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/followups") || r.Header.Get("Authorization") == "" {
			next.ServeHTTP(w, r)
			return
		}
		a := &answer{header: http.Header{}}
		problem(a, http.StatusNotFound, "resource_not_found", "Not found")
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(a.status)
		_, _ = w.Write(a.body)
	})
}

// Issue 47, point 3: a follow-up the server refuses did nothing to the run,
// so the looks at the run after it are held to the rules as before, and
// to none of what an accepted follow-up does (start an ended run again).
func TestARefusedFollowupBindsNoRule(t *testing.T) {
	srv := newMock(t, mockserver.Options{Step: 20 * time.Millisecond, DisableControl: true}, followupsNotFound)
	res, out := runSuite(t, srv.URL, func(c *suiteconfig.Config) {
		c.Features = fstest.MapFS{"refused.feature": {Data: []byte(`Feature: A refused follow-up
  Scenario: A follow-up refused with 404 leaves the ended run as it was
    When I create a run with the prompt "Refused follow-up"
    And I watch the run until it reaches a terminal state
    And I send the follow-up "Once more"
    Then the response status is 404
    When I fetch the run
    And I fetch the run
`)}}
	})
	require.Len(t, res.Scenarios, 1, out)
	assertAllPassed(t, res, out)
}
