package mockserver_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/agentruns/agentruns/internal/syncbuf"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// teamOfKey and teamOfUID follow fixtures/principals.json; a key no
// principal owns acts as the default user.
var (
	teamOfKey = map[string]string{
		"wk-mock-alice": "team-acme", "wk-mock-bob": "team-acme", "wk-mock-ci-bot": "team-acme",
		"wk-mock-carol": "team-globex", "wk-mock-nightly": "team-globex", "wk-somebody": "team-acme",
	}
	teamOfUID = map[string]string{
		"user-alice": "team-acme", "user-bob": "team-acme", "sa-acme-ci": "team-acme",
		"user-carol": "team-globex", "sa-globex-nightly": "team-globex",
	}
)

// walkAll reads every page of a query.
func walkAll(t *testing.T, c *client, query string) []mockserver.RunItem {
	t.Helper()
	var all []mockserver.RunItem
	q := query + "&limit=7"
	for page := c.list(q); ; page = c.list(q + "&cursor=" + url.QueryEscape(page.PageInfo.NextCursor)) {
		all = append(all, page.Runs...)
		if !page.PageInfo.HasNextPage {
			return all
		}
	}
}

// A run is its team's alone: any other team's principal gets 403 on get and
// cancel, cannot change it, and never sees it in a list, whatever the filter
// or order.
func TestAnotherTeamsRunIsForbiddenAndNeverListed(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	acme := c.create(map[string]any{"prompt": "acme secret plan", "team": true, "config": map[string]any{"name": "shared"}}).RunID
	globex := c.as("wk-mock-carol").create(map[string]any{"prompt": "globex secret plan", "config": map[string]any{"name": "shared"}}).RunID
	solo := c.as("wk-somebody").create(map[string]any{"prompt": "nobody's secret plan", "config": map[string]any{"name": "shared"}}).RunID
	owner := map[string]string{acme: "team-acme", globex: "team-globex", solo: "team-acme"}
	// A key no principal owns is a user of the default team (team Acme).
	teamOfUID := maps.Clone(teamOfUID)
	teamOfUID[c.as("wk-somebody").get(solo).Creator.UID] = "team-acme"
	// The other team's fixture runs too.
	for _, r := range walkAll(t, c.as("wk-mock-carol"), "") {
		owner[r.RunID] = teamOfUID[r.Creator.UID]
	}

	for key, team := range teamOfKey {
		cc := c.as(key)
		for id, runTeam := range owner {
			get := cc.do("GET", "/agent/runs/"+id, nil)
			if runTeam == team {
				assert.Equal(t, http.StatusOK, get.status, "%s gets its team's run %s", key, id)
				continue
			}
			require.Equal(t, http.StatusForbidden, get.status, "%s gets %s's run %s: %s", key, runTeam, id, get.body)
			p := get.problem(t)
			assert.Equal(t, mockserver.ProblemTypeBase+"not_authorized", p.Type)
			assert.NotContains(t, string(get.body), "secret", "a 403 shows nothing of the run")
			cancel := cc.do("POST", "/agent/runs/"+id+"/cancel", nil)
			assert.Equal(t, http.StatusForbidden, cancel.status, "%s cancels %s's run %s: %s", key, runTeam, id, cancel.body)
		}
		for _, q := range []string{"", "name=shared", "q=secret", "creator=user-carol", "creator=user-alice", "creator=user-default",
			"sort_by=title", "sort_by=updated_at&sort_order=asc", "sort_by=agent", "state=QUEUED", "source=API", "sort_order=asc"} {
			for _, r := range walkAll(t, cc, q) {
				require.NotNil(t, r.Creator)
				assert.Equal(t, team, teamOfUID[r.Creator.UID], "%s listing %q sees %s's run %s", key, q, teamOfUID[r.Creator.UID], r.RunID)
			}
		}
	}
	// The forbidden cancels changed nothing.
	assert.Equal(t, mockserver.Queued, c.as("wk-mock-carol").get(globex).State)
	assert.Equal(t, mockserver.Queued, c.get(acme).State)
	// A run of one session does not exist in another; that is a 404.
	assert.Equal(t, http.StatusNotFound, c.in("elsewhere").do("GET", "/agent/runs/"+acme, nil).status)
	assert.Equal(t, http.StatusNotFound, c.do("GET", "/agent/runs/no-such-run", nil).status)
}

