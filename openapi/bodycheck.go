package openapi

import (
	"net/http"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/pb33f/jsonschema/v6"
	"github.com/pb33f/libopenapi-validator/cache"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/helpers"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// bodyCheck accepts the requests of one operation whose whole request is its
// JSON body: a literal path, no parameters of any kind. For such a request
// the library's ValidateHttpRequestSync does three things that matter: it
// finds the operation, it finds the media type and decodes the body with its
// registry's decoder, and it validates the decoded value against the body's
// compiled schema. bodyCheck does the same with the same parts (the media
// type lookup, the decoder, the compiled schema), once per request instead of
// hashing the schema to find its compiled form each time, which is most of
// what a create request costs the library.
//
// It only ever accepts. Whatever it is not sure of (a query string, another
// media type, an empty body, a body the schema rejects) goes to the library,
// so every finding still comes from the library.
type bodyCheck struct {
	content *v3.RequestBody
	media   *v3.MediaType
	schema  *jsonschema.Schema
	opts    *config.ValidationOptions
	// accepted are bodies accepted before (acceptedKey).
	accepted *Accepted
}

// newBodyChecks builds a bodyCheck, keyed "METHOD /path", for each operation
// that qualifies. It takes the compiled schemas from the library's cache,
// which the library fills when it is built; it compiles only what is missing.
func newBodyChecks(model *v3.Document, schemas cache.SchemaCache, opts []config.Option) map[string]*bodyCheck {
	checks := map[string]*bodyCheck{}
	if model.Paths == nil || model.Paths.PathItems == nil {
		return checks
	}
	options := config.NewValidationOptions(opts...)
	version := helpers.VersionToFloat(model.Version)
	for path := model.Paths.PathItems.First(); path != nil; path = path.Next() {
		item := path.Value()
		if strings.Contains(path.Key(), "{") || len(item.Parameters) > 0 {
			continue
		}
		for op := item.GetOperations().First(); op != nil; op = op.Next() {
			o := op.Value()
			if len(o.Parameters) > 0 || o.RequestBody == nil || o.RequestBody.Content == nil {
				continue
			}
			media, ok := o.RequestBody.Content.Get("application/json")
			if !ok || media.Schema == nil {
				continue
			}
			schema := media.Schema.Schema()
			if schema == nil || schema.GoLow() == nil {
				continue
			}
			key := schema_validation.SchemaCacheKey(schema.GoLow().Hash(), version, schema_validation.SchemaValidationPurposeRequestBody)
			var compiled *jsonschema.Schema
			if entry, ok := schemas.Load(key); ok && entry != nil {
				compiled = entry.CompiledSchema
			}
			if compiled == nil {
				c, err := schema_validation.CompileSchemaForValidation(schema, schema_validation.SchemaValidationPurposeRequestBody, options, version)
				if err != nil || c == nil || c.CompiledSchema == nil {
					continue // the library reports the schema's problem
				}
				compiled = c.CompiledSchema
			}
			checks[strings.ToUpper(op.Key())+" "+path.Key()] = &bodyCheck{
				content: o.RequestBody, media: media, schema: compiled, opts: options,
				accepted: NewAccepted(acceptedBodiesMax),
			}
		}
	}
	return checks
}

// accepts reports whether the library would accept r, whose body is body.
// false means "ask the library", not "invalid".
func (c *bodyCheck) accepts(r *http.Request, body []byte) bool {
	ok, _ := c.check(r, body)
	return ok
}

// check is accepts that also hands back the body as the JSON value it
// validated (DecodeJSON's), so the caller need not decode it again; decoded
// is nil when the body was accepted before and not decoded this time.
func (c *bodyCheck) check(r *http.Request, body []byte) (ok bool, decoded any) {
	if r.URL.RawQuery != "" || len(body) == 0 {
		return false, nil
	}
	ct := r.Header.Get(helpers.ContentTypeHeader)
	if ct == "" {
		return false, nil
	}
	var buf [acceptedBodyMaxBytes + 128]byte // the key on the stack, for most content types
	key, remember := acceptedKey(buf[:], ct, body)
	if remember && c.accepted.Has(key) {
		return true, nil
	}
	if media, ok := helpers.FindMediaType(c.content.Content, ct); !ok || media != c.media {
		return false, nil
	}
	// The library decodes application/json with encoding/json and then
	// canonicalizes the value (a deep copy that turns numbers of other Go
	// types into float64). DecodeJSON gives the same value for every body
	// it decodes, already canonical, with less work; a body it refuses
	// (duplicate names, say) goes to the library.
	decoder, normalized, _ := c.opts.BodyRegistry.Decoder(ct)
	if decoder == nil || normalized != "application/json" {
		return false, nil
	}
	value, err := DecodeJSON(body)
	if err != nil || c.schema.Validate(value) != nil {
		return false, nil
	}
	if remember {
		c.accepted.Add(key)
	}
	return true, value
}

// DecodeJSON decodes a JSON body into generic values, as encoding/json
// decodes into an any (maps, slices, float64, string, bool, nil), but
// refuses what encoding/json lets pass silently: duplicate names in an
// object and invalid UTF-8. A value it returns is what encoding/json
// would have returned for the same body, and no name appears twice.
func DecodeJSON(body []byte) (any, error) {
	var v any
	if err := jsonv2.Unmarshal(body, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// A bodyCheck remembers the bodies it accepted (bodyCheck.accepted), with
// the content type they came with, so the same body again (a client that
// retries, a load test) is not decoded and validated again. The verdict
// depends on nothing else: the operation is the bodyCheck's, the query must
// be empty (checked before), and the schema and the decoder never change.
// Small bodies only, and a bounded number.
const (
	acceptedBodiesMax    = 512
	acceptedBodyMaxBytes = 2048
)

// acceptedKey is the key of a body in bodyCheck.accepted, written into buf:
// its content type, a NUL, which no header value holds, and the body. ok is
// false for a body too large to remember.
func acceptedKey(buf []byte, ct string, body []byte) (key []byte, ok bool) {
	if len(body) > acceptedBodyMaxBytes {
		return nil, false
	}
	return append(append(append(buf[:0], ct...), 0), body...), true
}
