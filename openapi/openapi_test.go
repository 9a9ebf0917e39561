package openapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/go-yaml"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi/datamodel"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sharedValidator is shared by the tests: building one compiles every schema.
var sharedValidator = sync.OnceValues(NewValidator)

func testValidator(t testing.TB) *Validator {
	t.Helper()
	v, err := sharedValidator()
	require.NoError(t, err)
	return v
}

// request builds a request the way the mock receives it: a path without host,
// as well as any absolute URL.
func request(method, target, contentType, body string) *http.Request {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r := httptest.NewRequest(method, target, rd)
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	r.Header.Set("Authorization", "Bearer wk-test")
	return r
}

func response(status int, contentType, body string) *http.Response {
	h := http.Header{}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body))}
}

// asValidationError requires err to be a *ValidationError.
func asValidationError(t *testing.T, err error) *ValidationError {
	t.Helper()
	require.Error(t, err)
	var ve *ValidationError
	require.True(t, errors.As(err, &ve), "want *ValidationError, got %T: %v", err, err)
	require.NotEmpty(t, ve.Findings)
	return ve
}

func fields(ve *ValidationError) []string {
	out := make([]string, 0, len(ve.Findings))
	for _, f := range ve.Findings {
		out = append(out, f.Field)
	}
	return out
}

func TestDocumentIsValidOpenAPI(t *testing.T) {
	// libopenapi logs some problems instead of returning them: collect the log.
	logged := &logCollector{}
	cfg := datamodel.NewDocumentConfiguration()
	cfg.Logger = slog.New(logged)
	cfg.IgnoreArrayCircularReferences = true // as newValidator
	doc, err := libopenapi.NewDocumentWithConfiguration(Document, cfg)
	require.NoError(t, err)
	model, err := doc.BuildV3Model()
	require.NoError(t, err, "libopenapi reports problems building the model")
	require.NotNil(t, model)
	assert.Empty(t, logged.all(), "libopenapi logged problems building the model")
	assert.Equal(t, "3.1.0", model.Model.Version)

	lib, errs := validator.NewValidator(doc)
	require.Empty(t, errs)
	ok, docErrs := lib.ValidateDocument()
	for _, e := range docErrs {
		t.Errorf("document: %s: %s", e.Message, e.Reason)
		for _, f := range e.SchemaValidationErrors {
			t.Errorf("  %s at %s", f.Reason, f.FieldPath)
		}
	}
	assert.True(t, ok)

	t.Run("operations", func(t *testing.T) {
		// Every operation of the published document, under its published
		// id, but one: its duplicate listAgents (see drift_test.go); and the
		// operations only the newest client calls, under ids of our own.
		published := loadPublishedFacts(t)
		want := map[string]string{}
		for key, op := range published.Operations {
			want[key] = op.OperationID
		}
		want["GET /agent/identities"] = "listAgentIdentities"
		client := loadClientFacts(t)
		for key := range client.Operations {
			if _, ok := want[key]; !ok {
				want[key] = map[string]string{
					"POST /agent/runs/{runId}/followups":                 "submitRunFollowup",
					"GET /agent/runs/{runId}/handoff/attachments":        "listRunHandoffAttachments",
					"GET /agent/identities/{uid}":                        "getAgent",
					"GET /agent/conversations/{conversationId}/redirect": "getConversationRedirect",
				}[key]
			}
		}
		got := map[string]string{}
		for p := model.Model.Paths.PathItems.First(); p != nil; p = p.Next() {
			for op := p.Value().GetOperations().First(); op != nil; op = op.Next() {
				got[strings.ToUpper(op.Key())+" "+p.Key()] = op.Value().OperationId
				// Every error response is a problem document, under either
				// media type (the service may send either).
				for c := op.Value().Responses.Codes.First(); c != nil; c = c.Next() {
					if c.Key() < "400" {
						continue
					}
					for _, mt := range []string{"application/problem+json", "application/json"} {
						media, ok := c.Value().Content.Get(mt)
						if assert.True(t, ok, "%s %s %s has no %s", op.Key(), p.Key(), c.Key(), mt) {
							assert.Equal(t, "#/components/schemas/Error", media.Schema.GetReference(), "%s %s %s %s", op.Key(), p.Key(), c.Key(), mt)
						}
					}
				}
			}
		}
		assert.Equal(t, want, got)
		ids := map[string]bool{}
		for _, id := range got {
			assert.False(t, ids[id], "operation id %s is used twice", id)
			ids[id] = true
		}
	})

	t.Run("global bearer security", func(t *testing.T) {
		require.Len(t, model.Model.Security, 1)
		_, ok := model.Model.Security[0].Requirements.Get("bearerAuth")
		assert.True(t, ok)
		scheme := model.Model.Components.SecuritySchemes.GetOrZero("bearerAuth")
		require.NotNil(t, scheme)
		assert.Equal(t, "http", scheme.Type)
		assert.Equal(t, "bearer", scheme.Scheme)
	})

	t.Run("schemas", func(t *testing.T) {
		for _, name := range []string{
			"RunAgentRequest", "RunAgentResponse", "ListRunsResponse", "RunItem", "PageInfo",
			"RunStatusMessage", "RunCreatorInfo", "RunState", "RunSourceType", "AmbientAgentConfig",
			"MCPServerConfig", "Error", "ImageInput", "AttachmentInput", "RequestUsage", "ScheduleInfo", "Scope",
			"AgentSkill", "ArtifactItem", "PlatformErrorCode", "RunExecutionLocation", "Harness", "HarnessAuthSecrets",
		} {
			assert.NotNil(t, model.Model.Components.Schemas.GetOrZero(name), name)
		}
	})
}

