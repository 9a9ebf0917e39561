package steps_test

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"

	"github.com/agentruns/agentruns/features"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/suiteconfig"
)

// The suite judges every success answer as each released client version
// reads it (package clientcheck) and reports a table of versions. These
// tests build servers that each break exactly one version, or all three,
// and check that the table names exactly those; and that the servers
// built to a client's surface break none of it.

const (
	alpha8 = "typescript-1.0.0-alpha.8"
	newest = "typescript-1.4.0-alpha.6"
	python = "python-0.11.0"
)

// cleanFeatures are features whose answers, from the bundled mock, every
// known client version reads: the broken servers below break them from
// there. (Other features meet what the older clients do not know at all:
// runs in ERROR or BLOCKED, screenshots among a run's artifacts; see
// docs/client-versions.md.)
var cleanFeatures = []string{"conversations.feature", "schedules.feature", "environments_and_models.feature"}

// featuresOnly runs only the named feature files.
func featuresOnly(names ...string) func(c *suiteconfig.Config) {
	return func(c *suiteconfig.Config) {
		sub := fstest.MapFS{}
		for _, n := range names {
			data, err := fs.ReadFile(features.FS, n)
			if err != nil {
				panic(err) // a feature renamed or removed
			}
			sub[n] = &fstest.MapFile{Data: data}
		}
		c.Features = sub
	}
}

func TestTheCleanFeaturesBreakNoClientVersionOfTheMock(t *testing.T) {
	res, _ := runSuite(t, newMock(t, mockserver.Options{}, nil).URL, featuresOnly(cleanFeatures...))
	assert.Empty(t, broken(t, res), clientTable(t, res))
	assert.True(t, res.Passed())
}

// onRunAnswers edits every run of every answer that holds runs.
func onRunAnswers(f func(run map[string]any)) func(http.Handler) http.Handler {
	return rewrite(func(r *http.Request, a *answer) { editRuns(a, f) })
}

func TestBrokenServersBreakExactlyTheirClientVersions(t *testing.T) {
	for _, tc := range []struct {
		name string
		wrap func(http.Handler) http.Handler
		want []string
	}{
		// Only alpha.8 declares has_next_page required; the newer
		// TypeScript client and the Python client read it as optional.
		{"a field only 1.0.0-alpha.8 requires is dropped", rewrite(func(r *http.Request, a *answer) {
			onPageInfo(a, func(info map[string]any) { delete(info, "has_next_page") })
		}), []string{alpha8}},
		// The Python client declares the harnesses claude and oz; the newest
		// TypeScript client gemini too; alpha.8 declares no harness at all.
		{"a value the Python client does not declare", pythonBreaker, []string{python}},
		// Every client reads a run's title as a string.
		{"a type change", onRunAnswers(func(run map[string]any) {
			if _, ok := run["title"]; ok {
				run["title"] = 42
			}
		}), []string{python, alpha8, newest}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, _ := runSuite(t, newMock(t, mockserver.Options{}, tc.wrap).URL, featuresOnly(cleanFeatures...))
			assert.Equal(t, tc.want, broken(t, res), clientTable(t, res))
		})
	}
}

// onPageInfo edits the page_info of every listing of runs.
func onPageInfo(a *answer, f func(info map[string]any)) {
	if a.status != http.StatusOK {
		return
	}
	var doc map[string]any
	if json.Unmarshal(a.body, &doc) != nil {
		return
	}
	info, ok := doc["page_info"].(map[string]any)
	if !ok {
		return
	}
	f(info)
	a.body, _ = json.Marshal(doc)
}

// pythonBreaker answers every run with a harness the Python client does
// not declare, which the document allows: the scenarios pass.
var pythonBreaker = onRunAnswers(func(run map[string]any) {
	if cfg, ok := run["agent_config"].(map[string]any); ok {
		cfg["harness"] = map[string]any{"type": "gemini"}
	}
})

func TestFailOnClientFailsTheRunOnlyForThePromisedVersions(t *testing.T) {
	for _, tc := range []struct {
		failOn  string
		passes  bool
		failing []string
	}{
		{"", true, nil},
		{alpha8, true, nil},
		{python, false, []string{python}},
		{alpha8 + "," + python, false, []string{python}},
		{"all", false, []string{python}},
	} {
		t.Run("--fail-on-client="+tc.failOn, func(t *testing.T) {
			t.Parallel()
			res, out := runSuite(t, newMock(t, mockserver.Options{}, pythonBreaker).URL, func(c *suiteconfig.Config) {
				featuresOnly(cleanFeatures...)(c)
				c.FailOnClient = tc.failOn
			})
			assertAllPassed(t, res, out)
			assert.Equal(t, tc.passes, res.Passed())
			assert.Equal(t, tc.failing, res.ClientsFailing())
		})
	}
}
