package mockserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/mockserver/store"
)

// The runs resource over HTTP: create, list, get and cancel. What a run is
// and how it changes is mockserver/store's runs.go; this file reads requests
// and turns the store's answers and errors into the API's.

// runRequest is a RunAgentRequest. Its fields are the typed reader's rows
// (requestFields in runs_fields.go, generated): each is read by the reader
// for its type, or as its read tag says ("-": left to the OpenAPI check;
// "enum" and its values), in runs_request.go.
type runRequest struct {
	Prompt         *string      `json:"prompt"`
	Config         *AgentConfig `json:"config"`
	Title          *string      `json:"title"`
	Skill          *string      `json:"skill"`
	Team           *bool        `json:"team"`
	ConversationID *string      `json:"conversation_id"`
	// The OpenAPI check has held attachments and images to their schemas
	// (fields, base64 data, at most five each); resolve counts them together.
	Attachments      []json.RawMessage `json:"attachments" read:"-"`
	Images           []json.RawMessage `json:"images" read:"-"` // older clients' attachments
	AgentIdentityUID *string           `json:"agent_identity_uid"`
	ParentRunID      *string           `json:"parent_run_id"`
	Interactive      *bool             `json:"interactive"`
	// Newer than the published document (oz-agent-sdk 1.4.0-alpha.6); the
	// OpenAPI check has held metadata's keys, values and count, and mode,
	// to their schemas.
	Metadata   map[string]string `json:"metadata"`
	Mode       *string           `json:"mode" read:"enum normal plan orchestrate"`
	OnBehalfOf *string           `json:"on_behalf_of"`
}

// maxAttachments is how many files one create may carry, attachments and
// images together.
const maxAttachments = 5

// RunAgentResponse answers a create.
type RunAgentResponse struct {
	RunID  string `json:"run_id"`
	TaskID string `json:"task_id"`
	State  State  `json:"state"`
}

// createRun is POST /agent/run and POST /agent/runs.
func (s *Server) createRun(c *call) response {
	var req runRequest
	if aerr := c.decodeRequest(&req); aerr != nil {
		return fail(aerr)
	}
	n, aerr := s.resolve(c.principal.Team, req)
	if aerr != nil {
		return fail(aerr)
	}
	if aerr := s.checkEnvironment(c, "config.environment_id", n.Config.EnvironmentID); aerr != nil {
		return fail(aerr)
	}
	creator := c.principal
	if req.OnBehalfOf != nil { // an agent's key creating the run for a member
		member, aerr := s.onBehalfOf(c.principal, *req.OnBehalfOf, n.TeamScope)
		if aerr != nil {
			return fail(aerr)
		}
		creator, n.Executor, n.OnBehalfOf = member, &store.Creator{Principal: c.principal}, *req.OnBehalfOf
	}
	if n.AgentIdentityUID != "" { // the agent identity the run acts as
		p, err := c.session.ActAs(c.principal, n.AgentIdentityUID)
		if err != nil {
			return fail(problemOf(err))
		}
		creator = p
	}
	// The fate: the fixtures' and the mock session's rules, then the
	// request's X-Mock-Fate header.
	n.Fate = c.session.FateFor(n.Prompt)
	if h := c.r.Header.Get(FateHeader); h != "" {
		if err := applyFateHeader(&n.Fate, h); err != nil {
			return fail(errorf(codeInvalidRequest, "header %s: %v", FateHeader, err))
		}
	}
	if err := n.Fate.Check(); err != nil {
		return fail(errorf(codeInvalidRequest, "the run's fate (fate rules and header %s): %v", FateHeader, err))
	}
	v, err := c.session.Create(creator, n)
	if err != nil {
		return fail(problemOf(err))
	}
	return ok(RunAgentResponse{RunID: v.Run.ID, TaskID: v.Run.ID, State: v.Snap.State})
}

