package refserver

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedules, as the published document describes them: created, listed,
// read, replaced, paused, resumed and deleted under /agent/schedules, each
// of one team. The server keeps them but never fires them: the document
// says what a schedule shows, and the suite watches a schedule fire only
// through the mock's clock.

type schedule struct {
	id, team    string
	name, cron  string
	prompt      string
	enabled     bool
	agentConfig map[string]any
	created     time.Time
	updated     time.Time
	createdBy   caller
	updatedBy   caller
}

func (sc *schedule) item() map[string]any {
	doc := map[string]any{
		"id": sc.id, "name": sc.name, "cron_schedule": sc.cron, "enabled": sc.enabled, "prompt": sc.prompt,
		"created_at": stamp(sc.created), "updated_at": stamp(sc.updated),
		"created_by": creatorInfo(sc.createdBy), "updated_by": creatorInfo(sc.updatedBy),
		"scope": map[string]any{"type": "Team", "uid": sc.team}, "last_spawn_error": nil,
	}
	if sc.agentConfig != nil {
		doc["agent_config"] = sc.agentConfig
	}
	history := map[string]any{"last_ran": nil, "next_run": nil}
	if spec, err := cron.ParseStandard(sc.cron); err == nil && sc.enabled {
		history["next_run"] = stamp(spec.Next(time.Now().UTC()))
	}
	doc["history"] = history
	return doc
}

func creatorInfo(c caller) map[string]any {
	return map[string]any{"type": "user", "uid": c.uid, "display_name": c.name}
}

// scheduleRequest is a create or replace body, checked.
type scheduleRequest struct {
	Name        *string        `json:"name"`
	Cron        *string        `json:"cron_schedule"`
	Prompt      string         `json:"prompt"`
	Enabled     *bool          `json:"enabled"`
	AgentConfig map[string]any `json:"agent_config"`
}

// readSchedule decodes and checks a body; replace says whether enabled is
// required (the replace operation's body lists it as required).
func readSchedule(w http.ResponseWriter, r *http.Request, replace bool) (scheduleRequest, bool) {
	var req scheduleRequest
	bad := func(detail string) (scheduleRequest, bool) {
		writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request", detail)
		return req, false
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		return bad("the body is not a JSON object: " + err.Error())
	}
	switch {
	case req.Name == nil || strings.TrimSpace(*req.Name) == "":
		return bad("a schedule needs a name")
	case req.Cron == nil:
		return bad("a schedule needs a cron expression")
	case replace && req.Enabled == nil:
		return bad("a replacement says whether the schedule is enabled")
	case req.Prompt == "" && str(req.AgentConfig["skill_spec"]) == "":
		return bad("a schedule needs a prompt or a skill")
	}
	if len(strings.Fields(*req.Cron)) != 5 {
		return bad("the cron expression must have five fields")
	}
	if _, err := cron.ParseStandard(*req.Cron); err != nil {
		return bad("the cron expression does not parse: " + err.Error())
	}
	return req, true
}

func (s *Server) serveSchedules(w http.ResponseWriter, r *http.Request, c caller, rest []string) {
	switch {
	case len(rest) == 0 && r.Method == http.MethodPost:
		s.createSchedule(w, r, c)
	case len(rest) == 0 && r.Method == http.MethodGet:
		s.listSchedules(w, c)
	case len(rest) == 0:
		methodNotAllowed(w, r)
	case len(rest) == 1 && (r.Method == http.MethodGet || r.Method == http.MethodPut || r.Method == http.MethodDelete):
		s.oneSchedule(w, r, c, rest[0])
	case len(rest) == 2 && (rest[1] == "pause" || rest[1] == "resume"):
		if r.Method != http.MethodPost {
			methodNotAllowed(w, r)
			return
		}
		s.setEnabled(w, r, c, rest[0], rest[1] == "resume")
	case len(rest) == 1:
		methodNotAllowed(w, r)
	default:
		notFound(w, r, "no such operation")
	}
}

func (s *Server) createSchedule(w http.ResponseWriter, r *http.Request, c caller) {
	req, ok := readSchedule(w, r, false)
	if !ok {
		return
	}
	now := s.now()
	sc := &schedule{
		id: newID(), team: c.team, name: *req.Name, cron: *req.Cron, prompt: req.Prompt, enabled: req.Enabled == nil || *req.Enabled,
		agentConfig: req.AgentConfig, created: now, updated: now, createdBy: c, updatedBy: c,
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.schedules[sc.id] = sc
	writeJSON(w, http.StatusCreated, sc.item())
}

// listSchedules lists the team's schedules in alphabetical order of name,
// as people read it.
func (s *Server) listSchedules(w http.ResponseWriter, c caller) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var mine []*schedule
	for _, sc := range s.schedules {
		if sc.team == c.team {
			mine = append(mine, sc)
		}
	}
	slices.SortFunc(mine, func(a, b *schedule) int {
		if n := strings.Compare(strings.ToLower(a.name), strings.ToLower(b.name)); n != 0 {
			return n
		}
		return strings.Compare(a.id, b.id)
	})
	items := make([]map[string]any, 0, len(mine))
	for _, sc := range mine {
		items = append(items, sc.item())
	}
	writeJSON(w, http.StatusOK, map[string]any{"schedules": items})
}

// visibleSchedule finds a schedule of the caller's team, or answers why
// not. Called with s.mu held.
func (s *Server) visibleSchedule(w http.ResponseWriter, r *http.Request, c caller, id string) (*schedule, bool) {
	sc, ok := s.schedules[id]
	switch {
	case !ok, sc.team != c.team && s.opts.ForeignNotFound:
		notFound(w, r, "no schedule has the id "+id)
	case sc.team != c.team:
		writeProblem(w, r, http.StatusForbidden, "not_authorized", "Not authorized", "the schedule belongs to another team")
	default:
		return sc, true
	}
	return nil, false
}

func (s *Server) oneSchedule(w http.ResponseWriter, r *http.Request, c caller, id string) {
	var req scheduleRequest
	if r.Method == http.MethodPut {
		var ok bool
		if req, ok = readSchedule(w, r, true); !ok {
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, ok := s.visibleSchedule(w, r, c, id)
	if !ok {
		return
	}
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, sc.item())
	case http.MethodDelete:
		delete(s.schedules, id)
		writeJSON(w, http.StatusOK, map[string]any{"success": true})
	default:
		sc.name, sc.cron, sc.prompt, sc.enabled, sc.agentConfig = *req.Name, *req.Cron, req.Prompt, *req.Enabled, req.AgentConfig
		sc.updated, sc.updatedBy = s.now(), c
		writeJSON(w, http.StatusOK, sc.item())
	}
}

func (s *Server) setEnabled(w http.ResponseWriter, r *http.Request, c caller, id string, enabled bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, ok := s.visibleSchedule(w, r, c, id)
	if !ok {
		return
	}
	if sc.enabled != enabled {
		sc.enabled, sc.updated, sc.updatedBy = enabled, s.now(), c
	}
	writeJSON(w, http.StatusOK, sc.item())
}
