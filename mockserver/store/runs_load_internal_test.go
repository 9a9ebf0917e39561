package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentruns/agentruns/fixtures"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newTestRestorer is a restorer for st, as Load makes one.
func newTestRestorer(st *Store) *restorer { return newRestorer(st) }

// bothReaders reads raw with quickRun and with the general decoder, each
// with a restorer of its own. quick is false when quickRun left it to the
// general decoder.
func bothReaders(st *Store, raw []byte) (fast, general *Run, quick bool, err error) {
	fast, general = new(Run), new(Run)
	quick = newTestRestorer(st).quickRun(raw, fast)
	rs := newTestRestorer(st)
	err = jsonv2.Unmarshal(raw, general, rs.general)
	return fast, general, quick, err
}

// TestRunReaderEqualsTheGeneralDecoder: every run Save writes is read by
// quickRun itself, into the record the general decoder gives, whatever its
// fields hold; and what quickRun leaves (another spelling of a name, a
// null, a float, a time in another zone) is still read, by the general
// decoder, as before.
func TestRunReaderEqualsTheGeneralDecoder(t *testing.T) {
	st := newTestStore(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		r := randomRun(rng, st, i)
		raw, err := json.Marshal(r) // as Save writes it
		require.NoError(t, err)
		fast, general, quick, err := bothReaders(st, raw)
		require.NoError(t, err, "%s", raw)
		require.True(t, quick, "quickRun left a run Save wrote to the general decoder: %s", raw)
		require.True(t, reflect.DeepEqual(general, fast), "%s\nquick:   %+v\ngeneral: %+v", raw, fast, general)
	}

	// What Save never writes goes to the general decoder, whose answer
	// stands.
	base := `"id":"r1","seq":3,"team":"team-acme","created_at":"2026-03-01T12:00:00Z",` +
		`"creator":{"uid":"user-alice","type":"user","display_name":"Alice Archer","team":"team-acme"}`
	for _, tc := range []struct{ raw, why string }{
		{`{` + base + `,"ID":"r2"}`, "a name in another case"},
		{`{` + base + `,"id":"r2"}`, "a name twice"},
		{`{` + base + `,"\u0074itle":"x"}`, "an escaped name"},
		{`{` + base + `,"title":null}`, "a null string"},
		{`{` + base + `,"seq":3.0}`, "a float"},
		{`{` + base + `,"logged":70000}`, "a number too large for its field"},
		{`{` + base + `,"title":"bad \xff byte"}`, "invalid UTF-8"},
		{`{` + base + `,"created_at":"2026-03-01T13:00:00+01:00"}`, "a time in another zone"},
		{`{` + base + `,"created_at":"2026-03-01T12:00:00.000Z"}`, "a time with trailing zeros"},
		{`{` + base + `,"timeline":{"steps_ns":[1,2]}}`, "too few steps"},
		{`{` + base + `,"timeline":{"anchor_state":"queued"}}`, "a state not of the API"},
		{`{` + base + `,"config":null}`, "a null config"},
		{`{` + base + `,"unknown":1}`, "a field no run has"},
		{`{` + base + `,"metadata":{"a":1}}`, "metadata of the wrong type"},
	} {
		fast, general, quick, err := bothReaders(st, []byte(tc.raw))
		assert.False(t, quick, "quickRun read %s (%s)", tc.raw, tc.why)
		_ = fast
		var want Run
		wantErr := jsonv2.Unmarshal([]byte(tc.raw), &want, newTestRestorer(st).general)
		assert.Equal(t, wantErr, err, tc.why)
		assert.True(t, reflect.DeepEqual(&want, general), tc.why)
	}
}

// TestRunReaderKnowsEveryField: the readers of runs_load.go name the JSON
// fields of Run, Details and Timeline, in their order, so a field added to
// a run but not to the reader (every run with it would take the slow way),
// or to the reader but not the run, fails here. randomRun gives each field
// a value, so TestRunReaderEqualsTheGeneralDecoder holds each reader to
// the general decoder.
func TestRunReaderKnowsEveryField(t *testing.T) {
	st := newTestStore(t)
	shown := map[string]bool{}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		raw, err := json.Marshal(randomRun(rng, st, i))
		require.NoError(t, err)
		var run map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(raw, &run))
		var tl map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(run["timeline"], &tl))
		for k := range run {
			shown[k] = true
		}
		for k := range tl {
			shown["timeline."+k] = true
		}
	}
	for _, c := range []struct {
		typ     reflect.Type
		readers []string
		prefix  string
	}{
		{reflect.TypeOf(Run{}), namesOf(runReaders), ""},
		{reflect.TypeOf(Details{}), namesOf(detailsReaders), ""},
		{reflect.TypeOf(Timeline{}), namesOf(timelineReaders), "timeline."},
	} {
		var names []string
		for i := range c.typ.NumField() {
			name, _, _ := strings.Cut(c.typ.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			names = append(names, name)
			assert.True(t, shown[c.prefix+name], "%s.%s (%q): randomRun never gives it a value", c.typ.Name(), c.typ.Field(i).Name, name)
		}
		assert.Equal(t, names, c.readers, "%s's JSON names (in order) and its readers in runs_load.go", c.typ.Name())
	}
}

