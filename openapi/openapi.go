// Package openapi holds the OpenAPI document of the Cloud Agent Runs API, its
// model (Model: the document read once, the one place it is parsed, which
// every other package asks what the document says) and a validator that
// checks HTTP requests and responses against it.
//
// The document is the contract of the whole project: the mock server validates
// every request it receives with ValidateRequest, and the tests and the
// contract suite validate every response they see with ValidateResponse.
package openapi

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"

	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/cache"
	"github.com/pb33f/libopenapi-validator/config"
	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/helpers"
	"github.com/pb33f/libopenapi-validator/parameters"
	"github.com/pb33f/libopenapi-validator/router"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// Document is the OpenAPI 3.1 document of the Cloud Agent Runs API (openapi.yaml).
//
//go:embed openapi.yaml
var Document []byte

// Validator checks requests and responses against an OpenAPI document. Safe for
// concurrent use.
//
// Concurrency: libopenapi-validator v0.16 is built to be shared between
// goroutines (its router takes a read lock, its compiled-schema caches are
// sync.Maps filled up front, the model's schema proxies lock when they
// resolve), so one instance serves every goroutine without a pool or mutex.
// Two things still need care, and the Validator takes it: the library swaps
// the context of the *http.Request it is given while it works, so it only ever
// sees a shallow copy; and bodies are read once here and handed out as fresh
// readers, so callers can read them again afterwards.
//
// Servers: the document lists servers whose URLs carry a path
// (https://app.warp.dev/api/v1). The library's default, non-strict server
// matching strips such a base path when a request path starts with it and
// otherwise matches the path as sent, ignoring scheme and host. So both
// "/agent/runs" on any host and port and "/api/v1/agent/runs" resolve to the
// "/agent/runs" operation. Strict server matching must stay off.
type Validator struct {
	lib validator.Validator
	// bodyChecks accept valid requests of body-only operations without the
	// library's per-request schema lookup (bodycheck.go).
	bodyChecks map[string]*bodyCheck
	router     router.Router
	security   parameters.ParameterValidator
	// answers accept valid answers from a value decoded already
	// (answercheck.go).
	answers *answerChecks
}

// NewValidator returns a Validator for the embedded Document. Building one
// takes tens of milliseconds (every schema is compiled up front), so build it
// once and share it.
func NewValidator() (*Validator, error) {
	m, err := Embedded()
	if err != nil {
		return nil, err
	}
	return NewValidatorFor(m), nil
}

// NewValidatorFromBytes returns a Validator for an OpenAPI 3.x document given
// as YAML or JSON, after checking that it is a valid OpenAPI document. It
// parses the document and compiles every schema once, so validating a request
// later does no parsing.
func NewValidatorFromBytes(doc []byte) (*Validator, error) {
	m, err := LoadChecked(doc)
	if err != nil {
		return nil, err
	}
	return NewValidatorFor(m), nil
}

// NewValidatorFor returns a Validator for the document m was read from,
// compiling every schema once.
func NewValidatorFor(m *Model) *Validator {
	model := m.model
	schemas := cache.NewDefaultCache()
	opts := []config.Option{
		// Without format assertions "created_after=yesterday" or a
		// session_link that is no URI would pass.
		config.WithFormatAssertions(),
		// Without content assertions "contentEncoding: base64" is only a
		// note, and an attachment whose data is not base64 would pass.
		config.WithContentAssertions(),
		// Security is checked separately (ValidateSecurity): the mock answers
		// a missing key with its own 401 before it validates anything.
		config.WithoutSecurityValidation(),
		config.WithSchemaCache(schemas),
		// Without a regex cache every path parameter costs a regexp.Compile
		// per request (half the time of GET /agent/runs/{runId}). Its keys are
		// the document's path segments, so it stays small.
		config.WithRegexCache(&sync.Map{}),
	}
	lib := validator.NewValidatorFromV3Model(model, opts...)
	warmQueryArrayItems(model, schemas, config.NewValidationOptions(opts...))
	v := &Validator{
		lib:        lib,
		bodyChecks: newBodyChecks(model, schemas, opts),
		// The model's router names the operation in findings; path-only
		// matching is the same rule the library applies (see Validator).
		router:   m.router,
		security: parameters.NewParameterValidator(model),
	}
	v.answers = newAnswerChecks(v, model, schemas, opts)
	return v
}

// logCollector is a slog.Handler that keeps the messages of errors.
type logCollector struct {
	mu       sync.Mutex
	messages []string
}

