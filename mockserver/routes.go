package mockserver

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/mockserver/store"
	"github.com/agentruns/agentruns/openapi"
)

// area is the part of the mock a route belongs to; it decides which steps
// of the pipeline (pipeline.go) a request goes through.
type area int

const (
	// public needs no credentials and no mock session (the document).
	public area = iota
	// api is the Cloud Agent Runs API: an API key, a mock session, the
	// journal, faults and the OpenAPI request check.
	api
	// control is the mock's own API under /__mock/: the control token, when
	// set, and a mock session.
	control
)

// call is one request on its way through the pipeline, as a handler sees it.
type call struct {
	r         *http.Request
	session   *store.Session
	principal *fixtures.Principal // the caller, in the api area
	// query is the request's query, parsed once by the pipeline
	// (parseQuery); nil when there is none. Handlers read it, never
	// r.URL.Query().
	query url.Values
	body  []byte // a POST or PUT body, read and checked (api area)
	// decoded is body as the OpenAPI check decoded it (openapi.DecodeJSON),
	// nil when the check did not decode it. Handlers read the body through
	// the call's methods (body.go), which decode it only when the check
	// did not.
	decoded     any
	undecodable bool // DecodeJSON refused body (body.go)
	// request is a create's body as the typed reader read it, when it
	// vouched for it (runs_request.go); then the OpenAPI check did not run.
	request *runRequest
	id      string // the {…} segment of the path, unescaped
}

// handler answers a call: every handler returns one response (answers.go).
type handler func(c *call) response

// route is one entry of the routing table.
type route struct {
	method  string // GET routes answer HEAD too
	pattern string // "/agent/runs/{runId}": a {…} segment matches any one segment
	area    area
	handle  handler
	// keyless routes of the API answer without a key as with one (the
	// newest client sends none): the ids they take are unguessable.
	keyless bool
	// target, when set, finds what the path names before the body is
	// checked: a caller who may not see it, or asks for one that is not
	// there, hears 403 or 404 first, whatever its body lacks.
	target func(c *call) *apiError
	// segments is pattern split at "/", and hasID says one is a {…}; both
	// filled in by routingTable.
	segments []string
	hasID    bool
	idName   string // the name in the {…}
}

