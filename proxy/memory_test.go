package proxy_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/drift"
	"github.com/agentruns/agentruns/proxy"
)

// allocated is what the process allocated so far, in MiB.
func allocated() float64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.TotalAlloc) / (1 << 20)
}

// liveHeap is the heap in use after two collections (the second empties
// what sync.Pools kept through the first: net/http's pooled readers), in
// MiB.
func liveHeap() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// largestControlAnswer reads every control endpoint that answers from
// what the proxy keeps and returns the largest answer's size, and which.
func largestControlAnswer(t *testing.T, base string) (int, string) {
	t.Helper()
	largest, which := 0, ""
	for _, path := range []string{"", "/drift", "/drift/overlay.yaml", "/profile", "/runs?limit=500", "/requests", "/report.html", "/report.xml"} {
		req, err := http.NewRequest(http.MethodGet, base+"/__mock/proxy"+path, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		n, err := io.Copy(io.Discard, resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		if int(n) > largest {
			largest, which = int(n), path
		}
	}
	return largest, which
}

// controlAnswerBound is the most any control answer may be: the drift's
// budget written as JSON, beside the findings' rings, each entry cut.
const controlAnswerBound = 16 << 20

// Memory is held by bytes, not by count: distinct long paths (with and
// without credentials) and answers with new long member names leave the
// drift within its byte budget, every name cut, and every control answer
// under a fixed bound. The heap before and after each flood is logged.
func TestFloodsOfLongNamesStayWithinTheBudget(t *testing.T) {
	longName := func(i, n int) string { return fmt.Sprintf("m%05d", i) + strings.Repeat("x", n) }
	// A long path of short words, no digit in them: each segment a
	// fixed word of a template, so each path is an operation of its own.
	longPath := func(i, n int) string {
		word := []byte("seg")
		for ; i > 0; i /= 26 {
			word = append(word, byte('a'+i%26))
		}
		return "/agent" + strings.Repeat("/"+string(word), n/(len(word)+1))
	}
	answers := 0
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/agent/runs" {
			// A page of runs with three new long members each time.
			answers++
			var b bytes.Buffer
			b.WriteString(`{"runs": [], "page_info": {"has_next_page": false}`)
			for k := range 3 {
				fmt.Fprintf(&b, `, %q: 1`, longName(answers*3+k, 256<<10))
			}
			b.WriteString("}")
			_, _ = w.Write(b.Bytes())
			return
		}
		_, _ = io.WriteString(w, `{"ok": true}`)
	}))
	t.Cleanup(upstream.Close)
	p, err := proxy.New(proxy.Options{Upstream: upstream.URL})
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Close() })
	get := func(path string, key bool) {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		if key {
			req.Header.Set("Authorization", "Bearer wk-1")
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
	}
	drain := func() { require.NoError(t, p.Drain(context.Background())) }

	before := liveHeap()
	for i := range 300 {
		get(longPath(i, 60<<10), i%2 == 0)
	}
	drain()
	afterPaths := liveHeap()
	t.Logf("300 distinct 60 KB paths: live heap %.1f MiB before, %.1f MiB after", before, afterPaths)

	for range 20 {
		get("/agent/runs", true)
	}
	drain()
	afterNames := liveHeap()
	t.Logf("20 answers of three new 256 KiB member names: live heap %.1f MiB before, %.1f MiB after", afterPaths, afterNames)

	r := p.Drift()
	assert.LessOrEqual(t, r.Bytes, drift.DefaultBytes)
	assert.NotEmpty(t, r.Facts)
	for _, f := range r.Facts {
		assert.LessOrEqual(t, len(f.Operation), 600)
		assert.LessOrEqual(t, len(f.Location), 600)
		assert.LessOrEqual(t, len(f.Name), 300)
		assert.NotEmpty(t, f.NotDeclared, "a cut name is not declared: %s", f.Location)
	}
	largest, which := largestControlAnswer(t, srv.URL)
	t.Logf("drift keeps %d facts in %d bytes, %d dropped; the largest control answer is %s, %d bytes", len(r.Facts), r.Bytes, r.Dropped, which, largest)
	assert.Less(t, largest, controlAnswerBound, which)
}

// A small gzip answer that decodes past the size the proxy checks (a
// bomb) is decoded no further than that, not walked by drift or the
// client tally, and counted as not checked.
func TestAGzipBombIsNotDecodedPastTheBudget(t *testing.T) {
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	_, _ = zw.Write([]byte("["))
	chunk := []byte(strings.Repeat(`{"run_id":"r","x":0},`, 1<<10))
	for range 1 << 10 { // about 20 MiB of JSON
		_, _ = zw.Write(chunk)
	}
	_, _ = zw.Write([]byte(`{"run_id":"r","x":0}]`))
	require.NoError(t, zw.Close())
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(bomb.Bytes())
	}))
	t.Cleanup(upstream.Close)
	p, err := proxy.New(proxy.Options{Upstream: upstream.URL})
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Close() })

	before, allocBefore := liveHeap(), allocated()
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/agent/runs", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer wk-1")
	req.Header.Set("Accept-Encoding", "gzip") // the caller takes it as it is
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	n, err := io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, int64(bomb.Len()), n, "the caller gets the answer as the upstream sent it")
	srv.Close()
	require.NoError(t, p.Drain(context.Background()))
	t.Logf("a %d KiB gzip answer decoding to about 20 MiB: live heap %.1f MiB before, %.1f MiB after; %.0f MiB allocated checking it",
		bomb.Len()>>10, before, liveHeap(), allocated()-allocBefore)

	s := p.Summary()
	assert.Equal(t, 1, s.Unchecked["an answer over the size the proxy checks, once decoded"], "%v", s.Unchecked)
	assert.Zero(t, s.Checked)
	assert.Empty(t, s.Drift.Facts, "no walk of it")
	for _, c := range s.Clients {
		assert.Zero(t, c.Checked, c.Version)
	}
}