func (c *logCollector) Enabled(_ context.Context, level slog.Level) bool {
	return level >= slog.LevelError
}

func (c *logCollector) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.messages) < 20 { // the document config keeps the logger for good
		c.messages = append(c.messages, r.Message)
	}
	return nil
}

func (c *logCollector) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.messages...)
}

func (c *logCollector) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *logCollector) WithGroup(string) slog.Handler      { return c }

// documentError summarises why a document is not valid OpenAPI.
func documentError(errs []*liberrors.ValidationError) error {
	var lines []string
	for _, e := range errs {
		if len(e.SchemaValidationErrors) == 0 {
			lines = append(lines, sentence(e.Message))
		}
		for _, f := range e.SchemaValidationErrors {
			lines = append(lines, jsonPath(f.InstancePath)+": "+translate(f.Reason))
		}
	}
	if len(lines) > 10 { // the first few are enough to find the mistake
		lines = append(lines[:10], fmt.Sprintf("and %d more", len(lines)-10))
	}
	return fmt.Errorf("openapi: not a valid OpenAPI document:\n  %s", strings.Join(lines, "\n  "))
}

// warmQueryArrayItems puts the item schemas of array query parameters (the
// repeatable "state") into the schema cache. The library warms whole
// parameter schemas but not their items, and renders an uncached item schema
// to YAML on every request that uses the parameter: that alone made a list
// request about ten times slower.
func warmQueryArrayItems(model *v3.Document, schemas cache.SchemaCache, opts *config.ValidationOptions) {
	if model.Paths == nil || model.Paths.PathItems == nil {
		return
	}
	version := helpers.VersionToFloat(model.Version)
	warm := func(params []*v3.Parameter) {
		for _, p := range params {
			if p == nil || p.Schema == nil {
				continue
			}
			s := p.Schema.Schema()
			if s == nil || s.Items == nil || !s.Items.IsA() {
				continue
			}
			items := s.Items.A.Schema()
			if items == nil || items.GoLow() == nil {
				continue
			}
			// The library looks item schemas up by their plain hash, which is
			// also the key of the "generic" validation purpose.
			key := schema_validation.SchemaCacheKey(items.GoLow().Hash(), version, schema_validation.SchemaValidationPurposeGeneric)
			if _, ok := schemas.Load(key); ok {
				continue
			}
			compiled, err := schema_validation.CompileSchemaForValidation(items, schema_validation.SchemaValidationPurposeGeneric, opts, version)
			if err == nil && compiled != nil && compiled.CompiledSchema != nil {
				schemas.Store(key, compiled.ToCacheEntry(items))
			}
		}
	}
	for path := model.Paths.PathItems.First(); path != nil; path = path.Next() {
		warm(path.Value().Parameters)
		for op := path.Value().GetOperations().First(); op != nil; op = op.Next() {
			warm(op.Value().Parameters)
		}
	}
}

// ValidationError lists what is wrong, naming the operation, the status and the
// offending fields.
type ValidationError struct {
	// Operation is the method and path template, e.g. "GET /agent/runs/{runId}",
	// or the method and the raw path when no operation matched.
	Operation string
	// Status is the response status, 0 for requests.
	Status int
	// Findings lists each problem, at least one.
	Findings []Finding
}

// Finding is one problem found in a request or response.
type Finding struct {
	// Field names the place of the problem: "body" or "body.config.model_id"
	// for the JSON body, "query.limit", "path.runId", "header.Content-Type",
	// and "path", "method" or "status" for a request or response the document
	// does not describe at all.
	Field string
	// Message is a short sentence about what is wrong.
	Message string
	// Expected and Got, when set, say the same as Message in two parts, for
	// a report that shows them side by side: for an undocumented status,
	// "one of the documented statuses 200, 401, 404" and "405".
	Expected, Got string
}

// Error returns one line per finding, e.g.
// `GET /agent/runs/{runId} 200: body.state: value must be one of "QUEUED", ...`.
func (e *ValidationError) Error() string {
	prefix := e.Operation
	if e.Status != 0 {
		prefix = fmt.Sprintf("%s %d", prefix, e.Status)
	}
	lines := make([]string, 0, len(e.Findings))
	for _, f := range e.Findings {
		lines = append(lines, fmt.Sprintf("%s: %s: %s", prefix, f.Field, f.Message))
	}
	if len(lines) == 0 {
		return prefix + ": invalid"
	}
	return strings.Join(lines, "\n")
}

