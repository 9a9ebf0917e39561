package mockserver

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// queryAgreesWithParseQuery fails the test unless parseQuery, for a query
// it accepts, gives the values url.ParseQuery gives without an error, and
// refuses every query url.ParseQuery cannot read completely. It reports
// whether parseQuery accepted the query.
func queryAgreesWithParseQuery(t *testing.T, raw string) bool {
	t.Helper()
	got, aerr := parseQuery(raw)
	want, err := url.ParseQuery(raw)
	if aerr != nil {
		assert.Nil(t, got, "%q: values with a refusal", raw)
		return false
	}
	require.NoError(t, err, "%q: parseQuery accepted what url.ParseQuery cannot read completely", raw)
	if len(want) == 0 {
		assert.Empty(t, got, "%q", raw)
	} else {
		assert.Equal(t, want, got, "%q", raw)
	}
	return true
}

var querySeeds = []string{
	"", "limit=20", "limit=20&state=FAILED&state=CANCELLED&name=flaky%20tests", "a+b=c+d&e=%2B", "&&x=&y&=z&",
	"cursor=abc%3D%3D&sort_by=title", "q=%E2%9C%93", "run_ids=a&run_ids=b&run_ids=a",
	// refused
	"a=%zz", "%zz=1", "a=1;b=2", "a;b=1", "a=%3B;", strings.Repeat("a=1&", maxQueryParams),
}

func TestParseQueryIsParseQueryWithoutLosses(t *testing.T) {
	accepted := 0
	for _, raw := range querySeeds {
		if queryAgreesWithParseQuery(t, raw) {
			accepted++
		}
	}
	assert.Equal(t, 8, accepted, "the first eight seeds are queries the mock reads")

	var names []string
	for i := range maxQueryNames + 1 {
		names = append(names, "n"+strings.Repeat("x", i)+"=1")
	}
	_, aerr := parseQuery(strings.Join(names, "&"))
	require.NotNil(t, aerr)
	assert.Contains(t, aerr.detail, "the query has 101 names")
	_, aerr = parseQuery(strings.Join(names[:maxQueryNames], "&") + strings.Repeat("&n=2", 500))
	assert.Nil(t, aerr, "a name repeated counts once")
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range querySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) { queryAgreesWithParseQuery(t, raw) })
}
