package store

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryTableKnowsItsFields fails when a table, its part of the save or
// one of its records gains a field, until the table's save and restore are
// taught about it and the field is listed here. Records are saved as they
// are (their JSON tags), so a field without a tag, or one tagged "-", must
// be one that is derived on Load.
func TestEveryTableKnowsItsFields(t *testing.T) {
	for _, tc := range []struct {
		v     any
		known []string
	}{
		{(*Session)(nil), []string{"st", "lastUsed", "fates", "attachment", "mu", "clock",
			"environments", "identities", "messages", "schedules", "runs", "artifacts", "events"}},
		{(*savedSession)(nil), []string{"Name", "Clock", "savedRuns", "savedEnvironments", "savedIdentities", "savedMessages", "savedSchedules", "savedEvents"}},
		{(*runTable)(nil), []string{"list", "byID", "byKey", "generation", "cursorKey", "nextSeq", "createdBy", "index", "configs"}},
		{(*savedRuns)(nil), []string{"Generation", "CursorKey", "NextSeq", "Runs"}},
		{(*Run)(nil), []string{"ID", "Seq", "Title", "Prompt", "Source", "Creator", "Team", "TeamScope", "CreatedAt", "Config",
			"FromSkill", "ConversationID", "Schedule", "ArtifactTypes", "TriggerURL", "ParentRunID", "AgentIdentityUID", "Interactive", "Metadata", "Mode", "OnBehalfOf", "Executor", "Followups", "Handoff", "AgentSession", "Timeline", "FateMsg", "ForcedMsg", "ForcedState", "Logged", "indexedAt", "nextAt"}},
		{(*Timeline)(nil), []string{"Anchor", "AnchorState", "Steps", "Final", "StartedAt", "WasClaimed", "Execution", "PriorRun", "ExecStart"}},
		{(*scheduleTable)(nil), []string{"byID", "nextSeq", "dueAt", "due"}},
		{(*savedSchedules)(nil), []string{"Schedules", "NextScheduleSeq"}},
		{(*ScheduleRecord)(nil), []string{"ID", "Seq", "Name", "Cron", "Prompt", "Enabled", "Config", "FromSkill", "Owner", "UpdatedBy",
			"Team", "TeamScope", "CreatedAt", "UpdatedAt", "LastRan", "NextTick", "LastSpawnError", "AgentUID", "Metadata", "Mode", "sched", "heapAt"}},
		{(*identityTable)(nil), []string{"list", "byUID", "byKey"}},
		{(*savedIdentities)(nil), []string{"Agents"}},
		{(*Identity)(nil), []string{"UID", "Team", "Name", "Default", "CreatedAt", "UpdatedAt", "Settings", "KeyHashes", "principal"}},
		{(*messageTable)(nil), []string{"list", "byID", "byRun", "used"}},
		{(*savedMessages)(nil), []string{"Letters", "Messages"}},
		{(*savedMessage)(nil), []string{"ID", "Team", "RecipientID", "Letter", "DeliveredAt", "ReadAt", "SenderRunID", "Subject", "Body", "SentAt"}},
		{(*Message)(nil), []string{"ID", "Team", "RecipientID", "Letter", "DeliveredAt", "ReadAt"}},
		{(*Letter)(nil), []string{"ID", "Team", "SenderRunID", "Subject", "Body", "SentAt"}},
		{(*eventLog)(nil), []string{"log", "pending", "due", "byRun"}},
		{(*savedEvents)(nil), []string{"Events"}},
		{(*environmentTable)(nil), []string{"seededAt"}},
		{(*savedEnvironments)(nil), []string{"SeededAt"}},
		{(*artifactIndex)(nil), []string{"byUID"}},
	} {
		typ := reflect.TypeOf(tc.v).Elem()
		var fields []string
		for i := 0; i < typ.NumField(); i++ {
			fields = append(fields, typ.Field(i).Name)
		}
		assert.ElementsMatch(t, tc.known, fields, "%s changed: teach its table's save and restore about the new field, then list it here", typ.Name())
	}
	// Every stored field of a run is written, under a name of its own.
	typ := reflect.TypeOf(Run{})
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if f.Tag.Get("json") == "" {
			t.Errorf("Run.%s has no json tag: the save would name it after the Go field", f.Name)
		}
	}
	// Every table of a mock session is in the list that resets, saves and
	// restores them.
	ms := &Session{}
	tableType := reflect.TypeOf((*table)(nil)).Elem()
	sessionType := reflect.TypeOf(ms).Elem()
	var tables int
	for i := 0; i < sessionType.NumField(); i++ {
		if reflect.PointerTo(sessionType.Field(i).Type).Implements(tableType) {
			tables++
		}
	}
	assert.Len(t, ms.tables(), tables, "Session.tables lists every table")
}

