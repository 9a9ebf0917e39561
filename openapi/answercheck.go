package openapi

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/pb33f/jsonschema/v6"
	"github.com/pb33f/libopenapi-validator/cache"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/helpers"
	"github.com/pb33f/libopenapi-validator/router"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"github.com/pb33f/libopenapi/orderedmap"
)

// answerChecks accept answers whose JSON body the caller decoded already
// (a proxy reads each answer for more than the validator). For such an
// answer the library's ValidateHttpResponse finds the operation, the
// response of its status and the media type of its Content-Type, decodes
// the body with encoding/json and validates the value against the media
// type's compiled schema. answerChecks does the same with the same parts
// (the router, the media type lookup, the compiled schema from the
// library's cache) on the value given, so the body is not decoded twice.
//
// Like bodyCheck it only ever accepts. Whatever it is not sure of (a
// response with headers, a media type without a JSON decoder, an empty or
// null body, a HEAD request, a value the schema rejects) goes to the
// library, so every finding still comes from the library.
type answerChecks struct {
	router   *router.Router
	schemas  cache.SchemaCache
	opts     *config.ValidationOptions
	version  float32
	compiled sync.Map // *v3.MediaType -> *jsonschema.Schema, nil when it has none
	// accepted are answers accepted before, keyed by operation, status,
	// Content-Type and body (answerKey): a client polling a run that has
	// not changed gets the same bytes again.
	accepted *Accepted
}

// Answers remembered, each at most acceptedAnswerMaxBytes of body (a page
// of 20 runs is 10 to 40 KiB): at most 16 MiB.
const (
	acceptedAnswersMax     = 256
	acceptedAnswerMaxBytes = 64 << 10
)

func newAnswerChecks(v *Validator, model *v3.Document, schemas cache.SchemaCache, opts []config.Option) *answerChecks {
	return &answerChecks{router: &v.router, schemas: schemas, opts: config.NewValidationOptions(opts...),
		version: helpers.VersionToFloat(model.Version), accepted: NewAccepted(acceptedAnswersMax)}
}

// ValidateResponseValue is ValidateResponse for a caller that decoded the
// answer's body already, as encoding/json decodes it into an any: decoded
// is that value, isJSON false when the body is no JSON. An answer it can
// tell is valid is judged on that value, without the body being decoded
// again, and the same answer again (the same operation, status,
// Content-Type and bytes, up to 64 KiB) is accepted as before; any other
// is judged by ValidateResponse, so a finding reads as it always did.
func (v *Validator) ValidateResponseValue(req *http.Request, resp *http.Response, body []byte, decoded any, isJSON bool) error {
	if isJSON && resp != nil && v.answers.accepts(req, resp, body, decoded) {
		return nil
	}
	return v.ValidateResponse(req, resp)
}

// accepts reports whether the library would accept resp, whose body is
// body and decodes to decoded. false means "ask the library".
func (c *answerChecks) accepts(req *http.Request, resp *http.Response, body []byte, decoded any) bool {
	if len(body) == 0 || decoded == nil || req.Method == http.MethodHead {
		return false
	}
	route, err := (*c.router).FindRoute(req)
	if err != nil || route == nil || route.Operation == nil {
		return false
	}
	op, template := route.Operation, route.Path
	if op.Responses == nil || op.Responses.Codes == nil {
		return false
	}
	code := strconv.Itoa(resp.StatusCode)
	found := op.Responses.Codes.GetOrZero(code)
	if found == nil {
		found = op.Responses.Codes.GetOrZero(strconv.Itoa(resp.StatusCode/100) + "XX")
	}
	if found == nil {
		found = op.Responses.Default
	}
	if found == nil || found.Headers != nil || orderedmap.Len(found.Content) == 0 {
		return false
	}
	ct := resp.Header.Get(helpers.ContentTypeHeader)
	media, ok := helpers.FindMediaType(found.Content, ct)
	if !ok || media.Schema == nil {
		return false
	}
	if decoder, normalized, _ := c.opts.BodyRegistry.Decoder(ct); decoder == nil || normalized != "application/json" {
		return false
	}
	key, remember := answerKey(req.Method, template, code, ct, body)
	if remember && c.accepted.Has(key) {
		return true
	}
	schema := c.schemaOf(media)
	if schema == nil || schema.Validate(decoded) != nil {
		return false
	}
	if remember {
		c.accepted.Add(key)
	}
	return true
}

// schemaOf is the compiled schema the library validates media's answers
// with, from its cache; nil when the library has not compiled one.
func (c *answerChecks) schemaOf(media *v3.MediaType) *jsonschema.Schema {
	if s, ok := c.compiled.Load(media); ok {
		return s.(*jsonschema.Schema)
	}
	var compiled *jsonschema.Schema
	if schema := media.Schema.Schema(); schema != nil && schema.GoLow() != nil {
		key := schema_validation.SchemaCacheKey(schema.GoLow().Hash(), c.version, schema_validation.SchemaValidationPurposeResponseBody)
		if entry, ok := c.schemas.Load(key); ok && entry != nil {
			compiled = entry.CompiledSchema
		}
	}
	c.compiled.Store(media, compiled)
	return compiled
}

// answerKey is the key of an answer in answerChecks.accepted: everything
// its verdict depends on, NUL-separated (no header value holds one), then
// the body. ok is false for a body too large to remember.
func answerKey(method, template, status, ct string, body []byte) ([]byte, bool) {
	if len(body) > acceptedAnswerMaxBytes {
		return nil, false
	}
	key := make([]byte, 0, len(method)+len(template)+len(status)+len(ct)+4+len(body))
	for _, part := range []string{method, template, status, ct} {
		key = append(append(key, part...), 0)
	}
	return append(key, body...), true
}
