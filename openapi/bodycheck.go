package openapi

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/pb33f/jsonschema/v6"
	"github.com/pb33f/libopenapi-validator/cache"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/content"
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
			}
		}
	}
	return checks
}

// accepts reports whether the library would accept r, whose body is body.
// false means "ask the library", not "invalid".
func (c *bodyCheck) accepts(r *http.Request, body []byte) bool {
	if r.URL.RawQuery != "" || len(body) == 0 {
		return false
	}
	ct := r.Header.Get(helpers.ContentTypeHeader)
	if ct == "" {
		return false
	}
	if media, ok := helpers.FindMediaType(c.content.Content, ct); !ok || media != c.media {
		return false
	}
	decoder, normalized, params := c.opts.BodyRegistry.Decoder(ct)
	if decoder == nil {
		return false
	}
	value, err := decoder.Decode(&content.DecodeInput{
		Context: r.Context(), Body: bytes.NewReader(body), Header: r.Header,
		MediaType: normalized, Parameters: params, Schema: c.media.Schema.Schema(),
		Encoding: c.media.Encoding, Direction: content.Request,
	})
	if err != nil {
		return false
	}
	if value, err = content.Canonicalize(value); err != nil {
		return false
	}
	return c.schema.Validate(value) == nil
}