func TestNewValidatorFromBytesRejectsBadDocuments(t *testing.T) {
	_, err := NewValidatorFromBytes([]byte("openapi: [unclosed"))
	assert.Error(t, err)
	_, err = NewValidatorFromBytes([]byte(`{"swagger": "2.0", "info": {"title": "x", "version": "1"}, "paths": {}}`))
	assert.Error(t, err)
}

const fullConfigBody = `{
  "prompt": "Triage the newest bug reports",
  "title": "Triage",
  "team": true,
  "skill": "acme/api:skills/triage/SKILL.md",
  "conversation_id": "conv-1",
  "images": [{"data": "aGVsbG8=", "mime_type": "image/png"}],
  "unknown_future_field": {"ignored": true},
  "config": {
    "name": "triage",
    "model_id": "claude-sonnet",
    "base_prompt": "Be brief.",
    "environment_id": "env_1",
    "skill_spec": "acme/api:triage",
    "computer_use_enabled": false,
    "worker_host": "warp",
    "mcp_servers": {
      "shared": {"warp_id": "5b0f0c8e-8a39-4f4b-9a53-1f8f2f4c6d7e"},
      "files": {"command": "npx", "args": ["-y", "files-mcp"], "env": {"ROOT": "/w"}},
      "tracker": {"url": "https://mcp.example.com/sse", "headers": {"X-Team": "platform"}}
    }
  }
}`

func TestValidateRequestAcceptsValidRequests(t *testing.T) {
	v := testValidator(t)
	tests := []struct {
		name, method, target, contentType, body string
	}{
		{"create with prompt only", "POST", "/agent/run", "application/json", `{"prompt":"Fix the flaky login test"}`},
		{"create on the alias path", "POST", "/agent/runs", "application/json", `{"prompt":"Fix it"}`},
		{"create with charset parameter", "POST", "/agent/runs", "application/json; charset=utf-8", `{"prompt":"Fix it"}`},
		{"create with full config", "POST", "/agent/runs", "application/json", fullConfigBody},
		{"create with a skill only", "POST", "/agent/run", "application/json", `{"skill":"acme/api:release"}`},
		{"create with five images", "POST", "/agent/run", "application/json",
			`{"prompt":"x","images":[` + strings.Repeat(`{"data":"aGk=","mime_type":"image/gif"},`, 4) + `{"data":"aGk=","mime_type":"image/webp"}]}`},
		{"list without parameters", "GET", "/agent/runs", "", ""},
		{"list with every parameter", "GET", "/agent/runs?limit=500&cursor=abc&state=QUEUED&state=INPROGRESS&state=BLOCKED" +
			"&name=triage&config_name=triage&model_id=m&creator=u1&source=API&environment_id=e&schedule_id=s" +
			"&skill_spec=a/b:c&skill=a/b:c&created_after=2025-01-01T00:00:00Z&created_before=2025-02-01T00:00:00%2B01:00" +
			"&updated_after=2025-01-15T12:30:00.5Z&q=flaky+test&artifact_type=PULL_REQUEST&sort_by=created_at&sort_order=asc" +
			"&execution_location=REMOTE&ancestor_run_id=r0", "", ""},
		{"list by a newer artifact type", "GET", "/agent/runs?artifact_type=SCREENSHOT&sort_by=agent", "", ""},
		{"create with the newer fields", "POST", "/agent/runs", "application/json",
			`{"prompt":"x","team":true,"agent_identity_uid":"ag_1","parent_run_id":"r0","interactive":false,` +
				`"attachments":[{"file_name":"a.png","mime_type":"image/png","data":"iVBORw0KGgo="}],` +
				`"config":{"idle_timeout_minutes":60,"harness":{"type":"claude"},"harness_auth_secrets":{"claude_auth_secret_name":"k"}}}`},
		{"create with an owner-less skill", "POST", "/agent/run", "application/json", `{"skill":"api:release"}`},
		{"list with limit 1", "GET", "/agent/runs?limit=1", "", ""},
		{"list with unknown parameter", "GET", "/agent/runs?future=1", "", ""},
		{"get", "GET", "/agent/runs/0c4bd1b8-5f7e-4a57-9a39-2f5a0f7d9e11", "", ""},
		{"cancel", "POST", "/agent/runs/run-1/cancel", "", ""},
		{"absolute URL on the mock", "GET", "http://127.0.0.1:54321/agent/runs/run-1", "", ""},
		{"versioned prefix", "POST", "https://app.warp.dev/api/v1/agent/runs/run-1/cancel", "", ""},
		{"versioned prefix on any host", "GET", "http://localhost:8080/api/v1/agent/runs?limit=3", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.NoError(t, v.ValidateRequest(request(tt.method, tt.target, tt.contentType, tt.body)))
			assert.NoError(t, validateRead(v, tt.method, tt.target, tt.contentType, tt.body))
		})
	}
}