// FateHeader lets a client choose, per create request, how the new run ends
// and how long it takes, e.g. "state=FAILED; error_code=insufficient_credits; step=500ms".
const FateHeader = "X-Mock-Fate"

// applyFateHeader sets what an X-Mock-Fate header (headerkv.go) chooses.
func applyFateHeader(f *store.Fate, h string) error {
	pairs, err := parseHeaderPairs(h)
	if err != nil {
		return err
	}
	for _, p := range pairs {
		if err := f.Set(p.key, p.value); err != nil {
			return err
		}
	}
	return nil
}

// resolve fills in what the service would for a run of team's: the agent
// config (resolveConfig) and a title, and checks what the schema alone
// cannot.
func (s *Server) resolve(team string, req runRequest) (store.NewRun, *apiError) {
	var n store.NewRun
	if req.Prompt != nil {
		n.Prompt = *req.Prompt
	}
	cfg := AgentConfig{}
	if req.Config != nil {
		cfg = *req.Config
	}
	field := "config.skill_spec"
	if req.Skill != nil && *req.Skill != "" {
		cfg.SkillSpec, field = *req.Skill, "skill" // skill wins over config.skill_spec
	}
	if strings.TrimSpace(n.Prompt) == "" && cfg.SkillSpec == "" {
		return n, errorf(codeInvalidRequest, "prompt: a prompt or a skill is required")
	}
	// A run from a skill without a title is named after the skill as the
	// request names it.
	skillName := cfg.Name
	if skillName == "" {
		skillName = store.SkillName(cfg.SkillSpec)
	}
	var aerr *apiError
	if n.FromSkill, aerr = s.resolveConfig(team, &cfg, field); aerr != nil {
		return n, aerr
	}
	for name, m := range cfg.MCPServers {
		kinds := 0
		for _, v := range []string{m.WarpID, m.Command, m.URL} {
			if v != "" {
				kinds++
			}
		}
		if kinds != 1 {
			return n, errorf(codeInvalidRequest, "config.mcp_servers.%s: give exactly one of warp_id, command or url", name)
		}
	}
	n.Config = &cfg
	switch {
	case req.Title != nil && strings.TrimSpace(*req.Title) != "":
		n.Title = strings.TrimSpace(*req.Title)
	case strings.TrimSpace(n.Prompt) != "":
		n.Title = store.TitleFrom(n.Prompt)
	default:
		n.Title = "Run skill " + skillName
	}
	// Every caller of the mock is on exactly one team, and the service
	// makes a run of a user on a single team team-owned unless told not to.
	n.TeamScope = req.Team == nil || *req.Team
	if id := req.ConversationID; id != nil {
		if *id == "" {
			return n, errorf(codeInvalidRequest, "conversation_id: must not be empty; leave it out to start a new conversation")
		}
		n.ConversationID = *id
	}
	if k := len(req.Attachments) + len(req.Images); k > maxAttachments {
		return n, errorf(codeInvalidRequest, "attachments: at most %d files per run, attachments and images together; got %d", maxAttachments, k)
	}
	if id := req.AgentIdentityUID; id != nil {
		switch {
		case *id == "":
			return n, errorf(codeInvalidRequest, "agent_identity_uid: must not be empty; leave it out to run as yourself")
		case !n.TeamScope:
			return n, errorf(codeInvalidRequest, "agent_identity_uid: only a team-owned run can act as an agent identity; leave team out or set it to true")
		}
		n.AgentIdentityUID = *id
	}
	if id := req.ParentRunID; id != nil {
		if *id == "" {
			return n, errorf(codeInvalidRequest, "parent_run_id: must not be empty; leave it out for a run without a parent")
		}
		n.ParentRunID = *id
	}
	n.Interactive = req.Interactive != nil && *req.Interactive
	if len(req.Metadata) > 0 {
		n.Metadata = req.Metadata
	}
	if req.Mode != nil && *req.Mode != "normal" {
		n.Mode = *req.Mode
	}
	return n, nil
}

