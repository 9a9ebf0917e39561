package openapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The operations beyond runs get request and response validation from the
// document alone; these cases show it for each area, valid and not.

const scheduleItem = `{"id":"sch_1","name":"Nightly","cron_schedule":"0 3 * * *","enabled":true,"prompt":"Bump deps",` +
	`"created_at":"2025-01-20T08:00:00Z","updated_at":"2025-01-20T08:00:00Z","last_spawn_error":null,` +
	`"history":{"last_ran":null,"next_run":"2025-01-21T03:00:00Z"},"scope":{"type":"Team","uid":"t1"},` +
	`"agent_config":{"model_id":"m"},"environment":{"name":"api","description":null,"github_repos":[{"owner":"acme","repo":"api"}]},` +
	`"created_by":{"type":"user","uid":"u1"}}`

const conversation = `{"conversation_id":"cv1","steps":[{"id":"s1","messages":[` +
	`{"role":"user","content":[{"type":"text","text":"Fix it"}]},` +
	`{"role":"assistant","content":[{"type":"action","id":"a1","category":"command","name":"run_command","input":{"command":"go test"}}]},` +
	`{"role":"tool","content":[{"type":"action_result","action_id":"a1","category":"command","name":"run_command","state":"completed","output":{}}]},` +
	`{"role":"system","content":[{"type":"event","name":"compacted","data":{}}]}],` +
	`"steps":[{"id":"s1.1","messages":[],"steps":[]}]}]}`

func TestValidateRequestOnEveryArea(t *testing.T) {
	v := testValidator(t)
	valid := []struct{ method, target, body string }{
		{"GET", "/agent?repo=acme/api&refresh=true&sort_by=last_run&include_malformed_skills=false", ""},
		{"GET", "/agent/environments?sort_by=name", ""},
		{"GET", "/agent/models", ""},
		{"GET", "/agent/artifacts/5e1f7a20-93bc-4d1e-8a66-0b2c4d7e9f31", ""},
		{"GET", "/agent/runs/r1/conversation", ""},
		{"GET", "/agent/runs/r1/transcript", ""},
		{"GET", "/agent/conversations/cv1", ""},
		{"GET", "/agent/sessions/3f0b8c5e-2d4a-4e61-9c7b-5a8e1d2f3c40/redirect", ""},
		{"POST", "/agent/schedules", `{"name":"Nightly","cron_schedule":"0 3 * * *","prompt":"x","enabled":false,"team":true,"agent_config":{"model_id":"m"}}`},
		{"POST", "/agent/schedules", `{"name":"Skill","cron_schedule":"0 3 * * *","agent_config":{"skill_spec":"acme/api:skills/x/SKILL.md"}}`},
		{"GET", "/agent/schedules", ""},
		{"GET", "/agent/schedules/sch_1", ""},
		{"PUT", "/agent/schedules/sch_1", `{"name":"Nightly","cron_schedule":"0 4 * * *","enabled":true,"prompt":"x"}`},
		{"DELETE", "/agent/schedules/sch_1", ""},
		{"POST", "/agent/schedules/sch_1/pause", ""},
		{"POST", "/agent/schedules/sch_1/resume", ""},
		{"POST", "/agent/identities", `{"name":"Release bot"}`},
		{"GET", "/agent/identities", ""},
		{"PUT", "/agent/identities/ag_1", `{}`},
		{"DELETE", "/agent/identities/ag_1", ""},
		{"POST", "/agent/messages", `{"to":["r2","r3"],"subject":"s","body":"b","sender_run_id":"r1"}`},
		{"GET", "/agent/messages/r2?unread=true&since=2025-01-01T00:00:00Z&limit=100", ""},
		{"POST", "/agent/messages/m1/read", ""},
		{"POST", "/agent/messages/m1/delivered", ""},
		{"GET", "/agent/events?run_ids=r1&run_ids=r2&since=4100&limit=500", ""},
		{"POST", "/agent/events/r1", `{"event_type":"run_succeeded","execution_id":"e1"}`},
	}
	for _, tt := range valid {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			ct := ""
			if tt.body != "" {
				ct = "application/json"
			}
			assert.NoError(t, v.ValidateRequest(request(tt.method, tt.target, ct, tt.body)))
		})
	}

	invalid := []struct{ name, method, target, body, field, message string }{
		{"skills sorted by size", "GET", "/agent?sort_by=size", "", "query.sort_by", `value "size" must be one of "name", "last_run"`},
		{"refresh not a boolean", "GET", "/agent?refresh=maybe", "", "query.refresh", `"maybe" is not a valid boolean`},
		{"environments sorted by size", "GET", "/agent/environments?sort_by=size", "", "query.sort_by", `must be one of "name", "last_updated"`},
		{"schedule without cron", "POST", "/agent/schedules", `{"name":"n","prompt":"x"}`, "body.cron_schedule", "is required"},
		{"schedule enabled as text", "POST", "/agent/schedules", `{"name":"n","cron_schedule":"* * * * *","enabled":"yes"}`, "body.enabled", "must be a boolean"},
		{"schedule update without enabled", "PUT", "/agent/schedules/s1", `{"name":"n","cron_schedule":"* * * * *","prompt":"x"}`, "body.enabled", "is required"},
		{"identity without name", "POST", "/agent/identities", `{}`, "body.name", "is required"},
		{"message without recipients", "POST", "/agent/messages", `{"subject":"s","body":"b","sender_run_id":"r1"}`, "body.to", "is required"},
		{"message subject too long", "POST", "/agent/messages", `{"to":["r2"],"subject":"` + strings.Repeat("s", 1025) + `","body":"b","sender_run_id":"r1"}`,
			"body.subject", "must be at most 1024 characters long (got 1025)"},
		{"inbox limit over 100", "GET", "/agent/messages/r1?limit=101", "", "query.limit", "must be at most 100 (got 101)"},
		{"events without run_ids", "GET", "/agent/events?since=3", "", "query.run_ids", "missing"},
		{"events limit over 500", "GET", "/agent/events?run_ids=r1&limit=501", "", "query.limit", "must be at most 500 (got 501)"},
		{"events since not a number", "GET", "/agent/events?run_ids=r1&since=yesterday", "", "query.since", `"yesterday" is not a valid integer`},
		{"unknown event type", "POST", "/agent/events/r1", `{"event_type":"run_paused"}`, "body.event_type", `value must be one of "run_in_progress"`},
		{"undocumented method", "PATCH", "/agent/schedules/s1", "", "method", "PATCH is not documented for /agent/schedules/{scheduleId} (documented: DELETE, GET, PUT)"},
	}
	for _, tt := range invalid {
		t.Run(tt.name, func(t *testing.T) {
			ct := ""
			if tt.body != "" {
				ct = "application/json"
			}
			ve := asValidationError(t, v.ValidateRequest(request(tt.method, tt.target, ct, tt.body)))
			require.True(t, ve.Has(tt.field), "want a finding on %s, got %v", tt.field, ve)
			assert.Contains(t, ve.Error(), tt.message)
		})
	}
}

