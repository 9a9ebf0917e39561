package refserver

import (
	"net/http"
	"net/url"
	"strings"
)

// With Options.Published the server serves the published document (May
// 2026) alone, as a server built before the newest official client would:
// none of the newest client's operations, fields or values. A suite run
// with `not @newest-client` must pass it all the same.

// Enum values the published document has, where the newest client added
// more (list.go and create.go hold the full sets).
var (
	publishedSources       = set("LINEAR", "API", "SLACK", "LOCAL", "SCHEDULED_AGENT", "WEB_APP", "GITHUB_ACTION", "CLOUD_MODE", "CLI")
	publishedArtifactTypes = set("PLAN", "PULL_REQUEST", "SCREENSHOT", "FILE")
	publishedHarnesses     = set("oz", "claude")
)

// publishedGate answers, in published mode, the requests that only the
// newest client's surface serves, and tells whether it did. The
// operations the published document lacks are not found (an identity's
// path has PUT and DELETE there, not GET); the session redirect asks for a
// key, as the published document says.
func (s *Server) publishedGate(w http.ResponseWriter, r *http.Request) bool {
	rest, ok := strings.CutPrefix(r.URL.Path, s.opts.Prefix+"/agent/")
	if !s.opts.Published || !ok {
		return false
	}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	_, authenticated := authenticate(r.Header.Get("Authorization"))
	switch {
	case len(parts) == 3 && parts[0] == "conversations" && parts[2] == "redirect",
		len(parts) == 3 && parts[0] == "runs" && parts[2] == "followups",
		len(parts) == 4 && parts[0] == "runs" && parts[2] == "handoff" && parts[3] == "attachments",
		len(parts) == 2 && parts[0] == "identities" && r.Method == http.MethodGet,
		len(parts) == 3 && parts[0] == "sessions" && parts[2] == "redirect" && r.Method == http.MethodGet:
		// The key first, as everywhere.
		if !authenticated {
			writeProblem(w, r, http.StatusUnauthorized, "authentication_required", "Authentication required", "send Authorization: Bearer <API key>")
			return true
		}
		switch parts[0] {
		case "sessions":
			s.sessionRedirect(w, parts[1])
		case "identities":
			methodNotAllowed(w, r)
		default:
			notFound(w, r, "no such operation")
		}
	default:
		return false
	}
	return true
}

// publishedQuery takes the newest client's filters out of a listing's
// query (a server that does not know a parameter ignores it) and refuses
// enum values the published document does not have.
func publishedQuery(v url.Values) (url.Values, string) {
	out := url.Values{}
	for k, vs := range v {
		switch {
		case k == "executor", k == "factory_uid", k == "automation_id", strings.HasPrefix(k, "metadata["):
		default:
			out[k] = vs
		}
	}
	if raw := out.Get("source"); raw != "" && !publishedSources[raw] {
		return nil, "source " + raw + " is not one of the published document's run sources"
	}
	if raw := out.Get("artifact_type"); raw != "" && !publishedArtifactTypes[raw] {
		return nil, "artifact_type " + raw + " is not one of PLAN, PULL_REQUEST, SCREENSHOT, FILE"
	}
	return out, ""
}

// publishedBody takes the newest client's fields out of a create body
// (ignored, as unknown fields are) and refuses its harness types.
func publishedBody(b map[string]any) string {
	for _, k := range []string{"metadata", "mode", "on_behalf_of"} {
		delete(b, k)
	}
	config, _ := b["config"].(map[string]any)
	harness, _ := config["harness"].(map[string]any)
	if t, isString := harness["type"].(string); isString && !publishedHarnesses[t] {
		return "config.harness.type must be one of oz, claude"
	}
	return ""
}

// publishedRun takes the newest client's fields out of a run as shown.
func publishedRun(item map[string]any) map[string]any {
	delete(item, "executor")
	delete(item, "metadata")
	delete(item, "run_time")
	delete(item, "is_run_type_cancellable")
	return item
}

// publishedIdentity keeps the four fields the published document gives an
// identity.
func publishedIdentity(item map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"uid", "name", "available", "created_at"} {
		out[k] = item[k]
	}
	return out
}
