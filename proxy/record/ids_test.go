package record_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver"
)

// recordedIDs are what the upstream showed one run with that the mock
// would otherwise make up.
type recordedIDs struct {
	usage                    string // request_usage, as JSON
	session, conversation    string
	prURL, prBranch, planURL string
}

// withIDs is a look at a run showing ids, usage and artifacts' URLs.
func withIDs(run map[string]any, ids recordedIDs) map[string]any {
	var usage map[string]any
	if err := json.Unmarshal([]byte(ids.usage), &usage); err != nil {
		panic(err)
	}
	run["request_usage"] = usage
	if ids.session != "" {
		run["session_id"] = ids.session
		run["session_link"] = "https://app.example.com/session/" + ids.session
	}
	run["conversation_id"] = ids.conversation
	at := run["updated_at"]
	var arts []any
	if ids.planURL != "" {
		arts = append(arts, map[string]any{"artifact_type": "PLAN", "created_at": at,
			"data": map[string]any{"document_uid": "doc-real-1", "title": "The plan", "url": ids.planURL + "?share=secret"}})
	}
	if ids.prURL != "" {
		arts = append(arts, map[string]any{"artifact_type": "PULL_REQUEST", "created_at": at,
			"data": map[string]any{"url": ids.prURL, "branch": ids.prBranch}})
	}
	if arts != nil {
		run["artifacts"] = arts
	}
	return run
}

