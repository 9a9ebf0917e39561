package htmlreport_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/features"
	"github.com/agentruns/agentruns/htmlreport"
	"github.com/agentruns/agentruns/internal/browsertest"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/report"
	"github.com/agentruns/agentruns/runner"
	"github.com/agentruns/agentruns/suiteconfig"
)

func TestMain(m *testing.M) { browsertest.Main(m) }

// brokenServer is the mock without its control API (so the @mock-control
// scenarios are skipped), answering every 404 with a plain JSON body that
// carries markup: the suite fails those scenarios and quotes the body.
func brokenServer(t *testing.T) *httptest.Server {
	t.Helper()
	mock, err := mockserver.New(mockserver.Options{DisableControl: true, Step: 200 * time.Millisecond})
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		mock.ServeHTTP(rec, r)
		if rec.Code == http.StatusNotFound {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message": "` + strings.ReplaceAll(hostile, `"`, `\"`) + `"}`))
			return
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The report of a run with failures and skips, opened from disk in a real
// browser: the counts, a failed step's message, a skip's reason, the status
// filter, a link to one scenario, and markup from the server shown as text.
func TestReportInABrowser(t *testing.T) {
	srv := brokenServer(t)
	path := filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(path)
	require.NoError(t, err)
	res, err := runner.Run(context.Background(), suiteconfig.Config{
		BaseURL: srv.URL, APIKey: "wk-mock-alice", Tags: "~@slow",
		Format: "html", Output: f, NoColors: true,
		PollInterval: 20 * time.Millisecond, Spacing: 5 * time.Millisecond, Timeout: 20 * time.Second,
	})
	require.NoError(t, err)
	require.NoError(t, f.Close())
	passed, failed, skipped := res.Count()
	require.NotZero(t, passed)
	require.NotZero(t, failed)
	require.NotZero(t, skipped)

	ctx := browsertest.Tab(t)
	browsertest.Do(t, ctx, chromedp.Navigate("file://"+path), chromedp.WaitVisible(`#counts`))
	counts := [3]string{
		browsertest.Text(t, ctx, `[data-count=passed]`),
		browsertest.Text(t, ctx, `[data-count=failed]`),
		browsertest.Text(t, ctx, `[data-count=skipped]`),
	}
	assert.Equal(t, [3]string{itoa(passed), itoa(failed), itoa(skipped)}, counts)
	failedMessage := browsertest.Text(t, ctx, `#get-run--an-unknown-run-is-not-found .step-message`)
	assert.Contains(t, failedMessage, "problem document")
	assert.Contains(t, failedMessage, "<script>window.pwned = 1</script>", "the server's markup is shown as text")
	assert.False(t, browsertest.Eval[bool](t, ctx, `window.pwned !== undefined`), "markup from the server ran in the page")
	skipReason := browsertest.Text(t, ctx, `#state-progression--a-successful-run-passes-through-every-state-in-order .reason-skipped`)
	assert.Contains(t, skipReason, "needs the mock control API (@mock-control)")
	// Durations are the scenarios' own, from their start to their end, as
	// JUnit times them: scenarios that poll a server take milliseconds.
	durations := browsertest.Eval[[]string](t, ctx, `Array.from(document.querySelectorAll('.scenario .duration')).map(e => e.textContent)`)
	require.NotEmpty(t, durations)
	assert.True(t, slices.ContainsFunc(durations, func(d string) bool { return d != "<1 ms" && strings.HasSuffix(d, "s") }),
		"every scenario took under a millisecond: %v", durations)
	browsertest.Screenshot(t, ctx, "report")

	// Only the failures: every scenario still shown has a failed run, and
	// the passed ones are gone.
	browsertest.Do(t, ctx,
		chromedp.Click(`.chip[data-status=passed]`),
		chromedp.Click(`.chip[data-status=skipped]`),
		chromedp.Click(`.chip[data-status=notrun]`),
	)
	visible := browsertest.Eval[[]string](t, ctx, `Array.from(document.querySelectorAll('.scenario')).filter(s => !s.hidden).map(s => s.dataset.statuses)`)
	require.NotEmpty(t, visible)
	for _, st := range visible {
		assert.Contains(t, st, "failed")
	}
	assert.True(t, browsertest.Eval[bool](t, ctx, `!document.getElementById('get-run--an-unknown-run-is-not-found').hidden`))
	assert.True(t, browsertest.Eval[bool](t, ctx, `Array.from(document.querySelectorAll('.scenario[data-statuses="passed"]')).every(s => s.hidden)`))
	assert.Equal(t, itoa(len(visible))+" of ", browsertest.Text(t, ctx, `#shown`)[:len(itoa(len(visible)))+4])
	browsertest.Screenshot(t, ctx, "report-failures-only")

	// A link to a scenario the filter hides shows it again.
	browsertest.Do(t, ctx, chromedp.Navigate("file://"+path+"#state-progression--a-successful-run-passes-through-every-state-in-order"))
	assert.True(t, browsertest.Eval[bool](t, ctx, `!document.getElementById('state-progression--a-successful-run-passes-through-every-state-in-order').hidden`))
}

