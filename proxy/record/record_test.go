package record_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/proxy/record"
	"github.com/agentruns/agentruns/rules"
)

func seen(method, path string, body any) rules.Exchange {
	data, _ := json.Marshal(body)
	now := time.Now()
	return rules.Exchange{Method: method, Path: path, Status: http.StatusOK, Body: data, Sent: now, Received: now}
}

func schedule(id, name string, enabled bool) map[string]any {
	return map[string]any{
		"id": id, "name": name, "cron_schedule": "0 3 * * *", "prompt": "Look for flaky tests", "enabled": enabled,
		"created_at": time.Now().Add(-48 * time.Hour).Format(time.RFC3339), "updated_at": time.Now().Add(-time.Hour).Format(time.RFC3339),
		"created_by": map[string]any{"type": "user", "uid": "user-ada", "display_name": "Ada",
			"email": "ada@example.com", "photo_url": "https://cdn.example.com/ada.png?sig=secret"},
		"scope": map[string]any{"type": "Team", "uid": "team-1"},
	}
}

// Schedules seen pass into schedules.json, which the mock serves: the
// recorded world has the schedules its callers listed, and those deleted
// while recording are left out.
func TestSchedulesAreRecordedAndServed(t *testing.T) {
	dir := t.TempDir()
	rec := record.New(dir, 0)
	rec.Observe(seen("GET", "/agent/schedules", map[string]any{"schedules": []any{
		schedule("sch_nightly", "Nightly flaky-test hunt", true), schedule("sch_paused", "Weekly sweep", false), schedule("sch_gone", "Deleted", true),
	}}))
	rec.Observe(seen("GET", "/agent/schedules/sch_skill", map[string]any{"id": "sch_skill", "name": "Skill", "cron_schedule": "0 4 * * *", "enabled": true}))
	del := seen("DELETE", "/agent/schedules/sch_gone", map[string]any{"success": true})
	rec.Observe(del)
	written, err := rec.Write()
	require.NoError(t, err)
	assert.Equal(t, 2, written.(record.Summary).Schedules, "the skill schedule has no prompt to start runs from")

	set, err := fixtures.Load(os.DirFS(dir))
	require.NoError(t, err)
	require.Len(t, set.Schedules, 2)
	assert.Equal(t, "user-ada", set.Schedules[0].Owner)
	assert.True(t, set.Schedules[0].Team)
	require.Len(t, set.Principals, 1)
	assert.Equal(t, "ada@example.com", set.Principals[0].Email, "the owner is recorded as the API showed them")
	assert.Equal(t, "https://cdn.example.com/ada.png", set.Principals[0].PhotoURL, "their photo too, its URL without its query")

	m, err := mockserver.New(mockserver.Options{Fixtures: set})
	require.NoError(t, err)
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/agent/schedules/sch_paused", nil)
	req.Header.Set("Authorization", "Bearer wk-recorded-1")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var got struct {
		Name    string `json:"name"`
		Cron    string `json:"cron_schedule"`
		Enabled bool   `json:"enabled"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	assert.Equal(t, "Weekly sweep", got.Name)
	assert.Equal(t, "0 3 * * *", got.Cron)
	assert.False(t, got.Enabled)
}

// A schedules.json the mock cannot use is refused when the fixtures load
// (fields, owner) or when the mock starts (a cron that does not parse),
// naming the schedule.
func TestBadScheduleFixturesAreRefused(t *testing.T) {
	folder := func(schedules string) fstest.MapFS {
		fsys := fstest.MapFS{}
		for _, name := range []string{"principals.json", "runs.json", "fates.json"} {
			data, err := fs(name)
			require.NoError(t, err)
			fsys[name] = &fstest.MapFile{Data: data}
		}
		fsys["schedules.json"] = &fstest.MapFile{Data: []byte(schedules)}
		return fsys
	}
	const ok = `{"id":"s1","name":"n","cron_schedule":"0 3 * * *","prompt":"p","enabled":true,"owner":"user-alice","created_ago":"1h","updated_ago":"1m"}`
	_, err := fixtures.Load(folder(`{"schedules":[` + ok + `]}`))
	require.NoError(t, err)
	for name, tc := range map[string]struct{ file, want string }{
		"four fields":   {`{"schedules":[{"id":"s1","name":"n","cron_schedule":"0 3 * *","prompt":"p","owner":"user-alice"}]}`, "has 4 fields"},
		"unknown owner": {`{"schedules":[{"id":"s1","name":"n","cron_schedule":"0 3 * * *","prompt":"p","owner":"nobody"}]}`, "not a principal"},
		"a typo":        {`{"schedules":[{"id":"s1","name":"n","cron":"0 3 * * *","prompt":"p","owner":"user-alice"}]}`, "unknown field"},
	} {
		_, err := fixtures.Load(folder(tc.file))
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), tc.want, name)
		}
	}
	set, err := fixtures.Load(folder(`{"schedules":[{"id":"s1","name":"n","cron_schedule":"0 3 * * 9","prompt":"p","owner":"user-alice"}]}`))
	require.NoError(t, err)
	_, err = mockserver.New(mockserver.Options{Fixtures: set})
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), "schedules.json: schedule s1")
	}
}

func fs(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join("..", "..", "fixtures", name))
}

// Identities deleted while recording are left out: a client that filled
// the team's plan and emptied it again leaves the team as it found it.
func TestDeletedIdentitiesAreNotRecorded(t *testing.T) {
	dir := t.TempDir()
	rec := record.New(dir, 0)
	agent := func(uid, name string, def bool) map[string]any {
		return map[string]any{"uid": uid, "name": name, "default": def, "created_at": time.Now().Add(-time.Hour).Format(time.RFC3339)}
	}
	rec.Observe(seen("GET", "/agent/identities", map[string]any{"agents": []any{
		agent("agent-default", "Default", true), agent("agent-kept", "Reviewer", false), agent("agent-gone", "Filler", false),
	}}))
	rec.Observe(seen("DELETE", "/agent/identities/agent-gone", map[string]any{"success": true}))
	written, err := rec.Write()
	require.NoError(t, err)
	assert.Equal(t, 2, written.(record.Summary).Identities)

	set, err := fixtures.Load(os.DirFS(dir))
	require.NoError(t, err)
	var uids []string
	for _, id := range set.Identities {
		uids = append(uids, id.UID)
	}
	assert.ElementsMatch(t, []string{"agent-default", "agent-kept"}, uids)
}

// A recording whose only run has an id the mock cannot serve says so,
// not that nothing passed through.
func TestARecordingOfOnlyUnservableRunsSaysWhy(t *testing.T) {
	rec := record.New(t.TempDir(), 0)
	_, err := rec.Write()
	require.EqualError(t, err, "nothing recorded yet: no run, schedule, environment, model or identity has passed through")
	rec.Observe(seen("GET", "/agent/runs/run.1", map[string]any{"run_id": "run.1", "state": "QUEUED", "title": "t", "prompt": "p"}))
	_, err = rec.Write()
	require.EqualError(t, err, "nothing the mock can serve was recorded: 1 run(s), schedule(s) or agent(s) seen were left out, "+
		"their ids being none the mock takes in a path (1 to 128 letters, digits, '-' or '_')")
}

// A listing answered before a delete may be observed after it: the
// deleted schedule stays deleted, and the recording loads (before, it was
// written twice and the mock refused the repeated id).
func TestADeletedScheduleSeenLateInAListingStaysDeleted(t *testing.T) {
	dir := t.TempDir()
	rec := record.New(dir, 0)
	rec.Observe(seen("GET", "/agent/schedules/sched-gone", schedule("sched-gone", "Nightly", true)))
	rec.Observe(seen("GET", "/agent/schedules", map[string]any{"schedules": []any{schedule("sched-kept", "Weekly", true)}}))
	del := seen("DELETE", "/agent/schedules/sched-gone", map[string]any{"success": true})
	rec.Observe(del)
	rec.Observe(seen("GET", "/agent/schedules", map[string]any{"schedules": []any{
		schedule("sched-gone", "Nightly", true), schedule("sched-kept", "Weekly", true)}}))
	rec.Observe(seen("GET", "/agent/schedules/sched-gone", schedule("sched-gone", "Nightly", true)))
	written, err := rec.Write()
	require.NoError(t, err)
	assert.Equal(t, 1, written.(record.Summary).Schedules)

	set, err := fixtures.Load(os.DirFS(dir))
	require.NoError(t, err)
	require.Len(t, set.Schedules, 1)
	assert.Equal(t, "sched-kept", set.Schedules[0].ID)
}

// A listing that shows a run without its usage, session or conversation
// after a get showed them does not lose them: the recording keeps what
// the get showed.
func TestALaterLookThatShowsLessKeepsTheRunsIds(t *testing.T) {
	dir := t.TempDir()
	rec := record.New(dir, 0)
	now := time.Now()
	run := func(full bool) map[string]any {
		r := map[string]any{"run_id": "run-1", "title": "Run", "prompt": "do it", "state": "SUCCEEDED", "source": "API",
			"created_at": now.Add(-time.Hour).Format(time.RFC3339Nano), "updated_at": now.Add(-time.Minute).Format(time.RFC3339Nano),
			"creator": map[string]any{"type": "user", "uid": "user-1"}}
		if full {
			r["request_usage"] = map[string]any{"inference_cost": 1.27, "compute_cost": 0.31}
			r["session_id"] = "3f0b8c5e-2d4a-4e61-9c7b-5a8e1d2f3c40"
			r["conversation_id"] = "cv_51Hn0"
		}
		return r
	}
	rec.Observe(seen("GET", "/agent/runs/run-1", run(true)))
	rec.Observe(seen("GET", "/agent/runs", map[string]any{"runs": []any{run(false)}}))
	_, err := rec.Write()
	require.NoError(t, err)
	set, err := fixtures.Load(os.DirFS(dir))
	require.NoError(t, err)
	require.Len(t, set.Runs, 1)
	assert.JSONEq(t, `{"inference_cost":1.27,"compute_cost":0.31}`, string(set.Runs[0].RequestUsage))
	assert.Equal(t, "3f0b8c5e-2d4a-4e61-9c7b-5a8e1d2f3c40", set.Runs[0].SessionID)
	assert.Equal(t, "cv_51Hn0", set.Runs[0].ConversationID)
}
