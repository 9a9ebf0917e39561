package mockserver_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/openapi"
	"github.com/stretchr/testify/require"
)

// clockStart is where virtual clocks of the tests begin.
var clockStart = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// client talks to a mock over real HTTP and checks every answer against the
// OpenAPI document, so no test can pass on a response that breaks the contract.
type client struct {
	t         testing.TB
	base      string
	key       string
	session   string
	validator *openapi.Validator
}

func newMock(t testing.TB, opts mockserver.Options) *client {
	t.Helper()
	return serve(t, newServer(t, opts))
}

// as is the same client with another API key.
func (c *client) as(key string) *client { cc := *c; cc.key = key; return &cc }

// in is the same client in an isolated session.
func (c *client) in(session string) *client { cc := *c; cc.session = session; return &cc }

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.body, v), "body: %s", r.body)
}

func (r response) problem(t testing.TB) mockserver.Problem {
	t.Helper()
	require.Equal(t, "application/problem+json", r.header.Get("Content-Type"), "body: %s", r.body)
	var p mockserver.Problem
	r.json(t, &p)
	require.Equal(t, r.status, p.Status)
	require.True(t, strings.HasPrefix(p.Error, p.Title), "error %q starts with title %q", p.Error, p.Title)
	return p
}

// do sends a request; body may be nil, a string (sent as is) or a value
// (sent as JSON). Extra headers come in pairs.
func (c *client) do(method, path string, body any, headers ...string) response {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(c.t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	require.NoError(c.t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	if c.session != "" {
		req.Header.Set(mockserver.SessionHeader, c.session)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	out := response{status: resp.StatusCode, header: resp.Header, body: raw}
	if (strings.HasPrefix(path, "/agent/") || path == "/agent" || strings.HasPrefix(path, "/agent?")) && method != http.MethodOptions && method != http.MethodHead && resp.StatusCode != http.StatusMethodNotAllowed {
		resp.Body = io.NopCloser(bytes.NewReader(raw))
		vreq, _ := http.NewRequest(method, c.base+path, nil)
		err := c.validator.ValidateResponse(vreq, resp)
		var ve *openapi.ValidationError
		// A path the document does not have (a deliberate 404) has no contract.
		// Nor does a method the path does not have (a 401 before the 405).
		if !errors.As(err, &ve) || !ve.Has("path") && !ve.Has("method") {
			require.NoError(c.t, err, "%s %s answered %d %s", method, path, resp.StatusCode, raw)
		}
	}
	return out
}

func (c *client) create(body any, headers ...string) mockserver.RunAgentResponse {
	c.t.Helper()
	r := c.do("POST", "/agent/run", body, headers...)
	require.Equal(c.t, http.StatusOK, r.status, "create: %s", r.body)
	var out mockserver.RunAgentResponse
	r.json(c.t, &out)
	return out
}

func (c *client) get(id string) mockserver.RunItem {
	c.t.Helper()
	r := c.do("GET", "/agent/runs/"+id, nil)
	require.Equal(c.t, http.StatusOK, r.status, "get: %s", r.body)
	var out mockserver.RunItem
	r.json(c.t, &out)
	return out
}

func (c *client) list(query string) mockserver.ListRunsResponse {
	c.t.Helper()
	r := c.do("GET", "/agent/runs?"+query, nil)
	require.Equal(c.t, http.StatusOK, r.status, "list %s: %s", query, r.body)
	var out mockserver.ListRunsResponse
	r.json(c.t, &out)
	return out
}

func (c *client) advance(d time.Duration) {
	c.t.Helper()
	r := c.do("POST", "/__mock/clock/advance", map[string]string{"by": d.String()})
	require.Equal(c.t, http.StatusOK, r.status, "advance: %s", r.body)
}

func ids(runs []mockserver.RunItem) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.RunID
	}
	return out
}
