package dashboard_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/internal/browsertest"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/mockserver/dashboard"
)

func TestMain(m *testing.M) { browsertest.Main(m) }

// call sends one request to the mock in a session and decodes the answer.
func call(t *testing.T, base, session, method, path string, body any, out any, headers ...string) int {
	t.Helper()
	var buf bytes.Buffer
	if body != nil {
		require.NoError(t, json.NewEncoder(&buf).Encode(body))
	}
	req, err := http.NewRequest(method, base+path, &buf)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer wk-mock-alice")
	req.Header.Set(mockserver.SessionHeader, session)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	if out != nil && resp.StatusCode < 300 {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(out))
	}
	return resp.StatusCode
}

// The page follows a run through its states as the page's own buttons move
// the session's clock, and shows the fault rule and the journal the run's
// creation left, all as a client of the mock's HTTP routes.
func TestDashboardFollowsARunInABrowser(t *testing.T) {
	mock, err := mockserver.New(mockserver.Options{})
	require.NoError(t, err)
	srv := httptest.NewServer(mock)
	t.Cleanup(srv.Close)
	const session = "dashboard-test"

	// The first create gets a 429 from a rule; the retry goes through.
	require.Equal(t, 200, call(t, srv.URL, session, "POST", "/__mock/faults",
		map[string]any{"method": "POST", "path": "/agent/run*", "status": 429, "retry_after": "1s", "times": 1}, nil))

	ctx := browsertest.Tab(t)
	browsertest.Do(t, ctx, chromedp.Navigate(srv.URL+"/__mock/ui/#session="+session))
	browsertest.WaitFor(t, ctx, `document.getElementById('clock-mode').textContent === 'real'`)
	browsertest.Do(t, ctx, chromedp.Click(`#freeze`))
	browsertest.WaitFor(t, ctx, `document.getElementById('clock-mode').textContent === 'virtual'`)

	hostile := `Ship the preview build <img src=x onerror="window.pwned = 1">`
	prompt := map[string]any{"prompt": hostile, "title": "Ship the preview build", "config": map[string]any{"name": "previews"}}
	require.Equal(t, 429, call(t, srv.URL, session, "POST", "/agent/run", prompt, nil))
	var created struct {
		RunID string `json:"run_id"`
	}
	require.Equal(t, 200, call(t, srv.URL, session, "POST", "/agent/run", prompt, &created, "X-Stainless-Retry-Count", "1"))
	row := `document.querySelector('tr[data-run="` + created.RunID + `"]')`

	browsertest.WaitFor(t, ctx, row+`?.dataset.state === 'QUEUED'`)
	browsertest.Do(t, ctx, chromedp.Click(`tr[data-run="`+created.RunID+`"]`))
	browsertest.WaitFor(t, ctx, `document.getElementById('run-id').textContent === '`+created.RunID+`'`)

	// Each press of Advance (2s, the mock's step) moves the run one state on.
	for _, next := range []string{"PENDING", "CLAIMED", "INPROGRESS"} {
		browsertest.Do(t, ctx, chromedp.Click(`#advance`))
		browsertest.WaitFor(t, ctx, row+`.dataset.state === '`+next+`'`)
		browsertest.WaitFor(t, ctx, `document.querySelector('#run-detail .pill').textContent === '`+next+`'`)
	}

	// The timeline has a time for every state the run went through.
	// (Read in one go: the page redraws the panel every second.)
	when := browsertest.Eval[[]string](t, ctx, `Array.from(document.querySelectorAll('.tl')).map(li => li.dataset.state + ' ' + li.querySelector('.tl-when').textContent)`)
	require.Len(t, when, 5)
	for i, st := range []string{"QUEUED", "PENDING", "CLAIMED", "INPROGRESS"} {
		assert.Regexp(t, `^`+st+` \d\d:\d\d:\d\d\.\d{3}$`, when[i])
	}
	assert.Equal(t, "SUCCEEDED / FAILED / ERROR not yet", when[4])

	// The rule's counters, and the journal holding the client's two
	// attempts but none of the page's own reads.
	faults := browsertest.Eval[string](t, ctx, `document.querySelector('#faults tbody').textContent`)
	assert.Contains(t, faults, "/agent/run*")
	assert.Equal(t, []string{"2", "1"}, browsertest.Eval[[]string](t, ctx,
		`Array.from(document.querySelectorAll('#faults tbody tr:first-child td.num')).map(td => td.textContent)`))
	journal := browsertest.Eval[[]string](t, ctx,
		`Array.from(document.querySelectorAll('#journal tbody tr')).map(tr => tr.children[1].textContent + ' ' + tr.children[3].textContent)`)
	assert.Equal(t, []string{"POST 200", "POST 429"}, journal)

	// A client's read shows up in the journal, and sees what the page shows.
	var run mockserver.RunItem
	require.Equal(t, 200, call(t, srv.URL, session, "GET", "/agent/runs/"+created.RunID, nil, &run))
	assert.Equal(t, mockserver.State("INPROGRESS"), run.State, "the page shows what a client sees")
	browsertest.WaitFor(t, ctx, `document.querySelectorAll('#journal tbody tr').length === 3`)
	assert.Equal(t, "GET", browsertest.Eval[string](t, ctx, `document.querySelector('#journal tbody tr:first-child td:nth-child(2)').textContent`))

	assert.Equal(t, "Ship the preview build", browsertest.Eval[string](t, ctx, `document.querySelector('#run-detail .run-title').textContent`))
	assert.Equal(t, hostile, browsertest.Eval[string](t, ctx, `document.querySelector('#run-detail .prompt').textContent`), "the prompt is shown as text")
	assert.False(t, browsertest.Eval[bool](t, ctx, `window.pwned !== undefined`), "markup from the API ran in the page")

	browsertest.Do(t, ctx, chromedp.Click(`#resume`))
	browsertest.WaitFor(t, ctx, `document.getElementById('clock-mode').textContent === 'real'`)
	browsertest.Screenshot(t, ctx, "dashboard")
}

