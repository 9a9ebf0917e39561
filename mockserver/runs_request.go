package mockserver

import (
	"strings"

	"github.com/agentruns/agentruns/openapi"
)

// A create's body is decoded once: the OpenAPI check decodes it into
// generic JSON values to validate it, and requestFromJSON fills the
// runRequest from those values instead of decoding the bytes again with
// encoding/json. It takes only the common request, where that is sure to
// give what encoding/json gives, and leaves the rest to encoding/json
// (call.decode): so the run made, and every error, are as before.
//
// What makes it sure: the values come from openapi.DecodeJSON, which
// refuses duplicate names (encoding/json would merge or overwrite them in
// an order a map no longer has), and the fields taken are plain strings,
// booleans and a map of strings, which both decoders read the same way; a
// null is left out, as encoding/json leaves a new struct's field as it is.
// encoding/json also matches names without regard to case, so a name that
// is not a field's exactly but could match one that way (or has bytes
// outside ASCII, where case folding is Unicode's) is left to it.

// decodeRequest fills req from the call's body.
func (c *call) decodeRequest(req *runRequest) *apiError {
	v := c.decoded
	if v == nil { // the check did not decode it (a body it accepted before)
		v, _ = openapi.DecodeJSON(c.body)
	}
	if v != nil && requestFromJSON(v, req) {
		return nil
	}
	*req = runRequest{}
	return c.decode(req)
}

// runRequestNames are the JSON names of runRequest's fields, and
// configNames those of AgentConfig's: a name that is none of these but
// equal to one of them without regard to case is left to encoding/json.
var (
	runRequestNames = []string{"prompt", "config", "title", "skill", "team", "conversation_id", "attachments", "images",
		"agent_identity_uid", "parent_run_id", "interactive", "metadata", "mode", "on_behalf_of"}
	configNames = []string{"name", "model_id", "base_prompt", "environment_id", "skill_spec", "mcp_servers",
		"computer_use_enabled", "worker_host", "idle_timeout_minutes", "harness", "harness_auth_secrets",
		"computer_use_model_id", "credential_strategy", "inference_providers", "memory_stores", "runner_id",
		"session_sharing", "skills"}
)

// requestFromJSON fills req, which is empty, from v and reports whether it
// could; when it could not, req is left partly filled.
func requestFromJSON(v any, req *runRequest) bool {
	obj, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for name, val := range obj {
		if val == nil {
			if !unknownName(name, runRequestNames) && !isOneOf(name, runRequestNames) {
				return false
			}
			continue
		}
		switch name {
		case "prompt":
			ok = setString(&req.Prompt, val)
		case "title":
			ok = setString(&req.Title, val)
		case "skill":
			ok = setString(&req.Skill, val)
		case "conversation_id":
			ok = setString(&req.ConversationID, val)
		case "agent_identity_uid":
			ok = setString(&req.AgentIdentityUID, val)
		case "parent_run_id":
			ok = setString(&req.ParentRunID, val)
		case "mode":
			ok = setString(&req.Mode, val)
		case "on_behalf_of":
			ok = setString(&req.OnBehalfOf, val)
		case "team":
			ok = setBool(&req.Team, val)
		case "interactive":
			ok = setBool(&req.Interactive, val)
		case "config":
			req.Config = new(AgentConfig)
			ok = configFromJSON(val, req.Config)
		case "metadata":
			ok = metadataFromJSON(val, req)
		default: // attachments and images (kept raw) and unknown names
			ok = unknownName(name, runRequestNames)
		}
		if !ok {
			return false
		}
	}
	return true
}

// configFromJSON fills cfg from a config made of plain strings only.
func configFromJSON(v any, cfg *AgentConfig) bool {
	obj, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for name, val := range obj {
		var field *string
		switch name {
		case "name":
			field = &cfg.Name
		case "model_id":
			field = &cfg.ModelID
		case "base_prompt":
			field = &cfg.BasePrompt
		case "environment_id":
			field = &cfg.EnvironmentID
		case "skill_spec":
			field = &cfg.SkillSpec
		case "worker_host":
			field = &cfg.WorkerHost
		case "computer_use_model_id":
			field = &cfg.ComputerUseModelID
		case "credential_strategy":
			field = &cfg.CredentialStrategy
		case "runner_id":
			field = &cfg.RunnerID
		default: // the other fields, and unknown names
			if !unknownName(name, configNames) {
				return false
			}
			continue
		}
		if val == nil {
			continue
		}
		s, ok := val.(string)
		if !ok {
			return false
		}
		*field = s
	}
	return true
}

func metadataFromJSON(v any, req *runRequest) bool {
	obj, ok := v.(map[string]any)
	if !ok {
		return false
	}
	req.Metadata = make(map[string]string, len(obj))
	for k, val := range obj {
		s, ok := val.(string)
		if !ok {
			return false
		}
		req.Metadata[k] = s
	}
	return true
}

func setString(field **string, v any) bool {
	s, ok := v.(string)
	if ok {
		*field = &s
	}
	return ok
}

func setBool(field **bool, v any) bool {
	b, ok := v.(bool)
	if ok {
		*field = &b
	}
	return ok
}

// unknownName reports whether encoding/json surely ignores name, given
// the names of the struct's fields: it is none of them, not even without
// regard to case, and all ASCII.
func unknownName(name string, names []string) bool {
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 {
			return false
		}
	}
	for _, n := range names {
		if strings.EqualFold(name, n) {
			return false
		}
	}
	return true
}

func isOneOf(name string, names []string) bool {
	for _, n := range names {
		if name == n {
			return true
		}
	}
	return false
}