func TestValidateResponseOnEveryArea(t *testing.T) {
	v := testValidator(t)
	valid := []struct {
		name, method, target string
		status               int
		body                 string
		header               http.Header
	}{
		{"skills", "GET", "/agent", 200, `{"agents":[{"name":"release","variants":[{"id":"acme/api:skills/release/SKILL.md","description":"d","base_prompt":"p",` +
			`"source":{"owner":"acme","name":"api","skill_path":"skills/release/SKILL.md"},"environments":[{"uid":"e1","name":"api"}],"last_run_timestamp":null}]}]}`, nil},
		{"environments", "GET", "/agent/environments", 200, `{"environments":[{"uid":"e1","config":{"name":"api","providers":{"aws":{"role_arn":"arn:aws:iam::1:role/x"}}},` +
			`"last_updated":"2025-01-01T00:00:00Z","setup_failed":false,"last_task_run_timestamp":null,` +
			`"last_task_created":{"id":"r1","title":"t","state":"SUCCEEDED","created_at":"2025-01-01T00:00:00Z","updated_at":"2025-01-01T00:00:00Z","started_at":null}}]}`, nil},
		{"models", "GET", "/agent/models", 200, `{"default_model_id":"m1","models":[{"id":"m1","display_name":"M1","provider":"ANTHROPIC","vision_supported":true,"disable_reason":"ADMIN_DISABLED"}]}`, nil},
		{"plan artifact", "GET", "/agent/artifacts/a1", 200, `{"artifact_uid":"a1","artifact_type":"PLAN","created_at":"2025-01-01T00:00:00Z",` +
			`"data":{"document_uid":"d","notebook_uid":"n","content":"# Plan","content_type":"text/markdown"}}`, nil},
		{"file artifact", "GET", "/agent/artifacts/a2", 200, `{"artifact_uid":"a2","artifact_type":"FILE","created_at":"2025-01-01T00:00:00Z",` +
			`"data":{"download_url":"https://files.example.com/a2?sig=1","expires_at":"2025-01-01T01:00:00Z","content_type":"text/csv","filepath":"out/r.csv","filename":"r.csv","size_bytes":12}}`, nil},
		{"conversation", "GET", "/agent/runs/r1/conversation", 200, conversation, nil},
		{"conversation by id", "GET", "/agent/conversations/cv1", 200, conversation, nil},
		{"conversation not normalised", "GET", "/agent/conversations/cv1", 422, problem404, nil},
		{"transcript", "GET", "/agent/runs/r1/transcript", 302, "", http.Header{"Location": {"https://files.example.com/t/r1?sig=2"}}},
		{"no session redirect yet", "GET", "/agent/sessions/s1/redirect", 200, `{}`, nil},
		{"created schedule", "POST", "/agent/schedules", 201, scheduleItem, nil},
		{"schedules", "GET", "/agent/schedules", 200, `{"schedules":[` + scheduleItem + `]}`, nil},
		{"paused schedule", "POST", "/agent/schedules/sch_1/pause", 200, strings.Replace(scheduleItem, `"enabled":true`, `"enabled":false`, 1), nil},
		{"deleted schedule", "DELETE", "/agent/schedules/sch_1", 200, `{"success":true}`, nil},
		{"created identity", "POST", "/agent/identities", 201, `{"uid":"ag_1","name":"Bot","available":true,"created_at":"2025-01-01T00:00:00Z","updated_at":"2025-01-01T00:00:00Z","default_runner_uid":"","memory":{"attached_stores":[],"auto_memory":{"enabled":false}},"secrets":[],"skills":[]}`, nil},
		{"deleted identity", "DELETE", "/agent/identities/ag_1", 204, "", nil},
		{"sent message", "POST", "/agent/messages", 200, `{"message_ids":["m1","m2"]}`, nil},
		{"recipient finished", "POST", "/agent/messages", 422, problem404, nil},
		{"inbox", "GET", "/agent/messages/r2", 200, `[{"message_id":"m1","sender_run_id":"r1","subject":"s","sent_at":"2025-01-01T00:00:00Z","delivered_at":null,"read_at":null}]`, nil},
		{"delivered", "POST", "/agent/messages/m1/delivered", 204, "", nil},
		{"events", "GET", "/agent/events?run_ids=r1", 200, `[{"event_type":"run_succeeded","run_id":"r1","ref_id":null,"execution_id":"e1","occurred_at":"2025-01-01T00:00:00Z","sequence":7}]`, nil},
		{"event of a newer type", "GET", "/agent/events?run_ids=r1", 200, `[{"event_type":"new_message","run_id":"r1","occurred_at":"2025-01-01T00:00:00Z","sequence":8}]`, nil},
		{"reported event", "POST", "/agent/events/r1", 200, `{"sequence":8}`, nil},
	}
	for _, tt := range valid {
		t.Run(tt.name, func(t *testing.T) {
			ct := ""
			if tt.body != "" {
				ct = "application/json"
			}
			resp := response(tt.status, ct, tt.body)
			for k, vs := range tt.header {
				resp.Header[k] = vs
			}
			assert.NoError(t, v.ValidateResponse(request(tt.method, tt.target, "", ""), resp))
		})
	}

	invalid := []struct {
		name, method, target string
		status               int
		body, field, message string
	}{
		{"schedule without prompt", "GET", "/agent/schedules/sch_1", 200, strings.Replace(scheduleItem, `"prompt":"Bump deps",`, ``, 1), "body.prompt", "is required"},
		{"schedule with a bad next run", "GET", "/agent/schedules/sch_1", 200, strings.Replace(scheduleItem, `"next_run":"2025-01-21T03:00:00Z"`, `"next_run":"tomorrow"`, 1),
			"body.history.next_run", `"tomorrow" is not a valid date-time`},
		{"pull request fetched as an artifact", "GET", "/agent/artifacts/a3", 200, `{"artifact_uid":"a3","artifact_type":"PULL_REQUEST","created_at":"2025-01-01T00:00:00Z","data":{}}`,
			"body.artifact_type", "matches none of the allowed shapes"},
		{"download link without expiry", "GET", "/agent/artifacts/a1", 200, `{"artifact_uid":"a1","artifact_type":"SCREENSHOT","created_at":"2025-01-01T00:00:00Z",` +
			`"data":{"download_url":"https://files.example.com/a1","content_type":"image/png"}}`, "body.data", "expires_at"},
		{"models without a default", "GET", "/agent/models", 200, `{"models":[]}`, "body.default_model_id", "is required"},
		{"unknown model provider", "GET", "/agent/models", 200, `{"default_model_id":"m","models":[{"id":"m","display_name":"M","provider":"ACME","vision_supported":false}]}`,
			"body.models[0].provider", `value must be one of "OPENAI"`},
		{"conversation step without sub-steps", "GET", "/agent/conversations/cv1", 200, `{"conversation_id":"cv1","steps":[{"id":"s1","messages":[]}]}`,
			"body.steps[0].steps", "is required"},
		{"unknown message role", "GET", "/agent/conversations/cv1", 200, strings.Replace(conversation, `"role":"system"`, `"role":"robot"`, 1),
			"body.steps[0].messages[3].role", `value must be one of "user"`},
		{"identity without availability", "GET", "/agent/identities", 200, `{"agents":[{"uid":"ag_1","name":"Bot","created_at":"2025-01-01T00:00:00Z"}]}`,
			"body.agents[0].available", "is required"},
		{"schedule created with 200", "POST", "/agent/schedules", 200, scheduleItem, "status", "200 is not documented for this operation"},
		{"sequence as text", "POST", "/agent/events/r1", 200, `{"sequence":"8"}`, "body.sequence", "must be an integer, not a string"},
	}
	for _, tt := range invalid {
		t.Run(tt.name, func(t *testing.T) {
			ve := asValidationError(t, v.ValidateResponse(request(tt.method, tt.target, "", ""), response(tt.status, "application/json", tt.body)))
			require.True(t, ve.Has(tt.field), "want a finding on %s, got %v", tt.field, ve)
			assert.Contains(t, ve.Error(), tt.message)
		})
	}
}