// onBehalfOf checks an on_behalf_of: only an agent's key (a service
// account's, on the mock) may use it, on a team-owned run, naming a person
// of its own team by user id or email. It returns that person, who
// becomes the run's creator; the caller executes the run.
func (s *Server) onBehalfOf(caller *fixtures.Principal, name string, teamScope bool) (*fixtures.Principal, *apiError) {
	switch {
	case name == "":
		return nil, errorf(codeInvalidRequest, "on_behalf_of: must not be empty; leave it out to create the run as yourself")
	case caller.Type == "user":
		return nil, errorf(codeInvalidRequest, "on_behalf_of: only an agent's API key may create runs on a team member's behalf; a person creates them as themselves")
	case !teamScope:
		return nil, errorf(codeInvalidRequest, "on_behalf_of: only a team-owned run can be created on a member's behalf; leave team out or set it to true")
	}
	member, ok := s.store.Member(caller.Team, name)
	if !ok {
		return nil, errorf(codeInvalidRequest, "on_behalf_of: %q is not the user id or email of a person in your team", truncate(name, 80))
	}
	return member, nil
}

// decode reads the call's body, which validate has checked against the
// document, into v: the one decoding of a request body.
func (c *call) decode(v any) *apiError {
	if err := json.Unmarshal(c.body, v); err != nil {
		return decodeError(err)
	}
	return nil
}

// decodeError turns a JSON decoding failure into a problem that names the
// field, for whatever the schema check did not already catch.
func decodeError(err error) *apiError {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return errorf(codeInvalidRequest, "the body is not valid JSON (at byte %d): %v", syn.Offset, err)
	case errors.As(err, &typ) && typ.Field == "":
		return errorf(codeInvalidRequest, "the body must be a JSON object, not %s", typ.Value)
	case errors.As(err, &typ):
		return errorf(codeInvalidRequest, "%s: must be %s, not %s", typ.Field, jsonType(typ.Type.Kind().String()), typ.Value)
	}
	return errorf(codeInvalidRequest, "the body could not be read as JSON: %v", err)
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "map", "struct", "ptr":
		return "an object"
	case "slice":
		return "an array"
	}
	return kind
}

// listRuns is GET /agent/runs.
func (s *Server) listRuns(c *call) response {
	sg := cursorSigner{c.session.CursorKey(), c.r.Header.Get(SessionHeader)}
	q, h, err := parseListQuery(c.query, sg)
	if err != nil {
		return fail(problemOf(err))
	}
	page, err := c.session.List(c.principal, q)
	if err != nil { // a listing's errors name their query parameter
		return fail(problemOf(fmt.Errorf("query parameter %w", err)))
	}
	out := runPage{runs: page.Runs, linkBase: s.sessionLinkBase, cache: s.runs}
	if kept := out.fitPage(s.maxPageBytes); kept < len(page.Runs) {
		// Over the byte budget: the page ends early, and the cursor goes on
		// from the last run sent.
		next := page.After(kept - 1)
		page.Next = &next
	}
	if page.Next != nil {
		out.info = PageInfo{HasNextPage: true, NextCursor: encodeCursor(cursorOf(*page.Next, h, sg), sg)}
	}
	return ok(out)
}

// getRun is GET /agent/runs/{runId}.
func (s *Server) getRun(c *call) response {
	v, err := c.session.Get(c.principal, c.id)
	if err != nil {
		return fail(problemOf(err))
	}
	return ok(cachedRunJSON{runJSON{v, s.sessionLinkBase}, s.runs})
}

// cancelRun is POST /agent/runs/{runId}/cancel; it answers the run's id.
func (s *Server) cancelRun(c *call) response {
	if err := c.session.Cancel(c.principal, c.id); err != nil {
		return fail(problemOf(err))
	}
	return ok(c.id)
}

// isRunID reports whether s is a run id the mock accepts (fixtures.IsPathID).
func isRunID(s string) bool { return fixtures.IsPathID(s) }
