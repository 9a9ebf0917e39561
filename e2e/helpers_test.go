package e2e_test

import (
	"net/http/httptest"
	"testing"

	"github.com/agentruns/agentruns/internal/suitetest"
	"github.com/agentruns/agentruns/mockserver"
)

// The servers and the suite as these tests start them: package
// suitetest's, which the tests of steps and runner use too.

// judgesServers marks a test that runs the whole suite against a server
// only to read its verdicts: it runs without the race detector, in `make
// mutants`, as steps/verdicts_test.go says.
func judgesServers(t *testing.T) {
	t.Helper()
	if raceDetector {
		t.Skip("judges servers by the suite's verdicts: run without -race by make mutants")
	}
}

// newMock starts the mock over real HTTP.
func newMock(t *testing.T, opts mockserver.Options) *httptest.Server {
	return suitetest.NewMock(t, opts, nil)
}

var (
	newReferenceServer             = suitetest.NewReferenceServer
	newProxy                       = suitetest.NewProxy
	foundBy                        = suitetest.FoundBy
	describe                       = suitetest.Describe
	runSuite                       = suitetest.RunSuite
	assertAllPassed                = suitetest.AssertAllPassed
	oneCaller                      = suitetest.OneCaller
	runFeaturesOnly                = suitetest.RunFeaturesOnly
	assertOnlyMockScenariosSkipped = suitetest.AssertOnlyMockScenariosSkipped
	broken                         = suitetest.Broken
	clientTable                    = suitetest.ClientTable
)
