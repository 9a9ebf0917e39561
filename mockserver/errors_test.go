package mockserver_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBadRequestsGetAProblemNamingTheFault(t *testing.T) {
	c := newMock(t, mockserver.Options{MaxBodyBytes: 4096})
	cases := []struct {
		name    string
		method  string
		path    string
		body    any
		headers []string
		status  int
		detail  string // a part of the problem's detail
	}{
		{"no auth", "GET", "/agent/runs", nil, []string{"Authorization", ""}, 401, "Authorization"},
		{"basic auth", "GET", "/agent/runs", nil, []string{"Authorization", "Basic YTpi"}, 401, "Bearer"},
		{"empty bearer", "GET", "/agent/runs/x", nil, []string{"Authorization", "Bearer "}, 401, "Bearer"},
		{"malformed json", "POST", "/agent/run", `{"prompt": "x"`, nil, 400, ""},
		{"not an object", "POST", "/agent/run", `["prompt"]`, nil, 400, ""},
		{"prompt not a string", "POST", "/agent/run", `{"prompt": 42}`, nil, 400, "prompt"},
		{"config not an object", "POST", "/agent/run", `{"prompt": "x", "config": "fast"}`, nil, 400, "config"},
		{"team not a boolean", "POST", "/agent/run", `{"prompt": "x", "team": "yes"}`, nil, 400, "team"},
		{"no prompt no skill", "POST", "/agent/run", `{"title": "t"}`, nil, 400, "prompt"},
		{"blank prompt", "POST", "/agent/runs", `{"prompt": "   "}`, nil, 400, "prompt"},
		{"bad skill spec", "POST", "/agent/run", `{"skill": "just-a-name"}`, nil, 400, "skill"},
		{"mcp server with two kinds", "POST", "/agent/run", `{"prompt": "x", "config": {"mcp_servers": {"a": {"url": "https://x.example", "command": "npx"}}}}`, nil, 400, "mcp_servers"},
		{"empty body", "POST", "/agent/run", "", nil, 400, "empty"},
		{"invalid utf-8", "POST", "/agent/run", "{\"prompt\": \"\xff\xfe\"}", nil, 400, "UTF-8"},
		{"too large", "POST", "/agent/run", `{"prompt": "` + strings.Repeat("a", 5000) + `"}`, nil, 413, "limit"},
		{"wrong content type", "POST", "/agent/run", `{"prompt": "x"}`, []string{"Content-Type", "text/plain"}, 415, "application/json"},
		{"unknown path", "GET", "/agent/nothing", nil, nil, 404, "no such path"},
		{"unknown root path", "GET", "/v2/runs", nil, nil, 404, "no such path"},
		{"unknown path without auth", "GET", "/agent/nothing", nil, []string{"Authorization", ""}, 401, "Authorization"},
		{"unknown root path without auth", "GET", "/api/v1/v2/runs", nil, []string{"Authorization", ""}, 401, "Authorization"},
		{"wrong method without auth", "DELETE", "/agent/runs/abc", nil, []string{"Authorization", ""}, 401, "Authorization"},
		{"wrong method", "DELETE", "/agent/runs/abc", nil, nil, 405, "DELETE"},
		{"get on create", "GET", "/agent/run", nil, nil, 405, "GET"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.do(tc.method, tc.path, tc.body, tc.headers...)
			require.Equal(t, tc.status, r.status, "%s", r.body)
			p := r.problem(t)
			assert.Contains(t, p.Detail, tc.detail)
			assert.True(t, strings.HasPrefix(p.Type, mockserver.ProblemTypeBase), p.Type)
			assert.NotEmpty(t, p.Title)
			if tc.status == 405 {
				assert.Contains(t, r.header.Get("Allow"), "OPTIONS")
			}
		})
	}
	// The server still answers after all of that.
	assert.Equal(t, http.StatusOK, c.do("GET", "/agent/runs", nil).status)
}

func TestOptionsHeadAndTheDocument(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	r := c.do("OPTIONS", "/agent/runs", nil)
	assert.Equal(t, http.StatusNoContent, r.status)
	assert.Equal(t, "GET, HEAD, POST, OPTIONS", r.header.Get("Allow"))
	r = c.do("HEAD", "/agent/runs", nil)
	assert.Equal(t, http.StatusOK, r.status)
	assert.Empty(t, r.body)
	r = c.do("GET", "/openapi.yaml", nil)
	assert.Equal(t, http.StatusOK, r.status)
	assert.Contains(t, string(r.body), "openapi:")
}

func TestStrictAuthAcceptsOnlyFixtureKeys(t *testing.T) {
	c := newMock(t, mockserver.Options{StrictAuth: true})
	assert.Equal(t, http.StatusOK, c.do("GET", "/agent/runs", nil).status)
	r := c.as("wk-guess").do("GET", "/agent/runs", nil)
	assert.Equal(t, http.StatusUnauthorized, r.status)
	assert.Equal(t, mockserver.ProblemTypeBase+"authentication_required", r.problem(t).Type)
}

func TestControlAndQueryEdgeCases(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	r := c.do("GET", "/agent/runs?q=%ff", nil)
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Contains(t, r.problem(t).Detail, "UTF-8")
	big := `{"by": "` + strings.Repeat("1", 70<<10) + `s"}`
	r = c.do("POST", "/__mock/clock/advance", big)
	assert.Equal(t, http.StatusRequestEntityTooLarge, r.status, "%s", r.body)
	r = c.do("GET", "/agent/runs", nil, mockserver.FaultHeader, "delay=3m")
	assert.Equal(t, http.StatusBadRequest, r.status, "delays stay under the write timeout")
}

func TestAFixtureConfigThatDoesNotFitIsAStartUpError(t *testing.T) {
	set, err := fixtures.Load(fixtures.Embedded())
	require.NoError(t, err)
	set.Runs[0].Config = []byte(`{"model_id": 42}`)
	_, err = mockserver.New(mockserver.Options{Fixtures: set})
	require.Error(t, err)
	assert.Contains(t, err.Error(), set.Runs[0].ID)
}

// A fixture fate rule that does not parse stops the mock at start, naming
// the file and the rule, rather than failing later creates with a 400 that
// blames a header nobody sent.
func TestAFixtureFateRuleThatDoesNotParseIsAStartUpError(t *testing.T) {
	for _, bad := range []fixtures.Fate{{State: "EXPLODED"}, {ErrorCode: "no_such_code"}} {
		set, err := fixtures.Load(fixtures.Embedded())
		require.NoError(t, err)
		require.NotEmpty(t, set.Fates, "the embedded fixtures have fate rules")
		set.Fates[0].Fate = bad
		_, err = mockserver.New(mockserver.Options{Fixtures: set})
		require.Error(t, err, "%+v", bad)
		assert.Contains(t, err.Error(), "fates.json")
		assert.Contains(t, err.Error(), "rule 0")
	}
}
