package steps_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/proxy"
	"github.com/agentruns/agentruns/steps"
	"github.com/agentruns/agentruns/steps/internal/refserver"
)

// The validating proxy (package proxy) must see nothing wrong in the traffic
// of a suite run against a server that follows the document, and must see
// what each broken server does wrong. These tests put it in front of the
// reference server and of the broken servers of broken_servers_test.go,
// run the suite through it, and read what it found.

// newProxy starts the proxy over real HTTP in front of upstream.
func newProxy(t *testing.T, upstream string, opts proxy.Options) (*proxy.Proxy, string) {
	t.Helper()
	v, err := sharedValidator()
	require.NoError(t, err)
	opts.Upstream, opts.Validator = upstream, v
	p, err := proxy.New(opts)
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Close() })
	return p, srv.URL
}

// foundBy waits for the proxy to have checked everything and returns what
// it found.
func foundBy(t *testing.T, p *proxy.Proxy) proxy.Summary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, p.Drain(ctx))
	return p.Summary()
}

func describe(s proxy.Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d exchanges, %d checked, unchecked %v, %d violations\n", s.Exchanges, s.Checked, s.Unchecked, s.Violations)
	for _, f := range s.Latest {
		fmt.Fprintf(&b, "  %s (%d) %s\n", f.Request, f.Status, f.Violation)
	}
	return b.String()
}

func TestProxySeesNoViolationInFrontOfTheReferenceServer(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts refserver.Options
	}{
		{"runs that take a while", refserver.Options{Step: 100 * time.Millisecond, BlockedFor: 300 * time.Millisecond}},
		{"runs that end at once", refserver.Options{Step: time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, base := newProxy(t, newReferenceServer(t, tc.opts), proxy.Options{})
			res, out := runSuite(t, base, func(c *steps.Config) { oneCaller(c); runFeaturesOnly(c) })
			assertAllPassed(t, res, out)
			s := foundBy(t, p)
			assert.Zero(t, s.Violations, describe(s))
			assert.Empty(t, s.Unchecked, describe(s))
			assert.Greater(t, s.Checked, 200, "the suite's traffic went through the proxy")
			t.Logf("%d exchanges checked, %d requests off the document (the suite's deliberate bad requests)", s.Checked, s.OffDocument)
		})
	}
}

func TestProxyReportsWhatEachBrokenServerDoes(t *testing.T) {
	for _, bs := range brokenServers {
		t.Run(bs.name, func(t *testing.T) {
			srv := newMock(t, mockserver.Options{}, bs.wrap)
			p, base := newProxy(t, srv.URL, proxy.Options{})
			_, _ = runSuite(t, base, func(c *steps.Config) { c.Features = someFeatures(t, bs.features...) })
			s := foundBy(t, p)
			var broken []string
			for _, r := range s.Rules {
				if r.Violations > 0 {
					broken = append(broken, fmt.Sprintf("%s=%d", r.ID, r.Violations))
				}
			}
			t.Logf("RESULT %q: %s", bs.name, strings.Join(broken, " "))
		})
	}
}
