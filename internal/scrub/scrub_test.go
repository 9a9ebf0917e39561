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

// Every name of the one list is secret, at any depth under it; words that
// merely contain a secret word are not.
func TestSecretNamesAtAnyDepth(t *testing.T) {
	for _, name := range []string{"passphrase", "access_key", "aws_access_key_id", "auth", "bearer", "pwd", "jwt",
		"session_key", "env_vars", "secrets", "harness_auth_secrets", "awsSecretAccessKey", "X-Api-Key", "db_password", "apiKey"} {
		assert.True(t, scrub.SecretName(name), name)
	}
	for _, name := range []string{"author", "monkey", "design", "session_id", "state", "error_code", "name", "keyword", "environment_id"} {
		assert.False(t, scrub.SecretName(name), name)
	}
	for _, name := range []string{"token", "sig", "auth", "code", "X-Amz-Signature", "Expires", "key", "access_token"} {
		assert.True(t, scrub.SecretParam(name), name)
	}
	assert.False(t, scrub.SecretParam("limit"))
	var in map[string]any
	require.NoError(t, json.Unmarshal([]byte(`{
		"agent_config": {"harness_auth_secrets": {"raw": "s3cr3t-raw", "nested": {"deeper": ["s3cr3t-list"]}}},
		"agents": [{"secrets": [{"value": "s3cr3t-value", "name": "n"}]}],
		"note": "call with Authorization: Bearer s3cr3t-bearer please",
		"link": "/downloads/a?token=s3cr3t-rel",
		"prose": "see https://x.example/p?sig=s3cr3t-sig and /a/b?code=s3cr3t-code too",
		"basic": "Basic czNjcjN0LWJhc2ljLWF1dGgtdmFsdWU=",
		"userinfo": "https://user:s3cr3t-pass@host.example/x",
		"question": "what is this? nothing"
	}`), &in))
	out, err := json.Marshal(scrub.Value(in))
	require.NoError(t, err)
	assert.NotContains(t, string(out), "s3cr3t")
	assert.NotContains(t, string(out), "czNjcjN0")
	assert.Contains(t, string(out), `"link":"/downloads/a"`)
	assert.Contains(t, string(out), `"question":"what is this? nothing"`)
	// At: a value found deep under a secret member, its own name harmless.
	assert.Equal(t, scrub.Redacted, scrub.At("s3cr3t", scrub.Location("body.agent_config.harness_auth_secrets.raw")...))
	assert.Equal(t, []any{scrub.Redacted}, scrub.At([]any{"x"}, scrub.Location("body.agents[].secrets[].value")...))
	assert.Equal(t, "plain", scrub.At("plain", scrub.Location("body.runs[].title")...))
}
