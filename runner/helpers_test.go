package runner_test

import "github.com/agentruns/agentruns/internal/suitetest"

// The runner's tests run the suite against the bundled mock over real HTTP
// with the settings the tests of steps and e2e use: package suitetest's.
var (
	sharedValidator = suitetest.SharedValidator
	newMock         = suitetest.NewMock
	runSuite        = suitetest.RunSuite
	assertAllPassed = suitetest.AssertAllPassed
)
