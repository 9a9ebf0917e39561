package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConversationsRefuseWithTheirErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(t *testing.T, st *Store, ms *Session) error
		want error
		kind Kind
	}{
		{name: "a queued run has none yet", want: ErrNoConversation, kind: NotFound,
			do: func(t *testing.T, st *Store, ms *Session) error {
				_, err := ms.RunConversation(alice(st), create(t, ms, alice(st), "x").ID)
				return err
			}},
		{name: "an id no run began", want: ErrConversationNotFound, kind: NotFound,
			do: func(t *testing.T, st *Store, ms *Session) error {
				_, err := ms.Conversation(alice(st), "6f9f1a52-0000-4000-8000-000000000000")
				return err
			}},
		{name: "another team's conversation", want: ErrConversationOtherTeam, kind: Forbidden,
			do: func(t *testing.T, st *Store, ms *Session) error {
				_, err := ms.Conversation(carol(st), fixtureRun(t, ms, "team-acme", Succeeded, "").ConversationOf())
				return err
			}},
		{name: "the transcript of another team's run", want: ErrOtherTeam, kind: Forbidden,
			do: func(t *testing.T, st *Store, ms *Session) error {
				_, _, err := ms.Transcript(carol(st), fixtureRun(t, ms, "team-acme", Succeeded, "").ID)
				return err
			}},
		{name: "a conversation on another harness", want: ErrOtherHarness, kind: Unsupported,
			do: func(t *testing.T, st *Store, ms *Session) error {
				n := newRun(ms, "x")
				n.Config.Harness = &Harness{Type: "claude"}
				v, err := ms.Create(alice(st), n)
				require.NoError(t, err)
				_, err = ms.Advance(time.Minute)
				require.NoError(t, err)
				_, err = ms.RunConversation(alice(st), v.Run.ID)
				return err
			}},
		{name: "a run continues another team's conversation", want: ErrConversationOtherTeam, kind: Forbidden,
			do: func(t *testing.T, st *Store, ms *Session) error {
				n := newRun(ms, "go on")
				n.ConversationID = fixtureRun(t, ms, "team-acme", Succeeded, "").ConversationOf()
				_, err := ms.Create(carol(st), n)
				return err
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newTestStore(t)
			failsWith(t, tc.do(t, st, open(t, st, "")), tc.want, tc.kind)
		})
	}
}

// TestConversationsGrowWithTheirRuns: a conversation begins when a worker
// claims the run, ends with a summary, and a run created to continue it
// adds its own exchange.
func TestConversationsGrowWithTheirRuns(t *testing.T) {
	st := newTestStore(t)
	ms := open(t, st, "")
	first := create(t, ms, alice(st), "Write the migration")
	_, err := ms.Advance(time.Hour)
	require.NoError(t, err)
	cv, err := ms.RunConversation(alice(st), first.ID)
	require.NoError(t, err)
	require.Len(t, cv.Exchanges, 1)
	assert.NotEmpty(t, cv.Exchanges[0].Summary, "it succeeded")
	n := newRun(ms, "Now add a rollback")
	n.ConversationID = cv.ID
	_, err = ms.Create(alice(st), n)
	require.NoError(t, err)
	_, err = ms.Advance(time.Hour)
	require.NoError(t, err)
	cv2, err := ms.Conversation(alice(st), cv.ID)
	require.NoError(t, err)
	require.Len(t, cv2.Exchanges, 2)
	assert.Equal(t, cv.Exchanges[0], cv2.Exchanges[0], "what was said stays said")
	assert.Equal(t, "Now add a rollback", cv2.Exchanges[1].Prompt)
}
