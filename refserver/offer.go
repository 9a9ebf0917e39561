package refserver

import (
	"net/http"
	"slices"
	"time"
)

// What a run may name, as GET /agent/models, GET /agent/environments and
// GET /agent list it: a few models (one disabled, as the document's
// disable_reason allows), two environments and three skills. With
// Options.StrictReferences a create that names anything else is refused.
// The second team also lists an environment of its own, which a run of the
// first team may never name, strict or not.

type offer struct {
	models       []map[string]any
	environments []map[string]any
	agents       []map[string]any
	// offered ids, by kind
	modelIDs, environmentIDs, skillIDs map[string]bool
	// otherTeamEnvironment is listed to the second team only.
	otherTeamEnvironment map[string]any
}

const defaultModel = "reference-auto"

func newOffer() offer {
	c := offer{modelIDs: map[string]bool{}, environmentIDs: map[string]bool{}, skillIDs: map[string]bool{}}
	for _, m := range []map[string]any{
		{"id": defaultModel, "display_name": "Auto", "provider": "UNKNOWN", "vision_supported": true},
		{"id": "reference-large", "display_name": "Large", "provider": "ANTHROPIC", "vision_supported": true},
		{"id": "reference-small", "display_name": "Small", "provider": "OPENAI", "vision_supported": false, "reasoning_level": "low"},
		{"id": "reference-retired", "display_name": "Retired", "provider": "GOOGLE", "vision_supported": false, "disable_reason": "ADMIN_DISABLED"},
	} {
		c.models = append(c.models, m)
		if m["disable_reason"] == nil {
			c.modelIDs[m["id"].(string)] = true
		}
	}
	updated := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	for i, e := range []struct{ uid, name string }{{"env-docs", "Docs site"}, {"env-services", "services"}} {
		c.environments = append(c.environments, map[string]any{
			"uid": e.uid, "config": map[string]any{"name": e.name, "docker_image": "debian:stable"},
			"last_updated": stamp(updated.Add(-time.Duration(i) * time.Hour)), "setup_failed": false,
		})
		c.environmentIDs[e.uid] = true
	}
	// Last both by name and by last update, as the fixed order of the
	// listing needs whatever the sort asked.
	c.otherTeamEnvironment = map[string]any{
		"uid": otherTeamEnvironmentID, "config": map[string]any{"name": "team pipelines", "docker_image": "debian:stable"},
		"last_updated": stamp(updated.Add(-2 * time.Hour)), "setup_failed": false,
	}
	envs := []any{map[string]any{"uid": "env-services", "name": "services"}}
	// In alphabetical order as people read it, not as bytes compare.
	for _, sk := range []struct{ name, path string }{{"bisect", "skills/bisect/SKILL.md"}, {"Changelog", "skills/changelog/SKILL.md"}, {"triage", "skills/triage/SKILL.md"}} {
		id := "reference/skills:" + sk.path
		c.agents = append(c.agents, map[string]any{"name": sk.name, "variants": []any{map[string]any{
			"id": id, "description": "The " + sk.name + " skill.", "base_prompt": "You do " + sk.name + ".",
			"source": map[string]any{"owner": "reference", "name": "skills", "skill_path": sk.path}, "environments": envs,
		}}})
		c.skillIDs[id] = true
	}
	return c
}

// otherTeamEnvironmentID is the environment of the second team alone.
const otherTeamEnvironmentID = "env-other-team-pipelines"

// checkTeam refuses a run of the first team in the second team's
// environment: as not the caller's (403), or, hiding that it exists
// (Options.ForeignNotFound), as unknown (400, a create having no 404).
func (s *Server) checkTeam(req request, c caller) (status int, code, title, detail string) {
	if !s.foreignEnvironment(req, c) || s.opts.ForeignEnvironmentFailed {
		return 0, "", "", ""
	}
	if s.opts.ForeignNotFound {
		return http.StatusBadRequest, "invalid_request", "Invalid request", "config.environment_id " + otherTeamEnvironmentID + " is not an environment of the team"
	}
	return http.StatusForbidden, "not_authorized", "Not authorized", "environment " + otherTeamEnvironmentID + " belongs to another team"
}

// foreignEnvironment tells a run of the first team in the second team's
// environment.
func (s *Server) foreignEnvironment(req request, c caller) bool {
	return str(req.config["environment_id"]) == otherTeamEnvironmentID && c.team != otherTeam
}

// check refuses a request that names what the server does not offer.
func (c offer) check(req request) (status int, code, title, detail string) {
	switch model, env, skill := str(req.config["model_id"]), str(req.config["environment_id"]), str(req.config["skill_spec"]); {
	case model != "" && !c.modelIDs[model]:
		return http.StatusBadRequest, "invalid_request", "Invalid request", "config.model_id " + model + " is not an available model"
	case env != "" && !c.environmentIDs[env] && env != otherTeamEnvironmentID: // checkTeam judges that one
		return http.StatusForbidden, "not_authorized", "Not authorized", "no permission to use environment " + env
	case skill != "" && !c.skillIDs[skill]:
		return http.StatusBadRequest, "invalid_request", "Invalid request", "skill " + skill + " is not one this server offers"
	}
	return 0, "", "", ""
}

// listOffered answers GET /agent/models, /agent/environments and /agent,
// in a fixed order whatever the query: the document gives these operations
// no 400, so an order the server does not know is ignored.
func (s *Server) listOffered(w http.ResponseWriter, c caller, what string) {
	switch what {
	case "models":
		writeJSON(w, http.StatusOK, map[string]any{"default_model_id": defaultModel, "models": s.offer.models})
	case "environments":
		envs := s.offer.environments
		if c.team == otherTeam {
			envs = append(slices.Clip(envs), s.offer.otherTeamEnvironment)
		}
		writeJSON(w, http.StatusOK, map[string]any{"environments": envs})
	default:
		writeJSON(w, http.StatusOK, map[string]any{"agents": s.offer.agents})
	}
}