// A recording of runs a real server showed with their request_usage,
// session_id, conversation_id and pull request (and plan) URLs replays
// each as recorded, over HTTP: a run held as last seen and one replaying
// its timeline alike, before and after the mock's clock moves on (the
// mock does not grow a recorded usage), in a page of runs as in a single
// run; the recorded session's redirect finds the recorded conversation, a
// new run may continue that conversation, and a follow-up to a replayed
// run keeps it.
func TestARecordingReplaysItsRunsIdsAndUsage(t *testing.T) {
	now := time.Now()
	ptr := func(t time.Time) *time.Time { return &t }
	// The first's usage has a breakdown of the newest client's document and
	// a member no document declares (kept as the run's extra).
	first := recordedIDs{usage: `{"inference_cost":1.27,"compute_cost":0.31,"total_tokens":48213,"rollout_discount":0.1,` +
		`"inference_cost_breakdown_usd":{"input_cost_usd":0.02,"input_cache_read_cost_usd":0.001,"input_cache_write_cost_usd":0.003,"output_cost_usd":0.04}}`,
		session: "3f0b8c5e-2d4a-4e61-9c7b-5a8e1d2f3c40", conversation: "cv_51Hn0",
		prURL: "https://github.com/acme/web/pull/812", prBranch: "agent/settings-responsive", planURL: "https://app.example.com/plans/p-812"}
	next := recordedIDs{usage: `{"inference_cost":0.5,"compute_cost":0.04}`,
		session: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", conversation: "cv_51Hn0",
		prURL: "https://github.com/acme/web/pull/813", prBranch: "agent/settings-followup"}
	held := recordedIDs{usage: `{"inference_cost":0.02,"compute_cost":0.003}`,
		session: "0c1d2e3f-4a5b-4c6d-9e7f-8a9b0c1d2e3f", conversation: "cv_held-7"}
	failed := recordedIDs{usage: `{"inference_cost":0.8,"compute_cost":0.1}`,
		session: "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9", conversation: "cv_failed_2",
		prURL: "https://github.com/acme/api/pull/9", prBranch: "agent/half-done"}

	// Seen cancelled after a worker had it (it shows a session), and seen
	// queued, continuing a conversation no run recorded began.
	cancelled := recordedIDs{usage: `{"inference_cost":0.07,"compute_cost":0.01}`,
		session: "7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d0e", conversation: "cv_cancelled"}
	queuedIDs := recordedIDs{usage: `{"inference_cost":0,"compute_cost":0}`, conversation: "cv_elsewhere"}
	upstream := &scriptedRuns{looks: map[string][]map[string]any{
		"run-first": {withIDs(runLook("run-first", "SUCCEEDED", now.Add(-30*time.Minute), now.Add(-25*time.Minute), ptr(now.Add(-29*time.Minute))), first)},
		"run-next": { // seen from QUEUED to its end: replayed
			runLook("run-next", "QUEUED", now.Add(-10*time.Minute), now.Add(-10*time.Minute), nil),
			withIDs(runLook("run-next", "INPROGRESS", now.Add(-10*time.Minute), now.Add(-9*time.Minute), ptr(now.Add(-9*time.Minute))),
				recordedIDs{usage: `{"inference_cost":0.1,"compute_cost":0.01}`, session: next.session, conversation: next.conversation}),
			withIDs(runLook("run-next", "SUCCEEDED", now.Add(-10*time.Minute), now.Add(-5*time.Minute), ptr(now.Add(-9*time.Minute))), next),
		},
		"run-held":      {withIDs(runLook("run-held", "INPROGRESS", now.Add(-20*time.Minute), now.Add(-15*time.Minute), ptr(now.Add(-15*time.Minute))), held)},
		"run-cancelled": {withIDs(runLook("run-cancelled", "CANCELLED", now.Add(-50*time.Minute), now.Add(-45*time.Minute), nil), cancelled)},
		// Created before run-next was first seen, so that run-next, the
		// last run to begin, enters QUEUED as the mock starts.
		"run-queued": {withIDs(runLook("run-queued", "QUEUED", now.Add(-11*time.Minute), now.Add(-11*time.Minute), nil), queuedIDs)},
		"run-failed": {withIDs(runLook("run-failed", "FAILED", now.Add(-40*time.Minute), now.Add(-35*time.Minute), ptr(now.Add(-39*time.Minute))), failed)},
	}}
	set := recordedSet(t, upstream, "/agent/runs/run-first", "/agent/runs/run-next", "/agent/runs/run-next", "/agent/runs/run-next",
		"/agent/runs/run-held", "/agent/runs/run-failed", "/agent/runs/run-cancelled", "/agent/runs/run-queued")
	mock, err := mockserver.New(mockserver.Options{Fixtures: set, ClockMode: mockserver.VirtualClock})
	require.NoError(t, err)
	replay := httptest.NewServer(mock)
	t.Cleanup(replay.Close)

	call := func(method, path string, body any) (int, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, err := json.Marshal(body)
			require.NoError(t, err)
			rd = bytes.NewReader(b)
		}
		req, err := http.NewRequest(method, replay.URL+path, rd)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer any-key")
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		if len(raw) > 0 {
			require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
		}
		return resp.StatusCode, out
	}
	get := func(path string) map[string]any {
		t.Helper()
		status, out := call(http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, status, "GET %s: %v", path, out)
		return out
	}
	artifact := func(run map[string]any, kind string) map[string]any {
		arts, _ := run["artifacts"].([]any)
		for _, a := range arts {
			if a := a.(map[string]any); a["artifact_type"] == kind {
				return a["data"].(map[string]any)
			}
		}
		return nil
	}
	asRecorded := func(when string, run map[string]any, want recordedIDs) {
		t.Helper()
		id := run["run_id"]
		got, err := json.Marshal(run["request_usage"])
		require.NoError(t, err)
		assert.JSONEq(t, want.usage, string(got), "%s, %s: request_usage as recorded", id, when)
		if want.session != "" {
			assert.Equal(t, want.session, run["session_id"], "%s, %s: session_id as recorded", id, when)
			assert.Regexp(t, "^http.*/"+want.session+"$", run["session_link"], "%s, %s: session_link to the recorded session", id, when)
		}
		assert.Equal(t, want.conversation, run["conversation_id"], "%s, %s: conversation_id as recorded", id, when)
		if want.prURL != "" {
			assert.Equal(t, map[string]any{"url": want.prURL, "branch": want.prBranch}, artifact(run, "PULL_REQUEST"), "%s, %s: the pull request as recorded", id, when)
		}
		if want.planURL != "" {
			assert.Equal(t, want.planURL, artifact(run, "PLAN")["url"], "%s, %s: the plan's URL as recorded, without its query", id, when)
		}
	}
	recorded := map[string]recordedIDs{"run-first": first, "run-held": held, "run-failed": failed, "run-cancelled": cancelled, "run-queued": queuedIDs}
	for id, want := range recorded {
		asRecorded("as the mock starts", get("/agent/runs/"+id), want)
	}
	queued := get("/agent/runs/run-next")
	assert.Equal(t, "QUEUED", queued["state"], "the replay begins where the recording first saw the run")
	assert.Equal(t, next.conversation, queued["conversation_id"], "a run continuing a recorded conversation shows it from the start")

	_, err = mock.DefaultSession().Advance(10 * time.Minute) // run-next replays to its end
	require.NoError(t, err)
	recorded["run-next"] = next
	for _, advance := range []time.Duration{0, 2 * time.Hour} {
		_, err = mock.DefaultSession().Advance(advance)
		require.NoError(t, err)
		when := "after another " + advance.String()
		for id, want := range recorded {
			asRecorded(when, get("/agent/runs/"+id), want)
		}
		page := get("/agent/runs?limit=100")
		for _, r := range page["runs"].([]any) {
			r := r.(map[string]any)
			asRecorded(when+", listed", r, recorded[r["run_id"].(string)])
		}
	}
	assert.Equal(t, "INPROGRESS", get("/agent/runs/run-held")["state"])
	assert.Equal(t, "SUCCEEDED", get("/agent/runs/run-next")["state"])

	// A mock restarted on its saved state shows the same.
	var state bytes.Buffer
	require.NoError(t, mock.Save(&state))
	mock, err = mockserver.New(mockserver.Options{Fixtures: set, ClockMode: mockserver.VirtualClock, State: &state})
	require.NoError(t, err)
	replay = httptest.NewServer(mock) // what follows asks the restarted mock
	t.Cleanup(replay.Close)
	for id, want := range recorded {
		asRecorded("after a restart on the saved state", get("/agent/runs/"+id), want)
	}

	// The recorded session leads to the recorded conversation, which holds
	// both recorded runs, and a new run may continue it.
	assert.Equal(t, map[string]any{"conversation_id": first.conversation}, get("/agent/sessions/"+first.session+"/redirect"))
	status, created := call(http.MethodPost, "/agent/runs", map[string]any{"prompt": "And the profile page", "conversation_id": first.conversation})
	require.Equal(t, http.StatusOK, status, "%v", created)
	assert.Equal(t, first.conversation, get("/agent/runs/" + created["run_id"].(string))["conversation_id"])
	assert.Equal(t, first.conversation, get("/agent/conversations/" + first.conversation)["conversation_id"])

	// A follow-up starts the replayed run again in its recorded conversation.
	status, answer := call(http.MethodPost, "/agent/runs/run-next/followups", map[string]any{"message": "Also the footer"})
	require.Less(t, status, 300, "%v", answer)
	_, err = mock.DefaultSession().Advance(time.Hour)
	require.NoError(t, err)
	again := get("/agent/runs/run-next")
	assert.Equal(t, next.conversation, again["conversation_id"], "the follow-up keeps the recorded conversation")
	assert.Equal(t, next.session, again["session_id"])
	assert.Equal(t, next.conversation, get("/agent/runs/run-next/conversation")["conversation_id"])
}