// FuzzRunReader: whatever a run's JSON holds, quickRun reads it as the
// general decoder does, or leaves it to it.
func FuzzRunReader(f *testing.F) {
	st := newTestStore(f)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 20 {
		raw, err := json.Marshal(randomRun(rng, st, i))
		require.NoError(f, err)
		f.Add(raw)
	}
	f.Add([]byte(`{"id":"a","title":"x\u00e9\n\"y","timeline":{"steps_ns":[1, 2 ,3,4]} , "logged" : -1}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		v := jsontext.Value(raw)
		if v.Kind() != '{' || v.IsValid(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)) == false {
			return // the document's decoder refuses it before a run is read
		}
		fast, general, quick, err := bothReaders(st, raw)
		if !quick {
			return
		}
		if err != nil {
			t.Fatalf("quickRun read %s, which the general decoder refuses: %v", raw, err)
		}
		if !reflect.DeepEqual(general, fast) {
			t.Fatalf("%s\nquick:   %+v\ngeneral: %+v", raw, fast, general)
		}
	})
}

// randomRun is a run with every field a run can have, each present or not,
// holding text of every kind Save may have to write.
func randomRun(rng *rand.Rand, st *Store, i int) *Run {
	texts := []string{"", "plain", "tabs\tand\nnewlines", `quotes " and \ backslashes`, "<html> & more",
		"ünïcödé ✓ 日本", "line\u2028separator", "emoji 🙂", "control \x01 byte", strings.Repeat("long ", 60)}
	text := func() string { return texts[rng.IntN(len(texts))] }
	maybe := func() bool { return rng.IntN(2) == 0 }
	when := func() time.Time {
		t := t0.Add(time.Duration(rng.Int64N(int64(400 * 24 * time.Hour))))
		switch rng.IntN(3) {
		case 0:
			return t.Truncate(time.Second)
		case 1:
			return t.Truncate(time.Millisecond)
		}
		return t
	}
	states := States()
	finals := []State{Succeeded, Failed, Errored}
	principals := []*fixtures.Principal{alice(st), carol(st), ciBot(st),
		{UID: "user-gone", Type: "user", DisplayName: "Gone " + text(), Team: "team-gone"}}
	r := &Run{ID: fmt.Sprintf("run-%d-%s", i, text()), Seq: rng.Int64N(1 << 40), Title: text(), Prompt: text(),
		Creator: Creator{principals[rng.IntN(len(principals))]}, CreatedAt: when(), TeamScope: maybe(),
		FromSkill: maybe(), Logged: int16(rng.IntN(40))}
	r.Team = r.Creator.Team
	if maybe() {
		r.Config = &AgentConfig{Name: text(), ModelID: "auto", BasePrompt: text(), EnvironmentID: "env-web-app"}
	}
	r.Timeline = Timeline{Anchor: when(), AnchorState: states[rng.IntN(len(states))], Final: finals[rng.IntN(len(finals))]}
	for j := range r.Timeline.Steps {
		r.Timeline.Steps[j] = time.Duration(rng.Int64N(int64(time.Hour)))
	}
	if maybe() {
		r.Timeline.StartedAt, r.Timeline.WasClaimed = when(), maybe()
	}
	if maybe() {
		r.Timeline.Execution, r.Timeline.PriorRun, r.Timeline.ExecStart = int32(rng.IntN(5)), time.Duration(rng.Int64N(1<<40)), when()
	}
	if maybe() {
		r.Followups = &[]Followup{{Message: text(), At: when()}, {Message: text(), Mode: "plan", At: when(), Restarted: true, Execution: 2}}
	}
	if maybe() {
		retry := maybe()
		r.FateMsg = &StatusMessage{Message: text(), ErrorCode: "internal", Retryable: &retry}
	}
	if maybe() {
		r.ForcedMsg, r.ForcedState = &StatusMessage{Message: text()}, states[rng.IntN(len(states))]
	}
	if maybe() {
		d := &Details{Source: []string{"API", "CLI", "LINEAR", "SLACK", text()}[rng.IntN(5)]}
		if maybe() {
			d.ConversationID, d.TriggerURL, d.ParentRunID = text(), text(), text()
		}
		if maybe() {
			d.Schedule = &Schedule{ID: text(), Name: text(), Cron: "0 9 * * 1"}
		}
		if maybe() {
			d.ArtifactTypes = []string{"PLAN", "PULL_REQUEST", "SCREENSHOT", "FILE"}[:rng.IntN(5)]
		}
		if maybe() {
			d.AgentIdentityUID, d.Interactive, d.Mode, d.OnBehalfOf = text(), maybe(), "plan", text()
			d.ArtifactsWhenStopped = maybe()
		}
		if maybe() {
			d.Metadata = map[string]string{"team": text(), text(): "x"}
		}
		if maybe() {
			d.Executor = &Creator{principals[rng.IntN(len(principals))]}
		}
		if maybe() {
			d.Handoff = []string{text(), "notes.md"}
		}
		if maybe() {
			d.Extra = fixtures.Extra{"/rollout_ring": json.RawMessage(`"canary"`), "/status_message/" + text(): json.RawMessage(`{"a":[1,true]}`)}
		}
		if maybe() {
			d.Recorded = &Recorded{Usage: json.RawMessage(`{"inference_cost":1.27,"compute_cost":0.3}`), SessionID: "3f0b8c5e-2d4a-4e61-9c7b-5a8e1d2f3c40",
				Conversation: text(), PullRequestURL: "https://github.com/acme/web/pull/" + text(), PullRequestBranch: text(), PlanURL: text()}
			if maybe() {
				no := false
				d.Recorded.Executor, d.Recorded.TypeCancellable = json.RawMessage(`{"uid":"agent-7","type":"service_account"}`), &no
			} else {
				d.Recorded.Without = []string{"executor", "is_run_type_cancellable"}
			}
		}
		fillPlain(reflect.ValueOf(d).Elem(), text, maybe)
		r.Details = d
	}
	fillPlain(reflect.ValueOf(r).Elem(), text, maybe)
	fillPlain(reflect.ValueOf(&r.Timeline).Elem(), text, maybe)
	return r
}

// fillPlain gives a value, half of the time, to each string, bool,
// []string or map[string]string field of v that is still empty: a field
// of those types added to a run is written and read with a value without
// randomRun naming it.
func fillPlain(v reflect.Value, text func() string, maybe func() bool) {
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.CanSet() || !f.IsZero() || !maybe() {
			continue
		}
		switch f.Type() {
		case reflect.TypeFor[string]():
			f.SetString(text())
		case reflect.TypeFor[bool]():
			f.SetBool(true)
		case reflect.TypeFor[[]string]():
			f.Set(reflect.ValueOf([]string{text()}))
		case reflect.TypeFor[map[string]string]():
			f.Set(reflect.ValueOf(map[string]string{text(): text()}))
		}
	}
}

// TestLoadReadsRunsInChunks: runs read by several workers keep the file's
// order, and of two bad runs in different chunks the first is the one
// reported, whichever worker met its run first.
func TestLoadReadsRunsInChunks(t *testing.T) {
	st := newTestStore(t)
	ms := open(t, st, "many")
	for i := range 3*runsPerChunk + 10 {
		create(t, ms, alice(st), fmt.Sprintf("run number %d", i))
	}
	good := saveOf(t, st)
	assert.Equal(t, good, saveOf(t, loadInto(t, st.opts, good)), "saved again, the same file: every run in its place")

	first, second := runsPerChunk+7, 2*runsPerChunk+3
	doc, sessions := sessionsOf(t, good)
	for _, s := range sessions {
		if s.(map[string]any)["name"] == "many" {
			runs := s.(map[string]any)["runs"].([]any)
			runs[second].(map[string]any)["seq"] = "two"
			runs[first].(map[string]any)["created_at"] = "yesterday"
		}
	}
	err := newTestStore(t).Load(bytes.NewReader(encode(t, doc)))
	require.ErrorIs(t, err, ErrBadSave)
	assert.Contains(t, err.Error(), fmt.Sprintf("run %d:", first))
}