func TestValidateRequestRejectsInvalidRequests(t *testing.T) {
	v := testValidator(t)
	tests := []struct {
		name, method, target, contentType, body string
		wantField, wantMessage                  string
	}{
		{"prompt of wrong type", "POST", "/agent/run", "application/json", `{"prompt":42}`,
			"body.prompt", "must be a string, not a number"},
		{"idle timeout over an hour", "POST", "/agent/run", "application/json", `{"prompt":"x","config":{"idle_timeout_minutes":61}}`,
			"body.config.idle_timeout_minutes", "must be at most 60 (got 61)"},
		{"harness of unknown type", "POST", "/agent/run", "application/json", `{"prompt":"x","config":{"harness":{"type":"cursor"}}}`,
			"body.config.harness.type", `value must be one of "oz", "claude", "codex", "gemini"`},
		{"config of wrong type", "POST", "/agent/runs", "application/json", `{"prompt":"x","config":"fast"}`,
			"body.config", "must be an object, not a string"},
		{"nested field of wrong type", "POST", "/agent/runs", "application/json", `{"prompt":"x","config":{"model_id":3}}`,
			"body.config.model_id", "must be a string"},
		{"mcp server with command and url", "POST", "/agent/runs", "application/json",
			`{"prompt":"x","config":{"mcp_servers":{"both":{"command":"npx","url":"https://mcp.example.com"}}}}`,
			"body.config.mcp_servers.both", "sets both command and url"},
		{"mcp server with nothing", "POST", "/agent/runs", "application/json",
			`{"prompt":"x","config":{"mcp_servers":{"empty":{"args":["a"]}}}}`,
			"body.config.mcp_servers.empty", "must set exactly one of warp_id, command, url"},
		{"mcp server args of wrong type", "POST", "/agent/runs", "application/json",
			`{"prompt":"x","config":{"mcp_servers":{"s":{"command":"npx","args":"-y"}}}}`,
			"body.config.mcp_servers.s.args", "must be an array"},
		{"more than five attachments", "POST", "/agent/runs", "application/json",
			`{"prompt":"x","attachments":[` + strings.Repeat(`{"file_name":"a.txt","data":"aGk=","mime_type":"text/plain"},`, 5) + `{"file_name":"b.txt","data":"aGk=","mime_type":"text/plain"}]}`,
			"body.attachments", "must have at most 5 items (got 6)"},
		{"attachment without a name", "POST", "/agent/runs", "application/json",
			`{"prompt":"x","attachments":[{"data":"aGk=","mime_type":"text/plain"}]}`,
			"body.attachments[0].file_name", "is required"},
		{"more than five images", "POST", "/agent/run", "application/json",
			`{"prompt":"x","images":[` + strings.Repeat(`{"data":"aGk=","mime_type":"image/png"},`, 5) + `{"data":"aGk=","mime_type":"image/png"}]}`,
			"body.images", "must have at most 5 items (got 6)"},
		{"image of unknown type", "POST", "/agent/run", "application/json",
			`{"prompt":"x","images":[{"data":"aGk=","mime_type":"image/bmp"}]}`,
			"body.images[0].mime_type", `value must be one of "image/jpeg"`},
		{"image without data", "POST", "/agent/run", "application/json",
			`{"prompt":"x","images":[{"mime_type":"image/png"}]}`,
			"body.images[0].data", "is required"},
		{"malformed JSON", "POST", "/agent/run", "application/json", `{"prompt":`,
			"body", "is not valid JSON"},
		{"body not an object", "POST", "/agent/run", "application/json", `["x"]`,
			"body", "must be an object"},
		{"wrong content type", "POST", "/agent/run", "text/plain", `{"prompt":"x"}`,
			"header.Content-Type", `"text/plain" is not accepted`},
		{"no body at all", "POST", "/agent/runs", "", "",
			"header.Content-Type", "is missing"},
		{"empty body", "POST", "/agent/runs", "application/json", "",
			"body", "is empty, but a JSON body is required"},
		{"null body", "POST", "/agent/runs", "application/json", "null",
			"body", "must be an object, not null"},
		{"comma-separated states", "GET", "/agent/runs?state=QUEUED,PENDING", "", "",
			"query.state", `"QUEUED,PENDING" joins values with commas; repeat the parameter once per value instead`},
		{"unknown state in query", "GET", "/agent/runs?state=QUEUED&state=DONE", "", "",
			"query.state", `value "DONE" must be one of "QUEUED"`},
		{"unknown source in query", "GET", "/agent/runs?source=EMAIL", "", "",
			"query.source", `value "EMAIL" must be one of`},
		{"limit 0", "GET", "/agent/runs?limit=0", "", "",
			"query.limit", "must be at least 1 (got 0)"},
		{"limit 501", "GET", "/agent/runs?limit=501", "", "",
			"query.limit", "must be at most 500 (got 501)"},
		{"limit not a number", "GET", "/agent/runs?limit=ten", "", "",
			"query.limit", `"ten" is not a valid integer`},
		{"bad created_after", "GET", "/agent/runs?created_after=yesterday", "", "",
			"query.created_after", `"yesterday" is not a valid date-time`},
		{"date without time", "GET", "/agent/runs?updated_after=2025-01-01", "", "",
			"query.updated_after", `"2025-01-01" is not a valid date-time`},
		{"unknown sort_by", "GET", "/agent/runs?sort_by=size", "", "",
			"query.sort_by", `value "size" must be one of`},
		{"unknown artifact_type", "GET", "/agent/runs?artifact_type=DIFF", "", "",
			"query.artifact_type", `value "DIFF" must be one of "PLAN", "PULL_REQUEST", "SCREENSHOT", "FILE"`},
		{"unknown execution_location", "GET", "/agent/runs?execution_location=CLOUD", "", "",
			"query.execution_location", `value "CLOUD" must be one of "LOCAL", "REMOTE"`},
		{"six attachments", "POST", "/agent/runs", "application/json",
			`{"prompt":"x","attachments":[` + strings.Repeat(`{"file_name":"a.txt","mime_type":"text/plain","data":"aGk="},`, 5) + `{"file_name":"a.txt","mime_type":"text/plain","data":"aGk="}]}`,
			"body.attachments", "must have at most 5 items (got 6)"},
		{"attachment without a name", "POST", "/agent/runs", "application/json",
			`{"prompt":"x","attachments":[{"mime_type":"text/plain","data":"aGk="}]}`,
			"body.attachments[0].file_name", "is required"},
		{"attachment data not base64", "POST", "/agent/runs", "application/json",
			`{"prompt":"x","attachments":[{"file_name":"a.txt","mime_type":"text/plain","data":"not base64!"}]}`,
			"body.attachments[0].data", "is not valid base64 (illegal base64 data at input byte 3)"},
		{"idle timeout of 0", "POST", "/agent/runs", "application/json", `{"prompt":"x","config":{"idle_timeout_minutes":0}}`,
			"body.config.idle_timeout_minutes", "must be at least 1 (got 0)"},
		{"idle timeout of 61", "POST", "/agent/runs", "application/json", `{"prompt":"x","config":{"idle_timeout_minutes":61}}`,
			"body.config.idle_timeout_minutes", "must be at most 60 (got 61)"},
		{"unknown harness", "POST", "/agent/runs", "application/json", `{"prompt":"x","config":{"harness":{"type":"cursor"}}}`,
			"body.config.harness.type", `value must be one of "oz", "claude", "codex", "gemini"`},
		{"interactive not a boolean", "POST", "/agent/runs", "application/json", `{"prompt":"x","interactive":"yes"}`,
			"body.interactive", "must be a boolean, not a string"},
		{"unknown path", "GET", "/agent/nothing", "", "",
			"path", "no operation is documented at /agent/nothing"},
		{"unknown method", "DELETE", "/agent/runs/run-1", "", "",
			"method", "DELETE is not documented for /agent/runs/{runId} (documented: GET)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ve := asValidationError(t, v.ValidateRequest(request(tt.method, tt.target, tt.contentType, tt.body)))
			assert.Zero(t, ve.Status)
			require.True(t, ve.Has(tt.wantField), "want a finding on %s, got %v", tt.wantField, ve)
			assert.Contains(t, ve.Error(), tt.wantField+": "+tt.wantMessage)
			// The same verdict from a caller that has read the body.
			assert.Equal(t, ve.Error(), asValidationError(t, validateRead(v, tt.method, tt.target, tt.contentType, tt.body)).Error())
		})
	}
}

