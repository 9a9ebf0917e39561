package main

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/runner"
)

// --explore against the bundled mock finds nothing, says what it sent and
// created, and exits 0.
func TestExploreTheBundledMock(t *testing.T) {
	out, errOut, err := runCmd(t, "--explore", "200", "--seed", "3")
	require.NoError(t, err, "%s\n%s", out, errOut)
	require.Contains(t, out, "Replay: agentruns-contract --explore 200 --seed 3\n")
	require.Contains(t, out, "No finding.")
}

// A server that answers 500 to every listing with a state filter is
// found; the exit status says so.
func TestExploreFindsABrokenServer(t *testing.T) {
	srv := newMock(t, mockserver.Options{}, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/agent/runs" && r.URL.Query().Has("state") {
				http.Error(w, "boom", http.StatusInternalServerError)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	out, errOut, err := runCmd(t, "--explore", "300", "--seed", "3", "--base-url", srv.URL, "--api-key", "wk-mock-alice")
	require.ErrorIs(t, err, errFindings, "%s\n%s", out, errOut)
	require.Equal(t, exitFailed, exitStatus(err))
	require.Contains(t, out, "server error on a valid request")
}

// Keys given for the bundled mock are its fixture keys, no secret: the
// replay line writes them out, or a replay would explore with others.
func TestExploreReplaysWithTheKeysGiven(t *testing.T) {
	out, errOut, err := runCmd(t, "--explore", "100", "--seed", "3", "--other-api-key", "wk-mock-carol")
	require.NoError(t, err, "%s\n%s", out, errOut)
	require.Contains(t, out, "Replay: agentruns-contract --explore 100 --seed 3 --other-api-key wk-mock-carol\n")

	// Without the mock's control API the exploration is another one.
	out, errOut, err = runCmd(t, "--explore", "50", "--seed", "3", "--no-control")
	require.NoError(t, err, "%s\n%s", out, errOut)
	require.Contains(t, out, "Replay: agentruns-contract --explore 50 --seed 3 --no-control\n")
}

// Two keys of one team would make every tenancy finding false: the
// suite's pre-flight stops the exploration first, in one sentence.
func TestExploreStopsAtTwoKeysOfOneTeam(t *testing.T) {
	out, errOut, err := runCmd(t, "--explore", "100", "--seed", "3", "--other-api-key", "wk-mock-bob")
	var pre *runner.PreflightError
	require.ErrorAs(t, err, &pre, "%s\n%s", out, errOut)
	require.Contains(t, pre.Sentence, "belong to one team")
	require.NotContains(t, out, "Exploration of", "nothing was explored")
}

func TestExploreBudget(t *testing.T) {
	var b exploreBudget
	require.NoError(t, b.Set("500"))
	require.Equal(t, 500, b.calls)
	b = exploreBudget{}
	require.NoError(t, b.Set("2m"))
	require.Equal(t, "2m0s", b.String())
	require.Error(t, b.Set("0"))
	require.Error(t, b.Set("soon"))
}
