package explore_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentruns/agentruns/explore"
	"github.com/agentruns/agentruns/rules"
)

const runID = "7c9e6679-7425-40de-944b-e07fc1f90ae7"

// An id the server gave is carried by name from the answer that showed it
// to the request that sends it again: the server gives a new one on each
// run, so pasting it would fetch nothing.
func TestScenarioCarriesTheServersIdsByName(t *testing.T) {
	f := explore.Finding{
		Cause:  "server error on a valid request",
		Detail: "GET /agent/runs/{id} answered 500\nfor a run just created.",
		Seed:   42,
		Calls: []explore.Call{
			{Method: "POST", Path: "/agent/run", Body: []byte(`{"prompt": "say hello"}`), Status: 200, Answer: []byte(`{"run_id":"` + runID + `","task_id":"` + runID + `","state":"QUEUED"}`)},
			{Method: "GET", Path: "/agent/runs/" + runID, Status: 500, Answer: []byte(`{"type":"about:blank","title":"oops","status":500}`)},
		},
	}
	feature, missing := explore.Scenario(f)
	t.Log("\n" + feature)
	assert.Empty(t, missing)
	assert.Contains(t, feature, "Feature: Found by exploration: server error on a valid request\n")
	assert.Contains(t, feature, "  @explored @creates-runs @runs-as-written @writes\n  Scenario: server error on a valid request, at GET /agent/runs/{run 1}\n")
	assert.Contains(t, feature, "    # GET /agent/runs/{id} answered 500\n    # for a run just created.\n")
	assert.Contains(t, feature, "--seed 42")
	assert.Contains(t, feature, "\n    Given I send the request \"POST /agent/run\" with the body {\"prompt\":\"say hello\"}\n"+
		"    And I remember the response field \"run_id\" as \"run 1\"\n"+
		"    When I send the request \"GET /agent/runs/{run 1}\"\n"+
		"    # the server answered 500\n"+
		"    Then the response is not a server error\n")
	assert.NotContains(t, feature, runID)
}

// What the step's quoted text cannot hold, or would read as a value to
// fill in, is escaped so that the request goes as it went.
func TestScenarioWritesAnyRequestAsItWent(t *testing.T) {
	f := explore.Finding{
		Cause: rules.InvalidRequestRefused,
		Calls: []explore.Call{{
			Team:   explore.OtherTeam,
			Method: "PUT",
			Path:   "/agent/schedules/not a uuid",
			Query:  url.Values{"created_after": {"2026-01-01T00:00:00+01:00"}, "name": {`a&b="{label}"`}, "state": {"QUEUED", "DONE"}},
			Body:   []byte("{\n  \"prompt\": \"fix {label} and {}\"\n}"),
			// Invalid says why the request is wrong.
			Invalid: "query parameter state outside its enum",
			Status:  200,
		}},
	}
	feature, missing := explore.Scenario(f)
	t.Log("\n" + feature)
	assert.Empty(t, missing)
	assert.Contains(t, feature, "  @explored @writes @two-callers\n")
	assert.Contains(t, feature, "    # wrong on purpose: query parameter state outside its enum\n")
	assert.Contains(t, feature, `    When the other team sends the request "PUT /agent/schedules/not%20a%20uuid?created_after=2026-01-01T00:00:00%2B01:00&name=a%26b%3D%22%7Blabel%7D%22&state=QUEUED&state=DONE" with the body {"prompt":"fix \u007blabel} and {}"}`+"\n")
	assert.Contains(t, feature, "    Then the response is a problem with a 4xx status\n")
}

// A cause no step checks is said, in the scenario and to the caller.
func TestScenarioSaysWhichStepIsMissing(t *testing.T) {
	f := explore.Finding{
		Cause: "schedule fires twice",
		Calls: []explore.Call{{Method: "POST", Path: "/agent/run", Body: []byte("{\"prompt\": \"x\n"), Status: 400}},
	}
	feature, missing := explore.Scenario(f)
	t.Log("\n" + feature)
	assert.Equal(t, []string{"a step that sends a malformed body over several lines", `a step that checks "schedule fires twice"`}, missing)
	for _, m := range missing {
		assert.Contains(t, feature, "    # missing step: "+m+"\n")
	}
}