// validateRead is ValidateRequestBody as a server calls it: the body read
// first, so the request's own body is spent. It checks that the request's
// body was not read again.
func validateRead(v *Validator, method, target, contentType, body string) error {
	r := request(method, target, contentType, body)
	read, _ := io.ReadAll(r.Body)
	r.Body = errReader{}
	return v.ValidateRequestBody(r, read)
}

// errReader is a body that fails to read.
type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("the body was read a second time") }
func (errReader) Close() error             { return nil }

func TestValidateRequestReportsEveryProblemAndNamesTheOperation(t *testing.T) {
	v := testValidator(t)
	ve := asValidationError(t, v.ValidateRequest(request("GET", "/agent/runs?limit=0&state=DONE&sort_order=up", "", "")))
	assert.Equal(t, "GET /agent/runs", ve.Operation)
	assert.ElementsMatch(t, []string{"query.limit", "query.sort_order", "query.state"}, fields(ve))
	assert.Len(t, strings.Split(ve.Error(), "\n"), 3)

	// The versioned prefix is not part of the operation's name.
	ve = asValidationError(t, v.ValidateRequest(request("POST", "http://127.0.0.1:4010/api/v1/agent/runs", "application/json", `{"prompt":false}`)))
	assert.Equal(t, "POST /agent/runs", ve.Operation)
	assert.Equal(t, "POST /agent/runs: body.prompt: must be a string, not a boolean", ve.Error())
}

func TestValidateRequestLeavesTheBodyReadable(t *testing.T) {
	v := testValidator(t)
	for _, body := range []string{`{"prompt":"x"}`, `{"prompt":1}`, `{"prompt":`} {
		r := request("POST", "/agent/runs", "application/json", body)
		_ = v.ValidateRequest(r)
		got, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		assert.Equal(t, body, string(got))
	}
}

func TestValidateRequestIgnoresAuthorization(t *testing.T) {
	v := testValidator(t)
	r := request("GET", "/agent/runs", "", "")
	r.Header.Del("Authorization")
	assert.NoError(t, v.ValidateRequest(r))
}

func TestValidateSecurity(t *testing.T) {
	v := testValidator(t)
	tests := []struct {
		name, header, wantMessage string
	}{
		{"bearer key", "Bearer wk-abc", ""},
		{"lower-case scheme", "bearer wk-abc", ""},
		{"missing", "", "is missing"},
		{"other scheme", "Basic dXNlcjpwdw==", "must use the Bearer scheme"},
		{"no token", "Bearer ", "has no token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := request("GET", "/agent/runs/r1", "", "")
			r.Header.Del("Authorization")
			if tt.header != "" {
				r.Header.Set("Authorization", tt.header)
			}
			err := v.ValidateSecurity(r)
			if tt.wantMessage == "" {
				assert.NoError(t, err)
				return
			}
			ve := asValidationError(t, err)
			assert.Equal(t, "header.Authorization", ve.Findings[0].Field)
			assert.Contains(t, ve.Findings[0].Message, tt.wantMessage)
		})
	}
	ve := asValidationError(t, v.ValidateSecurity(request("GET", "/nowhere", "", "")))
	assert.Equal(t, "path", ve.Findings[0].Field)
}