func itoa(n int) string { return strconv.Itoa(n) }

// Issue 34, point 10: at 1,400 px wide no example table reaches past the
// page's main column, open or closed: a wide table scrolls in its own box,
// and the page itself never scrolls sideways. Every feature's tables are
// opened, in the spec of the suite's own features and in the report of a
// run whose failures put long messages under their rows.
func TestWideExampleTablesStayInTheirBox(t *testing.T) {
	dir := t.TempDir()
	spec, err := htmlreport.Parse(features.FS)
	require.NoError(t, err)
	specPath := filepath.Join(dir, "spec.html")
	f, err := os.Create(specPath)
	require.NoError(t, err)
	require.NoError(t, htmlreport.WriteSpec(f, "the suite's features", spec))
	require.NoError(t, f.Close())

	srv := brokenServer(t)
	runPath := filepath.Join(dir, "report.html")
	f, err = os.Create(runPath)
	require.NoError(t, err)
	_, err = runner.Run(context.Background(), suiteconfig.Config{
		BaseURL: srv.URL, APIKey: "wk-mock-alice", Tags: "~@slow",
		Format: "html", Output: f, NoColors: true,
		PollInterval: 20 * time.Millisecond, Spacing: 5 * time.Millisecond, Timeout: 20 * time.Second,
	})
	require.NoError(t, err)
	require.NoError(t, f.Close())

	ctx := browsertest.Tab(t)
	for _, path := range []string{specPath, runPath} {
		browsertest.Do(t, ctx, chromedp.Navigate("file://"+path), chromedp.WaitReady(`main`))
		browsertest.Eval[bool](t, ctx, `document.querySelectorAll('details').forEach(d => d.open = true), true`)
		require.Equal(t, browsertest.Width, browsertest.Eval[int](t, ctx, `window.innerWidth`))
		tables := browsertest.Eval[int](t, ctx, `document.querySelectorAll('.examples-table').length`)
		require.Positive(t, tables, path)
		past := browsertest.Eval[[]string](t, ctx, `(() => {
			const right = Math.min(document.querySelector('main').getBoundingClientRect().right, window.innerWidth);
			return Array.from(document.querySelectorAll('.examples-table')).filter(table => {
				const box = table.parentElement, scrolls = getComputedStyle(box).overflowX === 'auto';
				return table.getBoundingClientRect().right > right + 0.5 && !(scrolls && box.getBoundingClientRect().right <= right + 0.5);
			}).map(table => table.closest('article').id + ': ' + Math.round(table.getBoundingClientRect().right) + ' px > ' + Math.round(right) + ' px');
		})()`)
		assert.Empty(t, past, "example tables reach past the main column, and do not scroll in their box, in %s", filepath.Base(path))
		assert.LessOrEqual(t, browsertest.Eval[int](t, ctx, `document.documentElement.scrollWidth`), browsertest.Width,
			"the page scrolls sideways: %s", filepath.Base(path))
	}
}

// The tables in the report's dark header (client versions, drift) have
// headings a reader can see: dark text on their light background, not the
// header's white.
func TestHeaderTablesHaveReadableHeadings(t *testing.T) {
	at := time.Date(2026, 11, 28, 1, 2, 3, 0, time.UTC)
	page := &htmlreport.Page{Title: "Contract check of live traffic", Run: &htmlreport.Run{
		Server: "http://upstream.test", Counts: htmlreport.Counts{Passed: 1},
		Clients: []report.ClientVersion{{Name: "typescript-1.4.0-alpha.6", Checked: 3}},
		Drift: &htmlreport.Drift{Distinct: 1, Facts: []htmlreport.DriftFact{{Kind: "response-field", Operation: "GET /agent/runs",
			Status: 200, Location: "body.rollout_ring", Types: []string{"string"}, Count: 1, FirstSeen: at, LastSeen: at}}},
	}}
	path := filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, htmlreport.Write(f, page))
	require.NoError(t, f.Close())
	ctx := browsertest.Tab(t)
	browsertest.Do(t, ctx, chromedp.Navigate("file://"+path), chromedp.WaitVisible(`#drift`))
	for _, table := range []string{"#clients", "#drift"} {
		// The WCAG contrast ratio of the heading's text on its background.
		ratio := browsertest.Eval[float64](t, ctx, `(() => {
			const s = getComputedStyle(document.querySelector("`+table+` th"));
			const lum = c => { const [r, g, b] = c.match(/\d+/g).slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
			const [a, b] = [lum(s.color), lum(s.backgroundColor)].sort((x, y) => y - x);
			return (a + 0.05) / (b + 0.05);
		})()`)
		assert.GreaterOrEqual(t, ratio, 4.5, "%s: its headings stand out from their background", table)
	}
}
