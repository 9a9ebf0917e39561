package steps_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/runner"
	"github.com/agentruns/agentruns/suiteconfig"
)

// A --failing-prompt the server does not fail leaves a run that succeeds:
// the follow-up to a failed run then proves nothing about a failed run,
// and the scenario must not pass as if it did.
func TestFollowupToAFailedRunNeedsARunThatFailed(t *testing.T) {
	srv := newMock(t, mockserver.Options{}, nil)
	res, out := runSuite(t, srv.URL, func(c *suiteconfig.Config) {
		c.Tags = "@failing-prompt"
		c.FailingPrompt = "Tidy the test helpers" // an ordinary prompt: the mock ends it SUCCEEDED
	})
	sc, ok := res.Find("A follow-up to a failed run starts it again")
	require.True(t, ok, out)
	assert.NotEqual(t, runner.Passed, sc.Status, "the scenario passed on a run that did not fail:\n%s", out)
	assert.Contains(t, sc.Message, "expected FAILED or ERROR", out)
}
