package mockserver

import (
	"encoding/json"
	"errors"
	"sort"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/mockserver/store"
)

// Environments over HTTP. Environments are fixtures; an environment's use
// (its newest run and whether setup failed) is derived from the caller's
// team's runs when asked (mockserver/store/environments.go).

// CloudEnvironment is an environment as the API shows it.
type CloudEnvironment struct {
	UID                  string               `json:"uid"`
	Config               json.RawMessage      `json:"config"`
	LastUpdated          string               `json:"last_updated"`
	LastTaskRunTimestamp *string              `json:"last_task_run_timestamp"`
	LastTaskCreated      *EnvironmentLastTask `json:"last_task_created,omitempty"`
	SetupFailed          bool                 `json:"setup_failed"`
	Scope                *runScope            `json:"scope,omitempty"`
	Creator              *creatorInfo         `json:"creator,omitempty"`
	// extra are the members beyond the document the fixture carries.
	extra fixtures.Extra
}

// MarshalJSON writes the fields above, then the fixture's extra members
// where their parents are (fixtures/undeclared).
func (e CloudEnvironment) MarshalJSON() ([]byte, error) {
	type plain CloudEnvironment
	return marshalWithExtra(plain(e), e.extra)
}

// EnvironmentLastTask is the newest run of an environment.
type EnvironmentLastTask struct {
	ID        string  `json:"id"`
	Title     string  `json:"title"`
	State     State   `json:"state"`
	CreatedAt string  `json:"created_at"`
	UpdatedAt string  `json:"updated_at"`
	StartedAt *string `json:"started_at"`
}

// ListEnvironmentsResponse answers GET /agent/environments.
type ListEnvironmentsResponse struct {
	Environments []CloudEnvironment `json:"environments"`
}

// listEnvironments is GET /agent/environments.
func (s *Server) listEnvironments(c *call) response {
	sortBy := c.query.Get("sort_by") // the document's enum is checked by validate
	views := c.session.Environments(c.principal)
	out := ListEnvironmentsResponse{Environments: make([]CloudEnvironment, 0, len(views))}
	for _, v := range views {
		out.Environments = append(out.Environments, s.environmentJSON(v))
	}
	envs := out.Environments
	if sortBy == "name" {
		sort.SliceStable(envs, func(i, j int) bool { return envName(envs[i]) < envName(envs[j]) })
	} else {
		// last_updated, the default: most recently changed first.
		sort.SliceStable(envs, func(i, j int) bool { return envs[i].LastUpdated > envs[j].LastUpdated })
	}
	return ok(out)
}

// envName is an environment's config.name, "" when it has none.
func envName(e CloudEnvironment) string {
	var c struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(e.Config, &c) // fixtures are checked to be objects
	return c.Name
}

func (s *Server) environmentJSON(v store.EnvironmentView) CloudEnvironment {
	e := CloudEnvironment{
		UID: v.Env.UID, Config: v.Env.Config, LastUpdated: formatTime(v.LastUpdated),
		SetupFailed: v.SetupFailed,
		Scope:       &runScope{Type: "Team", UID: v.Env.Team},
		extra:       v.Env.Extra,
	}
	p := s.store.Principal(v.Env.Creator)
	e.Creator = &creatorInfo{Type: p.Type, UID: p.UID, DisplayName: p.DisplayName, Email: p.Email, PhotoURL: p.PhotoURL}
	if !v.LastRunAt.IsZero() {
		t := formatTime(v.LastRunAt)
		e.LastTaskRunTimestamp = &t
	}
	if t := v.LastTask; t != nil {
		lt := &EnvironmentLastTask{ID: t.Run.ID, Title: t.Run.Title, State: State(t.Snap.State),
			CreatedAt: formatTime(t.Run.CreatedAt), UpdatedAt: formatTime(t.Snap.UpdatedAt)}
		if !t.Snap.StartedAt.IsZero() {
			st := formatTime(t.Snap.StartedAt)
			lt.StartedAt = &st
		}
		e.LastTaskCreated = lt
	}
	return e
}

// checkEnvironment refuses a run create or a schedule naming, in field, an
// environment the caller's team cannot see: 403, as the service answers.
// An id the fixtures do not have is let through: the mock cannot know
// every environment a client's tests name, and refusing them would make
// every such test carry fixtures.
func (s *Server) checkEnvironment(c *call, field, id string) *apiError {
	if id == "" {
		return nil
	}
	if err := s.store.CheckEnvironment(c.principal, id); errors.Is(err, store.ErrEnvironmentHidden) {
		aerr := problemOf(err)
		aerr.detail = field + ": " + aerr.detail
		return aerr
	}
	return nil
}
