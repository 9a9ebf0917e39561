package buildfiles

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver"
)

// The curl examples of README and docs are replayed against the bundled
// mock over loopback, so none of them can go stale: a renamed path, a
// fixture run that no longer exists, a key the mock no longer knows or an
// answer that no longer looks as shown fails here.

// README's "The API, area by area" shows one curl command per area.
func TestTheReadmesCurlExamplesWork(t *testing.T) {
	readme := read(t, "README.md")
	_, section, ok := strings.Cut(readme, "## The API, area by area")
	require.True(t, ok, "README has no section \"The API, area by area\"")
	assert.GreaterOrEqual(t, replayShellBlock(t, "README's area list", section), 8, "one curl example per area")
	// Each sends a mock session: behind the balancer (docs/deploying.md)
	// a caller without one loses its download links.
	block := shBlock.FindStringSubmatch(section)
	for _, line := range strings.Split(block[1], "\n") {
		if strings.HasPrefix(line, "curl ") {
			assert.Contains(t, line, `-H "$SESSION"`, "a README curl line sends no X-Mock-Session")
		}
	}
}

func TestTheArtifactsPageExampleWorks(t *testing.T) {
	assert.Equal(t, 4, replayShellBlock(t, "docs/artifacts.md", read(t, "docs/artifacts.md")), "every curl of the example ran")
}

func TestTheConversationsPageExampleWorks(t *testing.T) {
	assert.Equal(t, 3, replayShellBlock(t, "docs/conversations.md", read(t, "docs/conversations.md")), "every curl of the example ran")
}

var (
	shBlock = regexp.MustCompile("(?s)```sh\n(.*?)```")
	// NAME=$(curl … | jq -r .path) takes that field of the answer, as jq would.
	captured = regexp.MustCompile(`^([A-Z]+)=\$\((curl .*) \| jq -r \.([a-z_.]+)\)$`)
	// What a comment shows of an answer: "key":"value" pairs (a value with
	// an ellipsis is abridged and only its key is checked) and a Location.
	shownPair     = regexp.MustCompile(`"([a-z_]+)":"([^"…]*)"`)
	shownKey      = regexp.MustCompile(`"([a-z_]+)":`)
	shownLocation = regexp.MustCompile(`Location: (\S+)`)
)

// replayShellBlock runs the first sh block of text against a fresh mock
// and returns how many curl commands it ran. Each must answer 200, or the
// 302 its comment announces; a comment after a command ("  # ...") or on
// the next line ("# ...") must agree with that answer.
func replayShellBlock(t *testing.T, where, text string) int {
	t.Helper()
	block := shBlock.FindStringSubmatch(text)
	require.NotNil(t, block, "%s has no sh block", where)
	mock, err := mockserver.New(mockserver.Options{})
	require.NoError(t, err)
	srv := httptest.NewServer(mock)
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")

	vars := map[string]string{}
	var last []byte // the answer the previous curl got
	curls := 0
	run := func(line, comment string) *http.Response {
		curls++
		follow := strings.Contains(line, " -L ")
		req := parseCurl(t, expand(strings.Replace(line, " -L ", " ", 1), vars))
		req.URL.Host = host
		req.Host = host // links the mock hands out name the host asked
		hc := &http.Client{}
		if !follow {
			hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		}
		resp, err := hc.Do(req)
		require.NoError(t, err, line)
		last, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(comment, "302") {
			require.Equal(t, http.StatusFound, resp.StatusCode, "%s: %s", line, last)
			m := shownLocation.FindStringSubmatch(comment)
			require.NotNil(t, m, "%s: a 302 comment names its Location", line)
			shown, err := url.Parse(strings.TrimSuffix(m[1], "…"))
			require.NoError(t, err, comment)
			assert.Contains(t, resp.Header.Get("Location"), shown.Path, line)
			return resp
		}
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", line, last)
		checkShown(t, line, comment, last)
		return resp
	}
	for _, line := range strings.Split(block[1], "\n") {
		line = strings.TrimSpace(line)
		if comment, ok := strings.CutPrefix(line, "# "); ok { // what the curl before answers
			checkShown(t, "the answer before "+line, comment, last)
			continue
		}
		line, comment, _ := strings.Cut(line, "  #")
		switch m := captured.FindStringSubmatch(line); {
		case line == "":
		case m != nil:
			run(m[2], comment)
			var doc map[string]any
			require.NoError(t, json.Unmarshal(last, &doc), line)
			v := any(doc)
			for _, key := range strings.Split(m[3], ".") {
				v = v.(map[string]any)[key]
			}
			vars[m[1]], _ = v.(string)
			require.NotEmpty(t, vars[m[1]], line)
		case strings.HasPrefix(line, "curl "):
			resp := run(line, comment)
			if strings.Contains(line, "-o screenshot.png") {
				assert.Equal(t, "image/png", resp.Header.Get("Content-Type"), line)
			}
		default: // NAME=value; NAME='value'; ...
			for _, assign := range strings.Split(line, "; ") {
				name, value, ok := strings.Cut(assign, "=")
				require.True(t, ok, "not an assignment: %q", assign)
				vars[name] = strings.Trim(value, "'")
			}
		}
	}
	return curls
}

// checkShown holds an answer to what a comment shows of it, compacted
// first when it is JSON, as comments show it on one line.
func checkShown(t *testing.T, line, comment string, answer []byte) {
	t.Helper()
	var compact bytes.Buffer
	if json.Compact(&compact, answer) == nil {
		answer = compact.Bytes()
	}
	for _, kv := range shownPair.FindAllString(comment, -1) {
		assert.Contains(t, string(answer), kv, "%s: the comment shows %s", line, kv)
	}
	for _, k := range shownKey.FindAllStringSubmatch(comment, -1) {
		assert.Contains(t, string(answer), `"`+k[1]+`"`, "%s: the comment shows %s", line, k[1])
	}
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
