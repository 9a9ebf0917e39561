package mockserver

import (
	"net/http"
	"reflect"
	"strings"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/mockserver/store"
)

// Agent identities over HTTP: list, create, rename and delete a team's
// agents (mockserver/store/identities.go), a run that acts as one, and the
// control API's way to get an agent an API key. The published document
// returns no key on create (keys are issued elsewhere in the service), so
// the mock issues them from POST /__mock/identities/{uid}/keys.

// AgentResponse is an agent as the API shows it: the published fields,
// then the settings oz-agent-sdk 1.4.0-alpha.6 reads, five of them always
// present (the client declares them required).
type AgentResponse struct {
	UID              string         `json:"uid"`
	Name             string         `json:"name"`
	Available        bool           `json:"available"`
	CreatedAt        string         `json:"created_at"`
	UpdatedAt        string         `json:"updated_at"`
	DefaultRunnerUID string         `json:"default_runner_uid"`
	Memory           map[string]any `json:"memory"`
	Secrets          []any          `json:"secrets"`
	Skills           []any          `json:"skills"`
	// Settings are the other settings as they were set.
	Settings map[string]any `json:"-"`
	// extra are the members beyond the document a fixture agent carries.
	extra fixtures.Extra
}

// MarshalJSON writes the fields above, then the other settings: with
// settings, as one object of all of them in the order of their names (as
// encoding/json writes a map), a field above winning over a setting of the
// same name. Each value is marshalled once.
func (a AgentResponse) MarshalJSON() ([]byte, error) {
	type plain AgentResponse
	if len(a.Settings) == 0 {
		return marshalWithExtra(plain(a), a.extra)
	}
	all := make(map[string]any, len(a.Settings)+len(agentResponseFields))
	for k, v := range a.Settings {
		all[k] = v
	}
	v := reflect.ValueOf(a)
	for _, f := range agentResponseFields {
		all[f.name] = v.Field(f.index).Interface()
	}
	return marshalWithExtra(all, a.extra)
}

// agentResponseFields are AgentResponse's fields as encoding/json names
// them (none is omitempty), Settings and the unexported extra aside.
var agentResponseFields = func() (out []jsonField) {
	t := reflect.TypeFor[AgentResponse]()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "-" && t.Field(i).IsExported() {
			out = append(out, jsonField{name, i})
		}
	}
	return out
}()

// jsonField is a struct field's JSON name and its index in the struct.
type jsonField struct {
	name  string
	index int
}

// agentSettings are the settings an identity keeps beyond its name: every
// field of CreateAgentRequest and UpdateAgentRequest but name.
var agentSettings = []string{"agent_type", "base_harness", "base_model", "credential_strategy", "default_runner_uid",
	"description", "environment_id", "factory_uid", "harness", "harness_auth_secrets", "inference_providers",
	"mcp_servers", "memory", "on_behalf_of_enabled", "prompt", "secrets", "skills", "worker_host"}

// identitySettings picks the settings out of a create or update body; a
// null one is kept as nil, which clears it.
func identitySettings(c *call) (map[string]any, *apiError) {
	all, aerr := c.object()
	if aerr != nil {
		return nil, aerr
	}
	out := map[string]any{}
	for _, k := range agentSettings {
		if v, ok := all[k]; ok {
			out[k] = v
		}
	}
	return out, nil
}

// ListAgentIdentitiesResponse answers GET /agent/identities.
type ListAgentIdentitiesResponse struct {
	Agents []AgentResponse `json:"agents"`
}

