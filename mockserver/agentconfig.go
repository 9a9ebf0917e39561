package mockserver

import (
	"regexp"

	"github.com/agentruns/agentruns/mockserver/store"
)

// The rules an agent config follows, whether a run is created with it or a
// schedule starts runs with it: one resolver for both.

// skillSpecPattern is a skill as the service takes it: [owner/]repo, a
// colon, then a skill name or the path of its SKILL.md.
var skillSpecPattern = regexp.MustCompile(`^(?:[A-Za-z0-9_.-]+/)?[A-Za-z0-9_.-]+:[^\s:]+$`)

// resolveConfig checks and fills in an agent config of team's as the
// service does: a skill spec it accepts (field names the spec's place in
// the request), the skill's name and base prompt as the skills list knows
// them, the default model. It reports whether the config starts from a
// skill.
func (s *Server) resolveConfig(team string, cfg *AgentConfig, field string) (fromSkill bool, aerr *apiError) {
	if cfg.SkillSpec != "" {
		if !skillSpecPattern.MatchString(cfg.SkillSpec) {
			return false, errorf(codeInvalidRequest, "%s: %q is not [<owner>/]<repo>:<skill_name> or [<owner>/]<repo>:<path>/SKILL.md", field, cfg.SkillSpec)
		}
		s.applySkill(team, cfg)
		fromSkill = true
	}
	if cfg.ModelID == "" {
		cfg.ModelID = s.fixtures.DefaultModelID
	}
	return fromSkill, nil
}

// applySkill fills in what the skills list knows of the skill cfg names:
// its name (unless the caller chose one) and base prompt (likewise).
// A skill the list does not know keeps the name its spec gives.
func (s *Server) applySkill(team string, cfg *AgentConfig) {
	sk, ok := s.store.ResolveSkill(team, cfg.SkillSpec)
	if !ok {
		if cfg.Name == "" {
			cfg.Name = store.SkillName(cfg.SkillSpec)
		}
		return
	}
	if cfg.Name == "" || cfg.Name == store.SkillName(cfg.SkillSpec) {
		cfg.Name = sk.Name
	}
	if cfg.BasePrompt == "" {
		cfg.BasePrompt = sk.BasePrompt
	}
}
