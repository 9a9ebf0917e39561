package mockserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// within runs fn, failing the test if it has not returned after hangBound:
// for requests that once never returned.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(hangBound):
		t.Fatalf("%s did not return within %v: the mock is stuck", what, hangBound)
	}
}

// Durations past a time.Duration's reach once overflowed the time
// arithmetic and left the next listing walking for ever. Each way in
// refuses them with a 400 that names the input and the bound, and the mock
// answers on.
func TestOverflowingDurationsAreRefusedByName(t *testing.T) {
	c := newMock(t, mockserver.Options{ClockMode: mockserver.VirtualClock, ClockStart: clockStart}).on(t)
	for _, fate := range []string{"step=2562047h", "step=9223372036854775807ns", "queued=2562047h", "inprogress=8761h"} {
		r := c.do("POST", "/agent/run", map[string]any{"prompt": "x"}, mockserver.FateHeader, fate)
		require.Equal(t, http.StatusBadRequest, r.status, "%s: %s", fate, r.body)
		p := r.problem(t)
		assert.Contains(t, p.Detail, mockserver.FateHeader, fate)
		assert.Contains(t, p.Detail, "8760h", fate)
	}
	r := c.do("POST", "/__mock/fates", map[string]any{"claimed": "2562047h"})
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	assert.Contains(t, r.problem(t).Detail, "claimed must be a duration from 0 to 8760h")
	// The bound itself is accepted.
	id := c.create(map[string]any{"prompt": "x"}, mockserver.FateHeader, "step=8760h").RunID
	within(t, "a listing", func() { c.list("") })
	assert.Equal(t, mockserver.State("QUEUED"), c.get(id).State)
}

// The Go API's options, which the flags set, are held to the same bounds.
func TestDurationOptionsAreBounded(t *testing.T) {
	for name, opts := range map[string]mockserver.Options{
		"step":          {Step: 2562047 * time.Hour},
		"queued":        {Queued: 8761 * time.Hour},
		"negative step": {Step: -time.Second},
		"link lifetime": {LinkLifetime: 169 * time.Hour},
		"negative link": {LinkLifetime: -time.Second},
	} {
		_, err := mockserver.New(opts)
		assert.Error(t, err, name)
	}
	_, err := mockserver.New(mockserver.Options{Step: 8760 * time.Hour, LinkLifetime: 168 * time.Hour})
	assert.NoError(t, err)
}

