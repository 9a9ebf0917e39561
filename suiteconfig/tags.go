package suiteconfig

import (
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/agentruns/agentruns/features"
	"github.com/agentruns/agentruns/htmlreport"
	"github.com/agentruns/agentruns/internal/tagexpr"
)

// NewestClientTag marks the scenarios of operations and fields newer than
// the published document, so that a server built to that document can
// leave them out (steps/newest_tag.go).
const NewestClientTag = "@newest-client"

// readOnlyTags are the tags of the scenarios a read-only run leaves out
// (steps/readonly.go).
var readOnlyTags = []string{"@creates-runs", "@writes"}

// knownTags refuses a tag expression naming a tag no scenario carries (a
// typo would select nothing, or everything under "not"), suggesting the
// nearest known tag.
func (c Config) knownTags() error {
	x, err := tagexpr.Parse(c.Tags)
	if err != nil || len(tagexpr.Tags(x)) == 0 {
		return err
	}
	// A tag of the suite's own features is never a typo, even when the
	// features chosen (a subset, in tests) do not carry it.
	known := map[string]bool{}
	for _, fsys := range []fs.FS{c.Features, features.FS} {
		scenarios, err := scenarioTags(fsys)
		if err != nil {
			return err
		}
		for _, tags := range scenarios {
			for _, t := range tags {
				known[t] = true
			}
		}
	}
	list := slices.Sorted(maps.Keys(known))
	for _, t := range tagexpr.Tags(x) {
		if known[t] {
			continue
		}
		hint := ""
		if near := nearest(t, list); near != "" {
			hint = fmt.Sprintf("did you mean %s? ", near)
		}
		return fmt.Errorf("tag expression %q: no scenario is tagged %s; %sthe tags are %s", c.Tags, t, hint, strings.Join(list, ", "))
	}
	return nil
}

// nearest is the known tag within two edits of t, if any.
func nearest(t string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(t, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// tags is the expression selecting the scenarios: the caller's tags, less
// the scenarios that create runs or change anything in read-only mode.
func (c Config) tags() (tagexpr.Expr, error) {
	x, err := tagexpr.Parse(c.Tags)
	if err != nil {
		return nil, err
	}
	if c.ReadOnly {
		for _, t := range readOnlyTags {
			x = tagexpr.And(x, tagexpr.Not(tagexpr.Tag(t)))
		}
	}
	if _, err := tagexpr.Godog(x); err != nil {
		return nil, fmt.Errorf("tag expression %q: %w", c.Tags, err)
	}
	return x, nil
}

// TagExpression is the expression selecting the scenarios, the caller's
// tags less what a read-only run leaves out, in the syntax godog
// understands; "" when the tags do not parse (Check says why).
func (c Config) TagExpression() string {
	x, err := c.tags()
	if err != nil {
		return ""
	}
	s, _ := tagexpr.Godog(x)
	return s
}

// SelectsNewestClient tells whether the run selects any scenario tagged
// NewestClientTag. When it selects none, nothing of the newest client's
// surface is asked about nor judged: not in a step, not in the document's
// validation.
func (c Config) SelectsNewestClient() (bool, error) {
	x, err := c.tags()
	if err != nil {
		return false, err
	}
	scenarios, err := scenarioTags(c.Features)
	if err != nil {
		return false, err
	}
	for _, tags := range scenarios {
		if slices.Contains(tags, NewestClientTag) && x.Match(tags) {
			return true, nil
		}
	}
	return false, nil
}

// scenarioTags are the tags of each scenario of the feature files in fsys,
// with its feature's, rule's and examples' (htmlreport's AllTags), read
// once per process for the suite's own embedded features.
func scenarioTags(fsys fs.FS) ([][]string, error) {
	if fsys == fs.FS(features.FS) {
		return embeddedScenarioTags()
	}
	return readScenarioTags(fsys)
}

// embeddedScenarioTags are the tags of the suite's own features: every
// check of a configuration reads them, up to three times, and they never
// change. Callers only read the slices.
var embeddedScenarioTags = sync.OnceValues(func() ([][]string, error) { return readScenarioTags(features.FS) })

func readScenarioTags(fsys fs.FS) ([][]string, error) {
	spec, err := htmlreport.Parse(fsys)
	if err != nil {
		return nil, fmt.Errorf("reading the features: %w", err)
	}
	var out [][]string
	for _, f := range spec {
		for _, sc := range f.Scenarios {
			out = append(out, sc.AllTags)
		}
	}
	return out, nil
}
