package openapi

import (
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/pb33f/go-yaml"
	"github.com/pb33f/libopenapi"
	"github.com/pb33f/libopenapi-validator/router"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"github.com/pb33f/libopenapi/orderedmap"
)

// Model is an OpenAPI document read once, answering what the rest of the
// project asks of it: which operation a request is for (Match), what a
// schema declares (Component, Schema), how a request or an answer is
// checked (NewValidatorFor), the published and newest views, and the
// document as a plain tree for the generator and the scrubber. Safe for
// concurrent use.
//
// This file is the one place that parses an API document: the library's
// model (load), its YAML tree (parseNode) and its plain tree (Tree). Other
// packages ask a Model; a test holds them to it (oneparse_test.go).
type Model struct {
	doc    []byte
	model  *v3.Document
	router router.Router
	// templates are the document's path templates, split, for guessing
	// the template of a path it lacks (drift).
	templates [][]string
	// ops are the documented operations, by method and template.
	ops     map[string]*Operation
	schemas sync.Map // *base.SchemaProxy -> *Schema (schema.go)

	tree      func() (map[string]any, error)
	enums     func() map[string]map[string]bool
	published func() (*Model, error)
}

// Load reads an OpenAPI 3 document given as YAML or JSON. It does not hold
// the document to the OpenAPI schema (LoadChecked does).
func Load(doc []byte) (*Model, error) { return load(doc, false) }

// LoadChecked is Load that also checks that doc is a valid OpenAPI
// document.
func LoadChecked(doc []byte) (*Model, error) { return load(doc, true) }

var embedded = sync.OnceValues(func() (*Model, error) {
	// The embedded document is checked against the OpenAPI schema by the
	// tests, so it skips that (slow) check here.
	return Load(Document)
})

// Embedded is the model of the project's own document (Document), read
// once per process.
func Embedded() (*Model, error) { return embedded() }

// Bytes is the document the model was read from.
func (m *Model) Bytes() []byte { return m.doc }

// load parses doc and builds its model, checked against the OpenAPI schema
// when checkDocument is set.
func load(doc []byte, checkDocument bool) (*Model, error) {
	// libopenapi logs some model problems (to stdout, by default) instead of
	// returning them; collecting the log turns them into errors.
	logged := &logCollector{}
	cfg := datamodel.NewDocumentConfiguration()
	cfg.Logger = slog.New(logged)
	// A conversation step holds its sub-steps: an array of itself, which
	// an empty array ends. libopenapi calls such a cycle infinite unless
	// told that array cycles are fine.
	cfg.IgnoreArrayCircularReferences = true
	parsed, err := libopenapi.NewDocumentWithConfiguration(doc, cfg)
	if err != nil {
		return nil, fmt.Errorf("openapi: parse document: %w", err)
	}
	built, err := parsed.BuildV3Model()
	if msgs := logged.all(); err == nil && len(msgs) > 0 {
		err = errors.New(strings.Join(msgs, "; "))
	}
	if err != nil {
		return nil, fmt.Errorf("openapi: build model: %w", err)
	}
	if built == nil {
		return nil, errors.New("openapi: build model: the document is not OpenAPI 3")
	}
	if checkDocument {
		if ok, errs := schema_validation.ValidateOpenAPIDocument(parsed); !ok {
			return nil, documentError(errs)
		}
	}
	m := &Model{doc: doc, model: &built.Model, ops: map[string]*Operation{}}
	// Path-only matching: the document's servers carry a base path, which
	// the matching ignores (see Validator).
	m.router = router.NewRouter(m.model, router.WithPathOnlyMatching())
	if paths := m.model.Paths; paths != nil && paths.PathItems != nil {
		for p := paths.PathItems.First(); p != nil; p = p.Next() {
			m.templates = append(m.templates, strings.Split(strings.Trim(p.Key(), "/"), "/"))
			for op := p.Value().GetOperations().First(); op != nil; op = op.Next() {
				method := strings.ToUpper(op.Key())
				m.ops[method+" "+p.Key()] = newOperation(m, method, p.Key(), p.Value(), op.Value())
			}
		}
	}
	m.published = publishedOf(m)
	m.tree = sync.OnceValues(func() (map[string]any, error) {
		var root map[string]any
		if err := yaml.Unmarshal(m.doc, &root); err != nil {
			return nil, fmt.Errorf("openapi: %w", err)
		}
		return root, nil
	})
	m.enums = sync.OnceValue(func() map[string]map[string]bool {
		root, err := m.tree()
		if err != nil {
			return nil
		}
		return propertyEnums(root)
	})
	return m, nil
}

