package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// userTexts is the text of every user message of the run's conversation.
func userTexts(t *testing.T, ms *Session, r *Run) []string {
	t.Helper()
	cv, err := ms.RunConversation(alice(ms.st), r.ID)
	require.NoError(t, err)
	var out []string
	for _, x := range cv.Exchanges {
		for _, m := range x.Messages {
			if m.Role == "user" {
				out = append(out, m.Blocks[0].Text)
			}
		}
	}
	return out
}

func TestFollowupToARunningRunJoinsItsConversation(t *testing.T) {
	st := newTestStore(t)
	ms := open(t, st, "")
	r := create(t, ms, alice(st), "Bump the lint rules")
	_, err := ms.Followup(alice(st), r.ID, "Before it starts", "")
	require.NoError(t, err)
	_, _ = ms.Advance(5 * time.Second) // INPROGRESS
	v, err := ms.Followup(alice(st), r.ID, "Also update the changelog", "plan")
	require.NoError(t, err)
	assert.Equal(t, InProgress, v.Snap.State, "a running run keeps running")
	assert.Equal(t, []string{"Bump the lint rules", "Before it starts", "Also update the changelog"}, userTexts(t, ms, r))
	assert.Equal(t, "plan", r.FollowupList()[1].Mode)
}

func TestFollowupAnswersABlockedRun(t *testing.T) {
	st := newTestStore(t)
	ms := open(t, st, "")
	r := create(t, ms, alice(st), "Migrate the orders table")
	_, err := ms.Force(r.ID, Blocked, nil)
	require.NoError(t, err)
	v, err := ms.Followup(alice(st), r.ID, "Yes, drop the old column", "")
	require.NoError(t, err)
	assert.Equal(t, InProgress, v.Snap.State)
	_, _ = ms.Advance(time.Minute)
	v, _ = ms.Get(alice(st), r.ID)
	assert.Equal(t, Succeeded, v.Snap.State, "the answered run goes on to its end")
}

func TestFollowupStartsAnEndedRunAgain(t *testing.T) {
	st := newTestStore(t)
	ms := open(t, st, "")
	n := newRun(ms, "Draft the release notes")
	n.Fate.Handoff = []string{"workspace.tar.gz"}
	v, err := ms.Create(alice(st), n)
	require.NoError(t, err)
	r := v.Run
	assert.Empty(t, v.HandoffFiles(), "no execution has ended")
	_, _ = ms.Advance(20 * time.Second)
	ended, _ := ms.Get(alice(st), r.ID)
	require.Equal(t, Succeeded, ended.Snap.State)
	assert.Equal(t, 10*time.Second, ended.Snap.RunTime)
	first := ended.HandoffFiles()
	require.Len(t, first, 1)

	v, err = ms.Followup(alice(st), r.ID, "Shorten them to five lines", "")
	require.NoError(t, err)
	assert.Equal(t, Queued, v.Snap.State, "an ended run is queued again")
	assert.Equal(t, ended.Snap.StartedAt, v.Snap.StartedAt, "it keeps its first start")
	assert.Equal(t, 10*time.Second, v.Snap.RunTime, "and the run time of its first execution")
	assert.Equal(t, first, v.HandoffFiles(), "the latest ended execution is still the first")

	_, _ = ms.Advance(20 * time.Second)
	again, _ := ms.Get(alice(st), r.ID)
	assert.Equal(t, Succeeded, again.Snap.State)
	assert.Equal(t, 20*time.Second, again.Snap.RunTime, "both executions")
	second := again.HandoffFiles()
	require.Len(t, second, 1)
	assert.NotEqual(t, first[0].ID, second[0].ID, "each execution leaves files of its own")
	assert.Equal(t, []string{"Draft the release notes", "Shorten them to five lines"}, userTexts(t, ms, r))
	cv, err := ms.RunConversation(alice(st), r.ID)
	require.NoError(t, err)
	assert.Contains(t, cv.Exchanges[0].Summary, "Shorten them to five lines", "the second execution's summary")

	// The events say it started and succeeded twice.
	var kinds []EventType
	for _, e := range ms.EventLog() {
		if e.RunID == r.ID {
			kinds = append(kinds, e.Type)
		}
	}
	assert.Equal(t, []EventType{EventInProgress, EventSucceeded, EventInProgress, EventSucceeded}, kinds)
}

