package mockserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// errorCode names a kind of failure; the API puts it at the end of a
// problem's type URI and in a failed run's status_message.error_code.
type errorCode string

const (
	codeInvalidRequest       errorCode = "invalid_request"
	codeAuthRequired         errorCode = "authentication_required"
	codeNotAuthorized        errorCode = "not_authorized"
	codeNotFound             errorCode = "resource_not_found"
	codeConflict             errorCode = "conflict"
	codeNotSupported         errorCode = "operation_not_supported"
	codeUnavailable          errorCode = "resource_unavailable"
	codeInternal             errorCode = "internal_error"
	codeMethodNotAllowed     errorCode = "method_not_allowed"
	codePayloadTooLarge      errorCode = "payload_too_large"
	codeUnsupportedMediaType errorCode = "unsupported_media_type"
)

// codeInfo is what an error code means over HTTP.
type codeInfo struct {
	status    int
	title     string
	retryable bool
}

// errorCodes is the one table from error codes to statuses. The first group
// is the real service's; the last three name statuses it leaves to its
// gateway, which the mock answers itself.
var errorCodes = map[errorCode]codeInfo{
	codeInvalidRequest:                 {400, "Invalid request", false},
	"integration_not_configured":       {400, "Integration not configured", false},
	codeAuthRequired:                   {401, "Authentication required", false},
	"external_authentication_required": {401, "External authentication required", false},
	codeNotAuthorized:                  {403, "Not authorized", false},
	"insufficient_credits":             {403, "Insufficient credits", false},
	"feature_not_available":            {403, "Feature not available", false},
	"budget_exceeded":                  {403, "Budget exceeded", false},
	"integration_disabled":             {403, "Integration disabled", false},
	"content_policy_violation":         {403, "Content policy violation", false},
	codeNotFound:                       {404, "Resource not found", false},
	codeConflict:                       {409, "Conflict", true},
	codeNotSupported:                   {422, "Operation not supported", false},
	codeUnavailable:                    {429, "Resource unavailable", true},
	codeInternal:                       {500, "Internal error", true},
	"environment_setup_failed":         {500, "Environment setup failed", false},
	codeMethodNotAllowed:               {405, "Method not allowed", false},
	codePayloadTooLarge:                {413, "Payload too large", false},
	codeUnsupportedMediaType:           {415, "Unsupported media type", false},
}

// knownErrorCode reports whether c is one of the API's error codes.
func knownErrorCode(c string) bool { _, ok := errorCodes[errorCode(c)]; return ok }

// apiError is a failure on its way to becoming a problem+json response.
type apiError struct {
	code   errorCode
	status int // overrides the code's usual status when set (resource_unavailable is also a 500)
	detail string
	// retryAfter, when set, is sent as a Retry-After header.
	retryAfter time.Duration
	allow      string // the Allow header of a 405
}

func (e *apiError) Error() string { return string(e.code) + ": " + e.detail }

func errorf(code errorCode, format string, args ...any) *apiError {
	return &apiError{code: code, detail: fmt.Sprintf(format, args...)}
}

// Problem is an RFC 7807 problem details body as the API sends it.
type Problem struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail,omitempty"`
	Instance  string `json:"instance,omitempty"`
	Error     string `json:"error"`
	Retryable bool   `json:"retryable"`
	TraceID   string `json:"trace_id,omitempty"`
}

// problemTypeBase prefixes every problem type; the code ends the URI.
const problemTypeBase = "urn:agentruns:problem:"

func (e *apiError) problem(instance string) Problem {
	info, ok := errorCodes[e.code]
	if !ok {
		info = errorCodes[codeInternal]
	}
	status := info.status
	if e.status != 0 {
		status = e.status
	}
	p := Problem{
		Type:      problemTypeBase + string(e.code),
		Title:     info.title,
		Status:    status,
		Detail:    e.detail,
		Instance:  instance,
		Error:     info.title,
		Retryable: info.retryable,
	}
	if e.detail != "" {
		p.Error = info.title + " (" + e.detail + ")"
	}
	return p
}

// writeProblem is the one place errors become responses.
func writeProblem(w http.ResponseWriter, r *http.Request, e *apiError) {
	// The escaped path: instance is a URI reference, which a decoded path
	// holding a control character (a run id with %00) is not.
	p := e.problem(r.URL.EscapedPath())
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	if e.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(int((e.retryAfter+time.Second-1)/time.Second)))
		// Retry-After has whole seconds only; the official clients also read
		// this header, which lets a retry test wait less than a second.
		if e.retryAfter%time.Second != 0 {
			h.Set("Retry-After-Ms", strconv.FormatInt(e.retryAfter.Milliseconds(), 10))
		}
	}
	if e.allow != "" {
		h.Set("Allow", e.allow)
	}
	body, err := json.Marshal(p)
	if err != nil { // a Problem always marshals; this guards future fields
		body = []byte(`{"type":"` + problemTypeBase + `internal_error","title":"Internal error","status":500,"error":"Internal error"}`)
		p.Status = http.StatusInternalServerError
	}
	w.WriteHeader(p.Status)
	_, _ = w.Write(body)
}

func writeJSON(w http.ResponseWriter, r *http.Request, v any) {
	if a, ok := v.(jsonAppender); ok { // runs and pages write their own JSON (runjson.go)
		writeAppended(w, a)
		return
	}
	body, err := json.Marshal(v)
	if err != nil {
		writeProblem(w, r, errorf(codeInternal, "encoding the response: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
