package buildfiles

import (
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

// docs/conversations.md's example is replayed against the bundled mock: each
// curl line must answer as its comment says (a 302 without -L, the
// conversation or the transcript with it).
func TestTheConversationsPageExampleWorks(t *testing.T) {
	page := read(t, "docs/conversations.md")
	block := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(page)
	require.NotNil(t, block, "the page has no sh block")
	mock, err := mockserver.New(mockserver.Options{})
	require.NoError(t, err)
	srv := httptest.NewServer(mock)
	t.Cleanup(srv.Close)
	vars := map[string]string{}
	n := 0
	for _, line := range strings.Split(block[1], "\n") {
		line, comment, _ := strings.Cut(line, "  #")
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "curl "):
			n++
			follow := strings.Contains(line, " -L ")
			req := parseCurl(t, expand(strings.Replace(line, " -L ", " ", 1), vars))
			req.URL.Host = strings.TrimPrefix(srv.URL, "http://")
			req.Host = req.URL.Host // the link the mock hands out names the host asked
			hc := &http.Client{}
			if !follow {
				hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			}
			resp, err := hc.Do(req)
			require.NoError(t, err, line)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(comment, "302") {
				assert.Equal(t, http.StatusFound, resp.StatusCode, "%s: %s", line, body)
				assert.Contains(t, resp.Header.Get("Location"), "/downloads/transcripts/", line)
				continue
			}
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", line, body)
			for _, key := range regexp.MustCompile(`"([a-z_]+)":`).FindAllStringSubmatch(comment, -1) {
				assert.Contains(t, string(body), `"`+key[1]+`"`, "%s: the comment shows %s", line, key[1])
			}
		default:
			for _, assign := range strings.Split(line, "; ") {
				name, value, ok := strings.Cut(assign, "=")
				require.True(t, ok, "not an assignment: %q", assign)
				vars[name] = strings.Trim(value, "'")
			}
		}
	}
	assert.Equal(t, 3, n)
}
