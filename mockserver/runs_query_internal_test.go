package mockserver

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListQueryConflicts: a parameter given twice, or under both its
// names, with different values is refused naming the later name and the
// value given before; the same value twice is harmless; of two conflicts,
// the one named is always the first in listParamNames' order, whatever
// order the map of the query gives the names in.
func TestListQueryConflicts(t *testing.T) {
	signer := cursorSigner{key: []byte("0123456789abcdef"), sessionName: ""}
	for _, tc := range []struct{ query, wantErr string }{
		{"limit=5&limit=6", `query parameter limit: conflicts with limit="5" given before`},
		{"name=a&config_name=b", `query parameter config_name: conflicts with name="a" given before`},
		{"skill=x&skill_spec=y", `query parameter skill: conflicts with skill_spec="y" given before`},
		{"sort_order=asc&model_id=m1&model_id=m2&name=a&config_name=b", `query parameter config_name: conflicts with name="a" given before`},
		{"name=a&config_name=a&limit=3&limit=3", ""},
	} {
		v, err := url.ParseQuery(tc.query)
		require.NoError(t, err)
		for range 20 { // map order varies from one range to the next
			q, _, err := parseListQuery(v, signer)
			if tc.wantErr == "" {
				require.NoError(t, err, tc.query)
				assert.Equal(t, "a", q.Name, tc.query)
				assert.Equal(t, 3, q.Limit, tc.query)
				continue
			}
			require.Error(t, err, tc.query)
			assert.Contains(t, err.Error(), tc.wantErr, tc.query)
		}
	}
}

// TestFingerprintIsFNV1a: the hash a cursor carries is FNV-1a of the
// query's canonical bytes, as it was when hash/fnv made it, so cursors
// saved in a state file by an earlier build stay good.
func TestFingerprintIsFNV1a(t *testing.T) {
	v, err := url.ParseQuery("name=flaky-tests&state=FAILED,ERROR&sort_by=title&metadata[ticket]=T-1&q=login")
	require.NoError(t, err)
	_, hash, err := parseListQuery(v, cursorSigner{key: []byte("k")})
	require.NoError(t, err)
	// The value hash/fnv's New64a gave for this query.
	assert.Equal(t, uint64(0xfae7cb7394c4b14b), hash)
}

// BenchmarkParseListQuery is the reading of a page's query: the default
// page's and a filtered one's.
func BenchmarkParseListQuery(b *testing.B) {
	signer := cursorSigner{key: []byte("0123456789abcdef")}
	for _, query := range []string{"limit=1", "limit=100&state=FAILED&name=flaky-tests&sort_by=title"} {
		v, err := url.ParseQuery(query)
		require.NoError(b, err)
		b.Run(query, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := parseListQuery(v, signer); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
