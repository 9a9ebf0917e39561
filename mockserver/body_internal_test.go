package mockserver

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver/jsonfill"
	"github.com/agentruns/agentruns/mockserver/store"
	"github.com/agentruns/agentruns/openapi"
)

// A handler fills its request from the value the OpenAPI check decoded,
// not from the bytes: here the two differ, which a real request never
// does, to show which one is read.
func TestFillReadsTheDecodedBody(t *testing.T) {
	c := &call{body: []byte(`{"message":"from the bytes"}`), decoded: map[string]any{"message": "from the check"}}
	var req followupRequest
	require.Nil(t, c.fill(&req))
	require.NotNil(t, req.Message)
	assert.Equal(t, "from the check", *req.Message)

	obj, aerr := c.object()
	require.Nil(t, aerr)
	assert.Equal(t, "from the check", obj["message"])
}

// A body the check did not decode is decoded once, by the first read.
func TestABodyIsDecodedOnce(t *testing.T) {
	c := &call{body: []byte(`{"name":"n","description":"d"}`)}
	first := c.value()
	require.NotNil(t, first)
	assert.Equal(t, reflect.ValueOf(first).Pointer(), reflect.ValueOf(c.value()).Pointer(), "the second read decodes again")

	// A body DecodeJSON refuses (a name twice) is refused once, and read by
	// encoding/json, as before.
	c = &call{body: []byte(`{"name":"a","name":"b"}`)}
	assert.Nil(t, c.value())
	assert.True(t, c.undecodable)
	name, given, aerr := identityName(c, true)
	require.Nil(t, aerr)
	assert.True(t, given)
	assert.Equal(t, "b", name, "encoding/json keeps the last")
}

// Every request type a handler fills agrees with encoding/json on the
// bodies below, and the common ones are filled from the decoded value
// (jsonfill takes them), or the body is decoded twice after all.
func TestRequestTypesFillAsEncodingJSON(t *testing.T) {
	type nameOnly = struct {
		Name *string `json:"name"`
	}
	for _, tc := range []struct {
		newReq func() any
		body   string
		common bool // jsonfill must take it
	}{
		{func() any { return new(followupRequest) }, `{"message":"go on","mode":"plan"}`, true},
		{func() any { return new(followupRequest) }, `{"message":null}`, true},
		{func() any { return new(followupRequest) }, `{"Message":"folded"}`, false},
		{func() any { return new(reportEventRequest) }, `{"event_type":"run_started","execution_id":"x","ref_id":"r"}`, true},
		{func() any { return new(reportEventRequest) }, `{"event_type":7}`, false},
		{func() any { return new(sendMessageRequest) }, `{"to":["a","b"],"subject":"s","body":"b","sender_run_id":"r"}`, true},
		{func() any { return new(sendMessageRequest) }, `{"to":["a",null]}`, false},
		{func() any { return new(scheduleRequest) }, `{"name":"nightly","cron_schedule":"0 3 * * *","prompt":"p","enabled":true,"team":false,
			"agent_uid":"u","metadata":{"k":"v"},"mode":"normal","agent_config":{"name":"n","model_id":"m","environment_id":"e",
			"mcp_servers":{"gh":{"command":"gh","args":["mcp"],"env":{"A":"b"}}},"computer_use_enabled":true,"harness":{"type":"oz"},
			"memory_stores":[{"uid":"m1","access":"read","instructions":"i"}],"skills":["s"],"session_sharing":{"public_access":"VIEWER"},
			"inference_providers":{"aws":{"disabled":false,"region":"eu-west-1","role_arn":"arn"}}}}`, true},
		{func() any { return new(scheduleRequest) }, `{"name":"n","agent_config":{"idle_timeout_minutes":5}}`, false},
		{func() any { return new(scheduleRequest) }, `{"name":"n","agent_config":{"idle_timeout_minutes":5.0}}`, false},
		{func() any { return new(nameOnly) }, `{"name":"agent","description":"d","memory":{"auto_memory":{"enabled":true}}}`, true},
	} {
		decoded, err := openapi.DecodeJSON([]byte(tc.body))
		require.NoError(t, err, tc.body)
		want := tc.newReq()
		wantErr := json.Unmarshal([]byte(tc.body), want)

		got := tc.newReq()
		aerr := (&call{body: []byte(tc.body), decoded: decoded}).fill(got)
		if wantErr != nil {
			require.NotNil(t, aerr, tc.body)
			assert.Equal(t, decodeError(wantErr).detail, aerr.detail, tc.body)
		} else {
			require.Nil(t, aerr, tc.body)
			assert.Equal(t, want, got, tc.body)
		}
		assert.Equal(t, tc.common, jsonfill.Fill(tc.newReq(), decoded), "%s: taken from the decoded value", tc.body)
	}
}

// An identity's answer is what marshalling it, reading that back and
// marshalling it again with the settings made before it was marshalled once.
func TestAgentResponseMarshalsAsBefore(t *testing.T) {
	roundTrip := func(a AgentResponse) []byte { // the former MarshalJSON
		type plain AgentResponse
		b, err := json.Marshal(plain(a))
		require.NoError(t, err)
		if len(a.Settings) == 0 {
			return b
		}
		var all map[string]any
		require.NoError(t, json.Unmarshal(b, &all))
		for k, v := range a.Settings {
			if _, fixed := all[k]; !fixed {
				all[k] = v
			}
		}
		b, err = json.Marshal(all)
		require.NoError(t, err)
		return b
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, settings := range []map[string]any{
		nil,
		{"description": "<b>&</b>", "prompt": "line\u2028sep"},
		{"name": "not the name", "uid": "not the uid", "base_model": "m", "on_behalf_of_enabled": true},
		{"secrets": []any{map[string]any{"name": "s"}}, "skills": []any{"a"}, "default_runner_uid": "r",
			"memory":      map[string]any{"attached_stores": []any{map[string]any{"uid": "m", "access": "read"}}, "auto_memory": map[string]any{"enabled": true}},
			"mcp_servers": map[string]any{"gh": map[string]any{"url": "https://x", "n": 1.5}}, "environment_id": nil},
	} {
		a := identityJSON(store.IdentityView{UID: "uid-1", Name: "Agent <1>", Available: true, CreatedAt: now, UpdatedAt: now, Settings: settings})
		got, err := marshalUnescaped(a)
		require.NoError(t, err)
		want := roundTrip(a)
		assert.Equal(t, string(want), string(got))
	}
}