// A run's timeline may reach past 2262, where Unix nanoseconds end, and
// up to the clock's last instant: a listing still answers, and the run
// moves on when the clock gets there.
func TestTimelinesPastTheNanosecondEpochMoveOn(t *testing.T) {
	c := newMock(t, mockserver.Options{ClockMode: mockserver.VirtualClock, ClockStart: clockStart}).on(t)
	r := c.do("PUT", "/__mock/clock", map[string]string{"now": "2261-12-31T00:00:00Z"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	id := c.create(map[string]any{"prompt": "a slow one"}, mockserver.FateHeader, "step=8760h").RunID
	within(t, "a listing at 2261", func() { c.list("sort_by=updated_at") })
	c.advance(8761 * time.Hour) // into 2263: the run is PENDING
	within(t, "a listing at 2263", func() {
		page := c.list("sort_by=updated_at")
		require.NotEmpty(t, page.Runs)
		assert.Equal(t, id, page.Runs[0].RunID, "the run updated last leads")
	})
	assert.Equal(t, mockserver.State("PENDING"), c.get(id).State)

	// At the clock's end, a run whose next state would come after it stays.
	r = c.do("PUT", "/__mock/clock", map[string]string{"now": "9999-12-31T00:00:00Z"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	late := c.create(map[string]any{"prompt": "too late"}, mockserver.FateHeader, "step=8760h").RunID
	r = c.do("PUT", "/__mock/clock", map[string]string{"now": "9999-12-31T23:59:59.999Z"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	within(t, "a listing at the end of the clock", func() { c.list("sort_by=updated_at") })
	assert.Equal(t, mockserver.State("QUEUED"), c.get(late).State)
}

// A link handed out near the clock's end expires at its last instant, a
// date-time the API can write, not in year 10000.
func TestLinksExpireWithinTheClocksRange(t *testing.T) {
	c := newMock(t, mockserver.Options{ClockMode: mockserver.VirtualClock, ClockStart: clockStart}).on(t)
	r := c.do("PUT", "/__mock/clock", map[string]string{"now": "9999-12-31T23:30:00Z"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	a := c.artifact(uidOf(t, c.get(fixtureRunWithAll), "SCREENSHOT"))
	assert.Equal(t, "9999-12-31T23:59:59.999Z", a.Data.ExpiresAt)
}

// Problems and the control API's answers keep < and > as they are:
// "Bearer <api key>" reads so, not as Bearer \u003capi key\u003e.
func TestAnswersKeepAngleBrackets(t *testing.T) {
	c := newMock(t, mockserver.Options{}).on(t)
	r := c.as("").do("GET", "/agent/runs", nil)
	require.Equal(t, http.StatusUnauthorized, r.status)
	assert.Contains(t, string(r.body), "Bearer <api key>")
	assert.NotContains(t, string(r.body), `\u003c`)
	r = c.do("POST", "/__mock/fates", map[string]any{"prompt_pattern": "<b>&</b>", "state": "FAILED"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Contains(t, string(r.body), `"prompt_pattern":"<b>&</b>"`)
}

// A download link works exactly as handed out: an extra path segment, an
// added or changed query parameter is a 404, with or without a key.
func TestDownloadLinksAreExact(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: 10 * time.Second}).in("links")
	id := c.create(map[string]any{"prompt": "Fix the build"}).RunID
	c.advance(time.Hour)
	r := c.noFollow("/agent/runs/"+id+"/transcript", c.key)
	require.Equal(t, http.StatusFound, r.status, "%s", r.body)
	transcript := strings.TrimPrefix(r.header.Get("Location"), c.base)
	artifact := c.artifact(uidOf(t, c.in("").get(fixtureRunWithAll), "SCREENSHOT")).Data.DownloadURL
	artifact = strings.TrimPrefix(artifact, c.base)
	for _, link := range []string{transcript, artifact} {
		anyone := c.as("").in("")
		require.Equal(t, http.StatusOK, anyone.noFollow(link, "").status, link)
		p, q, _ := strings.Cut(link, "?")
		for _, mangled := range []string{p + "/x?" + q, p + "/?" + q, p + "/x/y?" + q, link + "&x=1", link + "&" + q} {
			for _, key := range []string{"", c.key} {
				r := anyone.noFollow(mangled, key)
				assert.Equal(t, http.StatusNotFound, r.status, "%s (key %q): %s", mangled, key, r.body)
			}
		}
		// Text added to the end lands in the last parameter: the
		// transcript's Expires, or the artifact's signature (then a 403,
		// as for any changed signature).
		r := anyone.noFollow(link+"/x", "")
		want := http.StatusForbidden
		if link == transcript {
			want = http.StatusNotFound // once a 200: Expires was not checked
		}
		assert.Equal(t, want, r.status, "%s: %s", link+"/x", r.body)
	}
}

// Requests without a key (the public redirects) open no mock session:
// they are answered from the session they name if it exists, else from the
// default one, and leave nothing behind (no session, no journal entry).
func TestKeylessRequestsOpenNoSession(t *testing.T) {
	c := newMock(t, mockserver.Options{ClockMode: mockserver.VirtualClock, ClockStart: clockStart, Step: time.Minute}).on(t)
	kept := c.in("kept")
	run := kept.get(kept.create(map[string]any{"prompt": "a live one"}).RunID)
	kept.advance(150 * time.Second) // CLAIMED: the run has a live session
	run = kept.get(run.RunID)
	require.NotEmpty(t, run.ConversationID)
	sessions := func() []string {
		var out []mockserver.SessionInfo
		c.do("GET", "/__mock/sessions", nil).json(t, &out)
		names := make([]string, len(out))
		for i, s := range out {
			names[i] = s.Name
		}
		return names
	}
	before := sessions()
	keyless := c.as("")
	for i := range 50 {
		name := fmt.Sprintf("flood-%d", i)
		r := keyless.in(name).noFollow("/agent/conversations/"+run.ConversationID+"/redirect", "")
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		assert.JSONEq(t, `{}`, string(r.body), "a session that does not exist holds nothing")
		r = keyless.in(name).noFollow("/agent/sessions/6f9f1a52-0000-4000-8000-000000000000/redirect", "")
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	}
	assert.ElementsMatch(t, before, sessions(), "no session was opened")
	var journal []mockserver.Attempt
	c.do("GET", "/__mock/requests", nil).json(t, &journal)
	for _, e := range journal {
		assert.NotContains(t, e.Path, "/redirect", "nothing journaled in the default session")
	}

	// An existing session answers a keyless request, as with a key.
	var red map[string]string
	keyless.in("kept").noFollow("/agent/conversations/"+run.ConversationID+"/redirect", "").json(t, &red)
	assert.Equal(t, map[string]string{"session_id": run.SessionID}, red)
	// A bad name is still refused.
	r := keyless.in("bad name").noFollow("/agent/conversations/"+run.ConversationID+"/redirect", "")
	assert.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
}

// States forced through the control API are events like reported ones and
// count towards the same bound per run; past it the force is refused
// (429, not retryable), as a report is, and the run keeps its state.
func TestForcedStatesCountTowardsTheEventBound(t *testing.T) {
	c := newMock(t, mockserver.Options{ClockMode: mockserver.VirtualClock, ClockStart: clockStart}).on(t)
	id := c.create(map[string]any{"prompt": "forced back and forth"}).RunID
	last := ""
	for i := 0; ; i++ {
		state := []string{"INPROGRESS", "BLOCKED"}[i%2]
		r := c.do("POST", "/__mock/runs/"+id+"/state", map[string]any{"state": state})
		if r.status != http.StatusOK {
			require.Equal(t, http.StatusTooManyRequests, r.status, "%s", r.body)
			p := r.problem(t)
			assert.False(t, p.Retryable)
			assert.Contains(t, p.Detail, "1000 events")
			break
		}
		require.Less(t, i, 2000, "forced states are bounded")
		last = state
	}
	assert.Equal(t, mockserver.State(last), c.get(id).State, "the refused force changed nothing")
	// A report past the bound is refused as well.
	r := c.do("POST", "/agent/events/"+id, map[string]any{"event_type": map[string]string{"INPROGRESS": "run_blocked", "BLOCKED": "run_in_progress"}[last]})
	assert.Equal(t, http.StatusTooManyRequests, r.status, "%s", r.body)
}

// A state file is held to the limits requests are held to: a file edited by
// hand, or written by a mock without them, is refused with the limit
// named, never loaded into a mock that then holds more than it allows.
func TestAStateFileIsHeldToTheRequestLimits(t *testing.T) {
	s := newServer(t, mockserver.Options{ClockMode: mockserver.VirtualClock, ClockStart: clockStart})
	c := serve(t, s).in("limits")
	id := c.create(map[string]any{"prompt": "p"}).RunID
	require.Equal(t, http.StatusOK, c.do("POST", "/agent/events/"+id, map[string]any{"event_type": "run_blocked", "ref_id": "r"}).status)
	require.Equal(t, http.StatusOK, c.do("POST", "/agent/messages", map[string]any{"to": []string{id}, "subject": "s", "body": "b", "sender_run_id": id}).status)
	state := saved(t, s)
	require.NoError(t, newServer(t, mockserver.Options{}).Load(bytes.NewReader(state)), "the file as saved loads")

	edits := map[string]struct {
		edit func(session map[string]any)
		want string
	}{
		"metadata keys": {func(ss map[string]any) {
			md := map[string]any{}
			for i := range 21 {
				md[fmt.Sprint("k", i)] = "v"
			}
			lastRun(ss)["metadata"] = md
		}, "at most 20"},
		"a message body": {func(ss map[string]any) {
			ss["letters"].([]any)[0].(map[string]any)["body"] = strings.Repeat("b", 70<<10)
		}, "65536 (64 KiB)"},
		"events of a run": {func(ss map[string]any) {
			log := ss["event_log"].(map[string]any)
			seq, at := lastRun(ss)["seq"], log["at_us"].([]any)[0]
			for range 1001 {
				log["run_seqs"] = append(log["run_seqs"].([]any), seq)
				log["at_us"] = append(log["at_us"].([]any), at)
			}
			log["types"] = log["types"].(string) + strings.Repeat("B", 1001)
		}, "more than 1000 events"},
		"an event's ref_id": {func(ss map[string]any) {
			log := ss["event_log"].(map[string]any)
			log["rare"].([]any)[0].(map[string]any)["ref_id"] = strings.Repeat("r", 2000)
		}, "limited to 1024 bytes"},
	}
	for name, e := range edits {
		var doc map[string]any
		require.NoError(t, json.Unmarshal(state, &doc))
		for _, ss := range doc["sessions"].([]any) {
			if ss.(map[string]any)["name"] == "limits" {
				e.edit(ss.(map[string]any))
			}
		}
		edited, err := json.Marshal(doc)
		require.NoError(t, err)
		err = newServer(t, mockserver.Options{}).Load(bytes.NewReader(edited))
		require.ErrorIs(t, err, mockserver.ErrBadStateFile, name)
		assert.Contains(t, err.Error(), e.want, name)
	}
}

// lastRun is the newest run of a saved session, as JSON.
func lastRun(session map[string]any) map[string]any {
	runs := session["runs"].([]any)
	return runs[len(runs)-1].(map[string]any)
}

// A refusal of a long path does not echo it: the instance, the detail and
// the error hold at most about a kilobyte of it, so each of a flood of
// 60 KB paths costs an answer of a kilobyte or so, not three copies of
// the path. (Nothing of them is kept either way; what they cost is
// garbage, which the collector lets grow to about the live heap before
// collecting: docs/reliability.md.)
func TestLongPathsAreNotEchoed(t *testing.T) {
	c := newMock(t, mockserver.Options{StrictAuth: true}).on(t)
	long := "/agent/runs/" + strings.Repeat("a", 60<<10)
	for _, r := range []response{c.as("").do("GET", long, nil), c.do("GET", "/agent/nothing/"+strings.Repeat("%41", 20<<10), nil)} {
		require.GreaterOrEqual(t, r.status, 400)
		assert.Less(t, len(r.body), 4<<10, "%.300s", r.body)
		p := r.problem(t)
		assert.NotContains(t, p.Instance[len(p.Instance)-2:], "%", "the instance is not cut inside an escape")
	}
}
