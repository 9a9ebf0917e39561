package steps_test

import "testing"

// judgesServers marks a test that runs the whole suite against many
// servers only to read its verdicts (a broken server caught, a legal one
// passed). Such a test exercises the suite's decisions, not concurrent code
// of its own, and the race detector makes it several times slower; the
// suite's own concurrency is raced by the tests against the mock. So it runs
// without the detector, in `make mutants`, like the mutants themselves.
func judgesServers(t *testing.T) {
	t.Helper()
	if raceDetector {
		t.Skip("judges servers by the suite's verdicts: run without -race by make mutants")
	}
}
