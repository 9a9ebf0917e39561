package store

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunsRefuseWithTheirErrors: each way an operation on runs can fail,
// with the error a caller matches and the kind the HTTP layer answers.
func TestRunsRefuseWithTheirErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts func(*Options)
		do   func(t *testing.T, st *Store, ms *Session) error
		want error
		kind Kind
	}{
		{name: "get an unknown run", want: ErrRunNotFound, kind: NotFound,
			do: func(t *testing.T, st *Store, ms *Session) error { _, err := ms.Get(alice(st), "nope"); return err }},
		{name: "get another team's run", want: ErrOtherTeam, kind: Forbidden,
			do: func(t *testing.T, st *Store, ms *Session) error {
				_, err := ms.Get(carol(st), fixtureRun(t, ms, "team-acme", Succeeded, "").ID)
				return err
			}},
		{name: "cancel a finished run", want: ErrTerminal, kind: Invalid,
			do: func(t *testing.T, st *Store, ms *Session) error {
				return ms.Cancel(alice(st), fixtureRun(t, ms, "team-acme", Succeeded, "").ID)
			}},
		{name: "cancel a run waiting for a person", want: ErrBlocked, kind: Invalid,
			do: func(t *testing.T, st *Store, ms *Session) error {
				return ms.Cancel(alice(st), fixtureRun(t, ms, "team-acme", Blocked, "").ID)
			}},
		{name: "cancel a run being handed to a worker", want: ErrPending, kind: Conflict,
			do: func(t *testing.T, st *Store, ms *Session) error {
				return ms.Cancel(alice(st), fixtureRun(t, ms, "team-acme", Pending, "API").ID)
			}},
		{name: "cancel a GitHub Action's run", want: ErrNotCancelable, kind: Unsupported,
			do: func(t *testing.T, st *Store, ms *Session) error {
				return ms.Cancel(alice(st), fixtureRun(t, ms, "team-acme", InProgress, "GITHUB_ACTION").ID)
			}},
		{name: "force a finished run back", want: ErrBackwards, kind: Final,
			do: func(t *testing.T, st *Store, ms *Session) error {
				_, err := ms.Force(fixtureRun(t, ms, "team-acme", Succeeded, "").ID, Queued, nil)
				return err
			}},
		{name: "force a state that is none", want: ErrUnknownState, kind: Invalid,
			do: func(t *testing.T, st *Store, ms *Session) error {
				_, err := ms.Force(fixtureRun(t, ms, "team-acme", Succeeded, "").ID, "DONE", nil)
				return err
			}},
		{name: "force an unknown run", want: ErrRunNotFound, kind: NotFound,
			do: func(t *testing.T, st *Store, ms *Session) error { _, err := ms.Force("nope", Failed, nil); return err }},
		{name: "create past the team's cap", opts: func(o *Options) { o.MaxRuns = 1 }, want: ErrStoreFull, kind: Exhausted,
			do: func(t *testing.T, st *Store, ms *Session) error {
				create(t, ms, alice(st), "first")
				create(t, ms, carol(st), "another team has its own room")
				_, err := ms.Create(alice(st), newRun(ms, "second"))
				return err
			}},
		{name: "create under a parent the caller may not see", want: ErrNoParent, kind: Invalid,
			do: func(t *testing.T, st *Store, ms *Session) error {
				n := newRun(ms, "child")
				n.ParentRunID = fixtureRun(t, ms, "team-globex", Succeeded, "").ID
				_, err := ms.Create(alice(st), n)
				return err
			}},
		{name: "create in a conversation that has not begun", want: ErrConversationNotFound, kind: Invalid,
			do: func(t *testing.T, st *Store, ms *Session) error {
				n := newRun(ms, "go on")
				n.ConversationID = "6f9f1a52-0000-4000-8000-000000000000"
				_, err := ms.Create(alice(st), n)
				return err
			}},
		{name: "list from before a reset", want: ErrStalePosition, kind: Invalid,
			do: func(t *testing.T, st *Store, ms *Session) error {
				page, err := ms.List(alice(st), ListQuery{Limit: 1, SortBy: "created_at"})
				require.NoError(t, err)
				require.NotNil(t, page.Next)
				ms.Reset()
				_, err = ms.List(alice(st), ListQuery{Limit: 1, SortBy: "created_at", After: page.Next})
				return err
			}},
		{name: "list the descendants of another team's run", want: ErrNoAncestor, kind: Invalid,
			do: func(t *testing.T, st *Store, ms *Session) error {
				_, err := ms.List(alice(st), ListQuery{Limit: 5, AncestorID: fixtureRun(t, ms, "team-globex", Succeeded, "").ID})
				return err
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []func(*Options)
			if tc.opts != nil {
				opts = append(opts, tc.opts)
			}
			st := newTestStore(t, opts...)
			ms := open(t, st, "")
			failsWith(t, tc.do(t, st, ms), tc.want, tc.kind)
		})
	}
}

