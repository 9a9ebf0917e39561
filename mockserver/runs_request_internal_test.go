package mockserver

import (
	"encoding/json"
	"math/rand"
	"testing"

	"github.com/agentruns/agentruns/openapi"
	"github.com/stretchr/testify/require"
)

// TestRequestFromJSONAgreesWithEncodingJSON holds the create's one decoding
// to encoding/json's: wherever requestFromJSON fills a request from the
// validated value, encoding/json fills the same request from the bytes.
// The bodies have case variants of names, nulls, duplicates, unknown names
// and every kind of field, whole and mutated.
func TestRequestFromJSONAgreesWithEncodingJSON(t *testing.T) {
	bodies := []string{
		`{"prompt":"The login test flakes. Fix it.","config":{"name":"flaky-tests","model_id":"auto","environment_id":"env-web-app"}}`,
		`{"prompt":"x","title":" t ","skill":"acme/api:release","team":false,"interactive":true,"mode":"plan","on_behalf_of":"bob"}`,
		`{"prompt":"x","conversation_id":"c","agent_identity_uid":"a","parent_run_id":"p","metadata":{"k":"v","K":"w"}}`,
		`{"prompt":"x","Prompt":"y"}`, `{"PROMPT":"y"}`, `{"prompt":"x","prompt":"y"}`, `{"prompt":null,"config":null,"metadata":null}`,
		`{"prompt":"x","config":{"name":"a","NAME":"b"}}`, `{"prompt":"x","config":{"name":null,"Name":"b"}}`,
		`{"prompt":"x","config":{"mcp_servers":{"a":{"command":"npx"}},"idle_timeout_minutes":5}}`,
		`{"prompt":"x","config":{"worker_host":"h","skill_spec":"s","base_prompt":"b","runner_id":"r","credential_strategy":"CREATOR","computer_use_model_id":"m"}}`,
		`{"prompt":"x","attachments":[{"file_name":"a","mime_type":"text/plain","data":"aGk="}],"images":null}`,
		`{"prompt":"x","unknown":{"a":1},"ſkill":"s","K":1,"promp":"y"}`, "{\"prompt\":\"x\",\"\u212aey\":1}",
		`{"prompt":"x","config":{"name":"a","unknown":[1],"harness":null}}`, `{"prompt":"x","metadata":{"a":1}}`,
		`{"prompt":"x","team":"yes"}`, `{"prompt":1}`, `[]`, `"x"`, `null`, `{}`, `{"config":{}}`, `{"metadata":{}}`,
	}
	rng := rand.New(rand.NewSource(5))
	bits := []string{`"`, `{`, `}`, `,`, `:`, `1`, `null`, `true`, `"prompt"`, `"Prompt"`, `"config"`, `"name"`, `"NAME"`, `"metadata"`, `"x"`, `{"a":"b"}`}
	filled := 0
	for i := range 20000 {
		body := bodies[i%len(bodies)]
		if i >= len(bodies) {
			b := []byte(body)
			for range 1 + rng.Intn(3) {
				j := rng.Intn(len(b) + 1)
				if rng.Intn(2) == 0 && j < len(b) {
					b = append(b[:j], b[j+1:]...)
				} else {
					b = append(b[:j], append([]byte(bits[rng.Intn(len(bits))]), b[j:]...)...)
				}
			}
			body = string(b)
		}
		v, err := openapi.DecodeJSON([]byte(body))
		var got runRequest
		if err != nil || !requestFromJSON(v, &got) {
			continue
		}
		filled++
		var want runRequest
		require.NoError(t, json.Unmarshal([]byte(body), &want), "requestFromJSON took what encoding/json refuses: %q", body)
		require.Equal(t, want, got, "the decodings differ for %q", body)
	}
	t.Logf("requestFromJSON filled %d of 20000 requests", filled)
	require.Greater(t, filled, 1000)
}
