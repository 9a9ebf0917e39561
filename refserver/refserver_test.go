package refserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests hold the reference server to the published document where the
// contract suite, polling, cannot reach: the cancel rules for runs it did
// not create, the order of old runs, what a bad request gets.

type client struct {
	t   *testing.T
	url string
	key string // "" for wk-test, of the first team
}

func newClient(t *testing.T, opts Options) client {
	srv := httptest.NewServer(New(opts))
	t.Cleanup(srv.Close)
	return client{t: t, url: srv.URL + "/api/v1"}
}

func (c client) do(method, path, body string) (int, http.Header, map[string]any, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.url+path, strings.NewReader(body))
	require.NoError(c.t, err)
	key := c.key
	if key == "" {
		key = "wk-test"
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	var obj map[string]any
	_ = json.Unmarshal(data, &obj)
	return resp.StatusCode, resp.Header, obj, string(data)
}

// runsFrom lists every run and indexes them by source.
func (c client) runsFrom() map[string]map[string]any {
	_, _, page, _ := c.do("GET", "/agent/runs?limit=500", "")
	out := map[string]map[string]any{}
	for _, r := range page["runs"].([]any) {
		run := r.(map[string]any)
		out[run["source"].(string)] = run
	}
	return out
}

func TestCancelFollowsTheDocument(t *testing.T) {
	c := newClient(t, Options{Step: time.Hour})
	old := c.runsFrom()
	for source, want := range map[string]int{
		"LOCAL":         http.StatusUnprocessableEntity,
		"GITHUB_ACTION": http.StatusBadRequest, // it has ended: that comes first
		"LINEAR":        http.StatusUnprocessableEntity,
		"WEB_APP":       http.StatusBadRequest, // BLOCKED
		"CLI":           http.StatusBadRequest, // CANCELLED
	} {
		status, header, problem, _ := c.do("POST", "/agent/runs/"+old[source]["run_id"].(string)+"/cancel", "")
		assert.Equal(t, want, status, source)
		assert.Equal(t, "application/problem+json", header.Get("Content-Type"), source)
		assert.EqualValues(t, want, problem["status"], source)
	}

	_, _, created, _ := c.do("POST", "/agent/runs", `{"prompt": "Fix the build"}`)
	id := created["run_id"].(string)
	status, _, _, body := c.do("POST", "/agent/runs/"+id+"/cancel", "")
	assert.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `"`+id+`"`, body)
	_, _, run, _ := c.do("GET", "/agent/runs/"+id, "")
	assert.Equal(t, "CANCELLED", run["state"])
}

func TestAPendingRunAsksForARetry(t *testing.T) {
	c := newClient(t, Options{Step: 200 * time.Millisecond})
	_, _, created, _ := c.do("POST", "/agent/run", `{"prompt": "Fix the build"}`)
	id := created["run_id"].(string)
	require.Eventually(t, func() bool {
		_, _, run, _ := c.do("GET", "/agent/runs/"+id, "")
		return run["state"] == "PENDING"
	}, 5*time.Second, 10*time.Millisecond)
	status, _, problem, _ := c.do("POST", "/agent/runs/"+id+"/cancel", "")
	if status == http.StatusOK { // the run moved on between the two requests
		t.Skip("the run left PENDING before the cancel arrived")
	}
	assert.Equal(t, http.StatusConflict, status)
	assert.Equal(t, true, problem["retryable"])
	assert.Equal(t, problemBase+"conflict", problem["type"])
}

func TestListsByLastUpdateByDefault(t *testing.T) {
	c := newClient(t, Options{Step: time.Hour})
	_, _, page, _ := c.do("GET", "/agent/runs?limit=3", "")
	runs := page["runs"].([]any)
	require.Len(t, runs, 3)
	var prev string
	for _, r := range runs {
		updated := r.(map[string]any)["updated_at"].(string)
		if prev != "" {
			assert.LessOrEqual(t, updated, prev, "updated_at, newest first")
		}
		prev = updated
	}
	assert.Equal(t, true, page["page_info"].(map[string]any)["has_next_page"])

	cursor := page["page_info"].(map[string]any)["next_cursor"].(string)
	status, _, _, _ := c.do("GET", "/agent/runs?limit=3&sort_by=created_at&cursor="+cursor, "")
	assert.Equal(t, http.StatusBadRequest, status, "a cursor from another query")
}

func TestBadRequestsAreProblems(t *testing.T) {
	c := newClient(t, Options{})
	for _, tc := range []struct{ method, path, body string }{
		{"POST", "/agent/run", `{"prompt": "x", "config": {"idle_timeout_minutes": 61}}`},
		{"POST", "/agent/run", `{"prompt": "x", "config": {"harness": {"type": "other"}}}`},
		{"POST", "/agent/run", `{"prompt": "x", "attachments": [{"file_name": "a.txt", "mime_type": "text/plain"}]}`},
		{"POST", "/agent/run", `{"prompt": "x", "team": false, "agent_identity_uid": "id-1"}`},
		{"POST", "/agent/run", `{"title": "no prompt"}`},
		{"GET", "/agent/runs?execution_location=MARS", ""},
		{"GET", "/agent/runs?ancestor_run_id=nope", ""},
		{"GET", "/agent/runs?cursor=!!", ""},
	} {
		status, header, problem, _ := c.do(tc.method, tc.path, tc.body)
		assert.Equal(t, http.StatusBadRequest, status, tc.path+" "+tc.body)
		assert.Equal(t, "application/problem+json", header.Get("Content-Type"))
		assert.Equal(t, problemBase+"invalid_request", problem["type"])
	}
}

func TestEveryPathNeedsAKeyFirst(t *testing.T) {
	srv := httptest.NewServer(New(Options{}))
	defer srv.Close()
	for _, p := range []string{"/api/v1/agent/runs", "/api/v1/agent/schedules", "/elsewhere"} {
		resp, err := http.Get(srv.URL + p)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, p)
	}
}

func TestASkillNamesTheRun(t *testing.T) {
	c := newClient(t, Options{})
	_, _, created, _ := c.do("POST", "/agent/runs", `{"skill": "acme/skills:deploy/SKILL.md"}`)
	_, _, run, _ := c.do("GET", "/agent/runs/"+created["run_id"].(string), "")
	assert.Equal(t, "deploy", run["agent_config"].(map[string]any)["name"])
	assert.Equal(t, "deploy", run["agent_skill"].(map[string]any)["name"])
}
