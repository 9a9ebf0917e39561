package mockserver_test

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// badRequest is one request a client under development might send. Every
// one must get its 4xx with a problem+json body that names what is wrong.
type badRequest struct {
	name    string
	method  string
	path    string
	body    any // nil, a string sent as is, or a value sent as JSON
	headers []string
	status  int
	detail  string // part of the problem's detail, case-insensitive
	allow   string // the Allow header of a 405
	chunked bool   // send the body without a Content-Length
}

// badRequests complements errors_test.go, list_test.go and
// create_get_test.go, which already try twenty-odd bad requests; none of
// those is repeated here.
func badRequests(cursor string) []badRequest {
	deep := `{"prompt":"x","config":{"mcp_servers":{"a":` + strings.Repeat(`{"env":`, 20000) + `{}` + strings.Repeat(`}`, 20000) + `}}}`
	image := `{"data":"aGk=","mime_type":"image/png"}`
	attachment := `{"file_name":"notes.txt","data":"aGk=","mime_type":"text/plain"}`
	longID := strings.Repeat("r", 10000)
	return []badRequest{
		// Bodies that are not JSON, or not a JSON object.
		{name: "truncated inside a string", method: "POST", path: "/agent/run", body: `{"prompt": "Fix the`, status: 400, detail: "JSON"},
		{name: "truncated after a key", method: "POST", path: "/agent/runs", body: `{"prompt":`, status: 400, detail: "JSON"},
		{name: "trailing garbage", method: "POST", path: "/agent/run", body: `{"prompt":"x"} {"prompt":"y"}`, status: 400, detail: "JSON"},
		{name: "single quotes", method: "POST", path: "/agent/run", body: `{'prompt': 'x'}`, status: 400, detail: "JSON"},
		{name: "a JSON string", method: "POST", path: "/agent/run", body: `"Fix the flaky test"`, status: 400, detail: "object"},
		{name: "a JSON number", method: "POST", path: "/agent/run", body: `42`, status: 400, detail: "object"},
		{name: "JSON null", method: "POST", path: "/agent/run", body: `null`, status: 400, detail: "object"},
		{name: "only whitespace", method: "POST", path: "/agent/run", body: " \n\t ", status: 400, detail: "body"},
		{name: "nested twenty thousand deep", method: "POST", path: "/agent/run", body: deep, status: 400, detail: "JSON"},
		{name: "invalid UTF-8 in a key", method: "POST", path: "/agent/run", body: "{\"pr\xc3\x28mpt\": \"x\"}", status: 400, detail: "UTF-8"},
		{name: "a UTF-16 body", method: "POST", path: "/agent/run", body: "\xff\xfe{\x00\"\x00p\x00\"\x00:\x001\x00}\x00", status: 400, detail: "UTF-8"},
		// Wrong types, field by field.
		{name: "title a number", method: "POST", path: "/agent/run", body: `{"prompt":"x","title":7}`, status: 400, detail: "title"},
		{name: "skill a boolean", method: "POST", path: "/agent/run", body: `{"skill":true}`, status: 400, detail: "skill"},
		{name: "conversation_id an object", method: "POST", path: "/agent/run", body: `{"prompt":"x","conversation_id":{}}`, status: 400, detail: "conversation_id"},
		{name: "prompt an array", method: "POST", path: "/agent/runs", body: `{"prompt":["a","b"]}`, status: 400, detail: "prompt"},
		{name: "prompt repeated with a number last", method: "POST", path: "/agent/run", body: `{"prompt":"a","prompt":5}`, status: 400, detail: "prompt"},
		{name: "images a string", method: "POST", path: "/agent/run", body: `{"prompt":"x","images":"a.png"}`, status: 400, detail: "images"},
		{name: "an image a number", method: "POST", path: "/agent/run", body: `{"prompt":"x","images":[1]}`, status: 400, detail: "images"},
		{name: "config.name a number", method: "POST", path: "/agent/run", body: `{"prompt":"x","config":{"name":1}}`, status: 400, detail: "name"},
		{name: "config.model_id an array", method: "POST", path: "/agent/run", body: `{"prompt":"x","config":{"model_id":["gpt"]}}`, status: 400, detail: "model_id"},
		{name: "config.computer_use_enabled a string", method: "POST", path: "/agent/run", body: `{"prompt":"x","config":{"computer_use_enabled":"yes"}}`, status: 400, detail: "computer_use_enabled"},
		{name: "config.mcp_servers an array", method: "POST", path: "/agent/run", body: `{"prompt":"x","config":{"mcp_servers":[{"url":"https://a.example"}]}}`, status: 400, detail: "mcp_servers"},
		{name: "an MCP server's args a string", method: "POST", path: "/agent/run", body: `{"prompt":"x","config":{"mcp_servers":{"a":{"command":"npx","args":"-y"}}}}`, status: 400, detail: "args"},
		{name: "an MCP server's env values numbers", method: "POST", path: "/agent/run", body: `{"prompt":"x","config":{"mcp_servers":{"a":{"command":"npx","env":{"PORT":8080}}}}}`, status: 400, detail: "env"},
		// Values the schema or the service refuses.
		{name: "an MCP server of no kind", method: "POST", path: "/agent/run", body: `{"prompt":"x","config":{"mcp_servers":{"a":{}}}}`, status: 400, detail: "mcp_servers"},
		{name: "an MCP warp_id not a uuid", method: "POST", path: "/agent/run", body: `{"prompt":"x","config":{"mcp_servers":{"a":{"warp_id":"not-a-uuid"}}}}`, status: 400, detail: "warp_id"},
		{name: "six attachments", method: "POST", path: "/agent/run", body: `{"prompt":"x","attachments":[` + strings.Repeat(attachment+",", 5) + attachment + `]}`, status: 400, detail: "attachments"},
		{name: "attachments and images over five together", method: "POST", path: "/agent/run", body: `{"prompt":"x","attachments":[` + strings.Repeat(attachment+",", 2) + attachment + `],"images":[` + image + "," + image + "," + image + `]}`, status: 400, detail: "attachments"},
		{name: "an attachment without a file name", method: "POST", path: "/agent/run", body: `{"prompt":"x","attachments":[{"data":"aGk=","mime_type":"text/plain"}]}`, status: 400, detail: "file_name"},
		{name: "an attachment whose data is not base64", method: "POST", path: "/agent/run", body: `{"prompt":"x","attachments":[{"file_name":"a.txt","data":"@@","mime_type":"text/plain"}]}`, status: 400, detail: "data"},
		{name: "an unknown harness", method: "POST", path: "/agent/run", body: `{"prompt":"x","config":{"harness":{"type":"cursor"}}}`, status: 400, detail: "harness.type"},
		{name: "an idle timeout of 0", method: "POST", path: "/agent/run", body: `{"prompt":"x","config":{"idle_timeout_minutes":0}}`, status: 400, detail: "idle_timeout_minutes"},
		{name: "an idle timeout over 60", method: "POST", path: "/agent/run", body: `{"prompt":"x","config":{"idle_timeout_minutes":61}}`, status: 400, detail: "idle_timeout_minutes"},
		{name: "a harness secret a number", method: "POST", path: "/agent/run", body: `{"prompt":"x","config":{"harness_auth_secrets":{"claude_auth_secret_name":5}}}`, status: 400, detail: "claude_auth_secret_name"},
		{name: "interactive a string", method: "POST", path: "/agent/run", body: `{"prompt":"x","interactive":"yes"}`, status: 400, detail: "interactive"},
		{name: "an agent identity on a personal run", method: "POST", path: "/agent/run", body: `{"prompt":"x","team":false,"agent_identity_uid":"ident-1"}`, status: 400, detail: "agent_identity_uid"},
		{name: "an unknown parent run", method: "POST", path: "/agent/run", body: `{"prompt":"x","parent_run_id":"no-such-run"}`, status: 400, detail: "parent_run_id"},
		{name: "an unknown image type", method: "POST", path: "/agent/run", body: `{"prompt":"x","images":[{"data":"aGk=","mime_type":"image/bmp"}]}`, status: 400, detail: "mime_type"},
		{name: "an image without data", method: "POST", path: "/agent/run", body: `{"prompt":"x","images":[{"mime_type":"image/png"}]}`, status: 400, detail: "data"},
		{name: "six images", method: "POST", path: "/agent/run", body: `{"prompt":"x","images":[` + strings.Repeat(image+",", 5) + image + `]}`, status: 400, detail: "images"},
		{name: "a bad config.skill_spec", method: "POST", path: "/agent/run", body: `{"config":{"skill_spec":"no-colon"}}`, status: 400, detail: "skill_spec"},
		{name: "only unknown fields", method: "POST", path: "/agent/run", body: `{"instructions":"x"}`, status: 400, detail: "prompt"},
		// Size and media type.
		{name: "a body over the limit, streamed", method: "POST", path: "/agent/run", body: `{"prompt":"` + strings.Repeat("a", 2<<20) + `"}`, chunked: true, status: 413, detail: "over the limit"},
		{name: "a prompt over the body limit", method: "POST", path: "/agent/runs", body: `{"prompt":"` + strings.Repeat("a", 2<<20) + `"}`, status: 413, detail: "limit"},
		{name: "no Content-Type", method: "POST", path: "/agent/run", body: `{"prompt":"x"}`, headers: []string{"Content-Type", ""}, status: 415, detail: "application/json"},
		{name: "a malformed Content-Type", method: "POST", path: "/agent/run", body: `{"prompt":"x"}`, headers: []string{"Content-Type", "application/json; charset"}, status: 415, detail: "application/json"},
		{name: "form encoded", method: "POST", path: "/agent/runs", body: `prompt=x`, headers: []string{"Content-Type", "application/x-www-form-urlencoded"}, status: 415, detail: "application/json"},
		// Run ids with path tricks.
		{name: "an encoded slash alone", method: "GET", path: "/agent/runs/%2F", status: 400, detail: "runId"},
		{name: "dot dot", method: "GET", path: "/agent/runs/..", status: 400, detail: "runId"},
		{name: "encoded dot dot", method: "GET", path: "/agent/runs/%2E%2E", status: 400, detail: "runId"},
		{name: "a NUL in the id", method: "GET", path: "/agent/runs/abc%00def", status: 400, detail: "runId"},
		{name: "a space in the id", method: "GET", path: "/agent/runs/abc%20def", status: 400, detail: "runId"},
		{name: "a non-ASCII id", method: "GET", path: "/agent/runs/%C3%BCber", status: 400, detail: "runId"},
		{name: "a ten thousand character id", method: "GET", path: "/agent/runs/" + longID, status: 400, detail: "runId"},
		{name: "cancel a ten thousand character id", method: "POST", path: "/agent/runs/" + longID + "/cancel", status: 400, detail: "runId"},
		{name: "cancel an encoded traversal", method: "POST", path: "/agent/runs/..%2F..%2Frun/cancel", status: 400, detail: "runId"},
		{name: "a traversal out of the API", method: "GET", path: "/agent/runs/../../openapi.yaml", status: 404, detail: "no such path"},
		{name: "an extra segment after cancel", method: "POST", path: "/agent/runs/abc/cancel/now", status: 404, detail: "no such path"},
		{name: "the prefix twice", method: "GET", path: "/api/v1/api/v1/agent/runs", status: 404, detail: "no such path"},
		{name: "upper case path", method: "GET", path: "/AGENT/RUNS", status: 404, detail: "no such path"},
		// Queries: out of range, wrong form, repeated and conflicting.
		{name: "limit a fraction", method: "GET", path: "/agent/runs?limit=1.5", status: 400, detail: "limit"},
		{name: "limit in hex", method: "GET", path: "/agent/runs?limit=0x10", status: 400, detail: "limit"},
		{name: "limit past int64", method: "GET", path: "/agent/runs?limit=99999999999999999999", status: 400, detail: "limit"},
		{name: "state in lower case", method: "GET", path: "/agent/runs?state=queued", status: 400, detail: "state"},
		{name: "state empty", method: "GET", path: "/agent/runs?state=", status: 400, detail: "state"},
		{name: "one unknown state among good ones", method: "GET", path: "/agent/runs?state=QUEUED&state=FINISHED", status: 400, detail: "state"},
		{name: "sort_order in upper case", method: "GET", path: "/agent/runs?sort_order=ASC", status: 400, detail: "sort_order"},
		{name: "sort_by conflicting", method: "GET", path: "/agent/runs?sort_by=title&sort_by=created_at", status: 400, detail: "sort_by"},
		{name: "source in lower case", method: "GET", path: "/agent/runs?source=api", status: 400, detail: "source"},
		{name: "q conflicting", method: "GET", path: "/agent/runs?q=flaky&q=login", status: 400, detail: "q"},
		{name: "creator conflicting", method: "GET", path: "/agent/runs?creator=user-alice&creator=user-bob", status: 400, detail: "creator"},
		{name: "a date without a time", method: "GET", path: "/agent/runs?updated_after=2026-03-01", status: 400, detail: "updated_after"},
		{name: "the thirtieth of February", method: "GET", path: "/agent/runs?created_after=2026-02-30T00:00:00Z", status: 400, detail: "created_after"},
		{name: "hour 25", method: "GET", path: "/agent/runs?created_before=2026-03-01T25:00:00Z", status: 400, detail: "created_before"},
		{name: "a zone offset out of range", method: "GET", path: "/agent/runs?created_after=2026-03-01T12:00:00%2B25:00", status: 400, detail: "created_after"},
		{name: "a Unix timestamp", method: "GET", path: "/agent/runs?created_before=1772366400", status: 400, detail: "created_before"},
		{name: "a five-digit year", method: "GET", path: "/agent/runs?created_after=10000-01-01T00:00:00Z", status: 400, detail: "created_after"},
		{name: "a cursor over 512 bytes", method: "GET", path: "/agent/runs?cursor=" + strings.Repeat("A", 600) + ".AAAA", status: 400, detail: "cursor"},
		{name: "a cursor with no signature", method: "GET", path: "/agent/runs?cursor=eyJnIjoxfQ", status: 400, detail: "cursor"},
		{name: "a cursor that is not base64", method: "GET", path: "/agent/runs?cursor=%21%21.%21%21", status: 400, detail: "cursor"},
		{name: "a cursor for another filter", method: "GET", path: "/agent/runs?limit=1&q=flaky&cursor=" + url.QueryEscape(cursor), status: 400, detail: "cursor"},
		{name: "two different cursors", method: "GET", path: "/agent/runs?limit=1&cursor=" + url.QueryEscape(cursor) + "&cursor=x.y", status: 400, detail: "cursor"},
		// Authorization, headers.
		{name: "Bearer without a token", method: "GET", path: "/agent/runs", headers: []string{"Authorization", "Bearer"}, status: 401, detail: "Bearer"},
		{name: "another scheme", method: "POST", path: "/agent/run", body: `{"prompt":"x"}`, headers: []string{"Authorization", "Token wk-mock-alice"}, status: 401, detail: "Bearer"},
		{name: "a bad fault header on cancel", method: "POST", path: "/agent/runs/abc/cancel", headers: []string{mockserver.FaultHeader, "drop=maybe"}, status: 400, detail: mockserver.FaultHeader},
		{name: "a bad fate header", method: "POST", path: "/agent/run", body: `{"prompt":"x"}`, headers: []string{mockserver.FateHeader, "step=-1s"}, status: 400, detail: mockserver.FateHeader},
		// Methods.
		{name: "PUT on the runs", method: "PUT", path: "/agent/runs", body: `{"prompt":"x"}`, status: 405, allow: "GET, HEAD, POST, OPTIONS"},
		{name: "PATCH on create", method: "PATCH", path: "/agent/run", body: `{"prompt":"x"}`, status: 405, allow: "POST, OPTIONS"},
		{name: "POST on a run", method: "POST", path: "/agent/runs/abc", body: `{"prompt":"x"}`, status: 405, allow: "GET, HEAD, OPTIONS"},
		{name: "GET on cancel", method: "GET", path: "/agent/runs/abc/cancel", status: 405, allow: "POST, OPTIONS"},
		{name: "DELETE on cancel", method: "DELETE", path: "/agent/runs/abc/cancel", status: 405, allow: "POST, OPTIONS"},
		{name: "HEAD on create", method: "HEAD", path: "/agent/run", status: 405, allow: "POST, OPTIONS"},
		{name: "a made-up method", method: "BREW", path: "/agent/runs", status: 405, allow: "GET, HEAD, POST, OPTIONS"},
		{name: "POST on the document", method: "POST", path: "/openapi.yaml", body: `{}`, status: 405, allow: "GET, HEAD, OPTIONS"},
		{name: "TRACE on the control API", method: "TRACE", path: "/__mock/info", status: 405, allow: "GET, HEAD, OPTIONS"},
		// The control API.
		{name: "advance by words", method: "POST", path: "/__mock/clock/advance", body: `{"by":"5 minutes"}`, status: 400, detail: "by"},
		{name: "advance with a number", method: "POST", path: "/__mock/clock/advance", body: `{"by":300}`, status: 400, detail: "by"},
		{name: "advance with no body", method: "POST", path: "/__mock/clock/advance", status: 400, detail: "body"},
		{name: "a clock jump to a non-date", method: "PUT", path: "/__mock/clock", body: `{"now":"tomorrow"}`, status: 400, detail: "now"},
		{name: "a forced state with an unknown error code", method: "POST", path: "/__mock/runs/abc/state", body: `{"state":"FAILED","error_code":"oops"}`, status: 400, detail: "error_code"},
		{name: "a fault rule with probability 2", method: "POST", path: "/__mock/faults", body: `{"path":"/agent/runs","status":500,"probability":2}`, status: 400, detail: "probability"},
		{name: "a fault rule that is an array", method: "POST", path: "/__mock/faults", body: `[{"path":"/agent/runs"}]`, status: 400, detail: "body"},
		{name: "delete an unknown fault rule", method: "DELETE", path: "/__mock/faults/999", status: 404, detail: "999"},
	}
}