// issuedKeys carries the identities case's key from its change to its look.
var issuedKeys = map[string]string{}

// TestSaveAndLoadKeepEachResource: what each resource holds after a change
// is what it holds after a save and a load into a new store.
func TestSaveAndLoadKeepEachResource(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, st *Store, ms *Session)
		look   func(t *testing.T, st *Store, ms *Session) any
	}{
		{name: "runs",
			change: func(t *testing.T, st *Store, ms *Session) {
				create(t, ms, alice(st), "Fix the flaky login test")
				r := create(t, ms, carol(st), "Bump the dependencies")
				_, err := ms.Advance(2500 * time.Millisecond)
				require.NoError(t, err)
				_, err = ms.Force(r.ID, Failed, nil)
				require.NoError(t, err)
			},
			look: func(t *testing.T, st *Store, ms *Session) any {
				type shown struct {
					Run  Run
					Snap Snapshot
					Msg  *StatusMessage
				}
				var out []shown
				for _, v := range ms.Runs() {
					r := *v.Run
					r.Creator.Principal = nil    // compared by uid below
					r.indexedAt, r.nextAt = 0, 0 // the index's own, kept up lazily
					out = append(out, shown{r, v.Snap, v.Msg})
					assert.Same(t, st.Principal(v.Run.Creator.UID), v.Run.Creator.Principal, "the fixtures' principal, shared")
				}
				page, err := ms.List(alice(st), ListQuery{Limit: 3})
				require.NoError(t, err)
				var positions []Position
				for i := range page.Runs {
					positions = append(positions, page.After(i))
				}
				return []any{out, ms.CursorKey(), ms.Clock(), positions}
			}},
		{name: "schedules",
			change: func(t *testing.T, st *Store, ms *Session) {
				a, err := ms.CreateSchedule(alice(st), hourly(t, "Triage"))
				require.NoError(t, err)
				_, err = ms.CreateSchedule(carol(st), hourly(t, "Nightly"))
				require.NoError(t, err)
				_, err = ms.Advance(90 * time.Minute)
				require.NoError(t, err)
				_, err = ms.SetScheduleEnabled(alice(st), a.ID, false)
				require.NoError(t, err)
			},
			look: func(t *testing.T, st *Store, ms *Session) any {
				return []any{ms.ListSchedules(alice(st)), ms.ListSchedules(carol(st)), ms.schedules.nextSeq, ms.schedules.dueAt.Load()}
			}},
		{name: "identities",
			change: func(t *testing.T, st *Store, ms *Session) {
				a, err := ms.CreateIdentity(alice(st), "Docs bot")
				require.NoError(t, err)
				key, err := ms.IssueIdentityKey(a.UID)
				require.NoError(t, err)
				require.NoError(t, ms.DeleteIdentity(alice(st), "agent-acme-release"))
				_, err = ms.UpdateIdentity(carol(st), "agent-globex-triage", "Sorter", nil)
				require.NoError(t, err)
				issuedKeys[t.Name()] = key
			},
			look: func(t *testing.T, st *Store, ms *Session) any {
				acme, err := ms.Identities(alice(st))
				require.NoError(t, err)
				globex, err := ms.Identities(carol(st))
				require.NoError(t, err)
				p := ms.IdentityByKey(issuedKeys[t.Name()])
				require.NotNil(t, p, "an issued key works after a load")
				return []any{acme, globex, *p}
			}},
		{name: "messages",
			change: func(t *testing.T, st *Store, ms *Session) {
				from, to := create(t, ms, alice(st), "lead"), create(t, ms, alice(st), "helper")
				ids, err := ms.SendMessage(alice(st), NewMessage{SenderRunID: from.ID, To: []string{to.ID}, Subject: "Plan", Body: "Split it"})
				require.NoError(t, err)
				_, err = ms.SendMessage(alice(st), NewMessage{SenderRunID: from.ID, To: []string{to.ID}, Subject: "And", Body: "Test it"})
				require.NoError(t, err)
				_, err = ms.ReadMessage(alice(st), ids[0])
				require.NoError(t, err)
			},
			look: func(t *testing.T, st *Store, ms *Session) any {
				var out [][]Message
				for _, v := range ms.Runs() {
					if v.Run.Team == "team-acme" {
						in, err := ms.Inbox(alice(st), v.Run.ID, InboxQuery{Limit: 10})
						require.NoError(t, err)
						out = append(out, in)
					}
				}
				return out
			}},
		{name: "events",
			change: func(t *testing.T, st *Store, ms *Session) {
				r := create(t, ms, alice(st), "Fix it")
				_, err := ms.Advance(4 * time.Second)
				require.NoError(t, err)
				_, err = ms.Report(alice(st), r.ID, ReportedEvent{Type: EventBlocked, ExecutionID: "exec-1", RefID: "ref-1"})
				require.NoError(t, err)
				create(t, ms, alice(st), "Still going")
			},
			look: func(t *testing.T, st *Store, ms *Session) any {
				before := ms.EventLog()
				_, err := ms.Advance(time.Hour)
				require.NoError(t, err)
				return []any{before, ms.EventLog()} // and what comes next, once
			}},
		{name: "environments",
			change: func(t *testing.T, st *Store, ms *Session) {
				n := newRun(ms, "Build it there")
				n.Config.EnvironmentID = ms.Environments(alice(st))[0].Env.UID
				_, err := ms.Create(alice(st), n)
				require.NoError(t, err)
				_, err = ms.Advance(time.Minute)
				require.NoError(t, err)
			},
			look: func(t *testing.T, st *Store, ms *Session) any {
				type shown struct {
					UID, LastTask          string
					LastUpdated, LastRunAt time.Time
					SetupFailed            bool
				}
				var out []shown
				for _, e := range ms.Environments(alice(st)) {
					s := shown{UID: e.Env.UID, LastUpdated: e.LastUpdated, LastRunAt: e.LastRunAt, SetupFailed: e.SetupFailed}
					if e.LastTask != nil {
						s.LastTask = e.LastTask.Run.ID
					}
					out = append(out, s)
				}
				return out
			}},
		{name: "artifacts and conversations",
			change: func(t *testing.T, st *Store, ms *Session) {
				n := newRun(ms, "Draw the plan")
				n.Fate.Artifacts = []string{ArtifactPlan, ArtifactFile}
				_, err := ms.Create(alice(st), n)
				require.NoError(t, err)
				_, err = ms.Advance(time.Minute)
				require.NoError(t, err)
			},
			look: func(t *testing.T, st *Store, ms *Session) any {
				var out []any
				for _, v := range ms.Runs() {
					for i := range v.Run.ArtifactTypes {
						a, err := ms.Artifact(nil, v.Run.ArtifactUID(i))
						out = append(out, a.UID, a.Type, a.CreatedAt(), err)
					}
					if v.Run.Team == "team-acme" {
						cv, err := ms.RunConversation(alice(st), v.Run.ID)
						out = append(out, cv, err)
					}
				}
				return out
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newTestStore(t)
			ms := open(t, st, "named")
			tc.change(t, st, ms)
			saved := saveOf(t, st)
			want := tc.look(t, st, ms) // look may move the clock on: after the save
			again := loadInto(t, st.opts, saved)
			assert.Equal(t, want, tc.look(t, again, open(t, again, "named")))
			assert.Equal(t, saved, saveOf(t, loadInto(t, st.opts, saved)), "a loaded save saves the same (but for saved_at)")
		})
	}
}

