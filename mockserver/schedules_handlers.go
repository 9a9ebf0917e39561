package mockserver

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/mockserver/store"
)

// The schedules resource over HTTP: create, list, get, replace, delete,
// pause and resume. What a schedule is, and how its ticks become runs, is
// mockserver/store's schedules.go.

// scheduleRequest is a CreateScheduledAgentRequest or an
// UpdateScheduledAgentRequest (which has no team).
type scheduleRequest struct {
	Name         *string      `json:"name"`
	CronSchedule *string      `json:"cron_schedule"`
	Prompt       *string      `json:"prompt"`
	Enabled      *bool        `json:"enabled"`
	AgentConfig  *AgentConfig `json:"agent_config"`
	Team         *bool        `json:"team"`
	// Newer than the published document (oz-agent-sdk 1.4.0-alpha.6).
	AgentUID *string           `json:"agent_uid"`
	Metadata map[string]string `json:"metadata"`
	Mode     *string           `json:"mode"`
}

// ScheduledAgentItem is the JSON shape of a schedule, as the API returns it.
type ScheduledAgentItem struct {
	ID             string                  `json:"id"`
	Name           string                  `json:"name"`
	CronSchedule   string                  `json:"cron_schedule"`
	Enabled        bool                    `json:"enabled"`
	Prompt         string                  `json:"prompt"`
	LastSpawnError *string                 `json:"last_spawn_error"`
	AgentConfig    *AgentConfig            `json:"agent_config,omitempty"`
	Environment    *CloudEnvironmentConfig `json:"environment,omitempty"`
	CreatedAt      string                  `json:"created_at"`
	UpdatedAt      string                  `json:"updated_at"`
	CreatedBy      *creatorInfo            `json:"created_by,omitempty"`
	UpdatedBy      *creatorInfo            `json:"updated_by,omitempty"`
	History        ScheduleHistory         `json:"history"`
	Scope          *runScope               `json:"scope,omitempty"`
	// Newer than the published document (oz-agent-sdk 1.4.0-alpha.6).
	AgentUID string            `json:"agent_uid,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
	Mode     string            `json:"mode,omitempty"`
	// extra are the members beyond the document a fixture schedule carries.
	extra fixtures.Extra
}

// MarshalJSON writes the fields above, then the fixture's extra members.
func (it ScheduledAgentItem) MarshalJSON() ([]byte, error) {
	type plain ScheduledAgentItem
	return marshalWithExtra(plain(it), it.extra)
}

// ScheduleHistory says when a schedule last started a run and when it next will.
type ScheduleHistory struct {
	LastRan *string `json:"last_ran"`
	NextRun *string `json:"next_run"`
}

// CloudEnvironmentConfig is an environment as a schedule shows it.
type CloudEnvironmentConfig struct {
	Name        string       `json:"name,omitempty"`
	Description *string      `json:"description,omitempty"`
	DockerImage string       `json:"docker_image,omitempty"`
	GitHubRepos []githubRepo `json:"github_repos,omitempty"`
}

type githubRepo struct {
	Owner string `json:"owner"`
	Repo  string `json:"repo"`
}

// ListScheduledAgentsResponse answers GET /agent/schedules.
type ListScheduledAgentsResponse struct {
	Schedules []ScheduledAgentItem `json:"schedules"`
}

// DeleteScheduledAgentResponse answers a delete.
type DeleteScheduledAgentResponse struct {
	Success bool `json:"success"`
}

func (s *Server) scheduleItem(sc store.ScheduleRecord) ScheduledAgentItem {
	it := ScheduledAgentItem{
		ID: sc.ID, Name: sc.Name, CronSchedule: sc.Cron, Enabled: sc.Enabled, Prompt: sc.Prompt,
		AgentConfig: sc.Config,
		CreatedAt:   formatTime(sc.CreatedAt), UpdatedAt: formatTime(sc.UpdatedAt),
		CreatedBy: creatorOf(sc.Owner.Principal), UpdatedBy: creatorOf(sc.UpdatedBy.Principal),
		AgentUID: sc.AgentUID, Metadata: sc.Metadata, Mode: sc.Mode, extra: sc.Extra,
	}
	if sc.LastSpawnError != "" {
		it.LastSpawnError = &sc.LastSpawnError
	}
	if !sc.LastRan.IsZero() {
		t := formatTime(sc.LastRan)
		it.History.LastRan = &t
	}
	if sc.Enabled && !sc.NextTick.IsZero() {
		t := formatTime(sc.NextTick)
		it.History.NextRun = &t
	}
	if sc.TeamScope {
		it.Scope = &runScope{Type: "Team", UID: sc.Team}
	} else {
		it.Scope = &runScope{Type: "User", UID: sc.Owner.UID}
	}
	if sc.Config != nil && sc.Config.EnvironmentID != "" {
		if e, ok := s.store.Environment(sc.Team, sc.Config.EnvironmentID); ok {
			it.Environment = environmentConfig(e)
		}
	}
	return it
}

func environmentConfig(e fixtures.Environment) *CloudEnvironmentConfig {
	c := &CloudEnvironmentConfig{Name: e.Name, DockerImage: e.DockerImage}
	if e.Description != "" {
		c.Description = &e.Description
	}
	for _, r := range e.Repos {
		owner, name, _ := strings.Cut(r, "/")
		c.GitHubRepos = append(c.GitHubRepos, githubRepo{Owner: owner, Repo: name})
	}
	return c
}

func creatorOf(p *fixtures.Principal) *creatorInfo {
	if p == nil {
		return nil
	}
	return &creatorInfo{Type: p.Type, UID: p.UID, DisplayName: p.DisplayName, Email: p.Email, PhotoURL: p.PhotoURL}
}

// scheduleSpec checks a create or update body beyond its schema and
// resolves it: a name, a cron expression that parses, a prompt or a skill.
func (s *Server) scheduleSpec(c *call, update bool) (spec store.ScheduleSpec, aerr *apiError) {
	var req scheduleRequest
	if aerr := c.fill(&req); aerr != nil {
		return spec, aerr
	}
	switch {
	case req.Name == nil || strings.TrimSpace(*req.Name) == "":
		return spec, errorf(codeInvalidRequest, "name: a schedule needs a name")
	case req.CronSchedule == nil:
		return spec, errorf(codeInvalidRequest, "cron_schedule: a schedule needs a cron expression")
	case update && req.Enabled == nil:
		return spec, errorf(codeInvalidRequest, "enabled: a replaced schedule says whether it is enabled")
	}
	cron, err := store.ParseCron(*req.CronSchedule)
	if err != nil {
		return spec, problemOf(err)
	}
	spec.Name, spec.Cron, spec.Enabled = strings.TrimSpace(*req.Name), cron, true
	if req.Enabled != nil {
		spec.Enabled = *req.Enabled
	}
	if req.Prompt != nil {
		spec.Prompt = *req.Prompt
	}
	cfg := AgentConfig{}
	if req.AgentConfig != nil {
		cfg = *req.AgentConfig
	}
	if strings.TrimSpace(spec.Prompt) == "" && cfg.SkillSpec == "" {
		return spec, errorf(codeInvalidRequest, "prompt: a prompt or agent_config.skill_spec is required")
	}
	if spec.FromSkill, aerr = s.resolveConfig(c.principal.Team, &cfg, "agent_config.skill_spec"); aerr != nil {
		return spec, aerr
	}
	if aerr := s.checkEnvironment(c, "agent_config.environment_id", cfg.EnvironmentID); aerr != nil {
		return spec, aerr
	}
	spec.Config = &cfg
	// A caller on exactly one team (every principal of the mock) gets a
	// team-owned schedule unless it asks for its own.
	spec.TeamScope = true
	if req.Team != nil {
		spec.TeamScope = *req.Team
	}
	if len(req.Metadata) > 0 {
		spec.Metadata = req.Metadata
	}
	if req.Mode != nil && *req.Mode != "normal" {
		spec.Mode = *req.Mode
	}
	if req.AgentUID != nil && *req.AgentUID != "" {
		// The schedule's runs act as this agent: it must be one of the
		// team's, as a run's agent_identity_uid must.
		if _, err := c.session.ActAs(c.principal, *req.AgentUID); err != nil {
			return spec, problemOf(fmt.Errorf("agent_uid: %w", err))
		}
		spec.AgentUID = *req.AgentUID
	}
	return spec, nil
}

// createSchedule is POST /agent/schedules; it answers 201.
func (s *Server) createSchedule(c *call) response {
	spec, aerr := s.scheduleSpec(c, false)
	if aerr != nil {
		return fail(aerr)
	}
	sc, err := c.session.CreateSchedule(c.principal, spec)
	if err != nil {
		return fail(problemOf(err))
	}
	return response{status: http.StatusCreated, body: s.scheduleItem(sc)}
}

// listSchedules is GET /agent/schedules, by name.
func (s *Server) listSchedules(c *call) response {
	list := c.session.ListSchedules(c.principal)
	out := ListScheduledAgentsResponse{Schedules: make([]ScheduledAgentItem, 0, len(list))}
	for _, sc := range list {
		out.Schedules = append(out.Schedules, s.scheduleItem(sc))
	}
	return ok(out)
}

// getSchedule is GET /agent/schedules/{scheduleId}.
func (s *Server) getSchedule(c *call) response {
	sc, err := c.session.GetSchedule(c.principal, c.id)
	if err != nil {
		return fail(problemOf(err))
	}
	return ok(s.scheduleItem(sc))
}

// scheduleTarget finds the schedule a PUT replaces before its body is
// checked: 404 or 403 before any complaint about the body, as a follow-up
// to a run that is not there or not the caller's.
func scheduleTarget(c *call) *apiError {
	if _, err := c.session.GetSchedule(c.principal, c.id); err != nil {
		return problemOf(err)
	}
	return nil
}

// updateSchedule is PUT /agent/schedules/{scheduleId}.
func (s *Server) updateSchedule(c *call) response {
	spec, aerr := s.scheduleSpec(c, true)
	if aerr != nil {
		return fail(aerr)
	}
	sc, err := c.session.UpdateSchedule(c.principal, c.id, spec)
	if err != nil {
		return fail(problemOf(err))
	}
	return ok(s.scheduleItem(sc))
}

// deleteSchedule is DELETE /agent/schedules/{scheduleId}.
func (s *Server) deleteSchedule(c *call) response {
	if err := c.session.DeleteSchedule(c.principal, c.id); err != nil {
		return fail(problemOf(err))
	}
	return ok(DeleteScheduledAgentResponse{Success: true})
}

// pauseSchedule is POST /agent/schedules/{scheduleId}/pause.
func (s *Server) pauseSchedule(c *call) response { return s.setEnabled(c, false) }

// resumeSchedule is POST /agent/schedules/{scheduleId}/resume.
func (s *Server) resumeSchedule(c *call) response { return s.setEnabled(c, true) }

func (s *Server) setEnabled(c *call, enabled bool) response {
	sc, err := c.session.SetScheduleEnabled(c.principal, c.id, enabled)
	if err != nil {
		return fail(problemOf(err))
	}
	return ok(s.scheduleItem(sc))
}