// Every bad request gets its 4xx and a problem naming the fault; none gets
// a 5xx or a dropped connection, and the server answers normally afterwards.
func TestBadInputIsAnsweredClearly(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	before := len(c.list("limit=500").Runs)
	first := c.list("limit=1")
	require.True(t, first.PageInfo.HasNextPage)
	cases := badRequests(first.PageInfo.NextCursor)
	names := map[string]bool{}
	for _, tc := range cases {
		require.False(t, names[tc.name], "case %q twice", tc.name)
		names[tc.name] = true
	}
	t.Logf("%d bad requests", len(cases))
	require.GreaterOrEqual(t, len(cases), 40)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r response
			if tc.chunked {
				r = sendChunked(t, c, tc)
			} else {
				r = c.on(t).do(tc.method, tc.path, tc.body, tc.headers...)
			}
			require.Equal(t, tc.status, r.status, "%s", truncated(r.body))
			if tc.method == http.MethodHead {
				assert.Empty(t, r.body)
				assert.Equal(t, "application/problem+json", r.header.Get("Content-Type"))
			} else {
				p := r.problem(t)
				assert.True(t, strings.HasPrefix(p.Type, mockserver.ProblemTypeBase), p.Type)
				assert.NotEmpty(t, p.Detail)
				assert.Contains(t, strings.ToLower(p.Detail), strings.ToLower(tc.detail))
				assert.Less(t, len(p.Detail), 4096, "a problem quotes what was sent only in part")
			}
			if tc.status == http.StatusMethodNotAllowed {
				assert.Equal(t, tc.allow, r.header.Get("Allow"))
			}
		})
	}
	// Still serving, and none of it left a run behind.
	assert.Len(t, c.list("limit=500").Runs, before)
	id := c.create(map[string]any{"prompt": "still here"}).RunID
	assert.Equal(t, mockserver.Queued, c.get(id).State)
}

