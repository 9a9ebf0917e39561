package explore_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/explore"
	"github.com/agentruns/agentruns/internal/suitetest"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/refserver"
)

// explored runs an exploration of baseURL with the key of alice and, of
// another team, carol's (fixtures/principals.json).
func explored(t *testing.T, baseURL string, steps int, seed int64) explore.Result {
	t.Helper()
	return exploredWith(t, explore.Options{BaseURL: baseURL, APIKey: "wk-mock-alice", OtherAPIKey: "wk-mock-carol", Steps: steps, Seed: seed})
}

func exploredWith(t *testing.T, o explore.Options) explore.Result {
	t.Helper()
	transport := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(transport.CloseIdleConnections)
	o.HTTPClient = &http.Client{Transport: transport}
	res, err := explore.Run(context.Background(), o)
	require.NoError(t, err)
	return res
}

// describe says what an exploration found, for a failing assertion.
func describe(res explore.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d calls, created %v\n", res.Calls, res.Created)
	for _, f := range res.Findings {
		fmt.Fprintf(&b, "- %s: %s (%d calls)\n", f.Cause, f.Detail, len(f.Calls))
		for _, c := range f.Calls {
			fmt.Fprintf(&b, "    %s %s %s %s -> %d %s\n", c.Team, c.Method, c.Path, c.Query.Encode(), c.Status, trim(string(c.Answer)))
			if c.Invalid != "" {
				fmt.Fprintf(&b, "      (invalid: %s)\n", c.Invalid)
			}
		}
	}
	return b.String()
}

func trim(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

func TestTheMockShowsNoFinding(t *testing.T) {
	mock := suitetest.NewMock(t, mockserver.Options{}, nil)
	res := explored(t, mock.URL, 300, 1)
	t.Log(describe(res))
	require.Empty(t, res.Findings, describe(res))
	require.Zero(t, res.RunBudget, "the mock's runs cost nothing: no default budget")
}

func TestTheReferenceServerShowsNoFinding(t *testing.T) {
	// The reference server has one team: no other team's key.
	base := suitetest.NewReferenceServer(t, refserver.Options{})
	res := exploredWith(t, explore.Options{BaseURL: base, APIKey: "wk-mock-alice", Steps: 300, Seed: 1})
	t.Log(describe(res))
	require.Empty(t, res.Findings, describe(res))
	// A server without the mock's control API: its runs are billed, so
	// the exploration keeps to the default run budget.
	require.Equal(t, explore.DefaultMaxRuns, res.RunBudget)
	require.LessOrEqual(t, res.Created["runs"]+res.Created["follow-ups"], explore.DefaultMaxRuns, describe(res))
}

// The same seed sends the same sequence to the mock: the same operations
// with the same statuses, in the same order (ids and instants differ from
// one session to the next).
func TestTheSeedReplaysTheExploration(t *testing.T) {
	shape := func() []string {
		mock := suitetest.NewMock(t, mockserver.Options{}, brokenServers[0].wrap)
		res := exploredWith(t, explore.Options{BaseURL: mock.URL, APIKey: "wk-mock-alice", OtherAPIKey: "wk-mock-carol",
			Steps: 150, Seed: 7, MaxFindings: 1, ShrinkCalls: 1000})
		var out []string
		for _, f := range res.Findings {
			for _, c := range f.Calls {
				out = append(out, fmt.Sprintf("%s %d %d %s", c.Method, len(c.Query), c.Status, c.Invalid))
			}
		}
		return append(out, fmt.Sprint(res.Calls, res.Created))
	}
	require.Equal(t, shape(), shape())
}

// Off the mock, runs are billed: unless told otherwise, an exploration
// starts at most DefaultMaxRuns, shrinking included, where without a
// budget the same exploration starts more.
func TestTheRunBudgetDefaultsOffTheMock(t *testing.T) {
	base := suitetest.NewReferenceServer(t, refserver.Options{})
	started := func(maxRuns int) int {
		res := exploredWith(t, explore.Options{BaseURL: base, APIKey: "wk-mock-alice", Steps: 1500, Seed: 3, MaxRuns: maxRuns})
		return res.Created["runs"] + res.Created["follow-ups"]
	}
	require.Greater(t, started(-1), explore.DefaultMaxRuns, "without a budget the exploration starts more runs than the default allows")
	require.LessOrEqual(t, started(0), explore.DefaultMaxRuns)
}
