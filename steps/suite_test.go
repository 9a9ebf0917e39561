package steps_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/internal/suitetest"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/suiteconfig"
)

// TestSuitePassesAgainstTheMock runs every scenario against the mock over
// real HTTP, driving it through its control API.
func TestSuitePassesAgainstTheMock(t *testing.T) {
	srv := newMock(t, mockserver.Options{}, nil)
	res, out := runSuite(t, srv.URL, nil)
	assert.True(t, res.Control, "the suite should have found the control API")
	assertAllPassed(t, res, out)
	assert.Empty(t, res.Skipped())
	passed, _, _ := res.Count()
	assert.Greater(t, passed, 50)
	names := map[string]bool{}
	for _, s := range res.Scenarios {
		assert.False(t, names[s.Name], "two scenarios are called %q: Result.Find needs unique names", s.Name)
		names[s.Name] = true
	}
	t.Logf("%d scenarios passed in %s", passed, res.Duration)
}

// TestSuitePassesAgainstTheMockByPolling runs the suite as against a real
// server: the mock's control API is off, so the suite shares one world with
// the fixtures and its own concurrent scenarios, watches runs by polling, and
// skips the scenarios that need the control API.
func TestSuitePassesAgainstTheMockByPolling(t *testing.T) {
	srv := newMock(t, mockserver.Options{Step: 40 * time.Millisecond, DisableControl: true}, nil)
	res, out := runSuite(t, srv.URL, nil)
	assert.False(t, res.Control)
	assertAllPassed(t, res, out)
	require.NotEmpty(t, res.Skipped())
	for _, s := range res.Skipped() {
		if leftToTheServer(s) || skippedForAnOption(s) {
			continue // a run that ended before the suite could judge it, say
		}
		assert.True(t, hasAnyTag(s.Tags, "@mock-control", "@mock-only"), s.Name)
		assert.Contains(t, s.Message, "mock", s.Name)
	}
	passed, _, skipped := res.Count()
	t.Logf("%d scenarios passed, %d skipped, in %s", passed, skipped, res.Duration)
}

// The suite works against an API under a path prefix, and still finds the
// mock's control API at the root of the host.
func TestSuiteRunsUnderAPathPrefix(t *testing.T) {
	srv := newMock(t, mockserver.Options{}, nil)
	res, out := runSuite(t, srv.URL+"/api/v1", func(c *suiteconfig.Config) { c.Tags = "@mock-control" })
	assert.True(t, res.Control)
	assertAllPassed(t, res, out)
	assert.Empty(t, res.Skipped())
}

// The suite does not depend on the pace of the mock's runs: driving the
// mock's clock, it passes with runs that take 300 ms a state as with the
// default 2 s; polling, with runs that end within a few milliseconds.
func TestSuitePassesAgainstTheMockAtAnyPace(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts mockserver.Options
	}{
		{"300ms steps, control API", mockserver.Options{Step: 300 * time.Millisecond}},
		{"2ms steps, polling", mockserver.Options{Step: 2 * time.Millisecond, DisableControl: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newMock(t, tc.opts, nil)
			res, out := runSuite(t, srv.URL, nil)
			assertAllPassed(t, res, out)
		})
	}
}

// The servers and the suite as the tests start them: package suitetest's,
// which the tests of runner and e2e use too.
var (
	sharedValidator                = suitetest.SharedValidator
	newMock                        = suitetest.NewMock
	newReferenceServer             = suitetest.NewReferenceServer
	newProxy                       = suitetest.NewProxy
	foundBy                        = suitetest.FoundBy
	describe                       = suitetest.Describe
	runSuite                       = suitetest.RunSuite
	assertAllPassed                = suitetest.AssertAllPassed
	oneCaller                      = suitetest.OneCaller
	runFeatures                    = suitetest.RunFeatures
	runFeaturesOnly                = suitetest.RunFeaturesOnly
	assertOnlyMockScenariosSkipped = suitetest.AssertOnlyMockScenariosSkipped
	leftToTheServer                = suitetest.LeftToTheServer
	skippedForAnOption             = suitetest.SkippedForAnOption
	broken                         = suitetest.Broken
	clientTable                    = suitetest.ClientTable
)

const refserverPlan = suitetest.RefserverPlan
