package refserver

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// Agent identities, as the published document describes them: a team's
// agents are listed, created (201; a 403 beyond the plan's number),
// read, renamed and deleted (204). Each team starts with one default
// identity, which stays.

// identityPlan is how many identities the server's plan allows a team.
const identityPlan = 5

type identity struct {
	uid, team, name  string
	created, updated time.Time
	isDefault        bool
}

func (id *identity) item() map[string]any {
	return map[string]any{
		"uid": id.uid, "name": id.name, "available": true, "created_at": stamp(id.created), "updated_at": stamp(id.updated),
		"default_runner_uid": "", "secrets": []any{}, "skills": []any{},
		"memory": map[string]any{"attached_stores": []any{}, "auto_memory": map[string]any{"enabled": false}},
	}
}

// teamIdentities is the team's identities, the default one first, made on
// first use. Called with s.mu held.
func (s *Server) teamIdentities(team string) []*identity {
	if _, ok := s.identities[team]; !ok {
		at := time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)
		s.identities[team] = []*identity{{uid: "ag-default-" + team, team: team, name: "Default agent", created: at, updated: at, isDefault: true}}
	}
	return s.identities[team]
}

func (s *Server) serveIdentities(w http.ResponseWriter, r *http.Request, c caller, rest []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := s.teamIdentities(c.team)
	if len(rest) == 0 {
		switch r.Method {
		case http.MethodGet:
			items := make([]map[string]any, 0, len(ids))
			for _, id := range ids {
				items = append(items, s.showIdentity(id))
			}
			writeJSON(w, http.StatusOK, map[string]any{"agents": items})
		case http.MethodPost:
			s.createIdentity(w, r, c, ids)
		default:
			methodNotAllowed(w, r)
		}
		return
	}
	if len(rest) != 1 {
		notFound(w, r, "no such operation")
		return
	}
	i := -1
	for j, id := range ids {
		if id.uid == rest[0] {
			i = j
		}
	}
	if i < 0 {
		notFound(w, r, "no identity of the team has the uid "+rest[0])
		return
	}
	switch id := ids[i]; r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, s.showIdentity(id))
	case http.MethodPut:
		var req struct {
			Name *string `json:"name"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Name != nil && strings.TrimSpace(*req.Name) == "" {
			writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request", "a new name must not be empty")
			return
		}
		if req.Name != nil {
			id.name, id.updated = *req.Name, s.now()
		}
		writeJSON(w, http.StatusOK, s.showIdentity(id))
	case http.MethodDelete:
		if id.isDefault {
			writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request", "the team's default identity stays")
			return
		}
		s.identities[c.team] = append(ids[:i:i], ids[i+1:]...)
		w.WriteHeader(http.StatusNoContent)
	default:
		methodNotAllowed(w, r)
	}
}

// createIdentity adds an identity to the team, within the plan. Called
// with s.mu held.
func (s *Server) createIdentity(w http.ResponseWriter, r *http.Request, c caller, ids []*identity) {
	var req struct {
		Name string `json:"name"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || strings.TrimSpace(req.Name) == "" {
		writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request", "an identity needs a name")
		return
	}
	if len(ids) >= identityPlan {
		writeProblem(w, r, http.StatusForbidden, "not_authorized", "Not authorized", "the team's plan allows no more identities")
		return
	}
	now := s.now()
	id := &identity{uid: newID(), team: c.team, name: req.Name, created: now, updated: now}
	s.identities[c.team] = append(ids, id)
	writeJSON(w, http.StatusCreated, s.showIdentity(id))
}

// showIdentity is an identity as the API shows it: the four published
// fields alone when the server serves the published document alone.
func (s *Server) showIdentity(id *identity) map[string]any {
	if s.opts.Published {
		return publishedIdentity(id.item())
	}
	return id.item()
}
