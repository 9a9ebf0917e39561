package refserver

import (
	"encoding/json"
	"net/http"
)

// problemBase is where the service's problem types live; a type is this
// base followed by the error code.
const problemBase = "https://docs.warp.dev/reference/api-and-sdk/troubleshooting/errors/"

// writeProblem answers with an RFC 7807 problem document of the API.
func writeProblem(w http.ResponseWriter, r *http.Request, status int, code, title, detail string) {
	p := map[string]any{
		"type":      problemBase + code,
		"title":     title,
		"status":    status,
		"detail":    detail,
		"instance":  r.URL.Path,
		"error":     title + " (" + detail + ")",
		"retryable": code == "conflict" || code == "internal_error" || code == "resource_unavailable",
		"trace_id":  newID(),
	}
	data, _ := json.Marshal(p)
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

func notFound(w http.ResponseWriter, r *http.Request, detail string) {
	writeProblem(w, r, http.StatusNotFound, "resource_not_found", "Resource not found", detail)
}

func methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	writeProblem(w, r, http.StatusMethodNotAllowed, "invalid_request", "Invalid request", r.Method+" is not allowed here")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}