const fullRunItem = `{
  "run_id": "0c4bd1b8-5f7e-4a57-9a39-2f5a0f7d9e11",
  "task_id": "0c4bd1b8-5f7e-4a57-9a39-2f5a0f7d9e11",
  "title": "Bump Go dependencies",
  "state": "FAILED",
  "prompt": "Update all Go modules",
  "created_at": "2025-01-31T08:00:00Z",
  "updated_at": "2025-01-31T08:04:10.123+01:00",
  "started_at": "2025-01-31T08:01:00Z",
  "status_message": {"message": "Out of credits", "error_code": "insufficient_credits", "retryable": false},
  "source": "API",
  "session_id": "3f0b8c5e-2d4a-4e61-9c7b-5a8e1d2f3c40",
  "session_link": "https://app.warp.dev/session/3f0b8c5e-2d4a-4e61-9c7b-5a8e1d2f3c40",
  "creator": {"type": "service_account", "uid": "sa-1", "display_name": "CI", "email": "ci@example.com", "photo_url": "https://example.com/ci.png"},
  "agent_config": {"name": "deps", "model_id": "m", "mcp_servers": {"t": {"url": "https://mcp.example.com"}}},
  "conversation_id": "conv-1",
  "request_usage": {"inference_cost": 1.25, "compute_cost": 0},
  "is_sandbox_running": false,
  "artifacts": [
    {"artifact_type": "PLAN", "created_at": "2025-01-31T08:02:00Z", "data": {"document_uid": "d1", "title": "Plan"}},
    {"artifact_type": "PULL_REQUEST", "created_at": "2025-01-31T08:03:00Z", "data": {"url": "https://github.com/a/b/pull/1", "branch": "deps"}}
  ],
  "schedule": {"schedule_id": "s1", "schedule_name": "nightly", "cron_schedule": "0 3 * * *"},
  "scope": {"type": "Team", "uid": "team-1"},
  "agent_skill": {"name": "deps", "description": "Bumps deps", "full_path": "skills/deps/SKILL.md"},
  "field_added_later": [1, 2, 3]
}`

const minimalRunItem = `{"run_id":"r1","task_id":"r1","title":"t","state":"QUEUED","prompt":"p",` +
	`"created_at":"2025-01-31T08:00:00Z","updated_at":"2025-01-31T08:00:00Z"}`

const problem404 = `{"type":"https://docs.warp.dev/errors/resource_not_found","title":"Resource not found",` +
	`"status":404,"detail":"no run r1","error":"Resource not found (no run r1)","instance":"/agent/runs/r1","retryable":false,"trace_id":"abc"}`