// A rule the suite holds every answer to needs no check of its own: the
// step that sends the call fails on it.
func TestScenarioOfARuleHeldOnEveryAnswer(t *testing.T) {
	f := explore.Finding{Cause: rules.StatesMoveForward, Calls: []explore.Call{{Method: "GET", Path: "/agent/runs/" + runID, Status: 200}}}
	feature, missing := explore.Scenario(f)
	assert.Empty(t, missing)
	assert.Contains(t, feature, "    # states-move-forward: A run's state only moves forward (BLOCKED and INPROGRESS may alternate)\n")
	assert.Contains(t, feature, "# the suite holds every answer to states-move-forward: the request above fails on it\n")
	assert.False(t, strings.Contains(feature, "Then "), feature)
}

// Each cause the reports group by finds its check.
func TestScenarioChecksEachCause(t *testing.T) {
	for cause, check := range map[string]string{
		"server error on a valid request":                                "the response is not a server error",
		"invalid request accepted":                                       "the response is a problem with a 4xx status",
		"valid request refused":                                          "the response is a success",
		"answer breaks the document":                                     "the response follows the document",
		"listing shows a run outside its filter":                         "every run listed matches the query",
		rules.ListingOrdered:                                             "the listed runs are in the order the query asks for",
		rules.PageWithinLimit:                                            "the listing holds no more runs than the query's limit",
		"two looks at a run disagree":                                    "the runs agree with the last look at them before",
		"server error on an invalid request":                             "the response is a problem with a 4xx status",
		"another team's runs are listed":                                 "the listing shows none of the runs I created",
		"another team's call accepted":                                   `the response is a problem with status 403 and code "not_authorized", or 404 and "resource_not_found"`,
		"a walk through the pages skips a run":                           "the walk holds every run I created that matches its query",
		"a listing breaks a time bound or its order at the very instant": "every run listed matches the query",
		"another team's call was not refused":                            `the response is a problem with status 403 and code "not_authorized", or 404 and "resource_not_found"`,
		"a deleted identity is still served":                             "the response is a problem with a 4xx status",
		rules.InvalidRequestRefused:                                      "the response is a problem with a 4xx status",
		rules.ListingMatchesFilters:                                      "every run listed matches the query",
		rules.WalkNeverRepeats:                                           `the answers keep the rule "walk-never-repeats"`,
		rules.ConversationInTimeOrder:                                    `the answers keep the rule "conversation-in-time-order"`,
	} {
		feature, missing := explore.Scenario(explore.Finding{Cause: cause, Calls: []explore.Call{{Method: "GET", Path: "/agent/runs", Status: 200}}})
		assert.Empty(t, missing, cause)
		assert.Contains(t, feature, "    Then "+check+"\n", cause)
	}
}

// A value an answer gave that the suite cannot remember, from an answer
// that is not an object, is written as it was, and said to be missing.
func TestScenarioSaysWhatItCannotCarry(t *testing.T) {
	f := explore.Finding{
		Cause: "server error on a valid request",
		Calls: []explore.Call{
			{Method: "POST", Path: "/agent/runs/" + runID + "/cancel", Status: 200, Answer: []byte(`"` + runID + `"`)},
			{Method: "GET", Path: "/agent/runs/" + runID, Status: 500},
		},
	}
	feature, missing := explore.Scenario(f)
	assert.Equal(t, []string{"a step that remembers " + runID + " from the answer to POST /agent/runs/" + runID + "/cancel, which is not a JSON object: it is written as it was"}, missing)
	assert.Contains(t, feature, "    # missing step: "+missing[0]+"\n")
	assert.Contains(t, feature, `When I send the request "GET /agent/runs/`+runID+`"`)
}

// The step that sends a call fails by itself when no answer comes.
func TestScenarioOfNoAnswer(t *testing.T) {
	feature, missing := explore.Scenario(explore.Finding{Cause: "no answer", Calls: []explore.Call{{Method: "GET", Path: "/agent/runs"}}})
	assert.Empty(t, missing)
	assert.Contains(t, feature, "    # the request above fails when no answer comes\n")
}

// A refused call of the other team that cancelled the first team's run
// anyway is checked on the run's state.
func TestScenarioOfARefusedCallThatCancelled(t *testing.T) {
	f := explore.Finding{Cause: "another team's refused call changed the resource", Calls: []explore.Call{
		{Method: "GET", Path: "/agent/runs/" + runID, Status: 200, Answer: []byte(`{"run_id":"` + runID + `","state":"CANCELLED"}`)},
	}}
	feature, _ := explore.Scenario(f)
	assert.Contains(t, feature, "    Then the response is a success\n    And the response field \"state\" is not \"CANCELLED\"\n")
}