// parseNode reads a document (or an overlay, or what was given in place of
// one) as a YAML tree, for the views that rewrite it and the checks that
// say what it is.
func parseNode(doc []byte) (*yaml.Node, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, err
	}
	return &root, nil
}

// Tree is the document as plain values (maps, lists, strings, numbers,
// booleans), for a reader that walks its JSON Schema keywords as written
// (internal/schemagen). Shared: do not change it.
func (m *Model) Tree() (map[string]any, error) { return m.tree() }

// PropertyEnums indexes every property of every schema of the document by
// its name: the string values its enum lists, through $ref and
// oneOf/anyOf/allOf. Shared: do not change it.
func (m *Model) PropertyEnums() map[string]map[string]bool { return m.enums() }

// propertyEnums is PropertyEnums of the plain tree root.
func propertyEnums(root map[string]any) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if props, ok := v["properties"].(map[string]any); ok {
				for name, prop := range props {
					for _, val := range enumOf(root, prop, 0) {
						if out[name] == nil {
							out[name] = map[string]bool{}
						}
						out[name][val] = true
					}
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(root)
	return out
}

// enumOf is the string values a schema's enum lists, following $ref and
// the branches of oneOf, anyOf and allOf.
func enumOf(root map[string]any, v any, depth int) []string {
	s, ok := v.(map[string]any)
	if !ok || depth > 8 {
		return nil
	}
	if ref, ok := s["$ref"].(string); ok {
		var cur any = root
		for _, seg := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			m, _ := cur.(map[string]any)
			cur = m[seg]
		}
		return enumOf(root, cur, depth+1)
	}
	var out []string
	if list, ok := s["enum"].([]any); ok {
		for _, x := range list {
			if x, ok := x.(string); ok {
				out = append(out, x)
			}
		}
	}
	for _, key := range []string{"oneOf", "anyOf", "allOf"} {
		if branches, ok := s[key].([]any); ok {
			for _, b := range branches {
				out = append(out, enumOf(root, b, depth+1)...)
			}
		}
	}
	return out
}

// Match finds the operation of method and path (with or without the
// servers' base path): template is "" when the document has no such path,
// and op nil when it has the path but not the method.
func (m *Model) Match(method, path string) (template string, op *Operation) {
	r := &http.Request{Method: method, URL: &url.URL{Path: path}, Host: "upstream"}
	found, err := m.router.FindRoute(r)
	switch {
	case err == nil && found != nil:
		return found.Path, m.ops[method+" "+found.Path]
	case errors.Is(err, router.ErrMethodNotAllowed) && found != nil:
		return found.Path, nil
	}
	return "", nil
}

// Templates are the document's path templates, each split into its
// segments ("agent", "runs", "{runId}").
func (m *Model) Templates() [][]string { return m.templates }

// Component is the schema #/components/schemas/name, nil when the document
// has none.
func (m *Model) Component(name string) *Schema {
	if m.model.Components == nil || m.model.Components.Schemas == nil {
		return nil
	}
	return m.schema(m.model.Components.Schemas.GetOrZero(name), "#/components/schemas/"+escapePointer(name))
}

// Operation is one documented operation: a method on a path template.
type Operation struct {
	Method, Template string
	// Where is the operation's place in the document, a JSON Pointer
	// ("#/paths/~1agent~1runs/get").
	Where string

	m    *Model
	op   *v3.Operation
	item *v3.PathItem
	// query names the query parameters the path item and the operation
	// declare; deep those sent deepObject style (name[member]=value).
	query, deep map[string]bool
}

func newOperation(m *Model, method, template string, item *v3.PathItem, op *v3.Operation) *Operation {
	o := &Operation{Method: method, Template: template, m: m, op: op, item: item,
		Where: "#/paths/" + escapePointer(template) + "/" + strings.ToLower(method),
		query: map[string]bool{}, deep: map[string]bool{}}
	for _, list := range [][]*v3.Parameter{item.Parameters, op.Parameters} {
		for _, p := range list {
			if p != nil && p.In == "query" {
				o.query[p.Name] = true
				if p.Style == "deepObject" {
					o.deep[p.Name] = true
				}
			}
		}
	}
	return o
}