func TestValidateResponseAcceptsValidResponses(t *testing.T) {
	v := testValidator(t)
	tests := []struct {
		name, method, target string
		status               int
		contentType, body    string
		header               http.Header
	}{
		{name: "full run", method: "GET", target: "/agent/runs/r1", status: 200, contentType: "application/json", body: fullRunItem},
		{name: "minimal run", method: "GET", target: "/agent/runs/r1", status: 200, contentType: "application/json", body: minimalRunItem},
		{name: "run with null started_at", method: "GET", target: "/agent/runs/r1", status: 200, contentType: "application/json",
			body: strings.Replace(minimalRunItem, `"prompt":"p"`, `"prompt":"p","started_at":null`, 1)},
		{name: "list", method: "GET", target: "/agent/runs?limit=2", status: 200, contentType: "application/json",
			body: `{"runs":[` + minimalRunItem + `,` + fullRunItem + `],"page_info":{"has_next_page":true,"next_cursor":"c2"}}`},
		{name: "empty list", method: "GET", target: "/agent/runs", status: 200, contentType: "application/json",
			body: `{"runs":[],"page_info":{"has_next_page":false}}`},
		{name: "created", method: "POST", target: "/agent/run", status: 200, contentType: "application/json",
			body: `{"run_id":"r1","task_id":"r1","state":"QUEUED"}`},
		{name: "created at capacity", method: "POST", target: "/agent/runs", status: 200, contentType: "application/json",
			body: `{"run_id":"r1","task_id":"r1","state":"QUEUED","at_capacity":true}`},
		{name: "cancelled", method: "POST", target: "/agent/runs/r1/cancel", status: 200, contentType: "application/json", body: `"r1"`},
		{name: "not found", method: "GET", target: "/agent/runs/r1", status: 404, contentType: "application/problem+json", body: problem404},
		{name: "minimal problem", method: "POST", target: "/agent/runs/r1/cancel", status: 409, contentType: "application/problem+json",
			body: `{"type":"https://docs.warp.dev/reference/api-and-sdk/troubleshooting/errors/conflict","title":"Conflict","status":409,"error":"Conflict"}`},
		{name: "problem sent as application/json", method: "GET", target: "/agent/runs/r1", status: 404, contentType: "application/json", body: problem404},
		{name: "problem with extension members", method: "GET", target: "/agent/runs/r1", status: 401, contentType: "application/problem+json",
			body: `{"type":"https://docs.warp.dev/reference/api-and-sdk/troubleshooting/errors/external_authentication_required","title":"External authentication required",` +
				`"status":401,"error":"External authentication required","auth_url":"https://github.com/login/oauth","provider":"github"}`},
		{name: "run with every kind of artifact", method: "GET", target: "/agent/runs/r1", status: 200, contentType: "application/json", body: strings.Replace(minimalRunItem, `"prompt":"p"`, `"prompt":"p","artifacts":[`+
			`{"artifact_type":"PLAN","created_at":"2025-01-31T08:02:00Z","data":{"document_uid":"d1","artifact_uid":"a0","url":"https://app.warp.dev/drive/d1"}},`+
			`{"artifact_type":"PULL_REQUEST","created_at":"2025-01-31T08:03:00Z","data":{"url":"https://github.com/a/b/pull/1","branch":"b"}},`+
			`{"artifact_type":"SCREENSHOT","created_at":"2025-01-31T08:03:00Z","data":{"artifact_uid":"a1","mime_type":"image/png","description":"login page"}},`+
			`{"artifact_type":"FILE","created_at":"2025-01-31T08:04:00Z","data":{"artifact_uid":"a2","filepath":"out/report.csv","filename":"report.csv","mime_type":"text/csv","size_bytes":2048}}]`, 1)},
		{name: "run with the newer fields", method: "GET", target: "/agent/runs/r1", status: 200, contentType: "application/json", body: strings.Replace(minimalRunItem, `"prompt":"p"`,
			`"prompt":"p","execution_location":"LOCAL","trigger_url":"https://linear.app/acme/issue/ENG-1","parent_run_id":"r0","task_id_note":"x"`, 1)},
		{name: "old run whose task_id differs", method: "GET", target: "/agent/runs/r1", status: 200, contentType: "application/json",
			body: strings.Replace(minimalRunItem, `"task_id":"r1"`, `"task_id":"t-legacy-9"`, 1)},
		{name: "rate limited", method: "GET", target: "/agent/runs", status: 429, contentType: "application/problem+json",
			body: `{"type":"about:blank","title":"Slow down","status":429,"error":"Slow down"}`, header: http.Header{"Retry-After": {"2"}}},
		{name: "rate limited until a date", method: "GET", target: "/agent/runs", status: 429, contentType: "application/problem+json",
			body:   `{"type":"about:blank","title":"Slow down","status":429,"error":"Slow down"}`,
			header: http.Header{"Retry-After": {"Wed, 21 Oct 2015 07:28:00 GMT"}}},
		{name: "versioned prefix", method: "GET", target: "https://app.warp.dev/api/v1/agent/runs/r1", status: 200,
			contentType: "application/json", body: minimalRunItem},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := response(tt.status, tt.contentType, tt.body)
			for k, vs := range tt.header {
				resp.Header[k] = vs
			}
			require.NoError(t, v.ValidateResponse(request(tt.method, tt.target, "", ""), resp))
			got, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, tt.body, string(got), "the body stays readable")
		})
	}
}

