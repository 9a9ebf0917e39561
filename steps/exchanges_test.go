package steps_test

import (
	"net/http"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/suiteconfig"
)

// A feature written with the steps of any request as written and the
// checks of any answer (exchanges.go), as package explore prints a
// finding.
const exchangesFeature = `Feature: Requests as written

  @creates-runs @runs-as-written @writes
  Scenario: Ids are carried by name from answer to request
    Given I send the request "POST /agent/run" with the body {"prompt":"say hello","config":{"name":"{label}"}}
    And I remember the response field "run_id" as "run 1"
    When I send the request "GET /agent/runs?name={label}&sort_by=created_at&sort_order=asc&limit=5"
    Then the response is a success
    And the response follows the document
    And every run listed matches the query
    And the listed runs are in the order the query asks for
    And the listing holds no more runs than the query's limit
    When I send the request "GET /agent/runs/{run 1}"
    Then the runs agree with the last look at them before
    And the response field "run_id" is "{run 1}"

  Scenario: A listing of the runs that exist
    When I send the request "GET /agent/runs?sort_by=created_at&sort_order=asc&limit=2&state=QUEUED&state=PENDING&state=CLAIMED&state=INPROGRESS&state=BLOCKED"
    Then the response is not a server error
    And the response follows the document
    And every run listed matches the query
    And the listed runs are in the order the query asks for
    And the listing holds no more runs than the query's limit

  Scenario: A walk of the runs that exist
    When I send the request "GET /agent/runs?sort_by=created_at&limit=3"
    And I remember the response field "page_info.next_cursor" as "cursor 1"
    And I send the request "GET /agent/runs?sort_by=created_at&limit=3&cursor={cursor 1}"
    Then the answers keep the rule "walk-never-repeats"
    And the answers keep the rule "next-page-has-runs"

  @writes
  Scenario: Requests wrong on purpose are refused
    When I send the request "GET /agent/runs?state=DONE"
    Then the response is a problem with a 4xx status
    And the response is not a server error
    And the response follows the document
    When I send the request "DELETE /agent/schedules/{unknown}"
    Then the response is a problem with a 4xx status

  @writes
  Scenario: A change moves the time of the last change
    Given I send the request "POST /agent/schedules" with the body {"name":"{label}","cron_schedule":"0 3 * * *","prompt":"p"}
    And I remember the response field "id" as "schedule"
    And I remember the response field "updated_at" as "created"
    And a moment passes
    When I send the request "POST /agent/schedules/{schedule}/pause"
    Then the response is a success
    And the response field "updated_at" is later than the remembered "created"
    And the response field "name" is "{label}"

  @creates-runs @runs-as-written @two-callers
  Scenario: The other team's request
    Given I send the request "POST /agent/run" with the body {"prompt":"say hello"}
    And I remember the response field "run_id" as "run 1"
    When the other team sends the request "GET /agent/runs/{run 1}"
    Then the response is a problem with status 403 and code "not_authorized", or 404 and "resource_not_found"
`

// The steps pass on the mock, and each check fails on a server that
// breaks what it checks.
func TestRequestsAsWrittenAndTheirChecks(t *testing.T) {
	for _, tc := range []struct {
		name string
		wrap func(http.Handler) http.Handler
		// fails is, by scenario, what its message says; the others pass.
		fails map[string]string
	}{
		{"the mock", nil, nil},
		{"a listing that ignores the sort order", ignoringQuery("sort_order"), map[string]string{
			"A listing of the runs that exist": "listing-in-order",
		}},
		{"a listing that ignores the limit", ignoringQuery("limit"), map[string]string{
			"A listing of the runs that exist": "page-within-limit",
			"A walk of the runs that exist":    "next_cursor", // one page holds them all
		}},
		{"a walk that ignores the cursor", ignoringQuery("cursor"), map[string]string{
			"A walk of the runs that exist": "walk-never-repeats",
		}},
		{"a listing that ignores the state", ignoringQuery("state"), map[string]string{
			"A listing of the runs that exist":      "but the listing asked for",
			"Requests wrong on purpose are refused": "expected a problem with a 4xx status, got status 200",
		}},
		{"a listing that ignores the name", ignoringQuery("name"), map[string]string{
			"Ids are carried by name from answer to request": "but the listing asked for",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newMock(t, mockserver.Options{}, tc.wrap)
			res, out := runSuite(t, srv.URL, func(c *suiteconfig.Config) {
				c.Features = fstest.MapFS{"exchanges.feature": {Data: []byte(exchangesFeature)}}
			})
			require.Len(t, res.Scenarios, 6, out)
			for _, s := range res.Scenarios {
				want, broken := tc.fails[s.Name]
				if !broken {
					assert.Equal(t, "passed", string(s.Status), "%s: %s\n%s", s.Name, s.Message, out)
					continue
				}
				assert.Equal(t, "failed", string(s.Status), s.Name)
				assert.Contains(t, s.Message, want, s.Name)
			}
		})
	}
}

// ignoringQuery is a server that does not read param of the listing of
// runs.
func ignoringQuery(param string) func(http.Handler) http.Handler {
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
