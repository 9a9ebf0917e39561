package steps_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/refserver"
	"github.com/agentruns/agentruns/runner"
	"github.com/agentruns/agentruns/suiteconfig"
)

// Issue 47, point 2: the headline command, no tags, is green against a
// server of the published document alone. The suite asks whether the
// server serves the newest client's operations, finds that it does not,
// skips that surface's scenarios saying which flag would judge them,
// holds the answers to the published document, and says which released
// client that breaks.
func TestTheDefaultRunPassesAServerOfThePublishedDocument(t *testing.T) {
	for _, readOnly := range []bool{false, true} {
		t.Run(map[bool]string{false: "full", true: "read-only"}[readOnly], func(t *testing.T) {
			t.Parallel()
			srv := newReferenceServer(t, refserver.Options{Step: 20 * time.Millisecond, Published: true})
			res, out := runSuite(t, srv, func(c *suiteconfig.Config) { oneCaller(c); runFeaturesOnly(c); c.ReadOnly = readOnly })
			assertPassedJudgedByThePublishedDocument(t, res, out)
		})
	}
}

func assertPassedJudgedByThePublishedDocument(t *testing.T, res runner.Result, out string) {
	t.Helper()
	assertAllPassed(t, res, out)
	assertOnlyMockScenariosSkipped(t, res)
	require.True(t, res.Passed(), out)
	n := res.NewestClient
	assert.False(t, n.Judged)
	require.NotEmpty(t, n.Asked)
	for _, a := range n.Asked {
		assert.Contains(t, []int{http.StatusNotFound, http.StatusMethodNotAllowed}, a.Status, a.Operation)
	}
	require.Len(t, n.Breaks, 1, "%+v", n.Breaks)
	assert.Equal(t, "typescript-1.4.0-alpha.6", n.Breaks[0].Version)
	lines := strings.Join(n.Lines(), "\n")
	t.Logf("the summary's first lines:\n%s", lines)
	assert.Contains(t, lines, "NOT SERVED what oz-agent-sdk 1.4.0-alpha.6 calls beyond the published document (")
	assert.Contains(t, lines, "this breaks typescript-1.4.0-alpha.6, which calls GET /agent/conversations/{conversationId}/redirect, GET /agent/identities/{uid}, "+
		"GET /agent/runs/{runId}/handoff/attachments, POST /agent/runs/{runId}/followups")
	skipped := 0
	for _, s := range res.Skipped() {
		if hasAnyTag(s.Tags, "@newest-client") && s.Needs != nil && s.Needs.Flag == "--newest-client" {
			skipped++
			assert.Contains(t, s.Message, "does not serve", s.Name)
		}
	}
	assert.NotZero(t, skipped, "the newest client's scenarios are skipped, saying which flag would judge them")
}

// A server that serves the newest client's surface is judged on it by
// default, and one that serves it wrongly (an identity by its uid without
// the skills the newest client reads) fails; so does a server of the
// published document whose team promises the newest client.
func TestTheDefaultRunJudgesTheNewestSurfaceWhereItIsServed(t *testing.T) {
	t.Run("served, a field missing", func(t *testing.T) {
		t.Parallel()
		srv := referenceServerWrapped(t, refserver.Options{Step: 20 * time.Millisecond}, editObject("GET", func(p string) bool { return isIdentity(strings.TrimPrefix(p, "/api/v1")) }, func(_ *http.Request, doc map[string]any) {
			delete(doc, "skills")
		}))
		res, out := runSuite(t, srv, func(c *suiteconfig.Config) { oneCaller(c); c.Features = someFeatures(t, "identities.feature") })
		assert.True(t, res.NewestClient.Judged, "%+v", res.NewestClient)
		assert.False(t, res.Passed(), out)
		sc, ok := res.Find("An agent identity is fetched by its uid with every field the client needs")
		require.True(t, ok)
		assert.Equal(t, runner.Failed, sc.Status, out)
		assert.Contains(t, sc.Message, "skills")
		assert.Contains(t, strings.Join(res.NewestClient.Lines(), "\n"), "NEWEST CLIENT served (")
	})
	t.Run("not served, but promised", func(t *testing.T) {
		t.Parallel()
		srv := newReferenceServer(t, refserver.Options{Step: 20 * time.Millisecond, Published: true})
		res, out := runSuite(t, srv, func(c *suiteconfig.Config) {
			oneCaller(c)
			c.Features = someFeatures(t, "followups.feature")
			c.NewestClient = true
		})
		assert.True(t, res.NewestClient.Judged && res.NewestClient.Promised)
		assert.Empty(t, res.NewestClient.Asked, "a promise needs no asking")
		assert.False(t, res.Passed(), out)
		assert.NotEmpty(t, res.Failed(), out)
	})
}
