package rules

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rules read a decoded value as encoding/json read the bytes into
// their structs: the same members, the same zero values for null and
// absent, and no read at all where Unmarshal failed.
func TestMembersReadAsUnmarshalReads(t *testing.T) {
	for _, body := range []string{
		`{"prompt":"p","metadata":{"k":"v"},"on_behalf_of":"u","parent_run_id":"r","config":{"environment_id":"e"}}`,
		`{"Prompt":"p","CONFIG":{"Environment_ID":"e"}}`,
		`{"prompt":null,"metadata":null,"config":null}`,
		`null`,
		`{}`,
		`{"prompt":1}`,
		`{"metadata":[1]}`,
		`{"config":"e"}`,
		`{"config":{"environment_id":true}}`,
		`[1,2]`,
		`"text"`,
	} {
		var want struct {
			Prompt     string         `json:"prompt"`
			Metadata   map[string]any `json:"metadata"`
			OnBehalfOf string         `json:"on_behalf_of"`
			Parent     string         `json:"parent_run_id"`
			Config     struct {
				EnvironmentID string `json:"environment_id"`
			} `json:"config"`
		}
		wantOK := json.Unmarshal([]byte(body), &want) == nil
		var v any
		require.NoError(t, json.Unmarshal([]byte(body), &v))
		read := membersOf(v)
		prompt, metadata, onBehalf, parent := read.str("prompt"), read.mapOf("metadata"), read.str("on_behalf_of"), read.str("parent_run_id")
		config := read.object("config")
		env := config.str("environment_id")
		gotOK := read.ok && config.ok
		require.Equal(t, wantOK, gotOK, body)
		if wantOK {
			assert.Equal(t, want.Prompt, prompt, body)
			assert.Equal(t, want.Metadata, metadata, body)
			assert.Equal(t, want.OnBehalfOf, onBehalf, body)
			assert.Equal(t, want.Parent, parent, body)
			assert.Equal(t, want.Config.EnvironmentID, env, body)
		}
	}
	for _, body := range []string{
		`{"runs":[{"run_id":"a"},null],"page_info":{"next_cursor":"c","has_next_page":true}}`,
		`{"runs":null,"page_info":null}`,
		`{"runs":[1]}`,
		`{"runs":{}}`,
		`{"page_info":{"has_next_page":"yes"}}`,
		`{"to":["a",null,"b"]}`,
		`{"to":["a",2]}`,
	} {
		var want struct {
			Runs     []map[string]any `json:"runs"`
			PageInfo struct {
				NextCursor string `json:"next_cursor"`
				HasNext    bool   `json:"has_next_page"`
			} `json:"page_info"`
			To []string `json:"to"`
		}
		wantOK := json.Unmarshal([]byte(body), &want) == nil
		var v any
		require.NoError(t, json.Unmarshal([]byte(body), &v))
		read := membersOf(v)
		runs, to := read.objs("runs"), read.strs("to")
		info := read.object("page_info")
		next, hasNext := info.str("next_cursor"), info.boolean("has_next_page")
		require.Equal(t, wantOK, read.ok && info.ok, body)
		if wantOK {
			assert.Equal(t, want.Runs, runs, body)
			assert.Equal(t, want.To, to, body)
			assert.Equal(t, want.PageInfo.NextCursor, next, body)
			assert.Equal(t, want.PageInfo.HasNext, hasNext, body)
		}
	}
}

// Given the bodies decoded, Memory judges them and never reads the bytes:
// here the bytes are no JSON at all, and the finding is still made.
func TestMemoryReadsTheDecodedBodies(t *testing.T) {
	m := NewMemory(Limits{})
	at := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	var create, answer any
	require.NoError(t, json.Unmarshal([]byte(`{"prompt":"p","metadata":{"team":"a"}}`), &create))
	require.NoError(t, json.Unmarshal([]byte(`{"run_id":"r1","state":"QUEUED"}`), &answer))
	m.Observe(Exchange{Method: "POST", Path: "/agent/runs", Status: 200, Body: []byte("no json"), RequestBody: []byte("no json"),
		Sent: at, Received: at.Add(time.Millisecond), Request: "POST /agent/runs",
		Decoded: &Decoded{Answer: answer, AnswerOK: true, Request: create, RequestOK: true}})
	var look any
	require.NoError(t, json.Unmarshal([]byte(`{"run_id":"r1","task_id":"r1","state":"QUEUED","created_at":"2026-01-01T10:00:00Z",`+
		`"updated_at":"2026-01-01T10:00:00Z","metadata":{"team":"b"}}`), &look))
	vs := m.Observe(Exchange{Method: "GET", Path: "/agent/runs/r1", Status: 200, Body: []byte("no json"),
		Sent: at.Add(time.Second), Received: at.Add(2 * time.Second), Request: "GET /agent/runs/r1",
		Decoded: &Decoded{Answer: look, AnswerOK: true}})
	var rules []string
	for _, v := range vs {
		rules = append(rules, v.Rule)
	}
	assert.Contains(t, rules, MetadataKept)
}
