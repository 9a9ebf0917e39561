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

// README's "The API, area by area" shows one curl command per area. Each is
// replayed against the bundled mock over loopback, so none of them can go
// stale: a renamed path, a fixture run that no longer exists or a key the
// mock no longer knows fails here.
func TestTheReadmesCurlExamplesWork(t *testing.T) {
	readme := read(t, "README.md")
	_, section, ok := strings.Cut(readme, "## The API, area by area")
	require.True(t, ok, "README has no section \"The API, area by area\"")
	block := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(section)
	require.NotNil(t, block, "the section has no sh block")

	mock, err := mockserver.New(mockserver.Options{})
	require.NoError(t, err)
	srv := httptest.NewServer(mock)
	t.Cleanup(srv.Close)

	vars := map[string]string{}
	n := 0
	for _, line := range strings.Split(block[1], "\n") {
		line, _, _ = strings.Cut(line, "  #") // the comment that says what it shows
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "curl "):
			n++
			req := parseCurl(t, expand(line, vars))
			req.URL.Host = strings.TrimPrefix(srv.URL, "http://")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err, line)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Less(t, resp.StatusCode, 300, "%s\nanswered %d: %s", line, resp.StatusCode, body)
		default: // NAME=value; NAME='value'; ...
			for _, assign := range strings.Split(line, "; ") {
				name, value, ok := strings.Cut(assign, "=")
				require.True(t, ok, "not an assignment: %q", assign)
				vars[name] = strings.Trim(value, "'")
			}
		}
	}
	assert.GreaterOrEqual(t, n, 8, "one curl example per area")
}

var shellVar = regexp.MustCompile(`\$([A-Z]+)`)

func expand(line string, vars map[string]string) string {
	return shellVar.ReplaceAllStringFunc(line, func(v string) string { return vars[v[1:]] })
}

// parseCurl reads the few curl options README and docs use: -s, -o, -X, -H and -d,
// with single- or double-quoted words.
func parseCurl(t *testing.T, line string) *http.Request {
	t.Helper()
	words := shellWords(t, line)
	method, body, url := "GET", "", ""
	header := http.Header{}
	for i := 1; i < len(words); i++ {
		switch w := words[i]; w {
		case "-s":
		case "-o": // where curl would save the body; the test reads it
			i++
		case "-X", "-H", "-d":
			require.Less(t, i+1, len(words), "%s needs a value: %s", w, line)
			i++
			switch w {
			case "-X":
				method = words[i]
			case "-H":
				name, value, _ := strings.Cut(words[i], ": ")
				header.Add(name, value)
			case "-d":
				body = words[i]
				if method == "GET" {
					method = "POST"
				}
			}
		default:
			require.Empty(t, url, "two URLs, or an option this test does not know, in: %s", line)
			url = w
		}
	}
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err, line)
	req.Header = header
	return req
}

func shellWords(t *testing.T, line string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case ' ':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		case '\'', '"':
			end := strings.IndexByte(line[i+1:], c)
			require.GreaterOrEqual(t, end, 0, "unclosed quote in: %s", line)
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
