package scrub_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/internal/scrub"
)

// A secret keeps its type: an object its keys, a list its length, a
// string becomes the placeholder, numbers and booleans stay; a value the
// document publishes for the field stays; a URL elsewhere loses its query.
func TestSecretsKeepTheirType(t *testing.T) {
	var in map[string]any
	require.NoError(t, json.Unmarshal([]byte(`{
		"name": "nightly",
		"harness_auth_secrets": {"claude_auth_secret_name": "team-claude-key"},
		"mcp_servers": {"github": {"url": "https://mcp.example.com/x?token=abc", "headers": {"Authorization": "Bearer sk-1"}, "env": {"N": 3}}},
		"credential_strategy": "CREATOR",
		"api_key": "sk-2",
		"secrets": [{"name": "deploy-key"}, {"name": "npm"}],
		"token_budget": 5000,
		"password_set": true
	}`), &in))
	out := scrub.Value(in).(map[string]any)
	want := map[string]any{
		"name":                 "nightly",
		"harness_auth_secrets": map[string]any{"claude_auth_secret_name": scrub.Redacted},
		"mcp_servers": map[string]any{"github": map[string]any{"url": "https://mcp.example.com/x",
			"headers": map[string]any{"Authorization": scrub.Redacted}, "env": map[string]any{"N": float64(3)}}},
		"credential_strategy": "CREATOR",
		"api_key":             scrub.Redacted,
		"secrets":             []any{map[string]any{"name": scrub.Redacted}, map[string]any{"name": scrub.Redacted}},
		"token_budget":        float64(5000),
		"password_set":        true,
	}
	assert.Equal(t, want, out)
	// A value under a secret name that the document does not publish for
	// that field is a secret all the same.
	assert.Equal(t, map[string]any{"credential_strategy": scrub.Redacted}, scrub.Value(map[string]any{"credential_strategy": "hunter2"}))
}