// routingTable is every route of the mock. A new resource adds its
// entries here and its handlers in a file of its own (<resource>_handlers.go).
func (s *Server) routingTable() []route {
	routes := []route{
		{method: "GET", pattern: "/openapi.yaml", area: public, handle: serveDocument},

		// runs (runs_handlers.go)
		{method: "POST", pattern: "/agent/run", area: api, handle: s.createRun},
		{method: "GET", pattern: "/agent/runs", area: api, handle: s.listRuns},
		{method: "POST", pattern: "/agent/runs", area: api, handle: s.createRun},
		{method: "GET", pattern: "/agent/runs/{runId}", area: api, handle: s.getRun},
		{method: "POST", pattern: "/agent/runs/{runId}/cancel", area: api, handle: s.cancelRun},
		// follow-ups and handoff files (followups_handlers.go); handoff
		// downloads need no credentials: their URLs are signed
		{method: "POST", pattern: "/agent/runs/{runId}/followups", area: api, handle: s.submitFollowup},
		{method: "GET", pattern: "/agent/runs/{runId}/handoff/attachments", area: api, handle: s.listHandoffAttachments},
		{method: "GET", pattern: handoffPrefix + "{attachmentId}", area: public, handle: s.downloadHandoff},

		// schedules (schedules_handlers.go)
		{method: "POST", pattern: "/agent/schedules", area: api, handle: s.createSchedule},
		{method: "GET", pattern: "/agent/schedules", area: api, handle: s.listSchedules},
		{method: "GET", pattern: "/agent/schedules/{scheduleId}", area: api, handle: s.getSchedule},
		{method: "PUT", pattern: "/agent/schedules/{scheduleId}", area: api, handle: s.updateSchedule, target: scheduleTarget},
		{method: "DELETE", pattern: "/agent/schedules/{scheduleId}", area: api, handle: s.deleteSchedule},
		{method: "POST", pattern: "/agent/schedules/{scheduleId}/pause", area: api, handle: s.pauseSchedule},
		{method: "POST", pattern: "/agent/schedules/{scheduleId}/resume", area: api, handle: s.resumeSchedule},

		// skills (skills_handlers.go): the API calls them agents
		{method: "GET", pattern: "/agent", area: api, handle: s.listSkills},
		// events (events_handlers.go)
		{method: "GET", pattern: "/agent/events", area: api, handle: s.pollEvents},
		{method: "POST", pattern: "/agent/events/{runId}", area: api, handle: s.reportEvent},

		// environments (environments_handlers.go) and models (models_handlers.go)
		{method: "GET", pattern: "/agent/environments", area: api, handle: s.listEnvironments},
		{method: "GET", pattern: "/agent/models", area: api, handle: s.listModels},

		// agent identities (identities_handlers.go)
		{method: "GET", pattern: "/agent/identities", area: api, handle: s.listIdentities},
		{method: "POST", pattern: "/agent/identities", area: api, handle: s.createIdentity},
		{method: "GET", pattern: "/agent/identities/{uid}", area: api, handle: s.getIdentity},
		{method: "PUT", pattern: "/agent/identities/{uid}", area: api, handle: s.updateIdentity},
		{method: "DELETE", pattern: "/agent/identities/{uid}", area: api, handle: s.deleteIdentity},

		// artifacts (artifacts_handlers.go); downloads need no credentials:
		// their URLs are signed
		{method: "GET", pattern: "/agent/artifacts/{artifactUid}", area: api, handle: s.getArtifact},
		{method: "GET", pattern: downloadPrefix + "{artifactUid}", area: public, handle: s.downloadArtifact},

		// run-to-run messages (messages_handlers.go)
		{method: "POST", pattern: "/agent/messages", area: api, handle: s.sendMessage},
		{method: "GET", pattern: "/agent/messages/{runId}", area: api, handle: s.listMessages},
		{method: "POST", pattern: "/agent/messages/{messageId}/read", area: api, handle: s.readMessage},
		{method: "POST", pattern: "/agent/messages/{messageId}/delivered", area: api, handle: s.markDelivered},

		// conversations and transcripts (conversations_handlers.go)
		{method: "GET", pattern: "/agent/runs/{runId}/conversation", area: api, handle: s.getRunConversation},
		{method: "GET", pattern: "/agent/conversations/{conversation_id}", area: api, handle: s.getConversation},
		{method: "GET", pattern: "/agent/runs/{runId}/transcript", area: api, handle: s.getRunTranscript},
		{method: "GET", pattern: "/agent/sessions/{sessionUuid}/redirect", area: api, handle: s.getSessionRedirect, keyless: true},
		{method: "GET", pattern: "/agent/conversations/{conversationId}/redirect", area: api, handle: s.getConversationRedirect, keyless: true},
		{method: "GET", pattern: transcriptsPath + "{token}", area: public, handle: s.downloadTranscript},

		// the control API (control.go)
		{method: "GET", pattern: "/__mock/info", area: control, handle: s.info},
		{method: "POST", pattern: "/__mock/reset", area: control, handle: s.reset},
		{method: "DELETE", pattern: "/__mock/session", area: control, handle: s.closeSession},
		{method: "GET", pattern: "/__mock/clock", area: control, handle: s.readClock},
		{method: "PUT", pattern: "/__mock/clock", area: control, handle: s.setClock},
		{method: "POST", pattern: "/__mock/clock/advance", area: control, handle: s.advanceClock},
		{method: "POST", pattern: "/__mock/runs/{runId}/state", area: control, handle: s.forceState},
		{method: "GET", pattern: "/__mock/faults", area: control, handle: listFaults},
		{method: "POST", pattern: "/__mock/faults", area: control, handle: addFault},
		{method: "DELETE", pattern: "/__mock/faults", area: control, handle: clearFaults},
		{method: "DELETE", pattern: "/__mock/faults/{id}", area: control, handle: removeFault},
		{method: "GET", pattern: "/__mock/fates", area: control, handle: listFates},
		{method: "POST", pattern: "/__mock/fates", area: control, handle: addFate},
		{method: "DELETE", pattern: "/__mock/fates", area: control, handle: clearFates},
		{method: "GET", pattern: "/__mock/requests", area: control, handle: listRequests},
		{method: "DELETE", pattern: "/__mock/requests", area: control, handle: clearRequests},
		{method: "POST", pattern: "/__mock/identities/{uid}/keys", area: control, handle: issueIdentityKey},
		{method: "GET", pattern: "/__mock/sessions", area: control, handle: s.listSessions},
		{method: "GET", pattern: "/__mock/schedules/{scheduleId}/runs", area: control, handle: s.scheduleRuns},
		{method: "POST", pattern: "/__mock/schedules/{scheduleId}/fire", area: control, handle: s.fireSchedule},
	}
	for i := range routes {
		routes[i].segments = strings.Split(strings.TrimPrefix(routes[i].pattern, "/"), "/")
		for _, seg := range routes[i].segments {
			if strings.HasPrefix(seg, "{") {
				routes[i].hasID, routes[i].idName = true, strings.Trim(seg, "{}")
			}
		}
	}
	return routes
}

// match reports whether path fits the route's pattern, and the segment a
// {…} matched, still escaped.
func (rt *route) match(path string) (param string, ok bool) {
	rest := strings.TrimPrefix(path, "/")
	for i, seg := range rt.segments {
		part, tail, more := strings.Cut(rest, "/")
		if more != (i < len(rt.segments)-1) {
			return "", false
		}
		if seg[0] == '{' {
			param = part // an empty id is the handler's 400, not a 404
		} else if part != seg {
			return "", false
		}
		rest = tail
	}
	return param, true
}

// lookup finds the route for a request. When the path is known but not the
// method, rt is nil and allow lists the methods the path has.
func (s *Server) lookup(method, path string) (rt *route, param, allow string) {
	if method == http.MethodHead {
		method = http.MethodGet
	}
	var allowed []string
	for i := range s.routes {
		r := &s.routes[i]
		p, ok := r.match(path)
		if !ok {
			continue
		}
		if r.method == method {
			return r, p, ""
		}
		allowed = append(allowed, r.method)
		if r.method == http.MethodGet {
			allowed = append(allowed, http.MethodHead)
		}
	}
	return nil, "", strings.Join(allowed, ", ")
}

// publicPath reports whether path belongs to a route that needs no
// credentials (whatever its method), or lies under the signed links'
// root, where a path that is no link is a 404 to anyone.
func (s *Server) publicPath(path string) bool {
	if strings.HasPrefix(path, downloadsRoot) {
		return true
	}
	for i := range s.routes {
		if _, ok := s.routes[i].match(path); ok && s.routes[i].area == public {
			return true
		}
	}
	return false
}

func serveDocument(*call) response {
	return rawBody("application/yaml", openapi.Document)
}
