package store

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withRecordedRuns adds to the fixtures two runs of one recorded
// conversation, each with the usage, session and artifacts' URLs a
// recording saw, as proxy/record writes them.
func withRecordedRuns(o *Options) {
	set := *o.Fixtures
	set.Runs = append(append([]fixtures.Run(nil), set.Runs...),
		fixtures.Run{ID: "rec-first", Title: "First", Prompt: "Fix the login page", State: "SUCCEEDED", Source: "API",
			Creator: "user-alice", Team: true, CreatedAgo: fixtures.Duration(time.Hour), UpdatedAgo: fixtures.Duration(50 * time.Minute),
			ArtifactTypes: []string{"PLAN", "PULL_REQUEST"},
			RequestUsage:  json.RawMessage(`{"inference_cost":1.27,"compute_cost":0.31}`), SessionID: "3f0b8c5e-2d4a-4e61-9c7b-5a8e1d2f3c40",
			ConversationID: "cv_rec1", PullRequest: &fixtures.PullRequest{URL: "https://github.com/acme/web/pull/812", Branch: "agent/login"},
			PlanURL: "https://app.example.com/plans/812", Without: []string{"executor", "is_run_type_cancellable"}},
		fixtures.Run{ID: "rec-second", Title: "Second", Prompt: "And the sign-up page", State: "SUCCEEDED", Source: "API",
			Creator: "user-alice", Team: true, CreatedAgo: fixtures.Duration(40 * time.Minute), UpdatedAgo: fixtures.Duration(30 * time.Minute),
			RequestUsage: json.RawMessage(`{"inference_cost":0.5,"compute_cost":0.02}`), SessionID: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d",
			ConversationID: "cv_rec1", Executor: json.RawMessage(`{"type":"service_account","uid":"agent-7"}`), RunTypeCancellable: new(bool)},
		// Seen QUEUED with a conversation it cannot have begun (a worker
		// begins one); seen CANCELLED with a session, so once claimed.
		fixtures.Run{ID: "rec-queued", Title: "Queued", Prompt: "Later", State: "QUEUED", Source: "API", Creator: "user-alice", Team: true,
			CreatedAgo: fixtures.Duration(20 * time.Minute), UpdatedAgo: fixtures.Duration(20 * time.Minute), Step: fixtures.Duration(MaxStep),
			ConversationID: "cv_queued"},
		fixtures.Run{ID: "rec-cancelled", Title: "Cancelled", Prompt: "Stop", State: "CANCELLED", Source: "API", Creator: "user-alice", Team: true,
			CreatedAgo: fixtures.Duration(20 * time.Minute), UpdatedAgo: fixtures.Duration(10 * time.Minute),
			SessionID: "0c1d2e3f-4a5b-4c6d-9e7f-8a9b0c1d2e3f", ConversationID: "cv_cancelled"})
	o.Fixtures = &set
}

// recordedLook is what a mock session shows of the recorded runs: their
// recorded values, the agent sessions their redirects find them by, and
// the recorded conversation with every run in it.
func recordedLook(t *testing.T, st *Store, ms *Session) []any {
	t.Helper()
	var out []any
	for _, id := range []string{"rec-first", "rec-second", "rec-queued", "rec-cancelled"} {
		v, err := ms.Run(id)
		require.NoError(t, err)
		out = append(out, *v.Run.Recorded, v.Run.AgentSession, v.Run.ConversationID, v.Run.ConversationOf())
	}
	cv, err := ms.Conversation(alice(st), "cv_rec1")
	require.NoError(t, err)
	var runs []string
	for _, x := range cv.Exchanges {
		runs = append(runs, x.RunID)
	}
	return append(out, runs, ms.SessionRedirect(uuid.MustParse("3f0b8c5e-2d4a-4e61-9c7b-5a8e1d2f3c40")))
}

// A recorded run keeps what the recording saw: its session is its agent
// session, the oldest run of a recorded conversation begins it and a later
// one continues it, a new run may continue it too; and a saved state gives
// all of it back.
func TestRecordedValuesSurviveASaveAndLoad(t *testing.T) {
	st := newTestStore(t, withRecordedRuns)
	ms := open(t, st, "named")
	first, err := ms.Run("rec-first")
	require.NoError(t, err)
	assert.Equal(t, uuid.MustParse("3f0b8c5e-2d4a-4e61-9c7b-5a8e1d2f3c40"), first.Run.AgentSession, "the recorded session is the run's agent session")
	assert.Equal(t, "3f0b8c5e-2d4a-4e61-9c7b-5a8e1d2f3c40", first.Run.SessionIDText())
	assert.JSONEq(t, `{"inference_cost":1.27,"compute_cost":0.31}`, string(first.Run.RecordedUsage()))
	assert.Equal(t, "cv_rec1", first.Run.ConversationOf(), "the oldest run begins the recorded conversation")
	assert.Empty(t, first.Run.ConversationID)
	second, err := ms.Run("rec-second")
	require.NoError(t, err)
	assert.Equal(t, "cv_rec1", second.Run.ConversationID, "a later run continues it")
	assert.Equal(t, "cv_rec1", ms.SessionRedirect(first.Run.AgentSession), "the recorded session's redirect finds the recorded conversation")
	queued, err := ms.Run("rec-queued")
	require.NoError(t, err)
	assert.Equal(t, "cv_queued", queued.Run.ConversationID, "a run seen unclaimed in a conversation continues it, so shows it")
	cancelled, err := ms.Run("rec-cancelled")
	require.NoError(t, err)
	assert.True(t, cancelled.Snap.Claimed, "a cancelled run seen with a session was claimed")
	assert.Equal(t, "cv_cancelled", cancelled.Run.ConversationOf())

	n := newRun(ms, "Now the settings page")
	n.ConversationID = "cv_rec1"
	v, err := ms.Create(alice(st), n)
	require.NoError(t, err, "a new run continues the recorded conversation")
	assert.Equal(t, "cv_rec1", v.Run.ConversationOf())
	assert.Nil(t, v.Run.Recorded, "a run of the mock's own has no recorded values")
	_, err = ms.Advance(time.Minute)
	require.NoError(t, err)

	want := recordedLook(t, st, ms)
	assert.Equal(t, []string{"rec-first", "rec-second", v.Run.ID}, want[len(want)-2], "the conversation holds the recorded runs, then the new one")
	saved := saveOf(t, st)
	again := loadInto(t, st.opts, saved)
	assert.Equal(t, want, recordedLook(t, again, open(t, again, "named")), "a saved state keeps what was recorded")
	assert.Equal(t, saved, saveOf(t, loadInto(t, st.opts, saved)), "a loaded save saves the same")
}
