package mockserver

import (
	"net/http"
	"strings"

	"github.com/agentruns/agentruns/internal/store"
)

// Agent identities over HTTP: list, create, rename and delete a team's
// agents (internal/store/identities.go), a run that acts as one, and the
// control API's way to get an agent an API key. The published document
// returns no key on create (keys are issued elsewhere in the service), so
// the mock issues them from POST /__mock/identities/{uid}/keys.

// AgentResponse is an agent as the API shows it.
type AgentResponse struct {
	UID       string `json:"uid"`
	Name      string `json:"name"`
	Available bool   `json:"available"`
	CreatedAt string `json:"created_at"`
}

// ListAgentIdentitiesResponse answers GET /agent/identities.
type ListAgentIdentitiesResponse struct {
	Agents []AgentResponse `json:"agents"`
}

func identityJSON(v store.IdentityView) AgentResponse {
	return AgentResponse{UID: v.UID, Name: v.Name, Available: v.Available, CreatedAt: formatTime(v.CreatedAt)}
}

// listAgentIdentities is GET /agent/identities.
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

// agentName reads the name of a create or update body; required says
// whether it must be there.
func identityName(c *call, required bool) (name string, given bool, aerr *apiError) {
	var req struct {
		Name *string `json:"name"`
	}
	if aerr := c.decode(&req); aerr != nil {
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

// createAgent is POST /agent/identities; it answers 201.
func (s *Server) createIdentity(c *call) response {
	name, _, aerr := identityName(c, true)
	if aerr != nil {
		return fail(aerr)
	}
	v, err := c.session.CreateIdentity(c.principal, name)
	if err != nil {
		return fail(problemOf(err))
	}
	return response{status: http.StatusCreated, body: identityJSON(v)}
}

// updateAgent is PUT /agent/identities/{uid}.
func (s *Server) updateIdentity(c *call) response {
	name, given, aerr := identityName(c, false)
	if aerr != nil {
		return fail(aerr)
	}
	var v store.IdentityView
	var err error
	if given {
		v, err = c.session.RenameIdentity(c.principal, c.id, name)
	} else {
		v, err = c.session.Identity(c.principal, c.id)
	}
	if err != nil {
		return fail(problemOf(err))
	}
	return ok(identityJSON(v))
}

// deleteAgent is DELETE /agent/identities/{uid}; it answers 204.
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

// issueAgentKey is POST /__mock/identities/{uid}/keys: a new API key that
// acts as the agent, until the agent is deleted.
func issueIdentityKey(c *call) response {
	key, err := c.session.IssueIdentityKey(c.id)
	if err != nil {
		return fail(problemOf(err))
	}
	return response{status: http.StatusCreated, body: AgentKey{APIKey: key}}
}
