package mockserver

import (
	"strconv"
	"strings"

	"github.com/agentruns/agentruns/mockserver/store"
)

// The skills list over HTTP (GET /agent): the skills of the caller's
// environments, grouped by name, which the API calls agents. What it lists
// is mockserver/store's skills.go.

// ListAgentsResponse answers GET /agent.
type ListAgentsResponse struct {
	Agents []AgentListItem `json:"agents"`
}

// AgentListItem is one skill name and its variants.
type AgentListItem struct {
	Name     string             `json:"name"`
	Variants []AgentListVariant `json:"variants"`
}

// AgentListVariant is one SKILL.md in one repository.
type AgentListVariant struct {
	ID               string                 `json:"id"`
	Description      string                 `json:"description"`
	BasePrompt       string                 `json:"base_prompt"`
	Source           AgentListSource        `json:"source"`
	Environments     []AgentListEnvironment `json:"environments"`
	LastRunTimestamp *string                `json:"last_run_timestamp"`
	Error            string                 `json:"error,omitempty"`
}

// AgentListSource is where a skill lives.
type AgentListSource struct {
	Owner     string `json:"owner"`
	Name      string `json:"name"`
	SkillPath string `json:"skill_path"`
}

// AgentListEnvironment is an environment a skill can run in.
type AgentListEnvironment struct {
	UID  string `json:"uid"`
	Name string `json:"name"`
}

// listAgents is GET /agent. refresh is accepted and changes nothing: the
// mock reads its skills from the fixtures and caches nothing.
func (s *Server) listSkills(c *call) response {
	params := c.query
	q := store.SkillQuery{Repo: params.Get("repo"), SortBy: params.Get("sort_by")}
	if q.Repo != "" {
		if o, n, ok := strings.Cut(q.Repo, "/"); !ok || o == "" || n == "" || strings.Contains(n, "/") {
			return fail(queryError("repo", "write the repository as owner/repo"))
		}
	}
	switch q.SortBy {
	case "", "name", "last_run":
	default:
		return fail(queryError("sort_by", "must be name or last_run"))
	}
	for _, name := range []string{"refresh", "include_malformed_skills"} {
		if v := params.Get(name); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fail(queryError(name, "must be true or false"))
			}
			if name == "include_malformed_skills" {
				q.IncludeMalformed = b
			}
		}
	}
	groups := c.session.Skills(c.principal, q)
	out := ListAgentsResponse{Agents: make([]AgentListItem, 0, len(groups))}
	for _, a := range groups {
		item := AgentListItem{Name: a.Name, Variants: make([]AgentListVariant, 0, len(a.Variants))}
		for _, v := range a.Variants {
			owner, repo, _ := strings.Cut(v.Skill.Repo, "/")
			av := AgentListVariant{
				ID: v.Skill.ID(), Description: v.Skill.Description, BasePrompt: v.Skill.BasePrompt,
				Source:       AgentListSource{Owner: owner, Name: repo, SkillPath: v.Skill.Path},
				Environments: make([]AgentListEnvironment, 0, len(v.Environments)),
				Error:        v.Skill.Error,
			}
			for _, e := range v.Environments {
				av.Environments = append(av.Environments, AgentListEnvironment{UID: e.UID, Name: e.Name})
			}
			if !v.LastRun.IsZero() {
				t := formatTime(v.LastRun)
				av.LastRunTimestamp = &t
			}
			item.Variants = append(item.Variants, av)
		}
		out.Agents = append(out.Agents, item)
	}
	return ok(out)
}
