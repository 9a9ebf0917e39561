//go:build !race

package steps_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/explore"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/suiteconfig"
)

// The exploration alone, without a feature, against the mutants of the
// areas it is made for: what a listing, a filter, a validation or a
// progression breaks. With a fixed seed and a budget of calls per mutant
// it must find at least exploreFindsAtLeast of them; the table per area is
// printed (make mutants).

// exploredAreas are the mutants' areas the exploration is held to.
var exploredAreas = []string{listingArea.name, newestFilters.name, answersArea.name, runsArea.name}

const (
	exploreSeed         = 1
	exploreCalls        = 1500 // per mutant, the moves of the mock's clock and the checks' reads included
	exploreFindsAtLeast = 60   // percent of the mutants of those areas
)

func exploreOptions(baseURL string) explore.Options {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	return explore.Options{BaseURL: baseURL, APIKey: "wk-mock-alice", OtherAPIKey: "wk-mock-carol",
		HTTPClient: &http.Client{Transport: transport}, Steps: exploreCalls, Seed: exploreSeed,
		// A mutant is found at its first finding; no need to shrink it.
		MaxFindings: 1, ShrinkCalls: 1}
}

func TestExploreFindsMutants(t *testing.T) {
	all := slices.Concat(mutants, resourceMutants, movedMutants, newestMutants)
	ms := slices.DeleteFunc(slices.Clone(all), func(m mutant) bool { return !slices.Contains(exploredAreas, m.area.name) })
	require.NotEmpty(t, ms)

	// The unbroken mock first, or findings would prove nothing.
	res, err := explore.Run(context.Background(), exploreOptions(newMock(t, mockserver.Options{}, nil).URL))
	require.NoError(t, err)
	require.Empty(t, res.Findings, "the exploration finds something on the unbroken mock: %v", res.Findings)

	var mu sync.Mutex
	found := map[string]map[string]bool{} // area -> mutant -> found
	t.Run("mutants", func(t *testing.T) {
		for _, m := range ms {
			t.Run(m.name, func(t *testing.T) {
				t.Parallel()
				res, err := explore.Run(context.Background(), exploreOptions(newMock(t, mockserver.Options{}, m.wrap()).URL))
				require.NoError(t, err)
				mu.Lock()
				defer mu.Unlock()
				if found[m.area.name] == nil {
					found[m.area.name] = map[string]bool{}
				}
				found[m.area.name][m.name] = len(res.Findings) > 0
				if len(res.Findings) > 0 {
					f := res.Findings[0]
					t.Logf("found    %-58s: %s, in %d calls", m.name, f.Cause, len(f.Calls))
				} else {
					t.Logf("missed   %s (%d calls)", m.name, res.Calls)
				}
			})
		}
	})
	table, got, total := exploreTable(found)
	t.Log("the exploration alone (seed " + fmt.Sprint(exploreSeed) + ", " + fmt.Sprint(exploreCalls) + " calls per mutant), mutants found by area:\n" + table)
	require.GreaterOrEqual(t, 100*got, exploreFindsAtLeast*total, "the exploration alone finds %d of %d mutants", got, total)
}

// exploreTable is the mutants found per area, as a Markdown table.
func exploreTable(found map[string]map[string]bool) (string, int, int) {
	var b strings.Builder
	b.WriteString("| area | found | missed |\n|---|---|---|\n")
	got, total := 0, 0
	for _, area := range slices.Sorted(maps.Keys(found)) {
		n, missed := 0, []string{}
		for _, name := range slices.Sorted(maps.Keys(found[area])) {
			if found[area][name] {
				n++
			} else {
				missed = append(missed, name)
			}
		}
		all := len(found[area])
		fmt.Fprintf(&b, "| %s | %d/%d (%d%%) | %s |\n", area, n, all, 100*n/all, strings.Join(missed, "; "))
		got, total = got+n, total+all
	}
	if total > 0 {
		fmt.Fprintf(&b, "| all | %d/%d (%d%%) | |\n", got, total, 100*got/total)
	}
	return b.String(), got, total
}

// A finding of the exploration, printed as a scenario and pasted into a
// feature, fails on the mutant it was found on and passes on the mock: for
// a few mutants of different areas, each found, shrunk, printed
// (explore.Scenario) and run by the suite with only that feature.
func TestAnExploredFindingsScenarioFailsOnItsMutant(t *testing.T) {
	// Not "the next page skips its first run": its finding (a page after
	// one that promised more is empty) rests on how many runs the
	// exploration's session held, which a pasted scenario run against
	// another server's runs does not bring along (docs/explore.md).
	want := []string{
		"the model_id filter is ignored",
		"updated_at never moves",
		"another team's run can be read",
		// Shown only after the mock's clock moved: the scenario moves it.
		"CLAIMED is skipped: shown as INPROGRESS",
		"started_at is set from creation",
	}
	all := slices.Concat(mutants, resourceMutants, movedMutants, newestMutants)
	for _, name := range want {
		i := slices.IndexFunc(all, func(m mutant) bool { return m.name == name })
		require.GreaterOrEqual(t, i, 0, "no mutant %q", name)
		m := all[i]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			o := exploreOptions(newMock(t, mockserver.Options{}, m.wrap()).URL)
			o.ShrinkCalls = 0 // shrink as the command does
			res, err := explore.Run(context.Background(), o)
			require.NoError(t, err)
			require.NotEmpty(t, res.Findings, "the exploration no longer finds %q", name)
			feature, missing := explore.Scenario(res.Findings[0])
			require.Empty(t, missing, "a step is missing:\n%s", feature)
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "finding.feature"), []byte(feature), 0o644))
			run := func(wrap func(http.Handler) http.Handler) (bool, string) {
				srv := newMock(t, mockserver.Options{}, wrap)
				res, out := runSuite(t, srv.URL, func(c *suiteconfig.Config) { c.Features, c.Tags = os.DirFS(dir), explore.ExploredTag })
				require.Len(t, res.Scenarios, 1, out)
				return res.Passed(), res.Scenarios[0].Message
			}
			passed, why := run(m.wrap())
			assert.False(t, passed, "the finding's scenario passes on its mutant:\n%s", feature)
			t.Logf("%s\non the mutant: %s", feature, why)
			passed, why = run(nil)
			assert.True(t, passed, "the finding's scenario fails on the mock: %s\n%s", why, feature)
		})
	}
}

// The exploration finds nothing on any legal variant of the reference
// server (reference_variants_test.go): no finding the published document
// allows, whatever the variant chooses where it leaves room.
func TestExploreFindsNothingOnTheReferenceServerVariants(t *testing.T) {
	for _, v := range referenceVariants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			var c suiteconfig.Config
			if v.tune != nil {
				v.tune(&c)
			}
			transport := http.DefaultTransport.(*http.Transport).Clone()
			res, err := explore.Run(context.Background(), explore.Options{
				BaseURL: newReferenceServer(t, v.opts), APIKey: "wk-mock-alice", OtherAPIKey: c.OtherAPIKey,
				HTTPClient: &http.Client{Transport: transport}, Steps: 300, Seed: exploreSeed, MaxFindings: 1, ShrinkCalls: 300})
			require.NoError(t, err)
			require.Greater(t, res.Calls, 300, "the exploration ran")
			var b strings.Builder
			for _, f := range res.Findings {
				fmt.Fprintf(&b, "%s: %s\n%s\n", f.Cause, f.Detail, func() string { s, _ := explore.Scenario(f); return s }())
			}
			assert.Empty(t, res.Findings, "a finding on a legal server:\n%s", b.String())
		})
	}
}
