package steps

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseNames(t *testing.T) {
	for in, want := range map[string][]string{
		"alpha":                         {"alpha"},
		"alpha and beta":                {"alpha", "beta"},
		"alpha, beta and gamma":         {"alpha", "beta", "gamma"},
		`"alpha", "gamma"`:              {"alpha", "gamma"},
		"no runs":                       {},
		"QUEUED, PENDING and SUCCEEDED": {"QUEUED", "PENDING", "SUCCEEDED"},
	} {
		assert.Equal(t, want, parseNames(in), in)
	}
}

func TestParseQueryKeepsValuesAsWritten(t *testing.T) {
	q := parseQuery("name=x&state=QUEUED&state=FAILED&created_after=2025-01-31T09:00:00.5+01:00&cursor=!!a!!")
	assert.Equal(t, []string{"QUEUED", "FAILED"}, q["state"])
	assert.Equal(t, "2025-01-31T09:00:00.5+01:00", q.Get("created_after"))
	assert.Equal(t, "!!a!!", q.Get("cursor"))
	assert.Contains(t, q.Encode(), "created_after=2025-01-31T09%3A00%3A00.5%2B01%3A00")
}

func TestLookupAndSetPath(t *testing.T) {
	doc := map[string]any{}
	setPath(doc, "config.model_id", "m")
	setPath(doc, "config.name", "n")
	setPath(doc, "title", "t")
	v, ok := lookup(doc, "config.model_id")
	assert.True(t, ok)
	assert.Equal(t, "m", v)
	_, ok = lookup(doc, "config.model_id.deeper")
	assert.False(t, ok)
	_, ok = lookup(doc, "nothing")
	assert.False(t, ok)
}

func TestTableValue(t *testing.T) {
	v, err := tableValue(`{"a": ["b"]}`)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"a": []any{"b"}}, v)
	v, err = tableValue("plain text")
	require.NoError(t, err)
	assert.Equal(t, "plain text", v)
	_, err = tableValue(`{"a": `)
	assert.Error(t, err)
}

func TestContainsReportsTheFirstDifference(t *testing.T) {
	sent := map[string]any{"name": "x", "mcp_servers": map[string]any{"gh": map[string]any{"url": "u"}}, "args": []any{"a"}}
	got := map[string]any{"name": "x", "model_id": "default", "mcp_servers": map[string]any{"gh": map[string]any{"url": "u", "env": map[string]any{}}}, "args": []any{"a"}}
	_, ok := contains(sent, got, "cfg")
	assert.True(t, ok, "extra fields on the server's side are fine")

	got["mcp_servers"] = map[string]any{"gh": map[string]any{"url": "other"}}
	path, ok := contains(sent, got, "cfg")
	assert.False(t, ok)
	assert.Equal(t, "cfg.mcp_servers.gh.url", path)

	got["mcp_servers"] = sent["mcp_servers"]
	got["args"] = []any{"a", "b"}
	path, ok = contains(sent, got, "cfg")
	assert.False(t, ok)
	assert.Equal(t, "cfg.args", path)
}

func TestProblemCode(t *testing.T) {
	assert.Equal(t, "invalid_request", problemCode("https://docs.warp.dev/errors/invalid_request"))
	assert.Equal(t, "conflict", problemCode("urn:problem:conflict"))
	assert.Equal(t, "resource_not_found", problemCode("resource_not_found"))
}

func TestCheckProblem(t *testing.T) {
	good := &response{status: 404, header: http.Header{"Content-Type": {"application/problem+json; charset=utf-8"}},
		body: []byte(`{"type": "https://x/errors/resource_not_found", "title": "Not found", "status": 404, "error": "Not found (no run)"}`)}
	assert.NoError(t, checkProblem(good))
	// The published document declares error bodies as application/json.
	asJSON := &response{status: 404, header: http.Header{"Content-Type": {"application/json"}}, body: good.body}
	assert.NoError(t, checkProblem(asJSON))

	for name, r := range map[string]*response{
		"HTML":       {status: 404, header: http.Header{"Content-Type": {"text/html"}}, body: good.body},
		"plain JSON": {status: 404, header: http.Header{"Content-Type": {"application/json"}}, body: []byte(`{"message": "not found"}`)},
		"no error":   {status: 404, header: good.header, body: []byte(`{"type": "t", "title": "x", "status": 404}`)},
		"status":     {status: 404, header: good.header, body: []byte(`{"type": "t", "title": "x", "status": 400, "error": "e"}`)},
		"not JSON":   {status: 500, header: good.header, body: []byte(`oops`)},
	} {
		assert.Error(t, checkProblem(r), name)
	}
}

func TestRankOrdersTheLifecycle(t *testing.T) {
	assert.Less(t, rank["QUEUED"], rank["PENDING"])
	assert.Less(t, rank["CLAIMED"], rank["INPROGRESS"])
	assert.Equal(t, rank["INPROGRESS"], rank["BLOCKED"])
	for _, s := range []string{"SUCCEEDED", "FAILED", "ERROR", "CANCELLED"} {
		assert.True(t, isTerminal(s), s)
	}
	assert.False(t, isTerminal("BLOCKED"))
	assert.False(t, isTerminal("WAITING"))
}
