package steps_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentruns/agentruns/steps"
	"github.com/agentruns/agentruns/steps/internal/refserver"
)

// What a full pass costs a team (issue: the suite at a real server's
// price): the runs the suite creates against a server of the published
// document, with every option a team gives it, counted by the suite's run
// book and by the server itself.

// refFailingPrompt is the prompt the reference server fails when asked to.
const refFailingPrompt = "Contract suite run that fails"

// fullPass gives the suite every option against the reference server: a
// second team's key, a failing prompt, the plan's identities.
func fullPass(c *steps.Config) {
	twoTeams(c)
	c.FailingPrompt, c.IdentityPlan = refFailingPrompt, refserverPlan
	c.Tags = "not @newest-client"
	runFeaturesOnly(c)
}

func TestAFullPassCountsTheRunsItCreates(t *testing.T) {
	srv := refserver.New(refserver.Options{Step: 20 * time.Millisecond, Published: true, FailingPrompt: refFailingPrompt})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	res, out := runSuite(t, hs.URL+"/api/v1", fullPass)
	assertAllPassed(t, res, out)
	runs := res.Report.Runs
	assert.Equal(t, srv.Created(), runs.Created, "the suite's count of the runs it created against the server's")
	t.Logf("%s", runs.Cost())
	for _, s := range runs.ByScenario {
		t.Logf("%3d  %s", s.Runs, s.Scenario)
	}
}
