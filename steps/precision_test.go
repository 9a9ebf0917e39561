package steps_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentruns/agentruns/refserver"
	"github.com/agentruns/agentruns/runner"
	"github.com/agentruns/agentruns/suiteconfig"
)

// A server that shows its instants to the second and keeps nanoseconds
// leaves the bounds at a run's very instant undecided: those scenarios are
// inconclusive, saying why, never failed. Told that the server keeps what
// it shows (--exact-timestamps), the suite holds it to the instants as
// shown, and this server fails them. At millisecond display, runs created
// a moment apart are told apart, and the filters between them are judged.
func TestAnInstantTheShownDigitsLeaveUndecidedIsInconclusive(t *testing.T) {
	run := func(precision time.Duration, exact bool) runner.Result {
		res, _ := runSuite(t, newReferenceServer(t, refserver.Options{Step: 20 * time.Millisecond, Precision: precision}), func(c *suiteconfig.Config) {
			oneCaller(c)
			c.Features = someFeatures(t, "list_rules.feature", "list_runs.feature")
			c.Tags = "@creates-runs and not @mock-control and not @mock-only"
			c.ExactTimestamps = exact
		})
		return res
	}
	const atTheInstant = "The time filters are strict: created_after leaves out a run created at its instant"

	seconds := run(time.Second, false)
	assert.Empty(t, seconds.Failed())
	got, ok := seconds.Find(atTheInstant)
	if assert.True(t, ok) {
		assert.Equal(t, "skipped", string(got.Status))
		assert.Contains(t, got.Message, "inconclusive: ")
		assert.Contains(t, got.Message, "may lie on either side of created_after=")
	}
	got, ok = seconds.Find("Filtering by created_before returns only the matching runs")
	if assert.True(t, ok) && got.Status != "passed" {
		assert.Contains(t, got.Message, "inconclusive: runs early and match show created_at", "runs a second apart or less: no instant surely between them")
	}

	told := run(time.Second, true)
	got, ok = told.Find(atTheInstant)
	if assert.True(t, ok) {
		assert.Equal(t, "failed", string(got.Status), "told the server keeps what it shows, the suite judges the instant: %s", got.Message)
	}

	millis := run(time.Millisecond, false)
	assert.Empty(t, millis.Failed())
	for _, name := range []string{"Filtering by created_before returns only the matching runs", "Filtering by both time bounds returns only the matching runs"} {
		got, ok := millis.Find(name)
		if assert.True(t, ok, name) {
			assert.Equal(t, "passed", string(got.Status), "%s: %s", name, got.Message)
		}
	}
}
