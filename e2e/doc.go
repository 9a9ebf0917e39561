// Package e2e holds tests only: tests that need several of the project's
// packages at once, judging one by the others. The contract suite
// (package runner) is run through the validating proxy (package proxy) in
// front of the reference server (package refserver) and the bundled mock
// (package mockserver), and a recording of that traffic (package
// proxy/record) is replayed by the mock; the suite's client-version tally
// judges the servers built to a client's surface.
//
// The tests that judge the suite itself (mutants, broken servers, the
// reference server's legal variants, verdicts) stay beside the step
// definitions in package steps, with the broken servers they share.
package e2e