func identityJSON(v store.IdentityView) AgentResponse {
	out := AgentResponse{UID: v.UID, Name: v.Name, Available: v.Available, CreatedAt: formatTime(v.CreatedAt),
		UpdatedAt: formatTime(v.UpdatedAt), Secrets: []any{}, Skills: []any{}, Settings: v.Settings,
		extra: v.Extra}
	out.DefaultRunnerUID, _ = v.Settings["default_runner_uid"].(string)
	if l, ok := v.Settings["secrets"].([]any); ok {
		out.Secrets = l
	}
	if l, ok := v.Settings["skills"].([]any); ok {
		out.Skills = l
	}
	// Memory as the client reads it: the attached stores, and whether the
	// agent keeps an automatic memory of its own.
	stores, enabled := []any{}, false
	if m, ok := v.Settings["memory"].(map[string]any); ok {
		if l, ok := m["attached_stores"].([]any); ok {
			stores = l
		}
		if auto, ok := m["auto_memory"].(map[string]any); ok {
			enabled, _ = auto["enabled"].(bool)
		}
	}
	out.Memory = map[string]any{"attached_stores": stores, "auto_memory": map[string]any{"enabled": enabled}}
	return out
}

// getIdentity is GET /agent/identities/{uid}.
func (s *Server) getIdentity(c *call) response {
	v, err := c.session.Identity(c.principal, c.id)
	if err != nil {
		return fail(problemOf(err))
	}
	return ok(identityJSON(v))
}

// listIdentities is GET /agent/identities.
func (s *Server) listIdentities(c *call) response {
	views, err := c.session.Identities(c.principal)
	if err != nil {
		return fail(problemOf(err))
	}
	out := ListAgentIdentitiesResponse{Agents: make([]AgentResponse, 0, len(views))}
	for _, v := range views {
		out.Agents = append(out.Agents, identityJSON(v))
	}
	return ok(out)
}

// identityName reads the name of a create or update body; required says
// whether it must be there.
func identityName(c *call, required bool) (name string, given bool, aerr *apiError) {
	var req struct {
		Name *string `json:"name"`
	}
	if aerr := c.fill(&req); aerr != nil {
		return "", false, aerr
	}
	if req.Name == nil {
		if required {
			return "", false, errorf(codeInvalidRequest, "name: required")
		}
		return "", false, nil
	}
	name = strings.TrimSpace(*req.Name)
	if name == "" {
		return "", true, errorf(codeInvalidRequest, "name: must not be empty")
	}
	if len(name) > 200 {
		// The document gives no limit; the mock keeps names to a line.
		return "", true, errorf(codeInvalidRequest, "name: at most 200 bytes")
	}
	return name, true, nil
}

// createIdentity is POST /agent/identities; it answers 201.
func (s *Server) createIdentity(c *call) response {
	name, _, aerr := identityName(c, true)
	if aerr != nil {
		return fail(aerr)
	}
	settings, aerr := identitySettings(c)
	if aerr != nil {
		return fail(aerr)
	}
	v, err := c.session.CreateIdentity(c.principal, name, settings)
	if err != nil {
		return fail(problemOf(err))
	}
	return response{status: http.StatusCreated, body: identityJSON(v)}
}

// updateIdentity is PUT /agent/identities/{uid}.
func (s *Server) updateIdentity(c *call) response {
	name, given, aerr := identityName(c, false)
	if aerr != nil {
		return fail(aerr)
	}
	settings, aerr := identitySettings(c)
	if aerr != nil {
		return fail(aerr)
	}
	var v store.IdentityView
	var err error
	if given || len(settings) > 0 {
		v, err = c.session.UpdateIdentity(c.principal, c.id, name, settings)
	} else {
		v, err = c.session.Identity(c.principal, c.id)
	}
	if err != nil {
		return fail(problemOf(err))
	}
	return ok(identityJSON(v))
}

// deleteIdentity is DELETE /agent/identities/{uid}; it answers 204.
func (s *Server) deleteIdentity(c *call) response {
	if err := c.session.DeleteIdentity(c.principal, c.id); err != nil {
		return fail(problemOf(err))
	}
	return response{status: http.StatusNoContent}
}

// AgentKey is the control API's answer to POST /__mock/identities/{uid}/keys.
type AgentKey struct {
	APIKey string `json:"api_key"`
}

// issueIdentityKey is POST /__mock/identities/{uid}/keys: a new API key that
// acts as the agent, until the agent is deleted.
func issueIdentityKey(c *call) response {
	key, err := c.session.IssueIdentityKey(c.id)
	if err != nil {
		return fail(problemOf(err))
	}
	return response{status: http.StatusCreated, body: AgentKey{APIKey: key}}
}
