package mockserver_test

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// notServedYet are the operations of the published document the mock does
// not route yet. The list must only shrink: an operation that starts being
// served fails the test until it is taken off.
var notServedYet = map[string]bool{}

var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// Every operation of the service's published document (its facts, as the
// drift test keeps them) is routed by the mock: an authenticated request
// reaches a handler, which may refuse it, but never "no such path" or 405.
func TestEveryPublishedOperationIsRouted(t *testing.T) {
	raw, err := os.ReadFile("../openapi/testdata/published-facts.json")
	require.NoError(t, err)
	var facts struct {
		Operations map[string]json.RawMessage `json:"operations"`
	}
	require.NoError(t, json.Unmarshal(raw, &facts))
	require.Len(t, facts.Operations, 30, "the published document has 30 operations")
	for op := range notServedYet {
		_, ok := facts.Operations[op]
		assert.True(t, ok, "the known list names %s, which the document does not have", op)
	}
	c := newMock(t, mockserver.Options{})
	var ops []string
	for op := range facts.Operations {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	served := 0
	for _, op := range ops {
		method, path, _ := strings.Cut(op, " ")
		req, err := http.NewRequest(method, c.base+pathParam.ReplaceAllString(path, "no-such-id"), strings.NewReader(`{}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer wk-mock-alice")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var p mockserver.Problem
		_ = json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		routed := resp.StatusCode != http.StatusMethodNotAllowed && !strings.HasPrefix(p.Detail, "no such path")
		if routed {
			served++
		}
		if notServedYet[op] {
			assert.False(t, routed, "%s is served now: take it off notServedYet", op)
		} else {
			assert.True(t, routed, "%s is not routed: %d %s", op, resp.StatusCode, p.Detail)
		}
	}
	t.Logf("%d of %d published operations served", served, len(ops))
}
