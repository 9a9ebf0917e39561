package mockserver_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"net/http"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/mockserver"
)

// The bundled fixtures, each object of which the test gives extra members.
const (
	extraRun      = "301850c5-a38f-4547-923a-736994e3bf91" // FAILED, with a status message, team-globex
	extraRunKey   = "wk-mock-carol"
	extraEnv      = "env-web-app"
	extraModel    = "auto"
	extraIdentity = "agent-globex-triage"
)

// fixturesWithExtras are the bundled fixtures with the extra members each
// file's edit gives its objects, and a schedules.json of one schedule.
func fixturesWithExtras(t testing.TB, edit map[string]func(obj map[string]any)) fstest.MapFS {
	t.Helper()
	fsys := fstest.MapFS{}
	lists := map[string]string{"runs.json": "runs", "environments.json": "environments", "models.json": "models", "identities.json": "agents"}
	files, err := fs.Glob(fixtures.Embedded(), "*.json")
	require.NoError(t, err)
	for _, name := range files {
		data, err := fs.ReadFile(fixtures.Embedded(), name)
		require.NoError(t, err)
		if e, ok := edit[name]; ok {
			var file map[string]any
			require.NoError(t, json.Unmarshal(data, &file))
			for _, obj := range file[lists[name]].([]any) {
				e(obj.(map[string]any))
			}
			data, err = json.Marshal(file)
			require.NoError(t, err)
		}
		fsys[name] = &fstest.MapFile{Data: data}
	}
	schedule := map[string]any{"id": "sch_nightly", "name": "Nightly", "cron_schedule": "0 3 * * *", "prompt": "Look for flaky tests",
		"enabled": true, "owner": "user-carol", "team": true, "created_ago": "48h", "updated_ago": "1h"}
	if e, ok := edit["schedules.json"]; ok {
		e(schedule)
	}
	data, err := json.Marshal(map[string]any{"schedules": []any{schedule}})
	require.NoError(t, err)
	fsys["schedules.json"] = &fstest.MapFile{Data: data}
	return fsys
}

// extrasOn gives the object whose key field is id these extra members.
func extrasOn(key, id string, extra map[string]any) func(map[string]any) {
	return func(obj map[string]any) {
		if obj[key] == id {
			obj["extra"] = extra
		}
	}
}

var runExtra = map[string]any{
	"/rollout_ring":         "canary",
	"/status_message/hint":  map[string]any{"retry_after_s": 30.0, "docs": []any{"a", "b"}},
	"/creator/team_role":    "owner",
	"/artifacts/0/size_raw": 12.0, // a FAILED run shows no artifacts: left out
}

func withExtras(t testing.TB) *fixtures.Set {
	t.Helper()
	set, err := fixtures.Load(fixturesWithExtras(t, map[string]func(map[string]any){
		"runs.json":         extrasOn("run_id", extraRun, runExtra),
		"environments.json": extrasOn("uid", extraEnv, map[string]any{"/region": "eu-west", "/creator/team_role": "admin"}),
		"models.json":       extrasOn("id", extraModel, map[string]any{"/context_window": 200000.0}),
		"identities.json":   extrasOn("uid", extraIdentity, map[string]any{"/avatar_color": "teal"}),
		"schedules.json":    extrasOn("id", "sch_nightly", map[string]any{"/timezone": "Europe/Paris", "/history/skipped": 2.0}),
	}))
	require.NoError(t, err)
	return set
}

// wantRun checks the run's own members and its extras in one decoded answer.
func wantRun(t *testing.T, run map[string]any, how string) {
	t.Helper()
	assert.Equal(t, "canary", run["rollout_ring"], how)
	msg, _ := run["status_message"].(map[string]any)
	assert.Equal(t, map[string]any{"retry_after_s": 30.0, "docs": []any{"a", "b"}}, msg["hint"], how)
	assert.NotEmpty(t, msg["message"], "%s: the mock's own members stay", how)
	creator, _ := run["creator"].(map[string]any)
	assert.Equal(t, "owner", creator["team_role"], how)
	assert.Equal(t, "sa-globex-nightly", creator["uid"], how)
	assert.Equal(t, "FAILED", run["state"], how)
	assert.NotContains(t, run, "artifacts", "%s: an extra whose parent is absent is left out", how)
}