// sessionsOf decodes a save's mock sessions for a test to change.
func sessionsOf(t *testing.T, saved []byte) (map[string]any, []any) {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal(saved, &doc))
	return doc, doc["sessions"].([]any)
}

func encode(t *testing.T, doc map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	return b
}

// TestLoadReadsOlderFiles: a file written before a table was saved loads,
// that table starting as the fixtures have it.
func TestLoadReadsOlderFiles(t *testing.T) {
	st := newTestStore(t)
	ms := open(t, st, "old")
	r := create(t, ms, alice(st), "Kept across versions")
	doc, sessions := sessionsOf(t, saveOf(t, st))
	for _, s := range sessions {
		for _, key := range []string{"catalogue_at", "agents", "messages", "schedules", "next_schedule_seq", "events", "cursor_key"} {
			delete(s.(map[string]any), key)
		}
	}
	again := loadInto(t, st.opts, encode(t, doc))
	old := open(t, again, "old")
	v, err := old.Get(alice(again), r.ID)
	require.NoError(t, err)
	assert.Equal(t, "Kept across versions", v.Run.Prompt)
	agents, err := old.Identities(alice(again))
	require.NoError(t, err)
	assert.Len(t, agents, 2, "the fixtures' agents")
	assert.Len(t, old.CursorKey(), cursorKeyLen, "a new cursor key")
	assert.Equal(t, t0, old.environments.seededAt, "the fixtures' times count from the saved clock")
}

