package proxy

import (
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// benchRun is a fixture run alice's team sees (the bench script's).
const benchRun = "f29d0da9-953f-48f1-a09f-76b5a170b338"

// benchExchange asks the mock for path and keeps the exchange as the proxy
// would have captured it.
func benchExchange(b *testing.B, upstream, path string) *pending {
	b.Helper()
	req, err := http.NewRequest(http.MethodGet, upstream+path, nil)
	require.NoError(b, err)
	req.Header.Set("Authorization", "Bearer wk-mock-alice")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(b, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(b, err)
	require.NoError(b, resp.Body.Close())
	u, _ := url.Parse(path)
	x := &pending{method: http.MethodGet, path: u.Path, apiPath: u.Path, rawQuery: u.RawQuery, query: u.Query(),
		header: req.Header, caller: "c1", status: resp.StatusCode, respHeader: resp.Header,
		respBody: &capture{limit: 4 << 20}, sent: time.Now(), received: time.Now()}
	x.respBody.write(body)
	return x
}

func benchmarkCheck(b *testing.B, path string) {
	upstream := mockUpstream(b)
	p, err := New(Options{Upstream: upstream, Workers: 1})
	require.NoError(b, err)
	defer p.Close()
	x := benchExchange(b, upstream, path)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		x.sent, x.received = time.Now(), time.Now()
		p.check.check(newWork(x))
	}
}

// What checking one exchange costs the worker: a run fetched, a page of 20.
func BenchmarkCheckRun(b *testing.B)      { benchmarkCheck(b, "/agent/runs/"+benchRun) }
func BenchmarkCheckPageOf20(b *testing.B) { benchmarkCheck(b, "/agent/runs?limit=20") }
