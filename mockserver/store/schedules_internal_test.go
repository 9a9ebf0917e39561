package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustCron(t testing.TB, expr string) Cron {
	t.Helper()
	c, err := ParseCron(expr)
	require.NoError(t, err)
	return c
}

func hourly(t testing.TB, name string) ScheduleSpec {
	return ScheduleSpec{Name: name, Cron: mustCron(t, "0 * * * *"), Prompt: "Triage the new issues", Enabled: true, Config: &AgentConfig{}, TeamScope: true}
}

func TestSchedulesRefuseWithTheirErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(t *testing.T, st *Store, ms *Session) error
		want error
		kind Kind
	}{
		{name: "a cron of four fields", want: ErrBadCron, kind: Invalid,
			do: func(t *testing.T, _ *Store, _ *Session) error { _, err := ParseCron("0 * * *"); return err }},
		{name: "a cron with a time zone", want: ErrBadCron, kind: Invalid,
			do: func(t *testing.T, _ *Store, _ *Session) error {
				_, err := ParseCron("CRON_TZ=Europe/Paris 0 * * * *")
				return err
			}},
		{name: "a cron out of range", want: ErrBadCron, kind: Invalid,
			do: func(t *testing.T, _ *Store, _ *Session) error { _, err := ParseCron("61 * * * *"); return err }},
		{name: "a spec whose cron was not parsed", want: ErrBadCron, kind: Invalid,
			do: func(t *testing.T, st *Store, ms *Session) error {
				spec := hourly(t, "raw")
				spec.Cron = Cron{Expr: "0 * * * *"}
				_, err := ms.CreateSchedule(alice(st), spec)
				return err
			}},
		{name: "get an unknown schedule", want: ErrScheduleNotFound, kind: NotFound,
			do: func(t *testing.T, st *Store, ms *Session) error {
				_, err := ms.GetSchedule(alice(st), "sch_nope")
				return err
			}},
		{name: "update another team's schedule", want: ErrScheduleOther, kind: Forbidden,
			do: func(t *testing.T, st *Store, ms *Session) error {
				sc, err := ms.CreateSchedule(alice(st), hourly(t, "acme"))
				require.NoError(t, err)
				_, err = ms.UpdateSchedule(carol(st), sc.ID, hourly(t, "mine now"))
				return err
			}},
		{name: "delete another team's schedule", want: ErrScheduleOther, kind: Forbidden,
			do: func(t *testing.T, st *Store, ms *Session) error {
				sc, err := ms.CreateSchedule(alice(st), hourly(t, "acme"))
				require.NoError(t, err)
				return ms.DeleteSchedule(carol(st), sc.ID)
			}},
		{name: "fire an unknown schedule", want: ErrScheduleNotFound, kind: NotFound,
			do: func(t *testing.T, _ *Store, ms *Session) error { _, err := ms.FireSchedule("sch_nope"); return err }},
		{name: "the runs of an unknown schedule", want: ErrScheduleNotFound, kind: NotFound,
			do: func(t *testing.T, _ *Store, ms *Session) error { _, err := ms.ScheduleRuns("sch_nope"); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newTestStore(t)
			failsWith(t, tc.do(t, st, open(t, st, "")), tc.want, tc.kind)
		})
	}
}

// TestSchedulesStartRunsOnTheirTicks: ticks become runs when the clock
// passes them, a paused schedule starts none and a resumed one does not
// make up the ticks it missed; a full mock session notes the refusal.
func TestSchedulesStartRunsOnTheirTicks(t *testing.T) {
	st := newTestStore(t)
	ms := open(t, st, "")
	sc, err := ms.CreateSchedule(alice(st), hourly(t, "Triage"))
	require.NoError(t, err)
	assert.Equal(t, t0.Add(time.Hour), sc.NextTick)
	_, err = ms.Advance(3 * time.Hour)
	require.NoError(t, err)
	runs, err := ms.ScheduleRuns(sc.ID)
	require.NoError(t, err)
	require.Len(t, runs, 3)
	assert.Equal(t, "SCHEDULED_AGENT", runs[0].Run.Source)
	assert.Equal(t, t0.Add(time.Hour), runs[0].Run.CreatedAt)

	_, err = ms.SetScheduleEnabled(alice(st), sc.ID, false)
	require.NoError(t, err)
	_, err = ms.Advance(2 * time.Hour)
	require.NoError(t, err)
	got, err := ms.SetScheduleEnabled(alice(st), sc.ID, true)
	require.NoError(t, err)
	assert.Equal(t, t0.Add(6*time.Hour), got.NextTick, "missed ticks are not made up")
	runs, _ = ms.ScheduleRuns(sc.ID)
	assert.Len(t, runs, 3)

	updated, err := ms.UpdateSchedule(alice(st), sc.ID, ScheduleSpec{Name: "Daily", Cron: mustCron(t, " 0  9 * * * "), Prompt: "p", Enabled: true})
	require.NoError(t, err)
	assert.Equal(t, "0 9 * * *", updated.Cron, "fields single-spaced")
	assert.Equal(t, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), updated.NextTick)
	assert.True(t, updated.TeamScope, "an update keeps the scope")
	assert.Equal(t, []ScheduleRecord{updated}, ms.ListSchedules(alice(st)))
	assert.Empty(t, ms.ListSchedules(carol(st)))

	require.NoError(t, ms.DeleteSchedule(alice(st), sc.ID))
	runs, err = ms.ScheduleRuns(sc.ID)
	require.NoError(t, err, "a deleted schedule's runs stay")
	assert.Len(t, runs, 3)

	full := newTestStore(t, func(o *Options) { o.MaxRuns = 1 })
	fm := open(t, full, "")
	fsc, err := fm.CreateSchedule(alice(full), hourly(t, "Triage"))
	require.NoError(t, err)
	_, err = fm.FireSchedule(fsc.ID)
	require.NoError(t, err, "the fixtures' runs do not count")
	_, err = fm.FireSchedule(fsc.ID)
	failsWith(t, err, ErrStoreFull, Exhausted)
	_, err = fm.Advance(time.Hour)
	require.NoError(t, err)
	got, err = fm.GetSchedule(alice(full), fsc.ID)
	require.NoError(t, err)
	assert.Contains(t, got.LastSpawnError, "was not started")
}