// With StrictAuth only the fixtures' keys open the API, exactly as written:
// near misses, the control token and other schemes are all 401, on every
// endpoint.
func TestStrictAuthRefusesEveryUnknownKey(t *testing.T) {
	c := newMock(t, mockserver.Options{StrictAuth: true, ControlToken: "ctl-token"})
	c.key = "ctl-token"
	id := c.as("wk-mock-alice").create(map[string]any{"prompt": "x"}).RunID
	endpoints := []struct {
		method, path string
		body         any
	}{
		{"GET", "/agent/runs", nil},
		{"GET", "/agent/runs/" + id, nil},
		{"POST", "/agent/run", map[string]string{"prompt": "x"}},
		{"POST", "/agent/runs/" + id + "/cancel", nil},
	}
	for _, key := range []string{"wk-unknown", "wk-mock-alic", "wk-mock-alicee", "WK-MOCK-ALICE", " wk-mock-alice-", "ctl-token"} {
		for _, e := range endpoints {
			r := c.as(key).do(e.method, e.path, e.body)
			require.Equal(t, http.StatusUnauthorized, r.status, "%q on %s %s: %s", key, e.method, e.path, r.body)
			assert.Equal(t, mockserver.ProblemTypeBase+"authentication_required", r.problem(t).Type)
		}
	}
	for _, h := range []string{"Basic d2stbW9jay1hbGljZTo=", "wk-mock-alice", "Bearer: wk-mock-alice"} {
		r := c.do("GET", "/agent/runs", nil, "Authorization", h)
		assert.Equal(t, http.StatusUnauthorized, r.status, h)
	}
	assert.Equal(t, mockserver.Queued, c.as("wk-mock-alice").get(id).State, "nothing was cancelled")
	assert.Equal(t, http.StatusOK, c.as("wk-mock-bob").do("GET", "/agent/runs/"+id, nil).status)
	assert.Equal(t, http.StatusOK, c.do("GET", "/agent/runs", nil, "Authorization", "bearer  wk-mock-alice").status, "the scheme is case-insensitive, the key trimmed")
	// An API key does not open the control API.
	assert.Equal(t, http.StatusUnauthorized, c.as("wk-mock-alice").do("GET", "/__mock/info", nil).status)
}

// The control token guards every control path, and a refused call does
// nothing; with the control API off, every control path is 404.
func TestControlTokenGuardsEveryControlPath(t *testing.T) {
	for _, opts := range []mockserver.Options{{ControlToken: "ctl-token"}, {DisableControl: true}} {
		c := newMock(t, opts)
		id := c.create(map[string]any{"prompt": "x"}).RunID
		want := http.StatusUnauthorized
		if opts.DisableControl {
			want = http.StatusNotFound
		}
		for _, e := range []struct {
			method, path string
			body         any
		}{
			{"GET", "/__mock/info", nil},
			{"POST", "/__mock/reset", nil},
			{"GET", "/__mock/clock", nil},
			{"PUT", "/__mock/clock", map[string]string{"mode": "real"}},
			{"POST", "/__mock/clock/advance", map[string]string{"by": "1h"}},
			{"POST", "/__mock/runs/" + id + "/state", map[string]string{"state": "FAILED"}},
			{"GET", "/__mock/faults", nil},
			{"POST", "/__mock/faults", map[string]any{"path": "/agent/runs", "status": 500}},
			{"DELETE", "/__mock/faults/1", nil},
			{"GET", "/__mock/requests", nil},
			{"DELETE", "/__mock/requests", nil},
		} {
			for _, key := range []string{"", "wrong", "ctl-token-but-longer", "wk-mock-alice"} {
				r := c.as(key).do(e.method, e.path, e.body)
				require.Equal(t, want, r.status, "%v %s %s as %q: %s", opts, e.method, e.path, key, r.body)
				r.problem(t)
			}
		}
		run := c.get(id)
		assert.Equal(t, mockserver.Queued, run.State, "no refused call moved the clock or the run")
		assert.Equal(t, http.StatusOK, c.do("GET", "/agent/runs", nil).status, "no fault rule was added")
		if !opts.DisableControl {
			assert.Equal(t, http.StatusOK, c.as("ctl-token").do("GET", "/__mock/info", nil).status)
		}
	}
}