func TestFollowupRefusals(t *testing.T) {
	st := newTestStore(t)
	ms := open(t, st, "")
	r := create(t, ms, alice(st), "Tidy the imports")
	_, err := ms.Followup(alice(st), r.ID, "", "")
	failsWith(t, err, ErrFollowupEmpty, Invalid)
	_, err = ms.Followup(alice(st), "no-such-run", "hello", "")
	failsWith(t, err, ErrRunNotFound, NotFound)
	_, err = ms.Followup(carol(st), r.ID, "hello", "")
	failsWith(t, err, ErrOtherTeam, Forbidden)
	var local *Run
	for _, v := range ms.Runs() {
		if v.Run.Source == "LOCAL" {
			local = v.Run
		}
	}
	require.NotNil(t, local, "the fixtures have a LOCAL run")
	_, err = ms.Followup(local.Creator.Principal, local.ID, "hello", "")
	failsWith(t, err, ErrFollowupNotTaken, Unsupported)
	assert.Empty(t, r.FollowupList(), "a refused follow-up leaves nothing behind")
}

func TestNewerFiltersFilter(t *testing.T) {
	st := newTestStore(t)
	ms := open(t, st, "")
	mk := func(prompt string, md map[string]string) string {
		n := newRun(ms, prompt)
		n.Metadata = md
		v, err := ms.Create(alice(st), n)
		require.NoError(t, err)
		return v.Run.ID
	}
	a := mk("a", map[string]string{"ticket_id": "VIS-1", "automation_id": "nightly"})
	b := mk("b", map[string]string{"ticket_id": "VIS-2", "automation_id": "nightly"})
	c := mk("c", map[string]string{"ticket_id": "VIS-1"})
	child := newRun(ms, "child")
	child.ParentRunID = a
	child.Metadata = map[string]string{"ticket_id": "VIS-9"}
	v, err := ms.Create(alice(st), child)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"ticket_id": "VIS-9", "automation_id": "nightly"}, v.Run.Metadata, "inherited, its own keys winning")
	d := v.Run.ID

	list := func(q ListQuery) []string {
		q.Limit = 100
		page, err := ms.List(alice(st), q)
		require.NoError(t, err)
		var ids []string
		for _, v := range page.Runs {
			ids = append(ids, v.Run.ID)
		}
		return ids
	}
	assert.ElementsMatch(t, []string{a, c}, list(ListQuery{Metadata: map[string]string{"ticket_id": "VIS-1"}}))
	assert.ElementsMatch(t, []string{a}, list(ListQuery{Metadata: map[string]string{"ticket_id": "VIS-1", "automation_id": "nightly"}}))
	assert.ElementsMatch(t, []string{a, b, d}, list(ListQuery{AutomationID: "nightly"}))
	assert.Empty(t, list(ListQuery{AutomationID: "weekly"}))
	assert.Empty(t, list(ListQuery{FactoryUID: "factory-1"}), "the mock has no factories")
	assert.Empty(t, list(ListQuery{Executor: "nobody"}))
	assert.Contains(t, list(ListQuery{Executor: alice(st).UID}), a)
	assert.NotContains(t, list(ListQuery{Executor: ciBot(st).UID}), a)
}

func TestScheduledRunsTakeTheSchedulesMetadataAndMode(t *testing.T) {
	st := newTestStore(t)
	ms := open(t, st, "")
	cron, err := ParseCron("*/5 * * * *")
	require.NoError(t, err)
	sc, err := ms.CreateSchedule(alice(st), ScheduleSpec{Name: "nightly", Cron: cron, Prompt: "Check the links", Enabled: true,
		Config: &AgentConfig{}, TeamScope: true, Metadata: map[string]string{"automation_id": "links"}, Mode: "plan"})
	require.NoError(t, err)
	assert.Equal(t, "plan", sc.Mode)
	_, _ = ms.Advance(6 * time.Minute)
	page, err := ms.List(alice(st), ListQuery{Limit: 10, AutomationID: "links"})
	require.NoError(t, err)
	require.NotEmpty(t, page.Runs)
	assert.Equal(t, "plan", page.Runs[0].Run.Mode)
	assert.Equal(t, sc.ID, page.Runs[0].Run.Schedule.ID)
}
