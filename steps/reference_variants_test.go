//go:build !race

// The suite against every legal variant of the reference server and of the
// mock. Like the mutation test, these run many whole suites and exercise
// the suite rather than concurrent code of their own, so they run without
// the race detector, in `make mutants`.

package steps_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/proxy"
	"github.com/agentruns/agentruns/refserver"
	"github.com/agentruns/agentruns/suiteconfig"
)

// twoTeams gives the suite a key of the reference server's second team.
func twoTeams(c *suiteconfig.Config) { c.OtherAPIKey = refserver.OtherTeamKeyPrefix + "suite" }

// referenceVariants are the reference server's legal choices where the
// published document leaves room; the suite must pass under each, full
// and read-only. tune adjusts the suite where the variant needs a way out
// that the features name.
var referenceVariants = []struct {
	name string
	opts refserver.Options
	tune func(*suiteconfig.Config)
}{
	// The published document (May 2026) alone: none of the newest
	// client's operations, fields or values. The suite's default run asks
	// whether the server serves the newest client's operations, finds that
	// it does not, and leaves that surface out, and nothing else.
	{"the published document alone", refserver.Options{Step: 20 * time.Millisecond, Published: true}, nil},
	// Timestamps shown to the millisecond or to the second, kept and
	// filtered on to the nanosecond: an instant that the shown digits
	// leave ambiguous is judged inconclusive, never failed.
	{"timestamps shown to the millisecond, kept finer", refserver.Options{Step: 20 * time.Millisecond, Precision: time.Millisecond}, nil},
	{"timestamps shown to the second, kept finer", refserver.Options{Step: 20 * time.Millisecond, Precision: time.Second}, nil},
	// Events show a while after their state began; a cancel takes effect a
	// while after it is accepted.
	{"events and cancels that lag", refserver.Options{Step: 20 * time.Millisecond, EventLag: 150 * time.Millisecond, CancelLag: 150 * time.Millisecond}, nil},
	// Another team's run is hidden (404) rather than forbidden (403).
	{"another team's run not found", refserver.Options{Step: 20 * time.Millisecond, ForeignNotFound: true}, twoTeams},
	{"another team's run forbidden", refserver.Options{Step: 20 * time.Millisecond}, twoTeams},
	// A run in another team's environment is accepted, then failed before
	// any worker claims it, rather than refused at creation.
	{"a run in another team's environment failed, not refused", refserver.Options{Step: 20 * time.Millisecond, ForeignEnvironmentFailed: true}, twoTeams},
	// Models, environments and skills the server does not offer are refused.
	{"unknown references refused", refserver.Options{Step: 20 * time.Millisecond, StrictReferences: true}, nil},
	// Problems without detail.
	{"terse errors", refserver.Options{Step: 20 * time.Millisecond, TerseErrors: true}, nil},
	// A run's session shows once it is in progress, not when it is claimed.
	{"sessions shown late", refserver.Options{Step: 20 * time.Millisecond, LateSessions: true}, nil},
	// Pages hold at most 3 runs, whatever the limit.
	{"pages capped below the limit", refserver.Options{Step: 20 * time.Millisecond, PageCap: 3}, nil},
	// Every other run ends in ERROR on its own before a worker claims it.
	{"transient platform errors", refserver.Options{Step: 20 * time.Millisecond, TransientErrors: 2}, nil},
	// Sending messages between runs is refused: the document keeps it
	// internal, behind a feature flag.
	{"messaging switched off", refserver.Options{Step: 20 * time.Millisecond, MessagingOff: true}, nil},
	// Conversations open with the system's instructions.
	{"conversations that open with a system message", refserver.Options{Step: 20 * time.Millisecond, SystemFirst: true}, nil},
	// The newest client's open choices: run_time counted to the present
	// while a run works; executor left out when the creator executed the
	// run; an empty executor= or creator= refused.
	{"run_time counted to the present while a run works", refserver.Options{Step: 20 * time.Millisecond, LiveRunTime: true}, nil},
	{"executor shown only when delegated", refserver.Options{Step: 20 * time.Millisecond, ExecutorOnlyWhenDelegated: true}, nil},
	{"empty executor and creator filters refused", refserver.Options{Step: 20 * time.Millisecond, EmptyFilterRefused: true}, nil},
}

// assertProxySawNothing checks the proxy found no violation.
func assertProxySawNothing(t *testing.T, p *proxy.Proxy) {
	t.Helper()
	s := foundBy(t, p)
	assert.Zero(t, s.Violations, "the proxy in front of a legal server\n%s", describe(s))
}

// TestSuitePassesAgainstTheReferenceServerVariants runs the suite against
// each legal variant of the reference server, polling, and read-only.
func TestSuitePassesAgainstTheReferenceServerVariants(t *testing.T) {
	for _, v := range referenceVariants {
		for _, readOnly := range []bool{false, true} {
			name := v.name
			if readOnly {
				name += ", read-only"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				// The validating proxy watches, and must see nothing wrong
				// either: no rule of package rules is stricter than the
				// document.
				var p *proxy.Proxy
				var base string
				if v.opts.Published {
					// Left to its default, the proxy judges by the surface
					// the server serves, as the suite does.
					p, base = newProxyAsServed(t, newReferenceServer(t, v.opts))
				} else {
					p, base = newProxy(t, newReferenceServer(t, v.opts), proxy.Options{})
				}
				res, out := runSuite(t, base, func(c *suiteconfig.Config) {
					oneCaller(c)
					runFeaturesOnly(c)
					c.ReadOnly = readOnly
					c.Timeout = 30 * time.Second
					if v.tune != nil {
						v.tune(c)
					}
				})
				assertAllPassed(t, res, out)
				assertOnlyMockScenariosSkipped(t, res)
				assertProxySawNothing(t, p)
				passed, _, skipped := res.Count()
				assert.Greater(t, passed, 10)
				t.Logf("%d scenarios passed, %d skipped, in %s", passed, skipped, res.Duration)
			})
		}
	}
}

// newProxyAsServed is a proxy in front of upstream left to its default
// document: it judges by the surface the upstream serves.
func newProxyAsServed(t *testing.T, upstream string) (*proxy.Proxy, string) {
	t.Helper()
	p, err := proxy.New(proxy.Options{Upstream: upstream})
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Close() })
	return p, srv.URL
}