// A fixture's extra members, those a real server showed beyond the
// document, come back in every answer that shows the object, where they
// were seen, next to the mock's own members; and again after a save and a
// load. Every answer is checked against the document by the client.
func TestFixtureExtrasAreInEveryAnswer(t *testing.T) {
	set := withExtras(t)
	src := newServer(t, mockserver.Options{Fixtures: set})
	c := serve(t, src).as(extraRunKey)
	check := func(t *testing.T, c *client) {
		var run map[string]any
		got := c.do("GET", "/agent/runs/"+extraRun, nil)
		require.Equal(t, http.StatusOK, got.status, "%s", got.body)
		got.json(t, &run)
		wantRun(t, run, "GET")
		var page struct{ Runs []map[string]any }
		c.do("GET", "/agent/runs?limit=100", nil).json(t, &page)
		found := 0
		for _, r := range page.Runs {
			if r["run_id"] == extraRun {
				found++
				wantRun(t, r, "listed")
			} else {
				assert.NotContains(t, r, "rollout_ring", "another run has no extras")
			}
		}
		assert.Equal(t, 1, found)

		var envs struct{ Environments []map[string]any }
		c.do("GET", "/agent/environments", nil).json(t, &envs)
		for _, e := range envs.Environments {
			if e["uid"] == extraEnv {
				assert.Equal(t, "eu-west", e["region"])
				assert.Equal(t, "admin", e["creator"].(map[string]any)["team_role"])
				assert.Equal(t, "user-alice", e["creator"].(map[string]any)["uid"])
			} else {
				assert.NotContains(t, e, "region")
			}
		}
		var models struct{ Models []map[string]any }
		c.do("GET", "/agent/models", nil).json(t, &models)
		for _, m := range models.Models {
			assert.NotContains(t, m, "extra", "the fixture's field is not shown as such")
			if m["id"] == extraModel {
				assert.Equal(t, 200000.0, m["context_window"])
				assert.Equal(t, "Auto", m["display_name"])
			}
		}
		var agent map[string]any
		c.do("GET", "/agent/identities/"+extraIdentity, nil).json(t, &agent)
		assert.Equal(t, "teal", agent["avatar_color"])
		assert.Equal(t, "Triage bot", agent["name"])
		var agents struct{ Agents []map[string]any }
		c.do("GET", "/agent/identities", nil).json(t, &agents)
		for _, a := range agents.Agents {
			if a["uid"] == extraIdentity {
				assert.Equal(t, "teal", a["avatar_color"])
			}
		}
		var sc map[string]any
		c.do("GET", "/agent/schedules/sch_nightly", nil).json(t, &sc)
		assert.Equal(t, "Europe/Paris", sc["timezone"])
		assert.Equal(t, 2.0, sc["history"].(map[string]any)["skipped"])
		assert.Contains(t, sc["history"], "next_run", "the mock's own history stays")
		var scs struct{ Schedules []map[string]any }
		c.do("GET", "/agent/schedules", nil).json(t, &scs)
		require.Len(t, scs.Schedules, 1)
		assert.Equal(t, "Europe/Paris", scs.Schedules[0]["timezone"])
	}
	t.Run("as loaded", func(t *testing.T) { check(t, c.on(t)) })

	// An update keeps what the agent was seen with.
	r := c.do("PUT", "/agent/identities/"+extraIdentity, map[string]any{"name": "Triage", "prompt": "Sort new issues"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var renamed map[string]any
	r.json(t, &renamed)
	assert.Equal(t, "teal", renamed["avatar_color"], "with settings too")
	assert.Equal(t, "Sort new issues", renamed["prompt"])
	r = c.do("PUT", "/agent/identities/"+extraIdentity, map[string]any{"name": "Triage bot"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)

	var state bytes.Buffer
	require.NoError(t, src.Save(&state))
	restored := newServer(t, mockserver.Options{Fixtures: withExtras(t)})
	require.NoError(t, restored.Load(&state))
	t.Run("after a save and a load", func(t *testing.T) { check(t, serve(t, restored).as(extraRunKey).on(t)) })
}

// A fixture whose extra members the mock cannot put back is refused,
// naming its file, its object and the pointer: one that is not a JSON
// Pointer, one inside another extra, and one the document declares (the
// mock sends that member itself).
func TestBadFixtureExtrasAreRefused(t *testing.T) {
	for name, tc := range map[string]struct {
		extra map[string]any
		want  string
	}{
		"no slash":         {map[string]any{"rollout_ring": 1}, `runs.json: run ` + extraRun + `: extra "rollout_ring" is not a JSON Pointer`},
		"bad escape":       {map[string]any{"/a~2b": 1}, `extra "/a~2b" is not a JSON Pointer`},
		"the whole run":    {map[string]any{"": 1}, `extra "" points at the whole object`},
		"inside another":   {map[string]any{"/ring": map[string]any{}, "/ring/x": 1}, `extra "/ring/x" lies inside the extra "/ring"`},
		"documented":       {map[string]any{"/title": "x"}, `runs.json: run ` + extraRun + `: extra "/title" is a member the document declares`},
		"documented below": {map[string]any{"/status_message/message": "x"}, `extra "/status_message/message" is a member the document declares`},
	} {
		t.Run(name, func(t *testing.T) {
			set, err := fixtures.Load(fixturesWithExtras(t, map[string]func(map[string]any){"runs.json": extrasOn("run_id", extraRun, tc.extra)}))
			if err == nil {
				_, err = mockserver.New(mockserver.Options{Fixtures: set})
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// What is no pointer is said once, not again as the object the others
	// lie inside.
	_, err := fixtures.Load(fixturesWithExtras(t, map[string]func(map[string]any){
		"runs.json": extrasOn("run_id", extraRun, map[string]any{"": 1, "/ring": 2})}))
	require.ErrorContains(t, err, `extra "" points at the whole object`)
	assert.NotContains(t, err.Error(), "lies inside")
	// The other files' objects are named too.
	set, err := fixtures.Load(fixturesWithExtras(t, map[string]func(map[string]any){
		"models.json": extrasOn("id", extraModel, map[string]any{"/provider": "OPENAI"})}))
	require.NoError(t, err)
	_, err = mockserver.New(mockserver.Options{Fixtures: set})
	require.ErrorContains(t, err, `models.json: auto: extra "/provider" is a member the document declares`)
	_, err = fixtures.Load(fixturesWithExtras(t, map[string]func(map[string]any){
		"schedules.json": extrasOn("id", "sch_nightly", map[string]any{"timezone": "x"})}))
	require.ErrorContains(t, err, `schedules.json: schedule "sch_nightly": extra "timezone" is not a JSON Pointer`)
	_, err = fixtures.Load(fixturesWithExtras(t, map[string]func(map[string]any){
		"runs.json": extrasOn("run_id", extraRun, map[string]any{"/a": 1}), "environments.json": func(e map[string]any) { e["extras"] = map[string]any{} }}))
	require.ErrorContains(t, err, `unknown field "extras"`, "a misspelt member is refused as before")
}
