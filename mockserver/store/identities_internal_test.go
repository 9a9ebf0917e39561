package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIdentitiesRefuseWithTheirErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(t *testing.T, st *Store, ms *Session) error
		want error
		kind Kind
	}{
		{name: "a service account lists agents", want: ErrNotAPerson, kind: Forbidden,
			do: func(t *testing.T, st *Store, ms *Session) error { _, err := ms.Identities(ciBot(st)); return err }},
		{name: "create past the plan's limit", want: ErrPlanLimit, kind: Forbidden,
			do: func(t *testing.T, st *Store, ms *Session) error {
				_, err := ms.CreateIdentity(alice(st), "third") // acme's plan allows 3; the fixtures have 2
				require.NoError(t, err)
				_, err = ms.CreateIdentity(alice(st), "fourth")
				return err
			}},
		{name: "rename an unknown agent", want: ErrIdentityNotFound, kind: NotFound,
			do: func(t *testing.T, st *Store, ms *Session) error {
				_, err := ms.UpdateIdentity(alice(st), "agent-nope", "x", nil)
				return err
			}},
		{name: "rename another team's agent", want: ErrIdentityOtherTeam, kind: Forbidden,
			do: func(t *testing.T, st *Store, ms *Session) error {
				_, err := ms.UpdateIdentity(alice(st), "agent-globex-triage", "x", nil)
				return err
			}},
		{name: "delete the default agent", want: ErrDefaultIdentity, kind: Invalid,
			do: func(t *testing.T, st *Store, ms *Session) error {
				return ms.DeleteIdentity(alice(st), "agent-acme-default")
			}},
		{name: "a run acts as an unknown agent", want: ErrIdentityNotFound, kind: Invalid,
			do: func(t *testing.T, st *Store, ms *Session) error {
				_, err := ms.ActAs(alice(st), "agent-nope")
				return err
			}},
		{name: "a run acts as another team's agent", want: ErrIdentityOtherTeam, kind: Forbidden,
			do: func(t *testing.T, st *Store, ms *Session) error {
				_, err := ms.ActAs(alice(st), "agent-globex-default")
				return err
			}},
		{name: "a run acts as an agent beyond the plan", want: ErrIdentityUnavailable, kind: Forbidden,
			do: func(t *testing.T, st *Store, ms *Session) error {
				_, err := ms.ActAs(carol(st), "agent-globex-triage")
				return err
			}},
		{name: "a key for an unknown agent", want: ErrIdentityNotFound, kind: NotFound,
			do: func(t *testing.T, _ *Store, ms *Session) error {
				_, err := ms.IssueIdentityKey("agent-nope")
				return err
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newTestStore(t)
			failsWith(t, tc.do(t, st, open(t, st, "")), tc.want, tc.kind)
		})
	}
}

// TestIdentitiesIssueAndRevokeKeys: a key acts as its agent until the
// agent is deleted; the default agent counts first against the plan.
func TestIdentitiesIssueAndRevokeKeys(t *testing.T) {
	st := newTestStore(t)
	ms := open(t, st, "")
	views, err := ms.Identities(carol(st))
	require.NoError(t, err)
	require.Len(t, views, 2)
	assert.Equal(t, IdentityView{UID: "agent-globex-default", Name: "Globex agent", Available: true, CreatedAt: views[0].CreatedAt, UpdatedAt: views[0].CreatedAt}, views[0])
	assert.False(t, views[1].Available, "globex's plan allows one agent")

	a, err := ms.CreateIdentity(alice(st), "Docs bot")
	require.NoError(t, err)
	key, err := ms.IssueIdentityKey(a.UID)
	require.NoError(t, err)
	p := ms.IdentityByKey(key)
	require.NotNil(t, p)
	assert.Equal(t, "Docs bot", p.DisplayName)
	renamed, err := ms.UpdateIdentity(alice(st), a.UID, "Docs writer", nil)
	require.NoError(t, err)
	assert.Equal(t, "Docs writer", renamed.Name)
	assert.Equal(t, "Docs writer", ms.IdentityByKey(key).DisplayName)
	require.NoError(t, ms.DeleteIdentity(alice(st), a.UID))
	assert.Nil(t, ms.IdentityByKey(key), "deleting the agent revokes its keys")
	assert.Nil(t, ms.IdentityByKey(IdentityKeyPrefix+"never-issued"))
}
