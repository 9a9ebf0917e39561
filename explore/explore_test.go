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
)

// explored runs an exploration of baseURL with the key of alice and, of
// another team, carol's (fixtures/principals.json).
func explored(t *testing.T, baseURL string, steps int, seed int64) explore.Result {
	t.Helper()
	transport := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(transport.CloseIdleConnections)
	res, err := explore.Run(context.Background(), explore.Options{BaseURL: baseURL, APIKey: "wk-mock-alice",
		OtherAPIKey: "wk-mock-carol", HTTPClient: &http.Client{Transport: transport}, Steps: steps, Seed: seed})
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
}
