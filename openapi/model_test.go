package openapi_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/openapi"
)

// The model answers what the other packages ask of the document; these
// are the answers they rely on, read from the embedded document.
func TestTheModelAnswersWhatTheDocumentSays(t *testing.T) {
	m, err := openapi.Embedded()
	require.NoError(t, err)
	again, err := openapi.Embedded()
	require.NoError(t, err)
	require.Same(t, m, again, "the embedded document is read once")

	template, op := m.Match("GET", "/agent/runs/r-1")
	require.NotNil(t, op)
	assert.Equal(t, "/agent/runs/{runId}", template)
	assert.Equal(t, "#/paths/~1agent~1runs~1{runId}/get", op.Where)
	template, op = m.Match("GET", "/api/v1/agent/runs/r-1")
	assert.Equal(t, "/agent/runs/{runId}", template, "the servers' base path is ignored")
	assert.NotNil(t, op)
	template, op = m.Match("PATCH", "/agent/runs/r-1")
	assert.Equal(t, "/agent/runs/{runId}", template, "a documented path with an undocumented method")
	assert.Nil(t, op)
	template, op = m.Match("GET", "/agent/nothing/here")
	assert.Empty(t, template)
	assert.Nil(t, op)

	_, list := m.Match("GET", "/agent/runs")
	require.NotNil(t, list)
	assert.True(t, list.DeclaresQuery("limit"))
	assert.False(t, list.DeclaresQuery("colour"))
	ok := list.Response(200)
	require.NotNil(t, ok)
	media := ok.Media("application/json")
	require.NotNil(t, media)
	assert.True(t, media.HasSchema)
	assert.Nil(t, ok.Media("text/html"), "a media type the answer does not list")
	assert.Nil(t, list.Response(599), "no status, range or default documents 599")

	assert.Contains(t, m.MemberValues("RunItem", "state"), "QUEUED")
	assert.Nil(t, m.MemberValues("RunItem", "no_such_member"))
	assert.Nil(t, m.Component("NoSuchSchema"))

	assert.NoError(t, m.CheckComponent("AmbientAgentConfig", []byte(`{"name":"n","model_id":"m"}`)))
	assert.Error(t, m.CheckComponent("AmbientAgentConfig", []byte(`{"name":5}`)))

	found := m.Undeclared("AmbientAgentConfig", map[string]any{"name": "n", "rollout_ring": "beta"})
	assert.Equal(t, []string{"/rollout_ring"}, keys(found))
	assert.JSONEq(t, `"beta"`, string(found["/rollout_ring"]))
	assert.Nil(t, m.Undeclared("AmbientAgentConfig", map[string]any{"name": "n"}))

	root, err := m.Tree()
	require.NoError(t, err)
	assert.Contains(t, root, "paths")
	assert.True(t, m.PropertyEnums()["state"]["QUEUED"])

	published, err := m.Published()
	require.NoError(t, err)
	assert.NotSame(t, m, published)
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
