package mockserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentruns/agentruns/mockserver/errcode"
	"github.com/agentruns/agentruns/mockserver/store"
)

// errorCode names a kind of failure (mockserver/errcode has the table).
type errorCode = errcode.Code

const (
	codeInvalidRequest       = errcode.InvalidRequest
	codeAuthRequired         = errcode.AuthRequired
	codeNotAuthorized        = errcode.NotAuthorized
	codeNotFound             = errcode.NotFound
	codeConflict             = errcode.Conflict
	codeNotSupported         = errcode.NotSupported
	codeUnavailable          = errcode.Unavailable
	codeInternal             = errcode.Internal
	codeMethodNotAllowed     = errcode.MethodNotAllowed
	codePayloadTooLarge      = errcode.PayloadTooLarge
	codeUnsupportedMediaType = errcode.UnsupportedMediaType
)

// statusOf is the HTTP status a code is usually answered with.
func statusOf(c errorCode) int { i, _ := errcode.Lookup(c); return i.Status }

// apiError is a failure on its way to becoming a problem+json response.
type apiError struct {
	code   errorCode
	status int // overrides the code's usual status when set (resource_unavailable is also a 500)
	detail string
	// retryAfter, when set, is sent as a Retry-After header.
	retryAfter time.Duration
	allow      string // the Allow header of a 405
	// final marks a failure that retrying cannot cure, whatever the code
	// usually means: the problem says retryable false and the answer
	// carries X-Should-Retry: false, which the official clients obey.
	final bool
}

func (e *apiError) Error() string { return string(e.code) + ": " + e.detail }

func errorf(code errorCode, format string, args ...any) *apiError {
	return &apiError{code: code, detail: fmt.Sprintf(format, args...)}
}

// answer is how the API answers one kind of store failure.
type answer struct {
	code errorCode
	// final: retrying cannot help, whatever the code usually means.
	final bool
	// retryAfter, when set, is how long a retry should wait.
	retryAfter time.Duration
}

// answers is the one table from a store failure's kind to the API's answer.
var answers = map[store.Kind]answer{
	store.Internal:    {code: codeInternal},
	store.NotFound:    {code: codeNotFound},
	store.Forbidden:   {code: codeNotAuthorized},
	store.Invalid:     {code: codeInvalidRequest},
	store.Unsupported: {code: codeNotSupported},
	// A run being handed to a worker is one a second later.
	store.Conflict: {code: codeConflict, retryAfter: time.Second},
	// The table's conflict is retryable; a state that only moves forward
	// is a conflict that waiting does not resolve.
	store.Final:       {code: codeConflict, final: true},
	store.Unavailable: {code: codeUnavailable, retryAfter: 5 * time.Second},
	// resource_unavailable is retryable in the API's table; a limit that
	// only a reset lifts says it is not, so clients do not retry in vain.
	store.Exhausted: {code: codeUnavailable, final: true},
}

// problemOf is the one place a store failure becomes a problem: its kind
// picks the answer, its message is the detail. A failure that is already a
// problem is kept.
func problemOf(err error) *apiError {
	var aerr *apiError
	if errors.As(err, &aerr) {
		return aerr
	}
	a, ok := answers[store.KindOf(err)]
	if !ok {
		a = answers[store.Internal]
	}
	return &apiError{code: a.code, final: a.final, retryAfter: a.retryAfter, detail: err.Error()}
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

// ProblemTypeBase prefixes every problem type; the error code ends the
// URI. It is where the service keeps a page on each code, and the type the
// service itself sends. The mock's own gateway codes (405, 413, 415) get the
// same base, so a client reads every code the same way: the last segment.
const ProblemTypeBase = "https://docs.warp.dev/reference/api-and-sdk/troubleshooting/errors/"

func (e *apiError) problem(instance string) Problem {
	info, ok := errcode.Lookup(e.code)
	if !ok {
		info, _ = errcode.Lookup(codeInternal)
	}
	status := info.Status
	if e.status != 0 {
		status = e.status
	}
	p := Problem{
		Type:      ProblemTypeBase + string(e.code),
		Title:     info.Title,
		Status:    status,
		Detail:    e.detail,
		Instance:  instance,
		Error:     info.Title,
		Retryable: info.Retryable,
	}
	if e.detail != "" {
		p.Error = info.Title + " (" + e.detail + ")"
	}
	if e.final {
		p.Retryable = false
	}
	return p
}

// maxInstance bounds a problem's instance. A path may be as long as the
// request headers allow (64 KiB); echoed whole, with the detail and the
// error, each refusal of a long path cost its size several times over.
const maxInstance = 1024

// instanceOf is the request's escaped path, cut to maxInstance bytes at a
// place that keeps it a URI reference (never inside a %XX escape).
func instanceOf(r *http.Request) string {
	p := r.URL.EscapedPath()
	if len(p) <= maxInstance {
		return p
	}
	cut := maxInstance
	if i := strings.LastIndexByte(p[cut-2:cut], '%'); i >= 0 {
		cut -= 2 - i
	}
	return p[:cut]
}

// writeProblem is the one place errors become responses.
func writeProblem(w http.ResponseWriter, r *http.Request, e *apiError) {
	// The escaped path: instance is a URI reference, which a decoded path
	// holding a control character (a run id with %00) is not.
	p := e.problem(instanceOf(r))
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
	if e.final {
		h.Set("X-Should-Retry", "false")
	}
	body, err := marshalUnescaped(p)
	if err != nil { // a Problem always marshals; this guards future fields
		body = []byte(`{"type":"` + ProblemTypeBase + `internal_error","title":"Internal error","status":500,"error":"Internal error"}`)
		p.Status = http.StatusInternalServerError
	}
	w.WriteHeader(p.Status)
	_, _ = w.Write(body)
}

// marshalUnescaped is json.Marshal without its HTML escaping: the mock's
// answers are read by programs and people, not pasted into web pages, and
// a detail saying "Bearer <api key>" should read so, not as
// "Bearer \u003capi key\u003e".
func marshalUnescaped(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
