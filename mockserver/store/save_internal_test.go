package store

import (
	"bytes"
	"encoding/json"
	"os"
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
		{(*runTable)(nil), []string{"list", "byID", "byKey", "generation", "cursorKey", "nextSeq", "createdBy", "index", "configs", "sortedAll"}},
		{(*savedRuns)(nil), []string{"Generation", "CursorKey", "NextSeq", "Runs"}},
		// A run's saved fields are its JSON, which the generated readers
		// read (runs_fields.go); only what is not saved is listed.
		{(*Run)(nil), append(savedFieldNames[Run](), "Details", "AgentSession", "lastEvent", "indexedAt", "nextAt")},
		{(*Details)(nil), savedFieldNames[Details]()},
		{(*Recorded)(nil), []string{"Usage", "SessionID", "Conversation", "PullRequestURL", "PullRequestBranch", "PlanURL", "Executor", "TypeCancellable", "Without"}},
		{(*Timeline)(nil), savedFieldNames[Timeline]()},
		{(*scheduleTable)(nil), []string{"byID", "nextSeq", "dueAt", "due"}},
		{(*savedSchedules)(nil), []string{"Schedules", "NextScheduleSeq"}},
		{(*ScheduleRecord)(nil), []string{"ID", "Seq", "Name", "Cron", "Prompt", "Enabled", "Config", "FromSkill", "Owner", "UpdatedBy",
			"Team", "TeamScope", "CreatedAt", "UpdatedAt", "LastRan", "NextTick", "LastSpawnError", "AgentUID", "Metadata", "Mode", "Extra", "sched", "heapAt"}},
		{(*identityTable)(nil), []string{"list", "byUID", "byKey"}},
		{(*savedIdentities)(nil), []string{"Agents"}},
		{(*Identity)(nil), []string{"UID", "Team", "Name", "Default", "CreatedAt", "UpdatedAt", "Settings", "KeyHashes", "Extra", "principal"}},
		{(*messageTable)(nil), []string{"list", "byID", "byRun", "used"}},
		{(*savedMessages)(nil), []string{"Letters", "Messages"}},
		{(*savedMessage)(nil), []string{"ID", "Team", "RecipientID", "Letter", "DeliveredAt", "ReadAt", "SenderRunID", "Subject", "Body", "SentAt"}},
		{(*Message)(nil), []string{"ID", "Team", "RecipientID", "Letter", "DeliveredAt", "ReadAt"}},
		{(*Letter)(nil), []string{"ID", "Team", "SenderRunID", "Subject", "Body", "SentAt"}},
		{(*eventLog)(nil), []string{"log", "rare", "pending", "due"}},
		{(*savedEvents)(nil), []string{"EventLog", "Events"}},
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
	// Every stored field of a run is written, under a name of its own; its
	// Details' sit beside them.
	for _, typ := range []reflect.Type{reflect.TypeOf(Run{}), reflect.TypeOf(Details{})} {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if f.Tag.Get("json") == "" && !(f.Anonymous && f.Type == reflect.TypeOf(&Details{})) {
				t.Errorf("%s.%s has no json tag: the save would name it after the Go field", typ.Name(), f.Name)
			}
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
		for _, key := range []string{"catalogue_at", "agents", "messages", "schedules", "next_schedule_seq", "event_log", "cursor_key"} {
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
		damage    func(s map[string]any) // of a file as version 1 wrote it if the name says so
	}{
		{"a null run", "is null", func(s map[string]any) { list(s, "runs")[0] = nil }},
		{"a run twice", "appears twice", func(s map[string]any) { s["runs"] = append(list(s, "runs"), list(s, "runs")[0]) }},
		{"runs out of order", "does not follow", func(s map[string]any) { record(s, "runs", 1)["seq"] = 1.0 }},
		{"a run without a team", "no creator or team", func(s map[string]any) { record(s, "runs", 0)["team"] = "" }},
		{"next_seq behind", "next_seq", func(s map[string]any) { s["next_seq"] = 1.0 }},
		{"a clock without a time", "no time", func(s map[string]any) { s["clock"] = map[string]any{"mode": "virtual"} }},
		{"a clock mode that is none", "clock mode", func(s map[string]any) { s["clock"].(map[string]any)["mode"] = "sundial" }},
		{"an event of no run", "event 1", func(s map[string]any) { s["event_log"].(map[string]any)["run_seqs"].([]any)[0] = 999.0 }},
		{"an event type that is none", "event 1", func(s map[string]any) {
			s["event_log"].(map[string]any)["types"] = "X" + s["event_log"].(map[string]any)["types"].(string)[1:]
		}},
		{"an event without a type", "one of each per event", func(s map[string]any) {
			s["event_log"].(map[string]any)["types"] = s["event_log"].(map[string]any)["types"].(string)[1:]
		}},
		{"an event out of the clock's range", "event 1", func(s map[string]any) { s["event_log"].(map[string]any)["at_us"].([]any)[0] = 1e18 }},
		{"events out of time order", "event 2 (", func(s map[string]any) {
			at := s["event_log"].(map[string]any)["at_us"].([]any)
			at[1] = at[0].(float64) - 1e6
		}},
		{"events out of time order (version 1)", "event 2 (", func(s map[string]any) {
			first, err := time.Parse(time.RFC3339Nano, record(s, "events", 0)["occurred_at"].(string))
			require.NoError(t, err)
			record(s, "events", 1)["occurred_at"] = first.Add(-time.Second).Format(time.RFC3339Nano)
		}},
		{"an enabled schedule ticking in the year 1", "next_tick 0001-01-01T00:00:00.5Z is outside", func(s map[string]any) {
			record(s, "schedules", 0)["next_tick"] = "0001-01-01T00:00:00.5Z"
		}},
		{"an enabled schedule ticking at the zero instant", "enabled with no next_tick", func(s map[string]any) {
			record(s, "schedules", 0)["next_tick"] = "0001-01-01T00:00:00Z"
		}},
		{"an enabled schedule ticking before it was made", "is not after the schedule's created_at", func(s map[string]any) {
			record(s, "schedules", 0)["next_tick"] = "1990-01-01T00:00:00Z"
		}},
		{"an enabled schedule ticking off its cron", "is not a tick of", func(s map[string]any) {
			next, err := time.Parse(time.RFC3339Nano, record(s, "schedules", 0)["next_tick"].(string))
			require.NoError(t, err)
			record(s, "schedules", 0)["next_tick"] = next.Add(time.Minute).Format(time.RFC3339Nano)
		}},
		{"rare details of no event", "rare entry 0", func(s map[string]any) {
			s["event_log"].(map[string]any)["rare"] = []any{map[string]any{"sequence": 99.0, "ref_id": "x"}}
		}},
		{"both forms of the log", "both", func(s map[string]any) { s["events"] = []any{} }},
		{"a null schedule", "schedule 0 is null", func(s map[string]any) { list(s, "schedules")[0] = nil }},
		{"a schedule with a bad cron", "cron_schedule", func(s map[string]any) { record(s, "schedules", 0)["cron_schedule"] = "every hour" }},
		{"an agent twice", "agent", func(s map[string]any) { s["agents"] = append(list(s, "agents"), list(s, "agents")[0]) }},
		{"a message without an id", "message 0", func(s map[string]any) { record(s, "messages", 0)["id"] = "" }},
		{"a message of no letter", "names no letter", func(s map[string]any) { record(s, "messages", 0)["letter"] = "ltr-nope" }},
		{"a letter twice", "letter 1", func(s map[string]any) { s["letters"] = append(list(s, "letters"), list(s, "letters")[0]) }},
		{"a field no table knows", `unknown object member name "widgets"`, func(s map[string]any) { s["widgets"] = []any{} }},
		{"an event of no run (version 1)", "event 0", func(s map[string]any) { record(s, "events", 0)["run_id"] = "nope" }},
		{"events out of sequence (version 1)", "event 0", func(s map[string]any) { record(s, "events", 0)["sequence"] = 7.0 }},
		{"the columns (version 1)", "event_log", func(s map[string]any) {
			s["event_log"] = map[string]any{"run_seqs": []any{}, "types": "", "at_us": []any{}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, sessions := sessionsOf(t, good)
			if strings.HasSuffix(tc.name, "(version 1)") {
				doc, sessions = sessionsOf(t, asVersion1(t, good))
			}
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
			if !strings.Contains(tc.why, "widgets") { // refused by the decoder, before any session
				assert.Contains(t, err.Error(), `session "named"`, "says where")
			}
			assert.NotNil(t, target.Existing("kept"), "nothing is replaced")
		})
	}
	require.NoError(t, newTestStore(t).Load(bytes.NewReader(good)), "the undamaged save loads")
	require.NoError(t, newTestStore(t).Load(bytes.NewReader(asVersion1(t, good))), "the undamaged save loads as version 1 wrote it")
	assert.False(t, strings.Contains(string(good), "wk-mock-"), "the save holds no API key")
}

// asVersion1 is a save as version 1 of the file wrote it: every event an
// object of its own, as a poll shows it.
func asVersion1(t *testing.T, saved []byte) []byte {
	t.Helper()
	doc, sessions := sessionsOf(t, saved)
	doc["version"] = 1.0
	for _, s := range sessions {
		s := s.(map[string]any)
		cols, ok := s["event_log"].(map[string]any)
		if !ok {
			continue
		}
		delete(s, "event_log")
		ids := map[float64]any{}
		for _, r := range s["runs"].([]any) {
			ids[r.(map[string]any)["seq"].(float64)] = r.(map[string]any)["id"]
		}
		rare := map[float64]map[string]any{}
		if list, ok := cols["rare"].([]any); ok {
			for _, x := range list {
				rare[x.(map[string]any)["sequence"].(float64)] = x.(map[string]any)
			}
		}
		var events []any
		for i, seq := range cols["run_seqs"].([]any) {
			e := map[string]any{
				"sequence":    float64(i + 1),
				"event_type":  eventCodes[strings.IndexByte(eventLetters, cols["types"].(string)[i])],
				"run_id":      ids[seq.(float64)],
				"occurred_at": time.UnixMicro(int64(cols["at_us"].([]any)[i].(float64))).UTC().Format(time.RFC3339Nano),
			}
			for _, k := range []string{"execution_id", "ref_id", "occurred_at"} {
				if v, ok := rare[float64(i+1)][k]; ok {
					e[k] = v
				}
			}
			events = append(events, e)
		}
		s["events"] = events
	}
	return encode(t, doc)
}

// TestLoadReadsVersion1: a file whose events are objects, as version 1
// wrote them, loads into the same log, and is saved again as version 2.
func TestLoadReadsVersion1(t *testing.T) {
	st := newTestStore(t)
	ms := open(t, st, "")
	r := create(t, ms, alice(st), "Fix it")
	_, err := ms.Advance(4 * time.Second)
	require.NoError(t, err)
	_, err = ms.Report(alice(st), r.ID, ReportedEvent{Type: EventBlocked, ExecutionID: "exec-1", RefID: "ref-1"})
	require.NoError(t, err)
	_, err = ms.Advance(1500 * time.Nanosecond) // an instant finer than a microsecond
	require.NoError(t, err)
	_, err = ms.Report(alice(st), r.ID, ReportedEvent{Type: EventInProgress})
	require.NoError(t, err)
	saved := saveOf(t, st)
	assert.Contains(t, string(saved), `"version":2`)
	old := asVersion1(t, saved)
	require.NotContains(t, string(old), "event_log")
	again := loadInto(t, st.opts, old)
	assert.Equal(t, ms.EventLog(), open(t, again, "").EventLog())
	assert.Equal(t, saved, saveOf(t, again), "saved again as version 2")
}

// TestLoadReadsAStateFileOfVersion1: testdata/state-v1.json is a state file
// as the mock wrote it before the event log went into columns, saved by
// that mock: two sessions, runs with labels, a mode, a parent and a
// follow-up, a cancelled run, a schedule's runs and an event reported with
// its execution and reference. All of it loads, and it saves again as
// version 2 into a file that loads to the same store.
func TestLoadReadsAStateFileOfVersion1(t *testing.T) {
	old, err := os.ReadFile("testdata/state-v1.json")
	require.NoError(t, err)
	require.Contains(t, string(old), `"version":1,`)
	st := loadInto(t, newTestStore(t).opts, old)
	ms := open(t, st, "")
	assert.Equal(t, 32, ms.Len())

	const parent = "1264eed5-4427-4a53-b829-0708866513c0"
	labelled, err := ms.Run("070e06c3-9339-4aa8-8159-d6b0f91d1540")
	require.NoError(t, err)
	assert.Equal(t, "Tidy the release notes", labelled.Run.Title)
	assert.Equal(t, map[string]string{"ticket": "REL-42"}, labelled.Run.Metadata)
	assert.Equal(t, "plan", labelled.Run.Mode)
	assert.Equal(t, parent, labelled.Run.ParentRunID)
	if followups := labelled.Run.FollowupList(); assert.Len(t, followups, 1) {
		assert.Equal(t, "Also the README", followups[0].Message)
	}
	cancelled, err := ms.Run("d06832ff-5084-4ea9-a59f-b7db5c13d4f8")
	require.NoError(t, err)
	assert.Equal(t, Cancelled, cancelled.Snap.State)
	scheduled, err := ms.ScheduleRuns("sch_631046d020e44b53")
	require.NoError(t, err)
	assert.Len(t, scheduled, 3)
	for _, v := range scheduled {
		assert.Equal(t, "SCHEDULED_AGENT", v.Run.Source)
		assert.Equal(t, "hourly", v.Run.Schedule.Name)
	}

	// The log begins with the file's events; the clock's catch-up logs
	// what the runs did after them.
	var file struct {
		Sessions []struct{ Events []Event }
	}
	require.NoError(t, json.Unmarshal(old, &file))
	require.Len(t, file.Sessions, 2)
	log := ms.EventLog()
	require.Len(t, file.Sessions[0].Events, 40)
	require.GreaterOrEqual(t, len(log), 40)
	assert.Equal(t, file.Sessions[0].Events, log[:40])
	assert.Equal(t, Event{Seq: 40, Type: EventBlocked, RunID: parent, RefID: "ref-1", ExecutionID: "exec-1",
		OccurredAt: time.Date(2026, 3, 1, 12, 0, 4, 0, time.UTC)}, log[39])
	other := open(t, st, "other")
	assert.Equal(t, 27, other.Len())
	otherLog := other.EventLog()
	require.Len(t, file.Sessions[1].Events, 35)
	require.GreaterOrEqual(t, len(otherLog), 35)
	assert.Equal(t, file.Sessions[1].Events, otherLog[:35])

	saved := saveOf(t, st)
	assert.Contains(t, string(saved), `"version":2`)
	again := loadInto(t, st.opts, saved)
	assert.Equal(t, log, open(t, again, "").EventLog())
	assert.Equal(t, saved, saveOf(t, again), "the version 2 file loads to the same store")
}

// savedFieldNames are the Go names of T's fields that Save writes.
func savedFieldNames[T any]() []string {
	var names []string
	for _, f := range savedFields(reflect.TypeFor[T]()) {
		names = append(names, f.Name)
	}
	return names
}