// HEAD and OPTIONS work on every endpoint of the API.
func TestHeadAndOptionsEverywhere(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	id := c.create(map[string]any{"prompt": "x"}).RunID
	for _, tc := range []struct {
		path, allow string
	}{
		{"/agent/run", "POST, OPTIONS"},
		{"/agent/runs/" + id, "GET, HEAD, OPTIONS"},
		{"/agent/runs/" + id + "/cancel", "POST, OPTIONS"},
		{"/api/v1/agent/runs", "GET, HEAD, POST, OPTIONS"},
		{"/openapi.yaml", "GET, HEAD, OPTIONS"},
		{"/__mock/clock", "GET, HEAD, PUT, OPTIONS"},
	} {
		r := c.do("OPTIONS", tc.path, nil)
		assert.Equal(t, http.StatusNoContent, r.status, tc.path)
		assert.Equal(t, tc.allow, r.header.Get("Allow"), tc.path)
		assert.Empty(t, r.body)
	}
	get := c.do("GET", "/agent/runs/"+id, nil)
	head := c.do("HEAD", "/agent/runs/"+id, nil)
	assert.Equal(t, http.StatusOK, head.status)
	assert.Empty(t, head.body)
	assert.Equal(t, get.header.Get("Content-Type"), head.header.Get("Content-Type"))
	missing := c.do("HEAD", "/agent/runs/no-such-run", nil)
	assert.Equal(t, http.StatusNotFound, missing.status)
	assert.Empty(t, missing.body)
	assert.Equal(t, http.StatusUnauthorized, c.as("").do("HEAD", "/agent/runs", nil).status)
}

// sendChunked sends a body of unknown length, so only reading it can find
// that it is too large.
func sendChunked(t *testing.T, c *client, tc badRequest) response {
	t.Helper()
	body := io.MultiReader(strings.NewReader(tc.body.(string)), bytes.NewReader(nil))
	req, err := http.NewRequest(tc.method, c.base+tc.path, body)
	require.NoError(t, err)
	req.ContentLength = -1
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "the server answers instead of dropping the connection")
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{status: resp.StatusCode, header: resp.Header, body: raw}
}

func truncated(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}
