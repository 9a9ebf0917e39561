package mockserver_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keysToView are principals of every team, plus an unknown key (the default
// user), so a view covers every run whoever created it.
var keysToView = []string{"wk-mock-alice", "wk-mock-carol", "wk-not-a-fixture-key"}

// view is everything a session shows through the API: its clock and, for
// each team, every run as listed and as got one by one.
func view(t *testing.T, c *client) map[string]string {
	t.Helper()
	out := map[string]string{"clock": string(c.do("GET", "/__mock/clock", nil).body)}
	for _, key := range keysToView {
		cc := c.as(key)
		page := cc.do("GET", "/agent/runs?limit=500", nil)
		require.Equal(t, http.StatusOK, page.status, "%s", page.body)
		out[key+" list"] = string(page.body)
		var list mockserver.ListRunsResponse
		page.json(t, &list)
		require.False(t, list.PageInfo.HasNextPage, "one page holds the session")
		for _, r := range list.Runs {
			out[key+" "+r.RunID] = string(cc.do("GET", "/agent/runs/"+r.RunID, nil).body)
			// Conversations derive from the runs and the event log.
			out[key+" conversation "+r.RunID] = string(cc.do("GET", "/agent/runs/"+r.RunID+"/conversation", nil).body)
		}
		// The event log: sequences and occurred_at must survive a restart.
		if len(list.Runs) > 0 {
			q := url.Values{"run_ids": ids(list.Runs), "limit": {"500"}}
			out[key+" events"] = string(cc.do("GET", "/agent/events?"+q.Encode(), nil).body)
		}
	}
	return out
}

func saved(t *testing.T, s *mockserver.Server) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, s.Save(&buf))
	return buf.Bytes()
}

