package buildfiles

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver"
)

// docs/artifacts.md's example is replayed against the bundled mock: each
// curl must answer 2xx with the "key":"value" pairs its comment shows, and
// NAME=$(curl … | jq -r .path) takes that field of the answer, as jq would.
func TestTheArtifactsPageExampleWorks(t *testing.T) {
	page := read(t, "docs/artifacts.md")
	block := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(page)
	require.NotNil(t, block, "docs/artifacts.md has no sh block")

	mock, err := mockserver.New(mockserver.Options{})
	require.NoError(t, err)
	srv := httptest.NewServer(mock)
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")

	captured := regexp.MustCompile(`^([A-Z]+)=\$\((curl .*) \| jq -r \.([a-z_.]+)\)$`)
	shown := regexp.MustCompile(`"([a-z_]+)":"([^"…]*)"`)
	vars := map[string]string{}
	var last []byte
	curls := 0
	run := func(line string) *http.Response {
		curls++
		req := parseCurl(t, expand(line, vars))
		req.URL.Host = host
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err, line)
		last, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Less(t, resp.StatusCode, 300, "%s\nanswered %d: %s", line, resp.StatusCode, last)
		return resp
	}
	for _, line := range strings.Split(block[1], "\n") {
		line = strings.TrimSpace(line)
		switch m := captured.FindStringSubmatch(line); {
		case line == "":
		case strings.HasPrefix(line, "# "): // what the curl before answers
			for _, kv := range shown.FindAllStringSubmatch(line, -1) {
				assert.Contains(t, string(last), kv[0], "the answer before %q", line)
			}
		case m != nil:
			run(m[2])
			var doc map[string]any
			require.NoError(t, json.Unmarshal(last, &doc), line)
			v := any(doc)
			for _, key := range strings.Split(m[3], ".") {
				v = v.(map[string]any)[key]
			}
			vars[m[1]], _ = v.(string)
			require.NotEmpty(t, vars[m[1]], line)
		case strings.HasPrefix(line, "curl "):
			resp := run(line)
			if strings.Contains(line, "-o screenshot.png") {
				assert.Equal(t, "image/png", resp.Header.Get("Content-Type"), line)
			}
		default: // NAME=value; NAME='value'
			for _, assign := range strings.Split(line, "; ") {
				name, value, ok := strings.Cut(assign, "=")
				require.True(t, ok, "not an assignment: %q", assign)
				vars[name] = strings.Trim(value, "'")
			}
		}
	}
	assert.Equal(t, 4, curls, "every curl of the example ran")
}