// The page shows every resource a client team works with, each as the API
// gives it: a schedule with its next tick, which moves when the clock
// passes it, and the run it started; a team's agent identity; the events of
// the runs on the page, polled on from the last sequence seen; the
// messages sent to the selected run.
func TestDashboardShowsSchedulesEventsMessagesAndIdentities(t *testing.T) {
	mock, err := mockserver.New(mockserver.Options{})
	require.NoError(t, err)
	srv := httptest.NewServer(mock)
	t.Cleanup(srv.Close)
	const session = "dashboard-resources"
	advance := func(by string) {
		t.Helper()
		require.Equal(t, 200, call(t, srv.URL, session, "POST", "/__mock/clock/advance", map[string]any{"by": by}, nil))
	}
	require.Equal(t, 200, call(t, srv.URL, session, "PUT", "/__mock/clock", map[string]any{"mode": "virtual"}, nil))
	// Half a minute past a five-minute tick, so that the clock's first
	// moves stay clear of the schedule's next tick whatever the wall
	// clock says (the clock only moves forward: the next such instant).
	start := time.Now().UTC().Truncate(5 * time.Minute).Add(5*time.Minute + 30*time.Second)
	require.Equal(t, 200, call(t, srv.URL, session, "PUT", "/__mock/clock", map[string]any{"now": start.Format(time.RFC3339)}, nil))

	var agent mockserver.AgentResponse
	require.Equal(t, 201, call(t, srv.URL, session, "POST", "/agent/identities", map[string]any{"name": "Docs bot"}, &agent))
	var sched mockserver.ScheduledAgentItem
	require.Equal(t, 201, call(t, srv.URL, session, "POST", "/agent/schedules",
		map[string]any{"name": "Five-minute sweep", "cron_schedule": "*/5 * * * *", "prompt": "Sweep the flaky tests"}, &sched))
	require.NotNil(t, sched.History.NextRun)
	firstTick := *sched.History.NextRun

	var sender, recipient struct {
		RunID string `json:"run_id"`
	}
	require.Equal(t, 200, call(t, srv.URL, session, "POST", "/agent/run", map[string]any{"prompt": "Migrate the users table", "title": "Migrate users"}, &sender))
	require.Equal(t, 200, call(t, srv.URL, session, "POST", "/agent/run", map[string]any{"prompt": "Rebuild the search index", "title": "Rebuild search"}, &recipient))
	var sent mockserver.SendMessageResponse
	require.Equal(t, 200, call(t, srv.URL, session, "POST", "/agent/messages",
		map[string]any{"to": []string{recipient.RunID}, "subject": "Schema changed: <b>rebase</b>", "body": "Rebase first.", "sender_run_id": sender.RunID}, &sent))
	var reported mockserver.ReportEventResponse
	require.Equal(t, 200, call(t, srv.URL, session, "POST", "/agent/events/"+recipient.RunID,
		map[string]any{"event_type": "run_succeeded", "execution_id": "exec-77"}, &reported))
	advance("6s") // the sender goes QUEUED, PENDING, CLAIMED, INPROGRESS

	ctx := browsertest.Tab(t)
	browsertest.Do(t, ctx, chromedp.Navigate(srv.URL+"/__mock/ui/#session="+session))

	// The identity, as the team's list has it.
	agentRow := `document.querySelector('#identities tr[data-agent="` + agent.UID + `"]')`
	browsertest.WaitFor(t, ctx, agentRow+`?.textContent.includes('Docs bot')`)
	assert.Contains(t, browsertest.Eval[string](t, ctx, agentRow+`.textContent`), "available")

	// The schedule: name, cron, enabled, the instant of its next tick, and
	// no run yet.
	schedRow := `document.querySelector('#schedules tr[data-schedule="` + sched.ID + `"]')`
	browsertest.WaitFor(t, ctx, schedRow+`?.querySelector('.next-tick')?.title === '`+firstTick+`'`)
	cells := browsertest.Eval[[]string](t, ctx, `Array.from(`+schedRow+`.children).map(td => td.textContent)`)
	require.Len(t, cells, 5)
	assert.Equal(t, []string{"Five-minute sweep", "*/5 * * * *", "enabled"}, cells[:3])
	assert.Equal(t, "none yet", cells[4])

	// Events: the one reported, with its execution id, and the sender's
	// run_in_progress from the clock's move.
	eventRow := func(run, typ string) string {
		return `document.querySelector('#events tr[data-run="` + run + `"][data-type="` + typ + `"]')`
	}
	browsertest.WaitFor(t, ctx, eventRow(recipient.RunID, "run_succeeded")+`?.textContent.includes('exec-77')`)
	browsertest.WaitFor(t, ctx, eventRow(sender.RunID, "run_in_progress")+` !== null`)
	assert.Contains(t, browsertest.Eval[string](t, ctx, eventRow(sender.RunID, "run_in_progress")+`.textContent`), "Migrate users")

	// Messages: select the recipient; its inbox shows the subject as text
	// and the sender by its title.
	browsertest.Do(t, ctx, chromedp.Click(`tr.run-row[data-run="`+recipient.RunID+`"]`))
	msgRow := `document.querySelector('#messages tr[data-message="` + sent.MessageIDs[0] + `"]')`
	browsertest.WaitFor(t, ctx, msgRow+` !== null`)
	msg := browsertest.Eval[[]string](t, ctx, `Array.from(`+msgRow+`.children).map(td => td.textContent)`)
	require.Len(t, msg, 4)
	assert.Equal(t, "Schema changed: <b>rebase</b>", browsertest.Eval[string](t, ctx, msgRow+`.querySelector('.subject').textContent`), "the subject is shown as text")
	assert.Regexp(t, `from Migrate users`+sender.RunID[:8]+`$`, msg[0], "the sender, by its title and the start of its id")
	assert.Equal(t, []string{"not yet", "not yet"}, msg[2:])
	require.Equal(t, 200, call(t, srv.URL, session, "POST", "/agent/messages/"+sent.MessageIDs[0]+"/read", nil, nil))
	browsertest.WaitFor(t, ctx, `!`+msgRow+`.children[3].textContent.includes('not yet')`)

	// Past the tick: the schedule starts a run and moves its next tick on;
	// the page shows the new tick and names the run it started.
	advance("5m")
	var after mockserver.ScheduledAgentItem
	require.Equal(t, 200, call(t, srv.URL, session, "GET", "/agent/schedules/"+sched.ID, nil, &after))
	require.NotNil(t, after.History.NextRun)
	require.NotEqual(t, firstTick, *after.History.NextRun)
	var spawned struct {
		Runs []mockserver.RunItem `json:"runs"`
	}
	require.Equal(t, 200, call(t, srv.URL, session, "GET", "/agent/runs?schedule_id="+sched.ID, nil, &spawned))
	require.Len(t, spawned.Runs, 1)
	started := spawned.Runs[0].RunID
	browsertest.WaitFor(t, ctx, schedRow+`.querySelector('.next-tick').title === '`+*after.History.NextRun+`'`)
	browsertest.WaitFor(t, ctx, schedRow+`.querySelector('.last-run')?.dataset.run === '`+started+`'`)

	// The run the schedule started joins the watched runs: its events come
	// through once it moves, and every poll asks from the last sequence
	// shown, one page at a time.
	advance("6s")
	browsertest.WaitFor(t, ctx, eventRow(started, "run_in_progress")+` !== null`)
	// (The clock stands still, so once the cursor reaches the newest event
	// shown, nothing newer comes.)
	browsertest.WaitFor(t, ctx, `document.getElementById('events').dataset.cursor === document.querySelector('#events tbody tr').dataset.seq`)
	top := browsertest.Eval[string](t, ctx, `document.getElementById('events').dataset.cursor`)
	browsertest.Eval[bool](t, ctx, `performance.clearResourceTimings(), true`)
	browsertest.WaitFor(t, ctx, `performance.getEntriesByType('resource').some(e => e.name.includes('/agent/events?'))`)
	polls := browsertest.Eval[[]string](t, ctx, `performance.getEntriesByType('resource').map(e => e.name).filter(n => n.includes('/agent/events?'))`)
	for _, u := range polls {
		assert.Contains(t, u, "since="+top+"&", "a poll after the page caught up asks only for what is new")
		assert.Contains(t, u, "limit=")
	}

	// What a person sees at 1,400 by 900: the top of the page, then the
	// rest of it.
	browsertest.Do(t, ctx, chromedp.EmulateViewport(browsertest.Width, 900))
	browsertest.Screenshot(t, ctx, "dashboard-resources")
	browsertest.Eval[bool](t, ctx, `window.scrollTo(0, document.body.scrollHeight), true`)
	browsertest.Screenshot(t, ctx, "dashboard-resources-lower")
}

// The handler serves the files with a policy that allows nothing but its own
// script, style and calls back to the mock.
func TestHandlerServesThePage(t *testing.T) {
	h := dashboard.Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), `<link rel="stylesheet" href="style.css">`)
	csp := rec.Header().Get("Content-Security-Policy")
	assert.Contains(t, csp, "default-src 'none'")
	assert.NotContains(t, csp, "unsafe-inline")
	assert.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
	for _, f := range []string{"/app.js", "/style.css"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", f, nil))
		assert.Equal(t, http.StatusOK, rec.Code, f)
		assert.False(t, strings.Contains(rec.Body.String(), "http://") || strings.Contains(rec.Body.String(), "https://"), "%s loads nothing from elsewhere", f)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/", nil))
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
}