// TestRunsMoveOnTheClock: a new run follows its steps, a cancel ends it
// where it is, and a reset brings the fixtures back and a new cursor key.
func TestRunsMoveOnTheClock(t *testing.T) {
	st := newTestStore(t)
	ms := open(t, st, "")
	fixtures := ms.Len()
	r := create(t, ms, alice(st), "Fix the flaky login test")
	for _, tc := range []struct {
		after time.Duration
		state State
	}{{0, Queued}, {time.Second, Pending}, {2 * time.Second, Claimed}, {3 * time.Second, InProgress}, {13 * time.Second, Succeeded}} {
		v, err := ms.Get(alice(st), r.ID)
		require.NoError(t, err)
		if v.Snap.State != tc.state {
			_, err := ms.Advance(t0.Add(tc.after).Sub(ms.Now()))
			require.NoError(t, err)
			v, err = ms.Get(alice(st), r.ID)
			require.NoError(t, err)
		}
		assert.Equal(t, tc.state, v.Snap.State, "after %v", tc.after)
	}
	other := create(t, ms, ciBot(st), "Bump the dependencies")
	require.NoError(t, ms.Cancel(alice(st), other.ID), "a team-mate's run")
	v, err := ms.Get(alice(st), other.ID)
	require.NoError(t, err)
	assert.Equal(t, Cancelled, v.Snap.State)
	assert.Contains(t, v.Msg.Message, "Alice Archer")

	key := ms.CursorKey()
	ms.Reset()
	assert.Equal(t, fixtures, ms.Len(), "only the fixtures' runs are back")
	assert.NotEqual(t, key, ms.CursorKey(), "a reset issues a new cursor key")
	failsWith(t, func() error { _, err := ms.Get(alice(st), r.ID); return err }(), ErrRunNotFound, NotFound)
}

// A run whose record holds anything but its source keeps a record of its
// own: a field shared() does not know would be dropped, silently, from
// every run that sets only it. Each field of Details is set in turn.
func TestEveryDetailsFieldKeepsARecordOfItsOwn(t *testing.T) {
	typ := reflect.TypeFor[Details]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Name == "Source" {
			continue
		}
		d := Details{Source: "API"}
		v := reflect.ValueOf(&d).Elem().Field(i)
		switch v.Kind() {
		case reflect.String:
			v.SetString("x")
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Slice:
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		case reflect.Map:
			m := reflect.MakeMap(v.Type())
			m.SetMapIndex(reflect.Zero(v.Type().Key()), reflect.Zero(v.Type().Elem()))
			v.Set(m)
		case reflect.Pointer:
			v.Set(reflect.New(v.Type().Elem()))
		default:
			t.Fatalf("Details.%s: a %s, which this test does not know how to set", f.Name, v.Kind())
		}
		if shared := d.shared(); shared != nil {
			t.Errorf("Details.%s set, yet the run would share the record of source %q, dropping it: add it to Details.shared", f.Name, shared.Source)
		}
		if got := newDetails(d); !reflect.DeepEqual(*got, d) {
			t.Errorf("Details.%s: newDetails kept %+v, not %+v", f.Name, *got, d)
		}
	}
}
