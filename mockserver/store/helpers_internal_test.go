package store

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// t0 is where the test stores' virtual clocks start.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// testSteps: a new run is QUEUED, PENDING and CLAIMED for a second each,
// then INPROGRESS for ten.
var testSteps = Steps{time.Second, time.Second, time.Second, 10 * time.Second}

// newTestStore is a store of the embedded fixtures on a virtual clock at t0.
func newTestStore(t testing.TB, change ...func(*Options)) *Store {
	t.Helper()
	set, err := fixtures.Load(fixtures.Embedded())
	require.NoError(t, err)
	o := Options{Fixtures: set, ClockMode: VirtualClock, ClockStart: t0, Steps: testSteps, MaxSessions: 8}
	for _, c := range change {
		c(&o)
	}
	st, err := New(o)
	require.NoError(t, err)
	return st
}

func open(t testing.TB, st *Store, name string) *Session {
	t.Helper()
	ms, err := st.Open(name)
	require.NoError(t, err)
	return ms
}

// The fixtures' principals the tests act as.
func alice(st *Store) *fixtures.Principal { return st.Principal("user-alice") }
func carol(st *Store) *fixtures.Principal { return st.Principal("user-carol") }
func ciBot(st *Store) *fixtures.Principal { return st.Principal("sa-acme-ci") }

// fixtureRun is the first fixture run of team acme that is in state and
// came from source ("" for any).
func fixtureRun(t testing.TB, ms *Session, team string, state State, source string) *Run {
	t.Helper()
	for _, v := range ms.Runs() {
		if v.Run.Team == team && v.Snap.State == state && (source == "" || v.Run.Source == source) {
			return v.Run
		}
	}
	t.Fatalf("no fixture run of %s in %s from %q", team, state, source)
	return nil
}

// newRun is what a plain create asks for.
func newRun(ms *Session, prompt string) NewRun {
	return NewRun{Title: TitleFrom(prompt), Prompt: prompt, Config: &AgentConfig{}, TeamScope: true, Fate: ms.FateFor(prompt)}
}

func create(t testing.TB, ms *Session, p *fixtures.Principal, prompt string) *Run {
	t.Helper()
	v, err := ms.Create(p, newRun(ms, prompt))
	require.NoError(t, err)
	return v.Run
}

// failsWith checks that err is want (errors.Is) and of kind.
func failsWith(t *testing.T, err error, want error, kind Kind) {
	t.Helper()
	require.Error(t, err)
	assert.ErrorIs(t, err, want)
	assert.Equal(t, kind, KindOf(err), "the kind of %q", err)
	assert.NotEmpty(t, err.Error())
}

// saveOf is st's save, with saved_at blanked so two saves compare.
func saveOf(t *testing.T, st *Store) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, st.Save(&buf))
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
	doc["saved_at"] = json.RawMessage(`"2026-03-01T12:00:00Z"`)
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}

// loadInto loads a save into a new store of the options o, as a restarted
// mock would.
func loadInto(t *testing.T, o Options, saved []byte) *Store {
	t.Helper()
	st := newTestStore(t, func(opts *Options) { *opts = o })
	require.NoError(t, st.Load(bytes.NewReader(saved)), "%s", saved)
	return st
}
