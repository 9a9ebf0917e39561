package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMessagesRefuseWithTheirErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(t *testing.T, st *Store, ms *Session, from, to string) error
		want error
		kind Kind
	}{
		{name: "from an unknown run", want: ErrRunNotFound, kind: NotFound,
			do: func(t *testing.T, st *Store, ms *Session, _, to string) error {
				_, err := ms.SendMessage(alice(st), NewMessage{SenderRunID: "nope", To: []string{to}})
				return err
			}},
		{name: "to another team's run", want: ErrOtherTeam, kind: Forbidden,
			do: func(t *testing.T, st *Store, ms *Session, from, _ string) error {
				_, err := ms.SendMessage(alice(st), NewMessage{SenderRunID: from, To: []string{fixtureRun(t, ms, "team-globex", Queued, "").ID}})
				return err
			}},
		{name: "to a finished run", want: ErrRecipientFinished, kind: Unsupported,
			do: func(t *testing.T, st *Store, ms *Session, from, to string) error {
				_, err := ms.SendMessage(alice(st), NewMessage{SenderRunID: from, To: []string{to, fixtureRun(t, ms, "team-acme", Succeeded, "").ID}})
				return err
			}},
		{name: "read an unknown message", want: ErrMessageNotFound, kind: NotFound,
			do: func(t *testing.T, st *Store, ms *Session, _, _ string) error {
				_, err := ms.ReadMessage(alice(st), "msg-nope")
				return err
			}},
		{name: "read another team's message", want: ErrMessageOtherTeam, kind: Forbidden,
			do: func(t *testing.T, st *Store, ms *Session, from, to string) error {
				ids, err := ms.SendMessage(alice(st), NewMessage{SenderRunID: from, To: []string{to}, Subject: "s", Body: "b"})
				require.NoError(t, err)
				return ms.MarkDelivered(carol(st), ids[0])
			}},
		{name: "the inbox of another team's run", want: ErrOtherTeam, kind: Forbidden,
			do: func(t *testing.T, st *Store, ms *Session, _, to string) error {
				_, err := ms.Inbox(carol(st), to, InboxQuery{Limit: 5})
				return err
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newTestStore(t)
			ms := open(t, st, "")
			from, to := create(t, ms, alice(st), "lead"), create(t, ms, alice(st), "helper")
			before := len(ms.messages.list)
			failsWith(t, tc.do(t, st, ms, from.ID, to.ID), tc.want, tc.kind)
			if tc.want != ErrMessageOtherTeam {
				assert.Len(t, ms.messages.list, before, "nothing is sent unless all of it can be")
			}
		})
	}
}

// TestMessagesAreReadOnce: one copy per recipient; read_at and
// delivered_at are set the first time only; the inbox filters.
func TestMessagesAreReadOnce(t *testing.T) {
	st := newTestStore(t)
	ms := open(t, st, "")
	from, a, b := create(t, ms, alice(st), "lead"), create(t, ms, alice(st), "a"), create(t, ms, alice(st), "b")
	ids, err := ms.SendMessage(alice(st), NewMessage{SenderRunID: from.ID, To: []string{a.ID, b.ID}, Subject: "Plan", Body: "Split the work"})
	require.NoError(t, err)
	require.Len(t, ids, 2)
	require.NoError(t, ms.MarkDelivered(alice(st), ids[0]))
	_, err = ms.Advance(time.Minute)
	require.NoError(t, err)
	m, err := ms.ReadMessage(alice(st), ids[0])
	require.NoError(t, err)
	assert.Equal(t, t0, m.DeliveredAt, "delivered before it was read")
	assert.Equal(t, t0.Add(time.Minute), m.ReadAt)
	unread, err := ms.Inbox(alice(st), a.ID, InboxQuery{UnreadOnly: true, Limit: 10})
	require.NoError(t, err)
	assert.Empty(t, unread)
	inbox, err := ms.Inbox(alice(st), b.ID, InboxQuery{Limit: 10})
	require.NoError(t, err)
	require.Len(t, inbox, 1)
	assert.Equal(t, "Split the work", inbox[0].Body)
	assert.True(t, inbox[0].ReadAt.IsZero())
}