// Has reports whether some finding names field (handy in tests).
func (e *ValidationError) Has(field string) bool {
	for _, f := range e.Findings {
		if f.Field == field {
			return true
		}
	}
	return false
}

// ValidateRequest checks r (path, query, headers, body) against the document.
// The body remains readable afterwards. It returns nil or a *ValidationError.
//
// The Authorization header is not checked here, so a request without a key
// can still be validated; call ValidateSecurity for that. A request to a path
// or with a method the document does not describe gets a finding on "path" or
// "method".
func (v *Validator) ValidateRequest(r *http.Request) error {
	rr, body, err := copyRequest(r, true)
	if err != nil {
		return &ValidationError{
			Operation: r.Method + " " + r.URL.Path,
			Findings:  []Finding{{Field: "body", Message: "could not be read: " + err.Error()}},
		}
	}
	return v.validateCopy(rr, body)
}

// ValidateRequestBody is ValidateRequest for a caller that has read r's body
// already: body is that body, and r.Body is neither read nor replaced. A
// server that checks every request it serves so keeps one copy of each body,
// not two.
func (v *Validator) ValidateRequestBody(r *http.Request, body []byte) error {
	_, err := v.ValidateRequestJSON(r, body)
	return err
}

// ValidateRequestJSON is ValidateRequestBody that also hands back the body
// as the JSON value it checked, as DecodeJSON decodes it, when it decoded
// it: a server that reads the body into its own types can start from that
// value instead of decoding the bytes a second time. decoded is nil when
// the request was judged without decoding the body here (by the library,
// or because the same body was accepted before).
func (v *Validator) ValidateRequestJSON(r *http.Request, body []byte) (decoded any, err error) {
	// The body-only operations need no copy of the request: the check
	// reads it and changes nothing.
	if check := v.bodyChecks[r.Method+" "+r.URL.Path]; check != nil {
		if ok, decoded := check.check(r, body); ok {
			return decoded, nil
		}
	}
	rr := r.WithContext(r.Context())
	rr.Body = io.NopCloser(bytes.NewReader(body))
	rr.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return nil, v.validateLibrary(rr)
}

// validateCopy checks rr, a copy of the caller's request whose body is body.
func (v *Validator) validateCopy(rr *http.Request, body []byte) error {
	if check := v.bodyChecks[rr.Method+" "+rr.URL.Path]; check != nil && check.accepts(rr, body) {
		return nil
	}
	return v.validateLibrary(rr)
}

// validateLibrary checks rr with the library alone.
func (v *Validator) validateLibrary(rr *http.Request) error {
	// The synchronous variant: the default one starts goroutines per call.
	if ok, errs := v.lib.ValidateHttpRequestSync(rr); !ok {
		return v.newError(rr, nil, errs)
	}
	return nil
}

// ValidateResponse checks resp (status, content type, headers, body) received
// for req against the document. resp.Body remains readable afterwards; req's
// body is not read. It returns nil or a *ValidationError.
func (v *Validator) ValidateResponse(req *http.Request, resp *http.Response) error {
	rr, _, _ := copyRequest(req, false) // cannot fail without reading a body
	if resp == nil {
		return &ValidationError{Operation: v.operationName(rr), Findings: []Finding{{Field: "status", Message: "no response to check"}}}
	}
	cp := *resp
	if resp.Body != nil && resp.Body != http.NoBody {
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil {
			return &ValidationError{
				Operation: v.operationName(rr), Status: resp.StatusCode,
				Findings: []Finding{{Field: "body", Message: "could not be read: " + err.Error()}},
			}
		}
		cp.Body = io.NopCloser(bytes.NewReader(body))
	}
	if ok, errs := v.lib.ValidateHttpResponse(rr, &cp); !ok {
		return v.newError(rr, &cp, errs)
	}
	return nil
}

