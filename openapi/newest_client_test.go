package openapi

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/openapi/facts"
)

// TestValidatorAcceptsTheNewestClient sends what oz-agent-sdk 1.4.0-alpha.6
// sends (its new fields, values, filters and operations) and what older
// clients send; the document accepts all of it.
func TestValidatorAcceptsTheNewestClient(t *testing.T) {
	v := testValidator(t)
	for _, tc := range []struct{ name, method, target, body string }{
		{"metadata filter", "GET", "/agent/runs?metadata%5Bticket_id%5D=VIS-238&metadata%5Bteam%5D=web", ""},
		{"new filters", "GET", "/agent/runs?automation_id=a1&executor=u1&factory_uid=f1&artifact_type=EXTERNAL_REFERENCE&source=ORCHESTRATION", ""},
		{"identity filter", "GET", "/agent/identities?factory_uid=f1", ""},
		{"identity get", "GET", "/agent/identities/ag_1", ""},
		{"handoff attachments", "GET", "/agent/runs/r1/handoff/attachments", ""},
		{"follow-up", "POST", "/agent/runs/r1/followups", `{"message":"and the changelog","mode":"plan"}`},
		{"new create fields", "POST", "/agent/runs", `{"prompt":"x","metadata":{"ticket_id":"VIS-1"},"mode":"orchestrate","on_behalf_of":"a@b.c",` +
			`"config":{"harness":{"type":"codex","model_id":"m","reasoning_level":"high"},"harness_auth_secrets":{"codex_auth_secret_name":"s"},` +
			`"computer_use_model_id":"c","credential_strategy":"EXECUTOR","inference_providers":{"aws":{"region":"eu-west-1"}},` +
			`"memory_stores":[{"uid":"m1","access":"read_only","instructions":"i"}],"runner_id":"r","session_sharing":{"public_access":"VIEWER"},"skills":["a/b:c"]}}`},
		{"old create path and images", "POST", "/agent/run", `{"prompt":"x","images":[{"data":"aGk=","mime_type":"image/png"}]}`},
		{"schedule fields", "POST", "/agent/schedules", `{"name":"n","cron_schedule":"0 9 * * *","prompt":"p","agent_uid":"ag","metadata":{"k":"v"},"mode":"plan","agent_config":{"harness":{"type":"gemini"}}}`},
		{"identity settings", "POST", "/agent/identities", `{"name":"n","agent_type":"REVIEW","description":null,"memory":{"attached_stores":[],"auto_memory":{"enabled":true}},"secrets":[{"name":"s"}],"skills":["x"]}`},
		{"identity old shape", "POST", "/agent/identities", `{"name":"n"}`},
		{"identity clears", "PUT", "/agent/identities/ag_1", `{"harness":null,"memory":null,"skills":null,"agent_type":null}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct := ""
			if tc.body != "" {
				ct = "application/json"
			}
			assert.NoError(t, v.ValidateRequest(request(tc.method, tc.target, ct, tc.body)))
		})
	}
}

// TestValidatorRefusesWrongNewerValues: the newer fields have types and
// values, and breaking them is refused like any other field.
func TestValidatorRefusesWrongNewerValues(t *testing.T) {
	v := testValidator(t)
	for _, tc := range []struct{ name, method, target, body, field string }{
		{"mode", "POST", "/agent/runs", `{"prompt":"x","mode":"turbo"}`, "body.mode"},
		{"metadata value", "POST", "/agent/runs", `{"prompt":"x","metadata":{"k":1}}`, "body.metadata.k"},
		{"follow-up mode", "POST", "/agent/runs/r1/followups", `{"message":"m","mode":"fast"}`, "body.mode"},
		{"agent type", "POST", "/agent/identities", `{"name":"n","agent_type":"BOSS"}`, "body.agent_type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ve := asValidationError(t, v.ValidateRequest(request(tc.method, tc.target, "application/json", tc.body)))
			assert.True(t, ve.Has(tc.field), "findings %v", fields(ve))
		})
	}
}

// TestRedirectsArePublic: both redirects pass the security check without a
// key; other operations still need one.
func TestRedirectsArePublic(t *testing.T) {
	v := testValidator(t)
	for _, target := range []string{"/agent/sessions/3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f/redirect", "/agent/conversations/cv1/redirect"} {
		r := request(http.MethodGet, target, "", "")
		r.Header.Del("Authorization")
		assert.NoError(t, v.ValidateSecurity(r), target)
	}
	r := request(http.MethodGet, "/agent/runs", "", "")
	r.Header.Del("Authorization")
	assert.Error(t, v.ValidateSecurity(r))
}

// TestPublishedViewRequiresWhatThePublishedDocumentRequires: the published
// view asks of every answer exactly the fields the published document
// requires, schema by schema (facts.Extract reads both), and the full
// document asks the newest client's too.
func TestPublishedViewRequiresWhatThePublishedDocumentRequires(t *testing.T) {
	published := loadPublishedFacts(t)
	view, err := PublishedView(Document)
	require.NoError(t, err)
	ours, err := facts.Extract(view)
	require.NoError(t, err)
	full, err := facts.Extract(Document)
	require.NoError(t, err)
	var compare func(path string, pub, ours *facts.Schema)
	compare = func(path string, pub, ours *facts.Schema) {
		if pub == nil || ours == nil {
			return
		}
		assert.ElementsMatch(t, pub.Required, ours.Required, "%s.required", path)
		for name, p := range pub.Properties {
			compare(path+".properties."+name, p, ours.Properties[name])
		}
	}
	for name, s := range published.Schemas {
		compare("schemas."+name, s, ours.Schemas[name])
	}
	assert.Subset(t, full.Schemas["AgentResponse"].Required, []string{"updated_at", "default_runner_uid", "memory", "secrets", "skills"})
	// Nothing else changes: the view keeps the newest client's fields.
	assert.Contains(t, ours.Schemas["AgentResponse"].Properties, "skills")
	assert.Equal(t, full.Schemas["AgentMemory"].Required, ours.Schemas["AgentMemory"].Required, "a newest-client schema keeps its own rules")
}

// TestPublishedValidatorAcceptsAPublishedIdentity: an identity of the four
// published fields is a violation of the full document, not of the
// published view; both still refuse one without a published field.
func TestPublishedValidatorAcceptsAPublishedIdentity(t *testing.T) {
	full := testValidator(t)
	published, err := NewPublishedValidator()
	require.NoError(t, err)
	req := request(http.MethodGet, "/agent/identities", "", "")
	identity := `{"agents":[{"uid":"ag_1","name":"Docs bot","available":true,"created_at":"2026-05-01T10:00:00Z"}]}`
	ve := asValidationError(t, full.ValidateResponse(req, response(200, "application/json", identity)))
	assert.Contains(t, ve.Error(), "skills")
	assert.NoError(t, published.ValidateResponse(req, response(200, "application/json", identity)))
	noName := `{"agents":[{"uid":"ag_1","available":true,"created_at":"2026-05-01T10:00:00Z"}]}`
	assert.Error(t, published.ValidateResponse(req, response(200, "application/json", noName)))
	// The newest client's fields, sent, are still held to their types.
	badSkills := `{"agents":[{"uid":"ag_1","name":"n","available":true,"created_at":"2026-05-01T10:00:00Z","skills":"all"}]}`
	assert.Error(t, published.ValidateResponse(req, response(200, "application/json", badSkills)))
}

// TestNewestClientOperationsAreTheMarkedOnes: the operations only the
// newest client has are found by their mark, and the validator names the
// operation a request is for, so the proxy can tell when a server serves
// them.
func TestNewestClientOperationsAreTheMarkedOnes(t *testing.T) {
	ops, err := NewestClientOperations(Document)
	require.NoError(t, err)
	assert.True(t, ops["GET /agent/identities/{uid}"], "%v", ops)
	assert.True(t, ops["POST /agent/runs/{runId}/followups"], "%v", ops)
	assert.False(t, ops["PUT /agent/identities/{uid}"], "the published document has it")
	assert.False(t, ops["GET /agent/runs"], "the published document has it")

	v, err := NewValidator()
	require.NoError(t, err)
	op, ok := v.Operation(httptest.NewRequest(http.MethodGet, "/api/v1/agent/identities/agent-1", nil))
	assert.True(t, ok)
	assert.Equal(t, "GET /agent/identities/{uid}", op)
	_, ok = v.Operation(httptest.NewRequest(http.MethodGet, "/api/v1/nowhere", nil))
	assert.False(t, ok)
}

// TestNewestClientRequestPartsAreTheMarkedOnes: the filters and create
// fields only the newest client sends are found by their mark.
func TestNewestClientRequestPartsAreTheMarkedOnes(t *testing.T) {
	parts, err := NewestClientRequestParts(Document)
	require.NoError(t, err)
	list := parts["GET /agent/runs"]
	for _, q := range []string{"executor", "factory_uid", "automation_id", "metadata"} {
		assert.True(t, list.Query[q], "GET /agent/runs ?%s: %v", q, list.Query)
	}
	assert.False(t, list.Query["model_id"], "the published document has it")
	create := parts["POST /agent/run"]
	assert.True(t, create.Body["metadata"], "%v", create.Body)
	assert.False(t, create.Body["prompt"], "%v", create.Body)
}
