package steps_test

import (
	"io/fs"
	"net/http/httptest"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/features"
	"github.com/agentruns/agentruns/refserver"
	"github.com/agentruns/agentruns/runner"
	"github.com/agentruns/agentruns/steps"
)

// The suite must never fail a server that follows the published document.
// refserver is such a server, written from that document alone and sharing
// no code with the mock; where the document leaves room it chooses
// differently from the mock (lists ordered by last update, runs that move in
// real time and may finish before the suite looks, all four artifact types,
// fields the mock never sends, old runs whose task_id is not their run_id).
// Every scenario that can run without the mock's control API must pass
// against it, polling as against any real server, and in --read-only.

// The reference server knows one caller only and fails runs of its own
// accord, so the suite runs against it without a second key and without a
// failing prompt, and skips the scenarios that need them. Its plan allows
// five identities, not the mock's three.
func oneCaller(c *steps.Config) {
	c.OtherAPIKey, c.FailingPrompt, c.IdentityPlan = "", "", refserverPlan
}

// refserverPlan is how many identities the reference server's plan allows
// a team (refserver/identities.go).
const refserverPlan = 5

// runFeatures are the features of the operations the reference server
// serves: the five run operations, the event poll, the three listings runs
// name (models, environments, agents), artifacts, schedules,
// conversations, identities and messages, and what the newest client calls
// beyond the published document (follow-ups, handoff files, and the
// scenarios tagged @newest-client in the features above): every feature. A
// new feature belongs here.
var runFeatures = []string{
	"agents.feature", "artifacts.feature", "conversations.feature", "identities.feature", "create_run.feature", "environments_and_models.feature", "errors.feature",
	"events.feature", "followups.feature", "get_run.feature", "handoff_attachments.feature", "list_runs.feature", "list_rules.feature", "messages.feature",
	"mock_control.feature", "schedules.feature", "state_progression.feature", "tenancy.feature",
}

// runFeaturesOnly runs the features of the operations the reference server
// serves.
func runFeaturesOnly(c *steps.Config) {
	sub := fstest.MapFS{}
	for _, n := range runFeatures {
		data, err := fs.ReadFile(features.FS, n)
		if err != nil {
			panic(err) // a feature renamed or removed: update runFeatures
		}
		sub[n] = &fstest.MapFile{Data: data}
	}
	c.Features = sub
}

func newReferenceServer(t *testing.T, opts refserver.Options) string {
	t.Helper()
	srv := httptest.NewServer(refserver.New(opts))
	t.Cleanup(srv.Close)
	return srv.URL + "/api/v1"
}

// assertOnlyMockScenariosSkipped checks that the scenarios left out are
// exactly those that need the bundled mock, each saying why.
func assertOnlyMockScenariosSkipped(t *testing.T, res runner.Result) {
	t.Helper()
	for _, s := range res.Skipped() {
		if hasAnyTag(s.Tags, "@two-callers") {
			assert.Contains(t, s.Message, "--other-api-key", s.Name)
			continue
		}
		if hasAnyTag(s.Tags, "@failing-prompt") {
			assert.Contains(t, s.Message, "--failing-prompt", s.Name)
			continue
		}
		if leftToTheServer(s) || skippedForAnOption(s) {
			continue
		}
		assert.True(t, hasAnyTag(s.Tags, "@mock-control", "@mock-only"), "scenario %q was skipped but needs no mock: %s", s.Name, s.Message)
		assert.Contains(t, s.Message, "mock", s.Name)
	}
}

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
			res, out := runSuite(t, newReferenceServer(t, tc.opts), func(c *steps.Config) { oneCaller(c); runFeaturesOnly(c) })
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
	res, out := runSuite(t, newReferenceServer(t, refserver.Options{}), func(c *steps.Config) { oneCaller(c); runFeaturesOnly(c); c.ReadOnly = true })
	assertAllPassed(t, res, out)
	assertOnlyMockScenariosSkipped(t, res)
	for _, s := range res.Scenarios {
		assert.NotContains(t, s.Tags, "@creates-runs", s.Name)
	}
	passed, _, _ := res.Count()
	require.Greater(t, passed, 10)
}