// ValidateSecurity checks that r carries the credentials the document asks for
// (a bearer token on every operation). It is kept apart from ValidateRequest
// because servers answer missing credentials with 401, not with the 400 of an
// invalid request. It returns nil or a *ValidationError.
func (v *Validator) ValidateSecurity(r *http.Request) error {
	rr, _, _ := copyRequest(r, false)
	route, rerr := v.router.FindRoute(rr)
	if rerr != nil {
		return v.routeError(rr, route, rerr)
	}
	ok, errs := v.security.ValidateSecurityWithPathItem(rr, route.PathItem, route.Path)
	if !ok {
		return v.newError(rr, nil, errs)
	}
	// The library accepts "Bearer" with nothing after it; a key is required.
	if scheme, token, _ := strings.Cut(strings.TrimSpace(rr.Header.Get("Authorization")), " "); strings.EqualFold(scheme, "bearer") && strings.TrimSpace(token) == "" {
		return &ValidationError{
			Operation: v.operationName(rr),
			Findings:  []Finding{{Field: "header.Authorization", Message: "has no token after \"Bearer\""}},
		}
	}
	return nil
}

// copyRequest returns a shallow copy of r for the library, which replaces the
// context of the request it validates while it works. With withBody, the body
// is read into memory; r and the copy each get their own reader over it.
func copyRequest(r *http.Request, withBody bool) (*http.Request, []byte, error) {
	rr := r.WithContext(r.Context())
	if !withBody || r.Body == nil || r.Body == http.NoBody {
		return rr, nil, nil
	}
	body, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return rr, nil, err
	}
	rr.Body = io.NopCloser(bytes.NewReader(body))
	rr.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return rr, body, nil
}

// Operation names the documented operation r is for, "METHOD /template"
// (e.g. "GET /agent/runs/{runId}"); false when the document has none.
func (v *Validator) Operation(r *http.Request) (string, bool) {
	route, err := v.router.FindRoute(r)
	if err != nil || route == nil {
		return "", false
	}
	return r.Method + " " + route.Path, true
}

// operationName returns "METHOD /template", or "METHOD /raw/path" when no
// operation matches.
func (v *Validator) operationName(r *http.Request) string {
	if route, err := v.router.FindRoute(r); route != nil && (err == nil || errors.Is(err, router.ErrMethodNotAllowed)) {
		return r.Method + " " + route.Path
	}
	return r.Method + " " + r.URL.Path
}

// routeError turns a failed route lookup into a finding on "path" or "method".
func (v *Validator) routeError(r *http.Request, route *router.Route, err error) *ValidationError {
	if errors.Is(err, router.ErrMethodNotAllowed) && route != nil {
		return &ValidationError{
			Operation: r.Method + " " + route.Path,
			Findings: []Finding{{Field: "method", Message: fmt.Sprintf("%s is not documented for %s (documented: %s)",
				r.Method, route.Path, strings.Join(methodsOf(route.PathItem), ", "))}},
		}
	}
	return &ValidationError{
		Operation: r.Method + " " + r.URL.Path,
		Findings:  []Finding{{Field: "path", Message: fmt.Sprintf("no operation is documented at %s", r.URL.Path)}},
	}
}

func methodsOf(item *v3.PathItem) []string {
	var methods []string
	for op := item.GetOperations().First(); op != nil; op = op.Next() {
		methods = append(methods, strings.ToUpper(op.Key()))
	}
	sort.Strings(methods)
	return methods
}

// newError converts the library's errors into one ValidationError. resp is nil
// for requests.
func (v *Validator) newError(r *http.Request, resp *http.Response, errs []*liberrors.ValidationError) *ValidationError {
	route, rerr := v.router.FindRoute(r)
	if rerr != nil {
		return v.routeError(r, route, rerr)
	}
	out := &ValidationError{Operation: r.Method + " " + route.Path}
	if resp != nil {
		out.Status = resp.StatusCode
	}
	for _, e := range errs {
		out.Findings = append(out.Findings, v.findings(r, resp, route, e)...)
	}
	if len(out.Findings) == 0 { // never hand out an error that says nothing
		out.Findings = []Finding{{Field: "request", Message: "does not match the document"}}
	}
	out.Findings = dedupe(out.Findings)
	// jsonschema does not promise an order; sorted findings make stable messages.
	sort.SliceStable(out.Findings, func(i, j int) bool { return out.Findings[i].Field < out.Findings[j].Field })
	return out
}

