package steps_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/refserver"
	"github.com/agentruns/agentruns/suiteconfig"
)

// The suite must never fail a server that follows the published document.
// refserver is such a server, written from that document alone and sharing
// no code with the mock; where the document leaves room it chooses
// differently from the mock (lists ordered by last update, runs that move in
// real time and may finish before the suite looks, all four artifact types,
// fields the mock never sends, old runs whose task_id is not their run_id).
// Every scenario that can run without the mock's control API must pass
// against it, polling as against any real server, and in --read-only.

func hasAnyTag(tags []string, want ...string) bool {
	for _, t := range tags {
		for _, w := range want {
			if t == w {
				return true
			}
		}
	}
	return false
}

func TestSuitePassesAgainstTheReferenceServer(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts refserver.Options
	}{
		// Runs move while the suite watches them, some wait in BLOCKED, and
		// lists reorder as they move.
		{"runs that take a while", refserver.Options{Step: 100 * time.Millisecond, BlockedFor: 300 * time.Millisecond}},
		// Runs end within a few milliseconds, before the suite can cancel or
		// watch them.
		{"runs that end at once", refserver.Options{Step: time.Millisecond}},
		// Runs wait a long time to be handed to a worker, so that a cancel
		// meets a retryable 409 first.
		{"runs held in PENDING", refserver.Options{Step: 2 * time.Millisecond, PendingFor: 300 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, out := runSuite(t, newReferenceServer(t, tc.opts), func(c *suiteconfig.Config) { oneCaller(c); runFeaturesOnly(c) })
			assert.False(t, res.Control, "the reference server has no control API")
			assertAllPassed(t, res, out)
			assertOnlyMockScenariosSkipped(t, res)
			passed, _, skipped := res.Count()
			assert.Greater(t, passed, 40)
			t.Logf("%d scenarios passed, %d skipped, in %s", passed, skipped, res.Duration)
		})
	}
}

func TestSuitePassesAgainstTheReferenceServerReadOnly(t *testing.T) {
	res, out := runSuite(t, newReferenceServer(t, refserver.Options{}), func(c *suiteconfig.Config) { oneCaller(c); runFeaturesOnly(c); c.ReadOnly = true })
	assertAllPassed(t, res, out)
	assertOnlyMockScenariosSkipped(t, res)
	for _, s := range res.Scenarios {
		assert.NotContains(t, s.Tags, "@creates-runs", s.Name)
	}
	passed, _, _ := res.Count()
	require.Greater(t, passed, 10)
}