// TestLoadRefusesDamagedTables: a record that would misbehave later makes
// the whole file refused, and the store keeps what it had.
func TestLoadRefusesDamagedTables(t *testing.T) {
	st := newTestStore(t)
	ms := open(t, st, "named")
	a := create(t, ms, alice(st), "one")
	create(t, ms, alice(st), "two")
	_, err := ms.CreateSchedule(alice(st), hourly(t, "Triage"))
	require.NoError(t, err)
	ids, err := ms.SendMessage(alice(st), NewMessage{SenderRunID: a.ID, To: []string{a.ID}, Subject: "s", Body: "b"})
	require.NoError(t, err)
	require.NotEmpty(t, ids)
	_, err = ms.Advance(5 * time.Second)
	require.NoError(t, err)
	good := saveOf(t, st)

	list := func(s map[string]any, key string) []any { return s[key].([]any) }
	record := func(s map[string]any, key string, i int) map[string]any { return list(s, key)[i].(map[string]any) }
	for _, tc := range []struct {
		name, why string
		damage    func(s map[string]any)
	}{
		{"a null run", "is null", func(s map[string]any) { list(s, "runs")[0] = nil }},
		{"a run twice", "appears twice", func(s map[string]any) { s["runs"] = append(list(s, "runs"), list(s, "runs")[0]) }},
		{"runs out of order", "does not follow", func(s map[string]any) { record(s, "runs", 1)["seq"] = 1.0 }},
		{"a run without a team", "no creator or team", func(s map[string]any) { record(s, "runs", 0)["team"] = "" }},
		{"next_seq behind", "next_seq", func(s map[string]any) { s["next_seq"] = 1.0 }},
		{"a clock without a time", "no time", func(s map[string]any) { s["clock"] = map[string]any{"mode": "virtual"} }},
		{"a clock mode that is none", "clock mode", func(s map[string]any) { s["clock"].(map[string]any)["mode"] = "sundial" }},
		{"an event of no run", "event 0", func(s map[string]any) { record(s, "events", 0)["run_id"] = "nope" }},
		{"events out of sequence", "event 0", func(s map[string]any) { record(s, "events", 0)["sequence"] = 7.0 }},
		{"a null schedule", "schedule 0 is null", func(s map[string]any) { list(s, "schedules")[0] = nil }},
		{"a schedule with a bad cron", "cron_schedule", func(s map[string]any) { record(s, "schedules", 0)["cron_schedule"] = "every hour" }},
		{"an agent twice", "agent", func(s map[string]any) { s["agents"] = append(list(s, "agents"), list(s, "agents")[0]) }},
		{"a message without an id", "message 0", func(s map[string]any) { record(s, "messages", 0)["id"] = "" }},
		{"a message of no letter", "names no letter", func(s map[string]any) { record(s, "messages", 0)["letter"] = "ltr-nope" }},
		{"a letter twice", "letter 1", func(s map[string]any) { s["letters"] = append(list(s, "letters"), list(s, "letters")[0]) }},
		{"a field no table knows", "unknown field", func(s map[string]any) { s["widgets"] = []any{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, sessions := sessionsOf(t, good)
			for _, s := range sessions {
				if s.(map[string]any)["name"] == "named" {
					tc.damage(s.(map[string]any))
				}
			}
			target := newTestStore(t)
			keep := open(t, target, "kept")
			create(t, keep, alice(target), "still here")
			err := target.Load(bytes.NewReader(encode(t, doc)))
			require.ErrorIs(t, err, ErrBadSave)
			assert.Contains(t, err.Error(), tc.why)
			if tc.why != "unknown field" { // refused by the decoder, before any session
				assert.Contains(t, err.Error(), `session "named"`, "says where")
			}
			assert.NotNil(t, target.Existing("kept"), "nothing is replaced")
		})
	}
	require.NoError(t, newTestStore(t).Load(bytes.NewReader(good)), "the undamaged save loads")
	assert.False(t, strings.Contains(string(good), "wk-mock-"), "the save holds no API key")
}