func TestValidateResponseRejectsInvalidResponses(t *testing.T) {
	v := testValidator(t)
	tests := []struct {
		name, method, target string
		status               int
		contentType, body    string
		wantField, wantLine  string
	}{
		{"unknown state", "GET", "/agent/runs/r1", 200, "application/json",
			strings.Replace(minimalRunItem, `"QUEUED"`, `"DONE"`, 1),
			"body.state", `GET /agent/runs/{runId} 200: body.state: value must be one of "QUEUED", "PENDING"`},
		{"missing task_id", "GET", "/agent/runs/r1", 200, "application/json",
			strings.Replace(minimalRunItem, `"task_id":"r1",`, ``, 1),
			"body.task_id", "GET /agent/runs/{runId} 200: body.task_id: is required"},
		{"missing task_id in a listed run", "GET", "/agent/runs", 200, "application/json",
			`{"runs":[` + strings.Replace(minimalRunItem, `"task_id":"r1",`, ``, 1) + `],"page_info":{"has_next_page":false}}`,
			"body.runs[0].task_id", "GET /agent/runs 200: body.runs[0].task_id: is required"},
		{"missing page_info", "GET", "/agent/runs", 200, "application/json", `{"runs":[]}`,
			"body.page_info", "body.page_info: is required"},
		{"bad timestamp", "GET", "/agent/runs/r1", 200, "application/json",
			strings.Replace(minimalRunItem, `"2025-01-31T08:00:00Z"}`, `"yesterday"}`, 1),
			"body.updated_at", `body.updated_at: "yesterday" is not a valid date-time`},
		{"session_link not a URI", "GET", "/agent/runs/r1", 200, "application/json",
			strings.Replace(minimalRunItem, `"prompt":"p"`, `"prompt":"p","session_link":"session 1"`, 1),
			"body.session_link", "is not a valid uri"},
		{"unknown error code", "GET", "/agent/runs/r1", 200, "application/json",
			strings.Replace(minimalRunItem, `"prompt":"p"`, `"prompt":"p","status_message":{"message":"m","error_code":"oops"}`, 1),
			"body.status_message.error_code", `value must be one of "insufficient_credits"`},
		{"schedule without its cron", "GET", "/agent/runs/r1", 200, "application/json",
			strings.Replace(minimalRunItem, `"prompt":"p"`, `"prompt":"p","schedule":{"schedule_id":"s1","schedule_name":"n"}`, 1),
			"body.schedule.cron_schedule", "is required"},
		{"scope without its type", "GET", "/agent/runs/r1", 200, "application/json",
			strings.Replace(minimalRunItem, `"prompt":"p"`, `"prompt":"p","scope":{"uid":"u1"}`, 1),
			"body.scope.type", "is required"},
		{"unknown execution location", "GET", "/agent/runs/r1", 200, "application/json",
			strings.Replace(minimalRunItem, `"prompt":"p"`, `"prompt":"p","execution_location":"MOON"`, 1),
			"body.execution_location", `value must be one of "LOCAL", "REMOTE"`},
		{"file artifact without its path", "GET", "/agent/runs/r1", 200, "application/json",
			strings.Replace(minimalRunItem, `"prompt":"p"`, `"prompt":"p","artifacts":[{"artifact_type":"FILE","created_at":"2025-01-31T08:04:00Z","data":{"artifact_uid":"a2","filename":"r.csv","mime_type":"text/csv"}}]`, 1),
			"body.artifacts[0].data", "filepath"},
		{"problem type that is no URI", "GET", "/agent/runs/r1", 404, "application/problem+json",
			strings.Replace(problem404, `"type":"https://docs.warp.dev/errors/resource_not_found"`, `"type":"resource not found"`, 1),
			"body.type", "is not a valid uri"},
		{"created without state", "POST", "/agent/runs", 200, "application/json", `{"run_id":"r1","task_id":"r1"}`,
			"body.state", "POST /agent/runs 200: body.state: is required"},
		{"cancel answers an object", "POST", "/agent/runs/r1/cancel", 200, "application/json", `{"run_id":"r1"}`,
			"body", "POST /agent/runs/{runId}/cancel 200: body: must be a string, not an object"},
		{"error as HTML", "GET", "/agent/runs/r1", 404, "text/html", "<h1>Not found</h1>",
			"header.Content-Type", `header.Content-Type: "text/html" is not documented for status 404`},
		{"error without status", "GET", "/agent/runs/r1", 404, "application/problem+json",
			strings.Replace(problem404, `"status":404,`, ``, 1),
			"body.status", "GET /agent/runs/{runId} 404: body.status: is required"},
		{"status as a string", "GET", "/agent/runs/r1", 404, "application/problem+json",
			strings.Replace(problem404, `"status":404`, `"status":"404"`, 1),
			"body.status", "body.status: must be an integer, not a string"},
		{"undocumented status", "GET", "/agent/runs/r1", 409, "application/problem+json", problem404,
			"status", "GET /agent/runs/{runId} 409: status: 409 is not documented for this operation; expected one of the documented statuses 200, 400, 401, 403, 404, 429, 500, 503"},
		{"malformed JSON", "GET", "/agent/runs", 200, "application/json", `{"runs":[`,
			"body", "body: is not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := response(tt.status, tt.contentType, tt.body)
			ve := asValidationError(t, v.ValidateResponse(request(tt.method, tt.target, "", ""), resp))
			assert.Equal(t, tt.status, ve.Status)
			require.True(t, ve.Has(tt.wantField), "want a finding on %s, got %v", tt.wantField, ve)
			assert.Contains(t, ve.Error(), tt.wantLine)
			got, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, tt.body, string(got), "the body stays readable")
		})
	}
}

// A finding on the status or the Content-Type says what was expected and
// what came apart too, for a report that shows them side by side (the
// proxy's): the message and the two parts say the same.
func TestStatusFindingSaysExpectedAndGot(t *testing.T) {
	v := testValidator(t)
	ve := asValidationError(t, v.ValidateResponse(request("GET", "/agent/runs/r1", "", ""), response(409, "application/problem+json", problem404)))
	require.Len(t, ve.Findings, 1)
	f := ve.Findings[0]
	assert.Equal(t, "one of the documented statuses 200, 400, 401, 403, 404, 429, 500, 503", f.Expected)
	assert.Equal(t, "409", f.Got)
	assert.Contains(t, f.Message, f.Expected)
	ve = asValidationError(t, v.ValidateResponse(request("GET", "/agent/runs/r1", "", ""), response(404, "text/html", "<h1>Not found</h1>")))
	require.True(t, ve.Has("header.Content-Type"))
	for _, f := range ve.Findings {
		if f.Field == "header.Content-Type" {
			assert.Equal(t, `"text/html"`, f.Got)
			assert.Contains(t, f.Expected, "application/json")
		}
	}
}

func TestValidationErrorFormat(t *testing.T) {
	ve := &ValidationError{Operation: "GET /agent/runs/{runId}", Status: 200, Findings: []Finding{
		{Field: "body.state", Message: `value must be one of "QUEUED"`},
		{Field: "body.task_id", Message: "is required"},
	}}
	assert.Equal(t, "GET /agent/runs/{runId} 200: body.state: value must be one of \"QUEUED\"\n"+
		"GET /agent/runs/{runId} 200: body.task_id: is required", ve.Error())
	ve = &ValidationError{Operation: "GET /agent/runs", Findings: []Finding{{Field: "query.limit", Message: "must be at least 1 (got 0)"}}}
	assert.Equal(t, "GET /agent/runs: query.limit: must be at least 1 (got 0)", ve.Error())
}

