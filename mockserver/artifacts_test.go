package mockserver_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func artifactTypes(run mockserver.RunItem) []string {
	var out []string
	for _, a := range run.Artifacts {
		out = append(out, a.Type)
	}
	return out
}

// How a run comes to show artifacts: the X-Mock-Fate header's or a fate
// rule's "artifacts" key, shown once the run has succeeded.
func TestFateChoosesArtifacts(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: time.Second})
	header := c.create(map[string]any{"prompt": "a"}, mockserver.FateHeader, "artifacts=PULL_REQUEST+PLAN").RunID
	r := c.do("POST", "/__mock/fates", map[string]any{"prompt_pattern": "screens", "artifacts": "PLAN"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	rule := c.create(map[string]any{"prompt": "the screens"}).RunID
	plain := c.create(map[string]any{"prompt": "plain"}).RunID
	failed := c.create(map[string]any{"prompt": "b"}, mockserver.FateHeader, "state=FAILED; artifacts=PLAN").RunID
	assert.Empty(t, c.get(header).Artifacts, "nothing before the run has ended")
	c.advance(time.Minute)
	assert.Equal(t, []string{"PULL_REQUEST", "PLAN"}, artifactTypes(c.get(header)))
	assert.Equal(t, []string{"PLAN"}, artifactTypes(c.get(rule)))
	assert.Empty(t, c.get(plain).Artifacts)
	assert.Empty(t, c.get(failed).Artifacts, "a run that did not succeed shows none")

	for _, bad := range []string{"artifacts=PHOTO", "artifacts=PLAN+PLAN", "artifacts=+"} {
		p := c.do("POST", "/agent/run", map[string]any{"prompt": "x"}, mockserver.FateHeader, bad).problem(t)
		assert.Equal(t, http.StatusBadRequest, p.Status, bad)
		assert.Contains(t, p.Detail, "artifacts", bad)
	}
	p := c.do("POST", "/__mock/fates", map[string]any{"artifacts": "VIDEO"})
	assert.Equal(t, http.StatusBadRequest, p.status, "%s", p.body)
	assert.Contains(t, string(p.body), "artifacts")
}

// The fixtures' rule gives a plan and a pull request to prompts that ask.
func TestFixtureRuleGivesArtifacts(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: time.Second})
	id := c.create(map[string]any{"prompt": "Refactor the parser [mock:artifacts]"}).RunID
	c.advance(time.Minute)
	assert.Equal(t, []string{"PLAN", "PULL_REQUEST"}, artifactTypes(c.get(id)))
}