// Keys and tokens never reach the request log, the panic log or the request
// journal, whatever the request and however it ends.
func TestTokensAreNeverLogged(t *testing.T) {
	var logs syncbuf.Buffer
	s := newServer(t, mockserver.Options{ControlToken: "ctl-SECRET-1", Logger: debugLogger(&logs), MaxBodyBytes: 1024})
	c := serve(t, s)
	secrets := []string{"wk-mock-alice", "wk-SECRET-unknown-2", "ctl-SECRET-1", "d2stU0VDUkVULTM6cHc=", "SECRET-4"}
	id := c.create(map[string]any{"prompt": "x"}).RunID
	c.get(id)
	c.as("wk-SECRET-unknown-2").list("")
	c.do("GET", "/agent/runs", nil, "Authorization", "Basic d2stU0VDUkVULTM6cHc=")
	c.do("POST", "/agent/run", strings.Repeat("x", 2048))
	c.do("POST", "/agent/runs/"+id+"/cancel", nil, mockserver.FaultHeader, "status=503")
	c.as("ctl-SECRET-1").do("GET", "/__mock/info", nil)
	c.as("wrong-SECRET-4").do("GET", "/__mock/info", nil)
	// A panic, which is logged with its details.
	req := httptest.NewRequest("POST", "/agent/run", panickingBody{})
	req.Header.Set("Authorization", "Bearer wk-mock-alice")
	req.Header.Set("Content-Type", "application/json")
	s.ServeHTTP(httptest.NewRecorder(), req)

	out := logs.String()
	require.GreaterOrEqual(t, strings.Count(out, "msg=request"), 8, "the log is not empty: %s", out)
	require.Contains(t, out, "handler panic")
	for _, secret := range append(secrets, "Bearer", "Basic", "Authorization") {
		assert.NotContains(t, out, secret)
	}
	journal := string(c.as("ctl-SECRET-1").do("GET", "/__mock/requests", nil).body)
	require.Contains(t, journal, "/agent/runs")
	for _, secret := range secrets {
		assert.NotContains(t, journal, secret)
	}
}

// panickingBody fails the way no well-behaved body does, to reach the
// handler's last line of defence.
type panickingBody struct{}

func (panickingBody) Read([]byte) (int, error) { panic("the body reader broke") }

// A panic in a handler becomes a logged 500 problem, and the server goes on.
func TestAPanicIsA500ProblemAndTheServerGoesOn(t *testing.T) {
	var logs syncbuf.Buffer
	s := newServer(t, mockserver.Options{Logger: debugLogger(&logs)})
	req := httptest.NewRequest("POST", "/api/v1/agent/run", panickingBody{})
	req.Header.Set("Authorization", "Bearer wk-mock-alice")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	require.Equal(t, http.StatusInternalServerError, rec.Code, "%s", rec.Body)
	assert.Equal(t, "application/problem+json", rec.Header().Get("Content-Type"))
	var p mockserver.Problem
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
	assert.Equal(t, mockserver.ProblemTypeBase+"internal_error", p.Type)
	assert.True(t, p.Retryable)
	assert.Contains(t, logs.String(), "handler panic")
	assert.Contains(t, logs.String(), "the body reader broke")
	// And it goes on, for the same caller.
	c := serve(t, s)
	id := c.create(map[string]any{"prompt": "after the panic"}).RunID
	assert.Equal(t, mockserver.Queued, c.get(id).State)
}

// MaxRuns counts the runs each team created in the mock session, not the
// fixtures' runs: with a cap below the fixtures' count creates still work.
// Once a team reaches it, its creates get a 429 that says truthfully that
// retrying will not help (retryable false, X-Should-Retry: false, no
// Retry-After); nothing old is dropped, other teams and sessions are not
// affected, and a reset makes room again.
func TestMaxRunsCountsEachTeamsCreatedRuns(t *testing.T) {
	c := newMock(t, mockserver.Options{MaxRuns: 2})
	require.Greater(t, len(walkAll(t, c, "")), 2, "the fixtures alone exceed the cap")
	a := c.create(map[string]any{"prompt": "a"}).RunID
	c.as("wk-mock-bob").create(map[string]any{"prompt": "b"})
	for _, path := range []string{"/agent/run", "/agent/runs"} {
		r := c.as("wk-somebody").do("POST", path, map[string]any{"prompt": "one too many"})
		require.Equal(t, http.StatusTooManyRequests, r.status, "%s", r.body)
		p := r.problem(t)
		assert.Equal(t, mockserver.ProblemTypeBase+"resource_unavailable", p.Type)
		assert.False(t, p.Retryable, "waiting frees nothing")
		assert.Equal(t, "false", r.header.Get("X-Should-Retry"))
		assert.Empty(t, r.header.Get("Retry-After"))
		assert.Contains(t, p.Detail, "team-acme")
		assert.Contains(t, p.Detail, "--max-runs")
		assert.Contains(t, p.Detail, "/__mock/reset")
	}
	// Another team has its own room in the same session.
	carol := c.as("wk-mock-carol")
	b := carol.create(map[string]any{"prompt": "globex 1"}).RunID
	carol.create(map[string]any{"prompt": "globex 2"})
	assert.Equal(t, http.StatusTooManyRequests, carol.do("POST", "/agent/runs", map[string]any{"prompt": "globex 3"}).status)
	assert.Equal(t, a, c.get(a).RunID, "old runs are kept")
	assert.Equal(t, b, carol.get(b).RunID)
	assert.Len(t, walkAll(t, c, "q=one+too+many"), 0, "the refused run was not stored")
	c.in("other").create(map[string]any{"prompt": "another session has its own room"})
	require.Equal(t, http.StatusOK, c.do("POST", "/__mock/reset", nil).status)
	c.create(map[string]any{"prompt": "room again"})
}