// populate gives the default session and two more runs of every kind the
// mock keeps: failing fates, cancels, forced states, skills, MCP servers,
// conversations, team scope, other teams and the default user.
func populate(t *testing.T, c *client) {
	t.Helper()
	for _, sc := range []*client{c, c.in("job-a"), c.in("job-b")} {
		sc.create(map[string]any{"prompt": "Fix the flaky login test\nIt fails one run in ten."})
		sc.as("wk-mock-bob").create(map[string]any{"prompt": "team run", "team": true, "title": "Bob's team run",
			"config": map[string]any{"name": "nightly", "model_id": "gpt-5", "environment_id": "env-1",
				"base_prompt": "be brief", "computer_use_enabled": true, "worker_host": "w1",
				"mcp_servers": map[string]any{"gh": map[string]any{"url": "https://mcp.example.com", "headers": map[string]string{"X-A": "b"}},
					"local": map[string]any{"command": "npx", "args": []string{"-y", "srv"}, "env": map[string]string{"K": "v"}}}}})
		sc.as("wk-mock-carol").create(map[string]any{"skill": "acme/skills:tools/review/SKILL.md"})
		sc.as("wk-not-a-fixture-key").create(map[string]any{"prompt": "from someone unknown"})
		sc.create(map[string]any{"prompt": "will fail"}, mockserver.FateHeader, "state=FAILED; error_code=insufficient_credits; message=Out of credits; step=3s; inprogress=40s")
		errored := sc.create(map[string]any{"prompt": "will error"}, mockserver.FateHeader, "state=ERROR; retryable=true; queued=1s; pending=2s; claimed=3s; inprogress=4s").RunID
		sc.advance(5 * time.Second)
		// A conversation begun by one run and continued by another's.
		sc.as("wk-mock-bob").create(map[string]any{"prompt": "carry on", "conversation_id": sc.get(errored).ConversationID})
		toCancel := sc.create(map[string]any{"prompt": "to cancel"}).RunID
		forced := sc.create(map[string]any{"prompt": "to force"}).RunID
		sc.advance(3 * time.Second)
		require.Equal(t, http.StatusOK, sc.do("POST", "/agent/runs/"+toCancel+"/cancel", nil).status)
		r := sc.do("POST", "/__mock/runs/"+forced+"/state", map[string]any{"state": "BLOCKED", "message": "needs an answer"})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		reported := sc.create(map[string]any{"prompt": "reported"}).RunID
		r = sc.report(reported, map[string]string{"event_type": "run_blocked", "execution_id": "exec-9", "ref_id": "q-1"})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	}
	c.in("job-a").advance(90 * time.Minute)
	r := c.in("job-b").do("PUT", "/__mock/clock", map[string]string{"mode": "real"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
}

// A saved mock, loaded into a new one, shows every session exactly as the
// old one does: the same runs in the same states, messages, configs,
// creators, teams and order, the same clocks, and the same future.
func TestSaveAndLoadBringEveryRunBack(t *testing.T) {
	wall1 := &fakeWall{now: clockStart.Add(24 * time.Hour)}
	opts := mockserver.Options{ClockMode: mockserver.VirtualClock, ClockStart: clockStart, Step: 10 * time.Second, Wall: wall1.Now}
	s1 := newServer(t, opts)
	c1 := serve(t, s1)
	populate(t, c1)
	sessions := []*client{c1, c1.in("job-a"), c1.in("job-b")}
	before := make([]map[string]string, len(sessions))
	for i, sc := range sessions {
		before[i] = view(t, sc)
	}
	state := saved(t, s1)

	// The mock is down for an hour: a real clock moves on, a virtual one does not.
	wall1.Add(time.Hour)
	wall2 := &fakeWall{now: wall1.Now()}
	opts.Wall = wall2.Now
	s2 := newServer(t, opts)
	require.NoError(t, s2.Load(bytes.NewReader(state)))
	c2 := serve(t, s2)

	assert.Equal(t, string(saved(t, s1)), string(saved(t, s2)), "the loaded mock saves exactly what the old one does")
	compare := func(when string) {
		for _, sc := range sessions {
			assert.Equal(t, view(t, sc), view(t, c2.in(sc.session)), "%s: session %q", when, sc.session)
		}
	}
	compare("after loading")
	assert.Equal(t, before[0], view(t, c2), "a virtual clock comes back where it was")
	assert.Equal(t, before[1], view(t, c2.in("job-a")))
	var was, is mockserver.ClockInfo
	require.NoError(t, json.Unmarshal([]byte(before[2]["clock"]), &was))
	c2.in("job-b").do("GET", "/__mock/clock", nil).json(t, &is)
	assert.Equal(t, mockserver.RealClock, is.Mode)
	wasT, _ := time.Parse(time.RFC3339Nano, was.Now)
	isT, _ := time.Parse(time.RFC3339Nano, is.Now)
	assert.Equal(t, time.Hour, isT.Sub(wasT), "a real clock keeps pace with wall time while the mock is down")

	// Both go on identically: timelines, fates and forced states were kept.
	for _, c := range []*client{c1, c2} {
		c.advance(25 * time.Second)
		c.in("job-a").advance(time.Hour)
	}
	wall1.Add(7 * time.Second)
	wall2.Add(7 * time.Second)
	compare("after the clocks moved")

	// New runs follow the old ones, in both.
	for _, c := range []*client{c1, c2} {
		id := c.create(map[string]any{"prompt": "after the restart"}).RunID
		assert.Equal(t, id, c.list("limit=1").Runs[0].RunID)
		assert.Equal(t, ids(c1.list("limit=500").Runs)[1:], ids(c.list("limit=500").Runs)[1:])
	}
}

// Load takes a whole valid document or nothing: a damaged one is an error
// that says so, and the mock keeps what it had.
func TestLoadRefusesDamagedDocuments(t *testing.T) {
	src := newServer(t, mockserver.Options{})
	serve(t, src).create(map[string]any{"prompt": "x"})
	good := string(saved(t, src))
	edit := func(f func(doc map[string]any)) string {
		var d map[string]any
		require.NoError(t, json.Unmarshal([]byte(good), &d))
		f(d)
		b, err := json.Marshal(d)
		require.NoError(t, err)
		return string(b)
	}
	firstRun := func(d map[string]any) map[string]any {
		return d["sessions"].([]any)[0].(map[string]any)["runs"].([]any)[0].(map[string]any)
	}
	for name, body := range map[string]string{
		"empty":           "",
		"blank":           "  \n",
		"garbage":         "\x00\x01not json",
		"truncated":       good[:len(good)/2],
		"an array":        "[]",
		"another format":  edit(func(d map[string]any) { d["format"] = "something-else" }),
		"a newer version": edit(func(d map[string]any) { d["version"] = 3 }),
		"version 0":       edit(func(d map[string]any) { d["version"] = 0 }),
		"an unknown field": edit(func(d map[string]any) {
			d["extra"] = true
		}),
		"two documents": good + good,
		"a bad state":   edit(func(d map[string]any) { firstRun(d)["timeline"].(map[string]any)["anchor_state"] = "DONE" }),
		"a bad final":   edit(func(d map[string]any) { firstRun(d)["timeline"].(map[string]any)["final"] = "CANCELLED" }),
		"a missing id":  edit(func(d map[string]any) { firstRun(d)["id"] = "" }),
		"no creator":    edit(func(d map[string]any) { firstRun(d)["creator"] = map[string]any{"uid": "", "team": ""} }),
		"seq out of order": edit(func(d map[string]any) {
			firstRun(d)["seq"] = 1000
		}),
		"a duplicated run": edit(func(d map[string]any) {
			s := d["sessions"].([]any)[0].(map[string]any)
			runs := s["runs"].([]any)
			s["runs"] = append(runs, runs[len(runs)-1])
		}),
		"a duplicated session": edit(func(d map[string]any) {
			d["sessions"] = append(d["sessions"].([]any), d["sessions"].([]any)[0])
		}),
		"a bad clock mode": edit(func(d map[string]any) {
			d["sessions"].([]any)[0].(map[string]any)["clock"].(map[string]any)["mode"] = "sundial"
		}),
		"a negative step": edit(func(d map[string]any) {
			firstRun(d)["timeline"].(map[string]any)["steps_ns"] = []int{1, -1, 1, 1}
		}),
		"an event out of order": edit(func(d map[string]any) {
			s := d["sessions"].([]any)[0].(map[string]any)
			s["events"] = []any{map[string]any{"sequence": 2, "event_type": "run_succeeded", "run_id": firstRun(d)["id"], "occurred_at": "2026-01-01T00:00:00Z"}}
		}),
		"a short id with artifacts": edit(func(d map[string]any) {
			firstRun(d)["id"] = "abc"
			firstRun(d)["artifact_types"] = []string{"PLAN"}
		}),
	} {
		t.Run(name, func(t *testing.T) {
			s := newServer(t, mockserver.Options{})
			c := serve(t, s)
			kept := c.create(map[string]any{"prompt": "kept"}).RunID
			err := s.Load(strings.NewReader(body))
			require.Error(t, err)
			assert.ErrorIs(t, err, mockserver.ErrBadStateFile)
			assert.Equal(t, kept, c.get(kept).RunID, "a refused document changes nothing")
		})
	}
	require.NoError(t, newServer(t, mockserver.Options{}).Load(strings.NewReader(good)), "the undamaged document loads")
}

// Changes moves with every change a saver must write, and only then.
func TestChangesCountsWhatASaveMustKeep(t *testing.T) {
	s := newServer(t, mockserver.Options{Step: time.Minute})
	c := serve(t, s)
	last := s.Changes()
	step := func(what string, changes bool, f func()) {
		t.Helper()
		f()
		if changes {
			assert.Greater(t, s.Changes(), last, what)
		} else {
			assert.Equal(t, last, s.Changes(), what)
		}
		last = s.Changes()
	}
	var id string
	step("create", true, func() { id = c.create(map[string]any{"prompt": "x"}).RunID })
	step("get", false, func() { c.get(id) })
	step("list", false, func() { c.list("limit=3") })
	step("a refused create", false, func() { c.do("POST", "/agent/run", `{}`) })
	step("cancel", true, func() { c.do("POST", "/agent/runs/"+id+"/cancel", nil) })
	step("a refused cancel", false, func() { c.do("POST", "/agent/runs/"+id+"/cancel", nil) })
	step("advance", true, func() { c.advance(time.Second) })
	step("set the clock", true, func() { c.do("PUT", "/__mock/clock", map[string]string{"mode": "real"}) })
	step("force a state", true, func() {
		id = c.create(map[string]any{"prompt": "y"}).RunID
		c.do("POST", "/__mock/runs/"+id+"/state", map[string]string{"state": "FAILED"})
	})
	step("reset", true, func() { c.do("POST", "/__mock/reset", nil) })
	step("a new session", true, func() { c.in("job-new").list("") })
	step("an existing session", false, func() { c.in("job-new").list("") })
}

// A state given to New (Options.State, as agentruns-mock --state-file
// gives it) is loaded as Load loads it; one that cannot be is New's error,
// a *StateError, and no server.
func TestNewLoadsTheStateItIsGiven(t *testing.T) {
	wall := &fakeWall{now: clockStart.Add(24 * time.Hour)} // real clocks stand still too
	opts := mockserver.Options{ClockMode: mockserver.VirtualClock, ClockStart: clockStart, Step: 10 * time.Second, Wall: wall.Now}
	s1 := newServer(t, opts)
	c1 := serve(t, s1)
	populate(t, c1)
	state := saved(t, s1)

	opts.State = bytes.NewReader(state)
	s2, err := mockserver.New(opts)
	require.NoError(t, err)
	assert.Equal(t, string(state), string(saved(t, s2)), "the new mock holds the state")
	c2 := serve(t, s2)
	for _, sc := range []*client{c1, c1.in("job-a"), c1.in("job-b")} {
		assert.Equal(t, view(t, sc), view(t, c2.in(sc.session)), "session %q", sc.session)
	}

	for _, bad := range []string{"", "{", `{"format":"agentruns-mock-state","version":9}`, string(state[:len(state)/2])} {
		opts.State = strings.NewReader(bad)
		s, err := mockserver.New(opts)
		assert.Nil(t, s)
		var se *mockserver.StateError
		require.ErrorAs(t, err, &se, "%q", bad)
		assert.Contains(t, err.Error(), "not a valid agentruns mock state file")
	}
}
