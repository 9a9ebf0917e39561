package proxy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/proxy"
)

// An upstream given as host:port, without its scheme, is refused with
// words that say what is wanted, not url.Parse's own.
func TestAnUpstreamWithoutItsSchemeIsRefusedSayingWhatIsWanted(t *testing.T) {
	for _, raw := range []string{"127.0.0.1:8090", "localhost:8090/api/v1", "staging.example.com/api/v1"} {
		_, err := proxy.ParseUpstream(raw)
		require.Error(t, err, raw)
		assert.Contains(t, err.Error(), "give an absolute http:// or https:// URL", raw)
	}
	u, err := proxy.ParseUpstream("http://127.0.0.1:8090/api/v1/")
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:8090/api/v1", u.String())
}
