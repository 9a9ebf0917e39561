package drift_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/drift"
)

func embedded(t *testing.T) *drift.Doc {
	t.Helper()
	d, err := drift.Embedded()
	require.NoError(t, err)
	return d
}

func decoded(t *testing.T, s string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	return v
}

// A run's members that RunItem does not declare are its extras, by
// pointer, the topmost of each branch whole; declared ones are not, nor
// the members of a free-form object.
func TestExtrasAreTheMembersTheSchemaDoesNotDeclare(t *testing.T) {
	d := embedded(t)
	run := decoded(t, `{"run_id":"r1","task_id":"r1","title":"t","prompt":"p","state":"FAILED","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z",
		"rollout_ring":"canary","status_message":{"message":"m","hint":{"a":1}},"creator":{"type":"USER","uid":"u","x/y":true},
		"agent_config":{"model_id":"m"}}`)
	got := d.Extras("RunItem", run)
	assert.Equal(t, map[string]json.RawMessage{
		"/rollout_ring":        json.RawMessage(`"canary"`),
		"/status_message/hint": json.RawMessage(`{"a":1}`),
		"/creator/x~1y":        json.RawMessage(`true`),
	}, got)
	assert.Nil(t, d.Extras("RunItem", decoded(t, `{"run_id":"r1","state":"QUEUED"}`)))
	assert.Nil(t, d.Extras("NoSuchSchema", run))
}
