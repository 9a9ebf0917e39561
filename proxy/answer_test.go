package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/internal/browsertest"
	"github.com/agentruns/agentruns/proxy"
)

// hostileProxy is a proxy that checked 40 answers breaking the document,
// each with 100 new member names of controls, and 40 requests off the
// document with a query of controls: over 5 MiB of lists as JSON.
func hostileProxy(t *testing.T) (*proxy.Proxy, string) {
	hostile := func(i, n int) string { return fmt.Sprintf("%04d", i) + strings.Repeat("\u0001\u009b", n) }
	answers := 0
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answers++
		w.Header().Set("Content-Type", "application/json")
		// A run that breaks the document (a state outside its enum, its
		// required members missing) with 100 new hostile member names.
		run := map[string]any{"run_id": "run-1", "state": hostile(answers, 300)}
		for k := range 100 {
			run[hostile(answers*100+k, 200)] = hostile(k, 300)
		}
		_ = json.NewEncoder(w).Encode(run)
	}))
	t.Cleanup(upstream.Close)
	p, err := proxy.New(proxy.Options{Upstream: upstream.URL})
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Close() })
	for i := range 40 {
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/agent/runs/run-1", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer wk-1")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
		// and a request off the document, its query hostile
		resp, err = http.Get(srv.URL + "/agent/runs?limit=" + strings.Repeat("%01", 400) + fmt.Sprint(i))
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
	}
	require.NoError(t, p.Drain(context.Background()))
	return p, srv.URL
}

// GET /__mock/proxy, which the dashboard polls every few seconds, holds
// the latest violations, the requests off the document and the drift's
// facts: with hostile long names and values, each byte a control that
// JSON writes as a six-byte escape, those lists come to several MiB. The
// answer stays within SummaryAnswerBytes: the newest violations and the
// first facts, and left_out counting and saying what is not listed.
func TestTheSummaryAnswerStaysSmallWithHostileNames(t *testing.T) {
	p, base := hostileProxy(t)
	whole := p.Summary()

	resp, body := controlGet(t, base+"/__mock/proxy", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var wholeJSON bytes.Buffer
	require.NoError(t, json.NewEncoder(&wholeJSON).Encode(whole))
	t.Logf("whole: %d violations kept, %d requests off the document, %d drift facts, %d bytes as JSON; the answer: %d bytes",
		len(whole.Latest), len(whole.LatestOffDocument), len(whole.Drift.Facts), wholeJSON.Len(), len(body))
	require.Greater(t, wholeJSON.Len(), 3*proxy.SummaryAnswerBytes, "the flood fills the lists past the bound")
	assert.LessOrEqual(t, len(body), proxy.SummaryAnswerBytes)

	var s proxy.Summary
	require.NoError(t, json.Unmarshal([]byte(body), &s))
	require.NotNil(t, s.LeftOut, "what the lists leave out is said")
	assert.Equal(t, len(whole.Latest), len(s.Latest)+s.LeftOut.Violations)
	assert.Equal(t, len(whole.LatestOffDocument), len(s.LatestOffDocument)+s.LeftOut.OffDocument)
	assert.Equal(t, len(whole.Drift.Facts), len(s.Drift.Facts)+s.LeftOut.DriftFacts)
	assert.Positive(t, s.LeftOut.Violations+s.LeftOut.DriftFacts)
	assert.NotEmpty(t, s.Latest, "some violations are listed")
	assert.NotEmpty(t, s.Drift.Facts, "some facts are listed")
	assert.Equal(t, whole.Latest[len(whole.Latest)-1], s.Latest[len(s.Latest)-1], "the newest violation is listed")
	assert.Equal(t, whole.Drift.Facts[0].Location, s.Drift.Facts[0].Location, "the drift's first fact is listed")
	assert.Contains(t, s.LeftOut.Says, fmt.Sprintf("the newest %d of the %d violations kept", len(s.Latest), len(whole.Latest)))
	assert.Equal(t, whole.Violations, s.Violations, "the counts stay whole")
	assert.Equal(t, whole.Drift.Distinct, s.Drift.Distinct)
}

// With little kept, the answer lists everything and says nothing left out.
func TestASmallSummaryIsAnsweredWhole(t *testing.T) {
	p, err := proxy.New(proxy.Options{Upstream: ringedUpstream(t)})
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Close() })
	readAll(t, srv.URL+"/agent/runs?limit=3")
	require.NoError(t, p.Drain(context.Background()))
	_, body := controlGet(t, srv.URL+"/__mock/proxy", "")
	var s map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &s))
	assert.NotContains(t, s, "left_out")
	assert.Len(t, s["drift"].(map[string]any)["facts"], 1)
}

// The dashboard lists what the bounded answer lists, and says how many
// facts it does not, and where they are.
func TestDashboardSaysWhatTheBoundedAnswerLeftOut(t *testing.T) {
	_, base := hostileProxy(t)
	_, body := controlGet(t, base+"/__mock/proxy", "")
	var s proxy.Summary
	require.NoError(t, json.Unmarshal([]byte(body), &s))
	require.NotNil(t, s.LeftOut)
	require.Positive(t, s.LeftOut.DriftFacts)

	ctx := browsertest.Tab(t)
	browsertest.Do(t, ctx, chromedp.Navigate(base+"/__mock/proxy/ui/"))
	browsertest.WaitFor(t, ctx, `document.querySelectorAll("#drift tbody tr.drift-row").length === `+strconv.Itoa(len(s.Drift.Facts)))
	assert.Contains(t, browsertest.Text(t, ctx, "#drift-count"),
		fmt.Sprintf("%d not listed here: GET /__mock/proxy/drift has them", s.LeftOut.DriftFacts))
	if s.LeftOut.Violations > 0 {
		assert.Contains(t, browsertest.Text(t, ctx, "#violations-count"), "the proxy's answer is bounded")
	}
}