// TestConcurrentValidation shares one Validator between many goroutines; run
// with -race it proves the wrapper and the library need no extra locking.
func TestConcurrentValidation(t *testing.T) {
	v := testValidator(t)
	const workers, rounds = 16, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds*4)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				check := func(err error, wantValid bool, what string) {
					if (err == nil) != wantValid {
						errs <- fmt.Errorf("worker %d round %d %s: valid=%v, err=%v", w, i, what, wantValid, err)
					}
				}
				check(v.ValidateRequest(request("POST", "/agent/runs", "application/json", fullConfigBody)), true, "create")
				check(v.ValidateRequest(request("GET", fmt.Sprintf("/agent/runs?limit=%d&state=QUEUED", i%600), "", "")), i%600 >= 1 && i%600 <= 500, "list")
				check(v.ValidateRequest(request("POST", "/agent/run", "application/json", `{"prompt":7}`)), false, "bad create")
				check(v.ValidateRequest(request("POST", fmt.Sprintf("/agent/runs/r%d/cancel", i), "", "")), true, "cancel")
				check(v.ValidateRequest(request("PUT", "/agent/runs", "", "")), false, "bad method")
				req := request("GET", "/agent/runs/r1", "", "")
				check(v.ValidateResponse(req, response(200, "application/json", fullRunItem)), true, "get")
				check(v.ValidateResponse(req, response(404, "application/problem+json", problem404)), true, "problem")
				check(v.ValidateResponse(req, response(200, "application/json", `{"state":"DONE"}`)), false, "bad get")
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func BenchmarkValidateRequest(b *testing.B) {
	v := testValidator(b)
	b.Run("GET", func(b *testing.B) {
		b.ReportAllocs()
		r := request("GET", "/agent/runs?limit=50&state=QUEUED&state=INPROGRESS&created_after=2025-01-01T00:00:00Z", "", "")
		for b.Loop() {
			if err := v.ValidateRequest(r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("POST", func(b *testing.B) {
		b.ReportAllocs()
		r := request("POST", "/agent/runs", "application/json", fullConfigBody)
		for b.Loop() {
			if err := v.ValidateRequest(r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("POST parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			r := request("POST", "/agent/runs", "application/json", `{"prompt":"Fix the flaky login test"}`)
			for pb.Next() {
				if err := v.ValidateRequest(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

func BenchmarkValidateResponse(b *testing.B) {
	v := testValidator(b)
	req := request("GET", "/agent/runs/r1", "", "")
	b.ReportAllocs()
	for b.Loop() {
		if err := v.ValidateResponse(req, response(200, "application/json", fullRunItem)); err != nil {
			b.Fatal(err)
		}
	}
}

func TestNewValidatorFromBytesChecksTheDocument(t *testing.T) {
	v, err := NewValidatorFromBytes(Document)
	require.NoError(t, err)
	assert.NoError(t, v.ValidateRequest(request("GET", "/agent/runs", "", "")))

	// libopenapi only logs this one while building the model.
	_, err = NewValidatorFromBytes([]byte("openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /x:\n    get:\n      responses: [1]\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "build model")

	// This one builds, but a response needs a description.
	_, err = NewValidatorFromBytes([]byte("openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /x:\n    get:\n      responses: {'200': {}}\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a valid OpenAPI document")
	assert.Contains(t, err.Error(), `$.paths['/x'].get.responses[200]: must have "description"`)
	t.Log(err)
}

var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// TestDocumentExamplesAreValid replays every request and response example of
// the document through the Validator, so the examples people read are right.
func TestDocumentExamplesAreValid(t *testing.T) {
	v := testValidator(t)
	cfg := datamodel.NewDocumentConfiguration()
	cfg.IgnoreArrayCircularReferences = true // as newValidator
	doc, err := libopenapi.NewDocumentWithConfiguration(Document, cfg)
	require.NoError(t, err)
	model, err := doc.BuildV3Model()
	require.NoError(t, err)

	examplesOf := func(mt *v3.MediaType) map[string]*yaml.Node {
		out := map[string]*yaml.Node{}
		if mt.Example != nil {
			out["example"] = mt.Example
		}
		for ex := mt.Examples.First(); ex != nil; ex = ex.Next() {
			out[ex.Key()] = ex.Value().Value
		}
		return out
	}
	toJSON := func(t *testing.T, node *yaml.Node) string {
		var value any
		require.NoError(t, node.Decode(&value))
		raw, err := json.Marshal(value)
		require.NoError(t, err)
		return string(raw)
	}

	seen := 0
	for p := model.Model.Paths.PathItems.First(); p != nil; p = p.Next() {
		target := pathParam.ReplaceAllString(p.Key(), "0c4bd1b8-5f7e-4a57-9a39-2f5a0f7d9e11")
		for op := p.Value().GetOperations().First(); op != nil; op = op.Next() {
			method := strings.ToUpper(op.Key())
			if rb := op.Value().RequestBody; rb != nil {
				for ct := rb.Content.First(); ct != nil; ct = ct.Next() {
					for name, node := range examplesOf(ct.Value()) {
						seen++
						body := toJSON(t, node)
						assert.NoError(t, v.ValidateRequest(request(method, target, ct.Key(), body)), "%s %s request example %s", method, p.Key(), name)
					}
				}
			}
			for code := op.Value().Responses.Codes.First(); code != nil; code = code.Next() {
				status, err := strconv.Atoi(code.Key())
				require.NoError(t, err)
				for ct := code.Value().Content.First(); ct != nil; ct = ct.Next() {
					for name, node := range examplesOf(ct.Value()) {
						seen++
						resp := response(status, ct.Key(), toJSON(t, node))
						if status == http.StatusTooManyRequests {
							resp.Header.Set("Retry-After", "1")
						}
						assert.NoError(t, v.ValidateResponse(request(method, target, "", ""), resp), "%s %s %d example %s", method, p.Key(), status, name)
					}
				}
			}
		}
	}
	assert.Greater(t, seen, 10, "the document should carry examples")
}