// findings translates one library error into findings.
func (v *Validator) findings(r *http.Request, resp *http.Response, route *router.Route, e *liberrors.ValidationError) []Finding {
	switch e.ValidationType {
	case helpers.PathValidation:
		if e.ValidationSubType == helpers.ValidationMissingOperation {
			return v.routeError(r, route, router.ErrMethodNotAllowed).Findings
		}
		return []Finding{{Field: "path", Message: fmt.Sprintf("no operation is documented at %s", r.URL.Path)}}

	case helpers.ParameterValidation:
		field := e.ValidationSubType + "." + e.ParameterName
		if e.ValidationSubType == helpers.ParameterValidationHeader {
			field = "header." + http.CanonicalHeaderKey(e.ParameterName)
		}
		return paramFindings(field, e)

	case helpers.SecurityValidation:
		return []Finding{{Field: "header.Authorization", Message: securityMessage(e)}}

	case helpers.RequestBodyValidation:
		if e.ValidationSubType == helpers.RequestBodyContentType {
			return []Finding{{Field: "header.Content-Type", Message: requestContentTypeMessage(r, route)}}
		}
		return bodyFindings(e, func() schemaRoot { return requestSchema(r, route) })

	case helpers.ResponseBodyValidation:
		switch e.ValidationSubType {
		case helpers.ResponseBodyResponseCode:
			expected := "one of the documented statuses " + strings.Join(statusesOf(route.Operation), ", ")
			return []Finding{{Field: "status", Message: fmt.Sprintf("%d is not documented for this operation; expected %s", resp.StatusCode, expected),
				Expected: expected, Got: strconv.Itoa(resp.StatusCode)}}
		case helpers.RequestBodyContentType:
			return []Finding{responseContentTypeFinding(resp, route)}
		case "headers":
			return paramFindings("header."+http.CanonicalHeaderKey(e.ParameterName), e)
		}
		return bodyFindings(e, func() schemaRoot { return responseSchema(resp, route) })
	}
	return []Finding{{Field: "request", Message: sentence(e.Message)}}
}

func securityMessage(e *liberrors.ValidationError) string {
	switch e.Reason {
	case "Authorization header was not found":
		return "is missing; send \"Authorization: Bearer <key>\""
	case "Authorization header had incorrect scheme":
		return "must use the Bearer scheme: \"Authorization: Bearer <key>\""
	}
	return sentence(e.Reason)
}

// paramFindings reports a parameter or header problem under field. The schema
// failures carry the precise reason; the error itself is the fallback.
func paramFindings(field string, e *liberrors.ValidationError) []Finding {
	if len(e.SchemaValidationErrors) == 0 {
		msg := e.Reason
		if strings.Contains(e.Message, "is missing") || strings.Contains(e.Reason, "is missing") {
			msg = "is required"
		}
		return []Finding{{Field: field, Message: translate(msg)}}
	}
	out := make([]Finding, 0, len(e.SchemaValidationErrors))
	for _, f := range e.SchemaValidationErrors {
		out = append(out, Finding{Field: field, Message: translate(f.Reason)})
	}
	return out
}

func requestContentTypeMessage(r *http.Request, route *router.Route) string {
	want := "application/json"
	if op := route.Operation; op != nil && op.RequestBody != nil {
		want = strings.Join(mediaTypesOf(op.RequestBody.Content), " or ")
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return "is missing; the body is required and must be sent as " + want
	}
	return fmt.Sprintf("%q is not accepted; send %s", ct, want)
}

// responseContentTypeFinding is the finding on an answer's Content-Type
// that its status does not document.
func responseContentTypeFinding(resp *http.Response, route *router.Route) Finding {
	ct := resp.Header.Get("Content-Type")
	want := "nothing"
	if resp2 := responseFor(route.Operation, resp.StatusCode); resp2 != nil {
		want = strings.Join(mediaTypesOf(resp2.Content), " or ")
	}
	f := Finding{Field: "header.Content-Type", Expected: want + fmt.Sprintf(", as status %d is documented", resp.StatusCode)}
	if ct == "" {
		f.Message, f.Got = fmt.Sprintf("is missing; status %d is documented as %s", resp.StatusCode, want), "no Content-Type"
		return f
	}
	f.Message, f.Got = fmt.Sprintf("%q is not documented for status %d; expected %s", ct, resp.StatusCode, want), strconv.Quote(ct)
	return f
}

// statusesOf lists the documented response codes of op.
func statusesOf(op *v3.Operation) []string {
	var codes []string
	if op != nil && op.Responses != nil && op.Responses.Codes != nil {
		for c := op.Responses.Codes.First(); c != nil; c = c.Next() {
			codes = append(codes, c.Key())
		}
	}
	return codes
}

// dedupe drops repeated findings, keeping the first of each.
func dedupe(in []Finding) []Finding {
	seen := make(map[Finding]bool, len(in))
	out := in[:0]
	for _, f := range in {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}
