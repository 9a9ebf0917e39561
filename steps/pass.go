// Package steps is the contract suite's step definitions: the steps of the
// Gherkin features of package features, and the state they share, against
// any server of the Cloud Agent Runs API, real or mock, given only a base
// URL, an API key and an *http.Client.
//
// Every response the suite receives is checked against the OpenAPI document;
// against a server that offers the mock's control API the suite drives the
// server's clock, elsewhere it polls.
//
// Package runner checks the server first (its pre-flight), then runs them
// with godog and reports each scenario; what it needs of this package is
// a Suite (NewSuite), one pass of it at a time (Begin, InitializeScenario
// for each scenario, End), and an Observer that hears how each scenario
// began and ended. Both read the configuration of package suiteconfig.
package steps

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"

	"github.com/cucumber/godog"

	"github.com/agentruns/agentruns/clientcheck"
	"github.com/agentruns/agentruns/report"
)

// ErrInterrupted means the run was stopped (its context cancelled) before
// every scenario finished; the runs the suite had started were cancelled.
var ErrInterrupted = errors.New("interrupted")

// Observer hears of each scenario of a pass as it starts and as it ends,
// beside what godog's formatters hear of its steps. Package runner's report
// collector is one.
type Observer interface {
	ScenarioStarted(sc *godog.Scenario)
	ScenarioEnded(sc *godog.Scenario, end Ending)
}

// Ending is what the steps know of a scenario as it ends that its steps'
// outcomes do not say.
type Ending struct {
	// SkipReason says why the scenario was skipped, if it was.
	SkipReason string
	// Need, on a scenario left out for want of an option, is that option.
	Need *report.Need
	// Budget tells that the run budget refused a run the scenario needed:
	// whatever its step made of the refusal, nothing was judged (runbook.go).
	Budget bool
	// Cause is the first contract violation the scenario met (causes.go).
	Cause *report.Cause
}

// Begin readies su for one pass of its scenarios: a fresh account of the
// runs it creates and of the runs scenarios share; obs hears of each
// scenario, clients judges every success answer as each released client
// version reads it, and once ctx is done the scenarios not yet begun are
// skipped and those under way reported as interrupted. End closes the pass.
func (su *Suite) Begin(ctx context.Context, obs Observer, clients *clientcheck.Tally) {
	su.book = newRunBook(su.cfg.MaxRuns, su.cfg.MaxRunsAtOnce) // this pass's account
	su.book.every, su.book.patience, su.book.look = su.cfg.PollInterval, su.cfg.Timeout, su.lookAtRunsInFlight
	su.shares = &shares{}
	su.mu.Lock()
	su.observer, su.runCtx, su.clients = obs, ctx, clients
	su.mu.Unlock()
}

// End closes the pass Begin began, once godog has run every scenario: it
// cancels the shared runs still going and returns what the pass's runs
// cost the team and how they are marked.
func (su *Suite) End(ctx context.Context) report.Runs {
	su.cancelSharedRuns(ctx)
	su.mu.Lock()
	su.observer, su.runCtx, su.clients = nil, context.Background(), nil
	su.mu.Unlock()
	runs := su.book.bill(su.runs.lastLook)
	runs.Marker = su.marking.describe()
	return runs
}

// observing returns the current pass's observer, nil outside a pass.
func (su *Suite) observing() Observer {
	su.mu.Lock()
	defer su.mu.Unlock()
	return su.observer
}

// trackScenario registers the hook that tells the observer when a scenario
// starts and, once a pass is interrupted, skips the scenarios not yet begun.
func (su *Suite) trackScenario(sc *godog.ScenarioContext) {
	sc.Before(func(ctx context.Context, p *godog.Scenario) (context.Context, error) {
		if o := su.observing(); o != nil {
			o.ScenarioStarted(p)
		}
		if su.runCtx.Err() != nil {
			return ctx, godog.ErrSkip
		}
		return ctx, nil
	})
}

// record tells the observer how one scenario ended; the after-scenario hook
// calls it. The outcome itself comes from the steps' events: the hook adds
// why the scenario was skipped, if it was, and the first contract violation
// it met.
func (su *Suite) record(sc *godog.Scenario, _ error, skipReason string, need *report.Need, cause *report.Cause) {
	if o := su.observing(); o != nil {
		budget := need != nil && need.Flag == budgetNeed.Flag
		o.ScenarioEnded(sc, Ending{SkipReason: skipReason, Need: need, Budget: budget, Cause: cause})
	}
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
