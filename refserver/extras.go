package refserver

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strings"
)

// With Options.Extras the server answers as a service that has moved ahead
// of its document would: the drift a validating proxy should name. Each
// extra is one kind of thing the document does not say:
//
//   - a member it does not declare: extraMember in every object of every
//     JSON answer (problems, pages, runs and everything inside them), but
//     not in the maps keyed by the caller's or the service's names
//     (nameKeyed), where a member is a name, not a field;
//   - a value outside a declared enum: every run shows its source as
//     extraSource;
//   - a status an operation does not document: GET /agent/models answers
//     203 to a request with `Prefer: status=203`;
//   - an operation the document lacks: GET /agent/runs/{runId}/usage.
//
// Nothing else changes, so that whatever a proxy reports beyond these four
// is its own mistake.

// The undocumented member every object gets, and its value.
const (
	extraMember = "rollout_ring"
	extraValue  = "canary"
	// extraSource is outside RunSourceType.
	extraSource = "SLACK_WORKFLOW"
	// extraStatus is the status GET /agent/models answers when asked for
	// it; the document has 200 alone among the 2xx.
	extraStatus = http.StatusNonAuthoritativeInfo
	// usageCredits is what every run has used, by GET .../usage.
	usageCredits = 12
)

// nameKeyed are the members whose objects are maps keyed by names (run
// metadata, tool servers, environment variables, headers, usage per kind
// and per model): the document declares any member there, so one more
// would not be drift but a name nobody gave.
var nameKeyed = set("metadata", "mcp_servers", "env", "headers", "usage_by_category",
	"direct_api_inference_usage", "byok_inference_usage", "custom_endpoint_inference_usage")

// serveWithExtras serves the undocumented operation itself and everything
// else as without Extras, then rewrites the answer.
func (s *Server) serveWithExtras(w http.ResponseWriter, r *http.Request) {
	held := &presenter{header: http.Header{}}
	if id, ok := s.usagePath(r); ok {
		s.usage(held, r, id)
	} else {
		s.serveAsOptions(held, r)
	}
	body := held.body.Bytes()
	if isJSON(held.header.Get("Content-Type")) {
		if rewritten, ok := withExtras(body); ok {
			body = rewritten
		}
	}
	status := held.status
	if status == 0 {
		status = http.StatusOK
	}
	if status == http.StatusOK && s.asksForExtraStatus(r) {
		status = extraStatus
	}
	for k, vs := range held.header {
		w.Header()[k] = vs
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// usagePath tells whether the request is for the operation the document
// lacks, GET /agent/runs/{runId}/usage, and of which run.
func (s *Server) usagePath(r *http.Request) (string, bool) {
	rest, ok := strings.CutPrefix(r.URL.Path, s.opts.Prefix+"/agent/runs/")
	if !ok || r.Method != http.MethodGet {
		return "", false
	}
	id, tail, ok := strings.Cut(strings.Trim(rest, "/"), "/")
	return id, ok && id != "" && tail == "usage"
}

// usage answers what a run has used, for a run the caller may see.
func (s *Server) usage(w http.ResponseWriter, r *http.Request, id string) {
	c, ok := authenticate(r.Header.Get("Authorization"))
	if !ok {
		writeProblem(w, r, http.StatusUnauthorized, "authentication_required", "Authentication required", "send Authorization: Bearer <API key>")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	run, ok := s.visible(w, r, c, id)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"run_id": run.id, "credits_used": usageCredits})
}

// asksForExtraStatus is a GET /agent/models that prefers the undocumented
// status (RFC 7240's Prefer header, as some servers honour to show a
// status on demand).
func (s *Server) asksForExtraStatus(r *http.Request) bool {
	if r.Method != http.MethodGet || strings.TrimRight(r.URL.Path, "/") != s.opts.Prefix+"/agent/models" {
		return false
	}
	for _, header := range r.Header.Values("Prefer") {
		for _, pref := range strings.Split(header, ",") {
			if strings.EqualFold(strings.ReplaceAll(strings.TrimSpace(pref), " ", ""), "status=203") {
				return true
			}
		}
	}
	return false
}

func isJSON(contentType string) bool {
	media, _, err := mime.ParseMediaType(contentType)
	return err == nil && (media == "application/json" || strings.HasSuffix(media, "+json"))
}

// withExtras adds the undocumented member to every object of a JSON body
// and the value outside the enum to every run; false when the body is not
// JSON after all.
func withExtras(body []byte) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // numbers come back as they were written
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	addExtras(v)
	out, err := json.Marshal(v)
	return out, err == nil
}

func addExtras(v any) {
	switch v := v.(type) {
	case []any:
		for _, item := range v {
			addExtras(item)
		}
	case map[string]any:
		for k, member := range v {
			if m, ok := member.(map[string]any); ok && nameKeyed[k] {
				for _, named := range m {
					addExtras(named)
				}
				continue
			}
			addExtras(member)
		}
		if isRun(v) {
			v["source"] = extraSource
		}
		v[extraMember] = extraValue
	}
}

// isRun tells a run (RunItem) from the other objects: nothing else has a
// run id, a state and a source that is a string.
func isRun(obj map[string]any) bool {
	_, id := obj["run_id"].(string)
	_, state := obj["state"].(string)
	_, source := obj["source"].(string)
	return id && state && source
}
