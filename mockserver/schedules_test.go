package mockserver_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/mockserver/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func (c *client) createSchedule(body map[string]any) mockserver.ScheduledAgentItem {
	c.t.Helper()
	r := c.do("POST", "/agent/schedules", body)
	require.Equal(c.t, http.StatusCreated, r.status, "create schedule: %s", r.body)
	var out mockserver.ScheduledAgentItem
	r.json(c.t, &out)
	return out
}

func (c *client) schedule(id string) mockserver.ScheduledAgentItem {
	c.t.Helper()
	r := c.do("GET", "/agent/schedules/"+id, nil)
	require.Equal(c.t, http.StatusOK, r.status, "get schedule: %s", r.body)
	var out mockserver.ScheduledAgentItem
	r.json(c.t, &out)
	return out
}

func (c *client) scheduleRuns(id string) []mockserver.RunItem {
	c.t.Helper()
	return c.list("limit=500&sort_by=created_at&sort_order=asc&schedule_id=" + id).Runs
}

func nightly(name string) map[string]any {
	return map[string]any{"name": name, "cron_schedule": "0 3 * * *", "prompt": "Triage the issues opened since yesterday"}
}

func TestSchedulesCreateListGetReplaceDelete(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	made := c.createSchedule(map[string]any{"name": "Nightly triage", "cron_schedule": "0 3 * * *", "prompt": "Triage new issues",
		"agent_config": map[string]any{"environment_id": "env-web-app", "model_id": "gpt-5"}})
	assert.NotEmpty(t, made.ID)
	assert.Equal(t, "Nightly triage", made.Name)
	assert.Equal(t, "0 3 * * *", made.CronSchedule)
	assert.True(t, made.Enabled, "enabled by default")
	assert.Equal(t, "Triage new issues", made.Prompt)
	assert.Nil(t, made.LastSpawnError)
	assert.Equal(t, "env-web-app", made.AgentConfig.EnvironmentID)
	require.NotNil(t, made.Environment, "the environment is resolved")
	assert.Equal(t, "Web app (Node 20)", made.Environment.Name)
	assert.Equal(t, "user-alice", made.CreatedBy.UID)
	assert.Equal(t, "user-alice", made.UpdatedBy.UID)
	assert.Equal(t, &struct{ Type, UID string }{"Team", "team-acme"}, &struct{ Type, UID string }{made.Scope.Type, made.Scope.UID}, "a caller on one team gets a team schedule")
	assert.Nil(t, made.History.LastRan)
	require.NotNil(t, made.History.NextRun)
	assert.Equal(t, "2026-03-02T03:00:00.000Z", *made.History.NextRun, "the next 03:00 UTC after the clock's start")
	assert.Equal(t, made, c.schedule(made.ID))

	for _, n := range []string{"Weekly report", "Alpha sweep"} {
		c.createSchedule(nightly(n))
	}
	own := c.createSchedule(map[string]any{"name": "Mine only", "cron_schedule": "0 3 * * *", "prompt": "x", "team": false})
	assert.Equal(t, "User", own.Scope.Type)
	assert.Equal(t, "user-alice", own.Scope.UID)
	var list mockserver.ListScheduledAgentsResponse
	c.do("GET", "/agent/schedules", nil).json(t, &list)
	var names []string
	for _, s := range list.Schedules {
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"Alpha sweep", "Mine only", "Nightly triage", "Weekly report"}, names, "sorted by name")

	c.advance(time.Minute)
	r := c.as("wk-mock-bob").do("PUT", "/agent/schedules/"+made.ID, map[string]any{"name": "Nightly triage v2", "cron_schedule": "30 4 * * 1-5", "enabled": true, "prompt": "Triage, then label"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var put mockserver.ScheduledAgentItem
	r.json(t, &put)
	assert.Equal(t, "Nightly triage v2", put.Name)
	assert.Equal(t, "30 4 * * 1-5", put.CronSchedule)
	assert.Equal(t, "Triage, then label", put.Prompt)
	assert.Equal(t, "user-alice", put.CreatedBy.UID, "the owner stays")
	assert.Equal(t, "user-bob", put.UpdatedBy.UID)
	assert.Equal(t, made.CreatedAt, put.CreatedAt)
	assert.NotEqual(t, made.UpdatedAt, put.UpdatedAt)
	assert.Equal(t, "2026-03-02T04:30:00.000Z", *put.History.NextRun)

	r = c.do("DELETE", "/agent/schedules/"+made.ID, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.JSONEq(t, `{"success":true}`, string(r.body))
	assert.Equal(t, http.StatusNotFound, c.do("GET", "/agent/schedules/"+made.ID, nil).status)
	assert.Equal(t, http.StatusNotFound, c.do("DELETE", "/agent/schedules/"+made.ID, nil).status)
}

func TestSchedulePauseAndResume(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	s := c.createSchedule(nightly("Nightly"))
	r := c.do("POST", "/agent/schedules/"+s.ID+"/pause", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var paused mockserver.ScheduledAgentItem
	r.json(t, &paused)
	assert.False(t, paused.Enabled)
	assert.Nil(t, paused.History.NextRun, "a paused schedule has no next run")

	c.advance(72 * time.Hour)
	assert.Empty(t, c.scheduleRuns(s.ID), "a paused schedule starts nothing")

	r = c.do("POST", "/agent/schedules/"+s.ID+"/resume", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var resumed mockserver.ScheduledAgentItem
	r.json(t, &resumed)
	assert.True(t, resumed.Enabled)
	assert.Equal(t, "2026-03-05T03:00:00.000Z", *resumed.History.NextRun)
	assert.Empty(t, c.scheduleRuns(s.ID), "ticks missed while paused are not made up")
	c.advance(24 * time.Hour)
	assert.Len(t, c.scheduleRuns(s.ID), 1)

	// Created paused: nothing until resumed.
	off := nightly("Off")
	off["enabled"] = false
	s2 := c.createSchedule(off)
	assert.False(t, s2.Enabled)
	c.advance(48 * time.Hour)
	assert.Empty(t, c.scheduleRuns(s2.ID))
}

func TestScheduleBadRequests(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	s := c.createSchedule(nightly("Nightly"))
	for _, tc := range []struct {
		name, method, path string
		body               any
		field              string
	}{
		{"cron that does not parse", "POST", "/agent/schedules", map[string]any{"name": "x", "cron_schedule": "every day", "prompt": "p"}, "cron_schedule"},
		{"cron with 6 fields", "POST", "/agent/schedules", map[string]any{"name": "x", "cron_schedule": "0 0 3 * * *", "prompt": "p"}, "cron_schedule"},
		{"cron minute 61", "POST", "/agent/schedules", map[string]any{"name": "x", "cron_schedule": "61 3 * * *", "prompt": "p"}, "cron_schedule"},
		{"cron with a time zone", "POST", "/agent/schedules", map[string]any{"name": "x", "cron_schedule": "CRON_TZ=Europe/Paris 0 3 * * *", "prompt": "p"}, "cron_schedule"},
		{"no name", "POST", "/agent/schedules", map[string]any{"cron_schedule": "0 3 * * *", "prompt": "p"}, "name"},
		{"blank name", "POST", "/agent/schedules", map[string]any{"name": "  ", "cron_schedule": "0 3 * * *", "prompt": "p"}, "name"},
		{"no cron", "POST", "/agent/schedules", map[string]any{"name": "x", "prompt": "p"}, "cron_schedule"},
		{"neither prompt nor skill", "POST", "/agent/schedules", map[string]any{"name": "x", "cron_schedule": "0 3 * * *"}, "prompt"},
		{"a bad skill spec", "POST", "/agent/schedules", map[string]any{"name": "x", "cron_schedule": "0 3 * * *", "agent_config": map[string]any{"skill_spec": "nope"}}, "skill_spec"},
		{"replace without enabled", "PUT", "/agent/schedules/" + s.ID, map[string]any{"name": "x", "cron_schedule": "0 3 * * *", "prompt": "p"}, "enabled"},
		{"replace with a bad cron", "PUT", "/agent/schedules/" + s.ID, map[string]any{"name": "x", "cron_schedule": "0 25 * * *", "prompt": "p", "enabled": true}, "cron_schedule"},
		{"replace without a prompt", "PUT", "/agent/schedules/" + s.ID, map[string]any{"name": "x", "cron_schedule": "0 3 * * *", "enabled": true}, "prompt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.on(t).do(tc.method, tc.path, tc.body)
			require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
			p := r.problem(t)
			assert.Contains(t, p.Detail, tc.field)
		})
	}
	assert.Equal(t, "Nightly", c.schedule(s.ID).Name, "a refused replace changes nothing")
	assert.Equal(t, http.StatusNotFound, c.do("GET", "/agent/schedules/sch_nope", nil).status)
	assert.Equal(t, http.StatusNotFound, c.do("POST", "/agent/schedules/sch_nope/pause", nil).status)
	assert.Equal(t, http.StatusNotFound, c.do("PUT", "/agent/schedules/sch_nope", map[string]any{"name": "x", "cron_schedule": "0 3 * * *", "prompt": "p", "enabled": true}).status)
	for _, path := range []string{"/agent/schedules", "/agent/schedules/" + s.ID, "/agent"} {
		assert.Equal(t, http.StatusUnauthorized, c.as("").do("GET", path, nil).status, path)
	}
	assert.Equal(t, http.StatusUnauthorized, c.as("").do("POST", "/agent/schedules", nightly("x")).status)
}

func TestAnotherTeamsScheduleIsForbiddenAndUnlisted(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	s := c.createSchedule(nightly("Acme nightly"))
	carol := c.as("wk-mock-carol")
	for _, req := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/agent/schedules/" + s.ID, nil},
		{"PUT", "/agent/schedules/" + s.ID, map[string]any{"name": "x", "cron_schedule": "0 3 * * *", "prompt": "p", "enabled": true}},
		{"DELETE", "/agent/schedules/" + s.ID, nil},
		{"POST", "/agent/schedules/" + s.ID + "/pause", nil},
		{"POST", "/agent/schedules/" + s.ID + "/resume", nil},
	} {
		r := carol.do(req.method, req.path, req.body)
		assert.Equal(t, http.StatusForbidden, r.status, "%s %s: %s", req.method, req.path, r.body)
	}
	var list mockserver.ListScheduledAgentsResponse
	carol.do("GET", "/agent/schedules", nil).json(t, &list)
	assert.Empty(t, list.Schedules)
	assert.Equal(t, "Acme nightly", c.as("wk-mock-bob").schedule(s.ID).Name, "a teammate sees it")

	// Its runs are the team's: carol cannot see them either.
	c.advance(24 * time.Hour)
	runs := c.scheduleRuns(s.ID)
	require.Len(t, runs, 1)
	assert.Equal(t, http.StatusForbidden, carol.do("GET", "/agent/runs/"+runs[0].RunID, nil).status)
	assert.Empty(t, carol.list("schedule_id="+s.ID).Runs)
	// Schedules are per mock session.
	assert.Equal(t, http.StatusNotFound, c.in("elsewhere").do("GET", "/agent/schedules/"+s.ID, nil).status)
}

// The promise: a daily schedule spawns exactly N runs over N days,
// each at its tick, and each reaches its final state.
func TestDailyScheduleSpawnsOneRunPerDayEachReachingItsEnd(t *testing.T) {
	for _, days := range []int{1, 3, 7} {
		t.Run(fmt.Sprintf("%d days", days), func(t *testing.T) {
			c := newMock(t, mockserver.Options{Step: 10 * time.Minute}).on(t)
			s := c.createSchedule(map[string]any{"name": "Nightly", "cron_schedule": "0 3 * * *", "prompt": "Nightly build check",
				"agent_config": map[string]any{"name": "nightly-check", "environment_id": "env-backend"}})
			c.advance(time.Duration(days) * 24 * time.Hour)
			runs := c.scheduleRuns(s.ID)
			require.Len(t, runs, days)
			for i, r := range runs {
				assert.Equal(t, clockStart.Truncate(24*time.Hour).Add(time.Duration(i+1)*24*time.Hour+3*time.Hour).Format("2006-01-02T15:04:05.000Z"), r.CreatedAt, "run %d at its tick", i)
				assert.Equal(t, "SCHEDULED_AGENT", r.Source)
				assert.Equal(t, &store.Schedule{ID: s.ID, Name: "Nightly", Cron: "0 3 * * *"}, r.Schedule)
				assert.Equal(t, "Nightly build check", r.Prompt)
				assert.Equal(t, "nightly-check", r.AgentConfig.Name)
				assert.Equal(t, "user-alice", r.Creator.UID)
				assert.Equal(t, "Team", r.Scope.Type)
			}
			// The last one started at 03:00, 9 hours ago: all have ended.
			for _, r := range runs {
				assert.Equal(t, mockserver.Succeeded, c.get(r.RunID).State)
			}
			got := c.schedule(s.ID)
			assert.Equal(t, runs[days-1].CreatedAt, *got.History.LastRan)
			assert.Equal(t, clockStart.Add(time.Duration(days)*24*time.Hour).Truncate(24*time.Hour).Add(27*time.Hour).Format("2006-01-02T15:04:05.000Z"), *got.History.NextRun)
			// Listing again, or moving the clock by less than a day, adds nothing.
			c.advance(time.Hour)
			assert.Len(t, c.scheduleRuns(s.ID), days)
		})
	}
}

func TestScheduledRunsFollowFateRulesAndComeInTickOrder(t *testing.T) {
	srv := newServer(t, mockserver.Options{Step: time.Second})
	c := serve(t, srv)
	sess := srv.DefaultSession()
	_, err := sess.AddFate(mockserver.FateRule{PromptPattern: "(?i)hourly", State: mockserver.Failed, ErrorCode: "insufficient_credits"})
	require.NoError(t, err)
	a := c.createSchedule(map[string]any{"name": "B hourly", "cron_schedule": "0 * * * *", "prompt": "Hourly check"})
	b := c.createSchedule(map[string]any{"name": "A every 30", "cron_schedule": "*/30 * * * *", "prompt": "Sweep every half an hour"})
	c.advance(3 * time.Hour)
	all := c.list("limit=500&source=SCHEDULED_AGENT&sort_by=created_at&sort_order=asc&created_after=2026-03-01T12:00:00Z").Runs
	var got []string
	for _, r := range all {
		got = append(got, r.CreatedAt[11:16]+" "+r.Schedule.Name)
	}
	assert.Equal(t, []string{"12:30 A every 30", "13:00 B hourly", "13:00 A every 30", "13:30 A every 30", "14:00 B hourly", "14:00 A every 30", "14:30 A every 30", "15:00 B hourly", "15:00 A every 30"}, got)
	c.advance(time.Minute)
	for _, r := range c.scheduleRuns(a.ID) {
		assert.Equal(t, mockserver.Failed, r.State, "the fate rule applies to scheduled runs")
		if assert.NotNil(t, r.StatusMessage) {
			assert.Equal(t, "insufficient_credits", r.StatusMessage.ErrorCode)
		}
	}
	for _, r := range c.scheduleRuns(b.ID)[:5] {
		assert.Equal(t, mockserver.Succeeded, r.State)
	}
}

func TestOneClockMoveStartsAtMostTheBoundOfRunsPerSchedule(t *testing.T) {
	srv := newServer(t, mockserver.Options{})
	c := serve(t, srv)
	s := c.createSchedule(map[string]any{"name": "Every minute", "cron_schedule": "* * * * *", "prompt": "tick"})
	c.advance(30 * 24 * time.Hour) // 43,200 ticks
	runs, err := srv.DefaultSession().ScheduleRuns(s.ID)
	require.NoError(t, err)
	require.Equal(t, store.MaxTicksPerCatchUp, len(runs))
	end := clockStart.Add(30 * 24 * time.Hour)
	assert.Equal(t, end.Format("2006-01-02T15:04:05.000Z"), runs[len(runs)-1].CreatedAt, "the newest ticks are kept")
	assert.Equal(t, end.Add(-time.Duration(store.MaxTicksPerCatchUp-1)*time.Minute).Format("2006-01-02T15:04:05.000Z"), runs[0].CreatedAt)
	got := c.schedule(s.ID)
	require.NotNil(t, got.LastSpawnError)
	assert.Contains(t, *got.LastSpawnError, "were skipped")
	assert.Contains(t, *got.LastSpawnError, "2026-03-01T12:01:00Z", "names the first skipped tick")
	// The next move is an ordinary one, and clears the note.
	c.advance(2 * time.Minute)
	runs, err = srv.DefaultSession().ScheduleRuns(s.ID)
	require.NoError(t, err)
	assert.Equal(t, store.MaxTicksPerCatchUp+2, len(runs))
	assert.Nil(t, c.schedule(s.ID).LastSpawnError)
}

// --max-runs is one rule for a create and for a run a schedule starts:
// each team's own runs count, not the fixtures' nor another team's, and a
// full team is answered alike (429, retryable false) whichever path asks.
func TestScheduleRunsCountAgainstTheirTeamsMaxRuns(t *testing.T) {
	c := newMock(t, mockserver.Options{MaxRuns: 2})
	require.Greater(t, len(walkAll(t, c, "")), 2, "the fixtures alone exceed the cap")
	carol := c.as("wk-mock-carol")
	carol.create(map[string]any{"prompt": "globex 1"})
	carol.create(map[string]any{"prompt": "globex 2"}) // another team is full
	s := c.createSchedule(nightly("Nightly"))
	c.advance(24 * time.Hour)
	got := c.schedule(s.ID)
	assert.Nil(t, got.LastSpawnError, "neither fixtures nor another team's runs stop a schedule")
	require.NotNil(t, got.History.LastRan)

	c.create(map[string]any{"prompt": "the team's second run"}) // the direct path counts the scheduled run
	r := c.do("POST", "/agent/runs", map[string]any{"prompt": "one too many"})
	require.Equal(t, http.StatusTooManyRequests, r.status, "%s", r.body)
	created := r.problem(t)
	r = c.do("POST", "/__mock/schedules/"+s.ID+"/fire", nil)
	require.Equal(t, http.StatusTooManyRequests, r.status, "%s", r.body)
	fired := r.problem(t)
	assert.False(t, fired.Retryable, "waiting frees nothing")
	assert.Equal(t, "false", r.header.Get("X-Should-Retry"))
	assert.Empty(t, r.header.Get("Retry-After"))
	assert.Equal(t, created.Type, fired.Type)
	assert.Equal(t, created.Detail, fired.Detail, "one rule, one answer")

	c.advance(24 * time.Hour)
	got = c.schedule(s.ID)
	require.NotNil(t, got.LastSpawnError)
	assert.Contains(t, *got.LastSpawnError, "was not started")
	assert.Contains(t, *got.LastSpawnError, "--max-runs")
	require.Equal(t, http.StatusOK, c.do("POST", "/__mock/reset", nil).status)
}

func TestControlListsAScheduleRunsAndFiresItNow(t *testing.T) {
	srv := newServer(t, mockserver.Options{})
	c := serve(t, srv)
	s := c.createSchedule(nightly("Nightly"))
	require.Equal(t, http.StatusOK, c.do("POST", "/agent/schedules/"+s.ID+"/pause", nil).status)

	r := c.do("POST", "/__mock/schedules/"+s.ID+"/fire", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var fired mockserver.RunItem
	r.json(t, &fired)
	assert.Equal(t, "SCHEDULED_AGENT", fired.Source)
	assert.Equal(t, clockStart.Format("2006-01-02T15:04:05.000Z"), fired.CreatedAt, "fired now, though paused")

	var listed mockserver.ScheduleRuns
	r = c.do("GET", "/__mock/schedules/"+s.ID+"/runs", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r.json(t, &listed)
	require.Len(t, listed.Runs, 1)
	assert.Equal(t, fired.RunID, listed.Runs[0].RunID)
	assert.Equal(t, http.StatusNotFound, c.do("POST", "/__mock/schedules/sch_nope/fire", nil).status)
	assert.Equal(t, http.StatusNotFound, c.do("GET", "/__mock/schedules/sch_nope/runs", nil).status)

	// The Go API does the same.
	sess := srv.DefaultSession()
	run, err := sess.FireSchedule(s.ID)
	require.NoError(t, err)
	runs, err := sess.ScheduleRuns(s.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{fired.RunID, run.RunID}, ids(runs))
	_, err = sess.FireSchedule("sch_nope")
	assert.ErrorIs(t, err, store.ErrScheduleNotFound)

	// A reset forgets schedules.
	c.do("POST", "/__mock/reset", nil)
	assert.Equal(t, http.StatusNotFound, c.do("GET", "/agent/schedules/"+s.ID, nil).status)
}

// Schedules are kept in the state file. Ticks that fell while the mock was
// down (a real clock moves on across a restart) start their runs on the
// first use after the restart, as for any clock move.
func TestSchedulesSurviveARestartAndMissedTicksAreStarted(t *testing.T) {
	wall1 := &fakeWall{now: clockStart}
	opts := mockserver.Options{ClockMode: mockserver.RealClock, ClockStart: clockStart, Step: time.Second, Wall: wall1.Now}
	s1 := newServer(t, opts)
	c1 := serve(t, s1)
	s := c1.createSchedule(map[string]any{"name": "Nightly", "cron_schedule": "0 3 * * *", "prompt": "p", "agent_config": map[string]any{"skill_spec": "acme/agent-skills:dependency-bumps"}})
	paused := c1.createSchedule(nightly("Paused"))
	c1.do("POST", "/agent/schedules/"+paused.ID+"/pause", nil)
	wall1.Add(24 * time.Hour)
	require.Len(t, c1.scheduleRuns(s.ID), 1)
	before := c1.schedule(s.ID)
	var buf bytes.Buffer
	require.NoError(t, s1.Save(&buf))
	assert.Contains(t, buf.String(), `"schedules"`)

	wall2 := &fakeWall{now: wall1.Now().Add(48 * time.Hour)} // down for two days
	opts.Wall = wall2.Now
	s2 := newServer(t, opts)
	require.NoError(t, s2.Load(bytes.NewReader(buf.Bytes())))
	c2 := serve(t, s2)
	after := c2.schedule(s.ID)
	assert.Equal(t, before.Name, after.Name)
	assert.Equal(t, before.AgentConfig, after.AgentConfig)
	assert.Equal(t, before.CreatedBy, after.CreatedBy)
	runs := c2.scheduleRuns(s.ID)
	require.Len(t, runs, 3, "the two ticks missed while down are started")
	assert.Equal(t, []string{"2026-03-02T03:00:00.000Z", "2026-03-03T03:00:00.000Z", "2026-03-04T03:00:00.000Z"}, []string{runs[0].CreatedAt, runs[1].CreatedAt, runs[2].CreatedAt})
	assert.False(t, c2.schedule(paused.ID).Enabled)
	assert.Empty(t, c2.scheduleRuns(paused.ID))

	// A damaged schedule is refused with the rest of the file.
	at := strings.Index(buf.String(), `"schedules":[`)
	require.Positive(t, at)
	bad := buf.String()[:at] + strings.Replace(buf.String()[at:], `"cron_schedule":"0 3 * * *"`, `"cron_schedule":"not cron"`, 1)
	assert.ErrorIs(t, newServer(t, opts).Load(strings.NewReader(bad)), mockserver.ErrBadStateFile)
}

func TestSkills(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	var got mockserver.ListAgentsResponse
	c.do("GET", "/agent", nil).json(t, &got)
	names := func(l mockserver.ListAgentsResponse) (out []string) {
		for _, a := range l.Agents {
			out = append(out, a.Name)
		}
		return out
	}
	assert.Equal(t, []string{"dependency-bumps", "release-notes", "store-screenshots", "triage", "ui-sweep"}, names(got), "the skills of acme's environments and of the one globex shares with it, by name")
	rn := got.Agents[1]
	require.Len(t, rn.Variants, 2, "two SKILL.md files named release-notes")
	assert.Equal(t, "acme/agent-skills:skills/release-notes/SKILL.md", rn.Variants[0].ID)
	assert.Equal(t, "acme/api:.claude/skills/release-notes/SKILL.md", rn.Variants[1].ID)
	assert.Equal(t, mockserver.AgentListSource{Owner: "acme", Name: "api", SkillPath: ".claude/skills/release-notes/SKILL.md"}, rn.Variants[1].Source)
	assert.NotEmpty(t, rn.Variants[1].BasePrompt)
	assert.Equal(t, []mockserver.AgentListEnvironment{{UID: "env-backend", Name: "Backend (Go 1.26)"}}, rn.Variants[1].Environments)

	c.do("GET", "/agent?repo=acme/api", nil).json(t, &got)
	assert.Equal(t, []string{"release-notes", "triage"}, names(got))
	c.do("GET", "/agent?include_malformed_skills=true&refresh=true", nil).json(t, &got)
	assert.Equal(t, []string{"broken", "dependency-bumps", "release-notes", "store-screenshots", "triage", "ui-sweep"}, names(got))
	assert.Contains(t, got.Agents[0].Variants[0].Error, "front matter")
	c.as("wk-mock-carol").do("GET", "/agent", nil).json(t, &got)
	assert.Equal(t, []string{"dependency-bumps", "release-notes", "store-screenshots", "triage", "ui-sweep"}, names(got),
		"globex's own environment and the two acme shares with it")

	// last_run_timestamp comes from the runs that used the skill; a create
	// with a skill takes its name and base prompt from that skill.
	c.advance(time.Minute)
	id := c.create(map[string]any{"skill": "acme/api:triage"}).RunID
	run := c.get(id)
	assert.Equal(t, "triage", run.AgentConfig.Name)
	assert.Equal(t, "You read new issues, label them and assign the owning team.", run.AgentConfig.BasePrompt)
	c.do("GET", "/agent?sort_by=last_run", nil).json(t, &got)
	assert.Equal(t, "triage", got.Agents[0].Name, "most recently run first")
	require.NotNil(t, got.Agents[0].Variants[0].LastRunTimestamp)
	assert.Equal(t, run.CreatedAt, *got.Agents[0].Variants[0].LastRunTimestamp)
	assert.Nil(t, got.Agents[len(got.Agents)-1].Variants[0].LastRunTimestamp, "never run: last")

	for _, q := range []string{"sort_by=size", "refresh=maybe", "include_malformed_skills=2", "repo=justaname"} {
		r := c.do("GET", "/agent?"+q, nil)
		assert.Equal(t, http.StatusBadRequest, r.status, "%s: %s", q, r.body)
	}
}

// A replace of a schedule the caller may not see, or that is not there,
// is refused for that (403, 404) before anything its body lacks is named,
// as a follow-up to such a run is.
func TestAReplaceOfAnotherTeamsOrAnUnknownScheduleIsRefusedBeforeItsBody(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	s := c.createSchedule(nightly("Acme nightly"))
	incomplete := map[string]any{"name": "x"}
	r := c.as("wk-mock-carol").do("PUT", "/agent/schedules/"+s.ID, incomplete)
	assert.Equal(t, http.StatusForbidden, r.status, "%s", r.body)
	r = c.do("PUT", "/agent/schedules/sch_nope", incomplete)
	assert.Equal(t, http.StatusNotFound, r.status, "%s", r.body)
	// The owner still hears what the body lacks.
	r = c.do("PUT", "/agent/schedules/"+s.ID, incomplete)
	assert.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
}
