package extras_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/internal/extras"
)

func TestInsertPutsEachMemberUnderItsParent(t *testing.T) {
	obj := `{"run_id":"r1","status_message":{"message":"m"},"artifacts":[{"artifact_type":"PLAN"},{"data":{}}],"empty":{},"n":null}`
	extra := map[string]json.RawMessage{
		"/rollout_ring":          json.RawMessage(`"canary"`),
		"/status_message/hint":   json.RawMessage(`{"a":[1,2]}`),
		"/artifacts/1/data/x":    json.RawMessage(`true`),
		"/artifacts/0/size":      json.RawMessage(`12`),
		"/empty/first":           json.RawMessage(`1`),
		"/missing/child":         json.RawMessage(`1`), // no parent: left out
		"/run_id":                json.RawMessage(`"other"`),
		"/n/child":               json.RawMessage(`1`), // the parent is null: left out
		"/artifacts/7":           json.RawMessage(`1`), // the parent is an array: left out
		"/status_message/a~1b~0": json.RawMessage(`2`),
	}
	out := extras.Insert([]byte("prefix:"), []byte(obj), extra)
	require.Equal(t, "prefix:", string(out[:7]))
	var got map[string]any
	require.NoError(t, json.Unmarshal(out[7:], &got), string(out))
	want := map[string]any{
		"run_id":         "r1",
		"rollout_ring":   "canary",
		"status_message": map[string]any{"message": "m", "hint": map[string]any{"a": []any{1.0, 2.0}}, "a/b~": 2.0},
		"artifacts":      []any{map[string]any{"artifact_type": "PLAN", "size": 12.0}, map[string]any{"data": map[string]any{"x": true}}},
		"empty":          map[string]any{"first": 1.0},
		"n":              nil,
	}
	assert.Equal(t, want, got)
	// The mock's own members keep their place; extras follow them.
	assert.Equal(t, `{"run_id":"r1","status_message":{"message":"m","a/b~":2,"hint":{"a":[1,2]}},`+
		`"artifacts":[{"artifact_type":"PLAN","size":12},{"data":{"x":true}}],"empty":{"first":1},"n":null,"rollout_ring":"canary"}`,
		string(out[7:]))
	assert.Equal(t, obj, string(extras.Insert(nil, []byte(obj), nil)), "no extras: the object as it was")
}

func TestCheck(t *testing.T) {
	assert.NoError(t, extras.Check("/rollout_ring"))
	assert.NoError(t, extras.Check("/a~1b/~0"))
	assert.ErrorContains(t, extras.Check(""), "whole object")
	assert.ErrorContains(t, extras.Check("rollout_ring"), "not a JSON Pointer")
	assert.ErrorContains(t, extras.Check("/a~2"), "not a JSON Pointer")
}

func TestNested(t *testing.T) {
	inner, outer := extras.Nested([]string{"/a", "/ab", "/a/b"})
	assert.Equal(t, "/a/b", inner)
	assert.Equal(t, "/a", outer)
	inner, _ = extras.Nested([]string{"/a", "/ab", "/b/a"})
	assert.Empty(t, inner)
}

func TestSkeleton(t *testing.T) {
	assert.Equal(t, map[string]any{"artifacts": []any{map[string]any{}, map[string]any{"x": "v"}}},
		extras.Skeleton("/artifacts/1/x", json.RawMessage(`"v"`)))
}

// A name written with escapes is matched by what it spells.
func TestInsertReadsEscapedNames(t *testing.T) {
	out := extras.Insert(nil, []byte(`{"a\u002fb":{"x":1},"q\"":[{}]}`), map[string]json.RawMessage{
		"/a~1b/y": json.RawMessage(`2`), "/a~1b/x": json.RawMessage(`3`), "/q\"/0/z": json.RawMessage(`4`)})
	assert.Equal(t, `{"a\u002fb":{"x":1,"y":2},"q\"":[{"z":4}]}`, string(out))
}