// DeclaresQuery reports whether the operation declares the query
// parameter name, or name is name[member] of one sent deepObject style.
func (o *Operation) DeclaresQuery(name string) bool {
	if o.query[name] {
		return true
	}
	base, _, ok := strings.Cut(name, "[")
	return ok && o.deep[base] && strings.HasSuffix(name, "]")
}

// Content is a request body or an answer the document declares: where,
// and its media types.
type Content struct {
	// Where is its place in the document, a JSON Pointer: the component a
	// reference names, or its place in the operation.
	Where string
	m     *Model
	media []mediaEntry
}

type mediaEntry struct {
	key    string
	schema *base.SchemaProxy
	// missing marks a media type written with no value at all.
	missing bool
}

// RequestBody is the operation's request body, nil when it declares none.
func (o *Operation) RequestBody() *Content {
	rb := o.op.RequestBody
	if rb == nil {
		return nil
	}
	where := o.Where + "/requestBody"
	if low := rb.GoLow(); low != nil && low.IsReference() {
		where = low.GetReference()
	}
	return contentOf(o.m, where, rb.Content)
}

// Response is the answer documented for status (the exact code, then its
// range, then default); nil when there is none.
func (o *Operation) Response(status int) *Content {
	rs := o.op.Responses
	if rs == nil {
		return nil
	}
	if rs.Codes != nil {
		for _, k := range []string{fmt.Sprint(status), fmt.Sprintf("%dXX", status/100)} {
			if r := rs.Codes.GetOrZero(k); r != nil {
				return responseContent(o.m, r, o.Where+"/responses/"+k)
			}
		}
	}
	if r := rs.Default; r != nil {
		return responseContent(o.m, r, o.Where+"/responses/default")
	}
	return nil
}

func responseContent(m *Model, r *v3.Response, inPlace string) *Content {
	if low := r.GoLow(); low != nil && low.IsReference() {
		inPlace = low.GetReference()
	}
	return contentOf(m, inPlace, r.Content)
}

func contentOf(m *Model, where string, content *orderedmap.Map[string, *v3.MediaType]) *Content {
	c := &Content{Where: where, m: m}
	if content != nil {
		for p := content.First(); p != nil; p = p.Next() {
			e := mediaEntry{key: p.Key(), missing: p.Value() == nil}
			if !e.missing {
				e.schema = p.Value().Schema
			}
			c.media = append(c.media, e)
		}
	}
	return c
}

// mediaTypeOf is a Content-Type without its parameters, lower case.
func mediaTypeOf(ct string) string {
	if ct == "" {
		return ""
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		return mt
	}
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// Media is one media type of a Content.
type Media struct {
	// Key is the media type as the document writes it.
	Key string
	// HasSchema is whether the media type names a schema; Schema is it,
	// nil also when it names one that does not resolve.
	HasSchema bool
	Schema    *Schema
}

// Media finds the media type that serves ct (a media type without
// parameters, lower case): the same type, a wildcard, or, for a body
// without a type, the only one; nil when none serves it.
func (c *Content) Media(ct string) *Media {
	e := c.mediaEntry(ct)
	if e == nil || e.missing {
		return nil
	}
	return &Media{Key: e.key, HasSchema: e.schema != nil,
		Schema: c.m.schema(e.schema, c.Where+"/content/"+escapePointer(e.key)+"/schema")}
}

func (c *Content) mediaEntry(ct string) *mediaEntry {
	if len(c.media) == 0 {
		return nil
	}
	if ct == "" {
		if len(c.media) == 1 {
			return &c.media[0]
		}
		return nil
	}
	major, _, _ := strings.Cut(ct, "/")
	var wildcard *mediaEntry
	for i := range c.media {
		e := &c.media[i]
		if mt := mediaTypeOf(strings.ToLower(e.key)); mt == ct {
			return e
		} else if mt == "*/*" || mt == major+"/*" {
			wildcard = e
		}
	}
	return wildcard
}

// escapePointer escapes a member name as one step of a JSON Pointer.
func escapePointer(name string) string { return pointerEscaper.Replace(name) }

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")
