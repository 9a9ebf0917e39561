package store

import (
	"bytes"
	"strings"
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

// A message sent to many runs is one letter: kept once in memory and in
// the save, each recipient with a copy of its own.
func TestAMessageToManyRunsIsKeptOnce(t *testing.T) {
	st := newTestStore(t)
	ms := open(t, st, "")
	from := create(t, ms, alice(st), "lead")
	var to []string
	for range 100 {
		to = append(to, create(t, ms, alice(st), "helper").ID)
	}
	body := strings.Repeat("b", MaxMessageBody)
	ids, err := ms.SendMessage(alice(st), NewMessage{SenderRunID: from.ID, To: to, Subject: "Plan", Body: body})
	require.NoError(t, err)
	require.Len(t, ids, 100)
	require.NoError(t, ms.MarkDelivered(alice(st), ids[7]))
	saved := saveOf(t, st)
	assert.Equal(t, 1, bytes.Count(saved, []byte(body)), "the body is saved once, not once per recipient")
	assert.Less(t, len(saved), 2*MaxMessageBody+100*1024, "each copy costs a few hundred bytes")

	again := loadInto(t, st.opts, saved)
	loaded := open(t, again, "")
	for i, id := range to {
		in, err := loaded.Inbox(alice(again), id, InboxQuery{Limit: 10})
		require.NoError(t, err)
		require.Len(t, in, 1)
		assert.Equal(t, ids[i], in[0].ID)
		assert.Same(t, loaded.messages.byID[ids[0]].Letter, in[0].Letter, "the copies share their letter after a load")
		assert.Equal(t, i == 7, !in[0].DeliveredAt.IsZero(), "each copy keeps its own times")
	}
	assert.Equal(t, mailUse{copies: 100, bytes: len("Plan") + MaxMessageBody}, loaded.messages.used["team-acme"])
}

// A file written when each copy carried the whole message still loads:
// equal copies become one letter, and the next save keeps it once.
func TestMessagesOfOlderFilesBecomeLetters(t *testing.T) {
	st := newTestStore(t)
	ms := open(t, st, "")
	from, a, b := create(t, ms, alice(st), "lead"), create(t, ms, alice(st), "a"), create(t, ms, alice(st), "b")
	ids, err := ms.SendMessage(alice(st), NewMessage{SenderRunID: from.ID, To: []string{a.ID, b.ID}, Subject: "Plan", Body: "Split the work"})
	require.NoError(t, err)
	_, err = ms.SendMessage(alice(st), NewMessage{SenderRunID: from.ID, To: []string{a.ID}, Subject: "Plan", Body: "Another"})
	require.NoError(t, err)
	_, err = ms.ReadMessage(alice(st), ids[1])
	require.NoError(t, err)
	want := func(ms *Session, p *Store) [][]Message {
		var out [][]Message
		for _, r := range []string{a.ID, b.ID} {
			in, err := ms.Inbox(alice(p), r, InboxQuery{Limit: 10})
			require.NoError(t, err)
			out = append(out, in)
		}
		return out
	}
	before := want(ms, st)

	// Write the file as the mock did before letters: each copy whole.
	doc, sessions := sessionsOf(t, saveOf(t, st))
	s := sessions[0].(map[string]any)
	letters := map[string]map[string]any{}
	for _, l := range s["letters"].([]any) {
		letters[l.(map[string]any)["id"].(string)] = l.(map[string]any)
	}
	for _, m := range s["messages"].([]any) {
		m := m.(map[string]any)
		l := letters[m["letter"].(string)]
		delete(m, "letter")
		for _, k := range []string{"sender_run_id", "subject", "body", "sent_at"} {
			m[k] = l[k]
		}
	}
	delete(s, "letters")
	old := encode(t, doc)
	require.Equal(t, 2, bytes.Count(old, []byte("Split the work")))

	again := loadInto(t, st.opts, old)
	loaded := open(t, again, "")
	after := want(loaded, again)
	require.Len(t, after, 2)
	assert.Equal(t, before[0][0].ID, after[0][0].ID)
	assert.Equal(t, before[1][0].ReadAt, after[1][0].ReadAt)
	assert.Same(t, after[0][0].Letter, after[1][0].Letter, "equal copies are one letter")
	assert.NotSame(t, after[0][0].Letter, after[0][1].Letter)
	assert.Equal(t, 1, bytes.Count(saveOf(t, again), []byte("Split the work")), "saved once from then on")
}

// Messages are bounded: a letter's subject and body, a run's inbox, and a
// team's copies and bytes. Past a bound a send is refused whole, saying
// which bound; nothing is dropped.
func TestMessagesAreBounded(t *testing.T) {
	st := newTestStore(t)
	ms := open(t, st, "")
	from, to := create(t, ms, alice(st), "lead"), create(t, ms, alice(st), "helper")
	send := func(to []string, subject, body string) error {
		_, err := ms.SendMessage(alice(st), NewMessage{SenderRunID: from.ID, To: to, Subject: subject, Body: body})
		return err
	}
	err := send([]string{to.ID}, strings.Repeat("s", MaxMessageSubject+1), "b")
	failsWith(t, err, ErrMessageTooLarge, Invalid)
	assert.Contains(t, err.Error(), "subject")
	err = send([]string{to.ID}, "s", strings.Repeat("b", MaxMessageBody+1))
	failsWith(t, err, ErrMessageTooLarge, Invalid)
	assert.Contains(t, err.Error(), "65536")
	require.NoError(t, send([]string{to.ID}, strings.Repeat("s", MaxMessageSubject), strings.Repeat("b", MaxMessageBody)))

	for i := 1; i < MaxMessagesPerRun; i++ {
		require.NoError(t, send([]string{to.ID}, "s", "b"), "message %d", i)
	}
	other := create(t, ms, alice(st), "another helper")
	err = send([]string{other.ID, to.ID}, "s", "b")
	failsWith(t, err, ErrInboxFull, Exhausted)
	assert.Contains(t, err.Error(), "to[1]")
	in, err := ms.Inbox(alice(st), other.ID, InboxQuery{Limit: 10})
	require.NoError(t, err)
	assert.Empty(t, in, "nothing is sent unless all of it can be")

	// A team's copies: 10,000 across its runs.
	var many []string
	for range 100 {
		many = append(many, create(t, ms, alice(st), "crowd").ID)
	}
	for i := 0; ms.messages.used["team-acme"].copies+100 <= MaxMessagesPerTeam; i++ {
		require.NoError(t, send(many, "s", "b"), "send %d", i)
	}
	failsWith(t, send(many, "s", "b"), ErrTeamMailFull, Exhausted)
	_, err = ms.SendMessage(carol(st), NewMessage{SenderRunID: fixtureRun(t, ms, "team-globex", Queued, "").ID,
		To: []string{fixtureRun(t, ms, "team-globex", Queued, "").ID}, Subject: "s", Body: "b"})
	require.NoError(t, err, "another team has its own room")

	// A team's bytes: 16 MiB of letters.
	bt := newTestStore(t)
	bm := open(t, bt, "")
	lead, helper := create(t, bm, alice(bt), "lead"), create(t, bm, alice(bt), "helper")
	big := strings.Repeat("b", MaxMessageBody)
	for i := range MaxMessageBytesPerTeam / (MaxMessageBody + 1) {
		_, err := bm.SendMessage(alice(bt), NewMessage{SenderRunID: lead.ID, To: []string{helper.ID}, Subject: "s", Body: big})
		require.NoError(t, err, "send %d", i)
	}
	_, err = bm.SendMessage(alice(bt), NewMessage{SenderRunID: lead.ID, To: []string{helper.ID}, Subject: "s", Body: big})
	failsWith(t, err, ErrTeamMailFull, Exhausted)
	assert.Contains(t, err.Error(), "16 MiB")
}
