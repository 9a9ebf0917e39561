// Package facts extracts the structural facts of an OpenAPI 3.0 or 3.1
// document: its operations (method, path, operation id, parameters, request
// body, statuses, media types, headers) and the schemas they use (property
// names, types, formats, enums, defaults, bounds, required lists, nested
// objects, oneOf branches and discriminators). Prose (summaries,
// descriptions, examples) is left out on purpose: two documents written in
// different words but describing the same wire contract have equal facts.
//
// The drift test of package openapi compares the facts of the project's
// document with those of the service's published document, and Diff lists
// what differs, one leaf at a time.
package facts

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/pb33f/go-yaml"
)

// Facts are the structural facts of one document. Marshalled with
// encoding/json they form a canonical file: map keys come out sorted, lists
// whose order carries no meaning (required, security) are sorted.
type Facts struct {
	// Client names the official client library and version the facts were
	// read from; nil for the facts of an OpenAPI document.
	Client *Client `json:"client,omitempty"`
	// Operations are keyed "METHOD /path", e.g. "GET /agent/runs/{runId}".
	Operations map[string]*Operation `json:"operations"`
	// Schemas holds the named component schemas the operations reach,
	// directly or through other schemas; unused components are left out.
	Schemas map[string]*Schema `json:"schemas"`
	// SecuritySchemes holds the schemes the operations use.
	SecuritySchemes map[string]*SecurityScheme `json:"security_schemes,omitempty"`
}

// Client is where a client's facts came from: its language, package name
// and version, and what of it was read (its source or its published
// package).
type Client struct {
	Language string `json:"language"`
	Package  string `json:"package"`
	Version  string `json:"version"`
	Source   string `json:"source"`
}

// Operation is what one method on one path accepts and answers.
type Operation struct {
	OperationID string `json:"operation_id"`
	// Internal mirrors the x-internal extension (an operation the service
	// documents but marks as meant for its own tools).
	Internal   bool `json:"internal,omitempty"`
	Deprecated bool `json:"deprecated,omitempty"`
	// Security lists the names of the schemes in force (the operation's own
	// requirement, else the document's), sorted; "none" when explicitly off.
	Security []string `json:"security,omitempty"`
	// Parameters are keyed "in name", e.g. "query limit".
	Parameters  map[string]*Parameter `json:"parameters,omitempty"`
	RequestBody *Body                 `json:"request_body,omitempty"`
	// Responses are keyed by status code ("200", "4XX", "default").
	Responses map[string]*Response `json:"responses"`
}

// Parameter is one path, query, header or cookie parameter. Style and
// explode are the effective values, defaults filled in, so that spelling a
// default out does not count as a difference.
type Parameter struct {
	Required      bool    `json:"required,omitempty"`
	Deprecated    bool    `json:"deprecated,omitempty"`
	Style         string  `json:"style"`
	Explode       bool    `json:"explode,omitempty"`
	AllowReserved bool    `json:"allow_reserved,omitempty"`
	Schema        *Schema `json:"schema,omitempty"`
}

// Body is a request body.
type Body struct {
	Required bool `json:"required,omitempty"`
	// Content maps a media type to its schema (nil when none is given).
	Content map[string]*Schema `json:"content"`
}

// Response is one documented status.
type Response struct {
	Headers map[string]*Header `json:"headers,omitempty"`
	// Content maps a media type to its schema; absent for a bodiless status.
	Content map[string]*Schema `json:"content,omitempty"`
}

// Header is one documented response header.
type Header struct {
	Required bool    `json:"required,omitempty"`
	Schema   *Schema `json:"schema,omitempty"`
}

// SecurityScheme is the kind of credentials a scheme asks for.
type SecurityScheme struct {
	Type   string `json:"type"`
	Scheme string `json:"scheme,omitempty"`
	In     string `json:"in,omitempty"`
	Name   string `json:"name,omitempty"`
}

// Schema is a JSON schema reduced to the facts that shape valid values. A
// reference to a component schema is kept as the component's name (Ref),
// not inlined, so a recursive schema stays finite and a difference shows in
// one place.
type Schema struct {
	Ref string `json:"$ref,omitempty"`
	// Type is the JSON type; "null" is never listed in it, Nullable says
	// whether null is allowed (3.0 "nullable: true" and 3.1 type lists with
	// "null" mean the same).
	Type     string `json:"type,omitempty"`
	Nullable bool   `json:"nullable,omitempty"`
	// Format; a 3.1 "contentEncoding: base64" on a string is recorded as the
	// 3.0 spelling of the same thing, format "byte".
	Format     string `json:"format,omitempty"`
	Enum       []any  `json:"enum,omitempty"`
	Default    any    `json:"default,omitempty"`
	Deprecated bool   `json:"deprecated,omitempty"`
	ReadOnly   bool   `json:"read_only,omitempty"`
	WriteOnly  bool   `json:"write_only,omitempty"`

	Minimum          *float64 `json:"minimum,omitempty"`
	Maximum          *float64 `json:"maximum,omitempty"`
	ExclusiveMinimum *float64 `json:"exclusive_minimum,omitempty"`
	ExclusiveMaximum *float64 `json:"exclusive_maximum,omitempty"`
	MultipleOf       *float64 `json:"multiple_of,omitempty"`
	MinLength        *int64   `json:"min_length,omitempty"`
	MaxLength        *int64   `json:"max_length,omitempty"`
	Pattern          string   `json:"pattern,omitempty"`
	MinItems         *int64   `json:"min_items,omitempty"`
	MaxItems         *int64   `json:"max_items,omitempty"`
	UniqueItems      bool     `json:"unique_items,omitempty"`
	MinProperties    *int64   `json:"min_properties,omitempty"`
	MaxProperties    *int64   `json:"max_properties,omitempty"`

	// Required is sorted.
	Required   []string           `json:"required,omitempty"`
	Properties map[string]*Schema `json:"properties,omitempty"`
	// AdditionalProperties is a schema, or AdditionalPropertiesAllowed says
	// "false" (closed) or "true" (spelled out); absent when not given.
	AdditionalProperties        *Schema `json:"additional_properties,omitempty"`
	AdditionalPropertiesAllowed string  `json:"additional_properties_allowed,omitempty"`
	Items                       *Schema `json:"items,omitempty"`

	OneOf         []*Schema      `json:"one_of,omitempty"`
	AnyOf         []*Schema      `json:"any_of,omitempty"`
	AllOf         []*Schema      `json:"all_of,omitempty"`
	Not           *Schema        `json:"not,omitempty"`
	Discriminator *Discriminator `json:"discriminator,omitempty"`
}

// Discriminator names the property that picks a oneOf branch and, per
// value, the component schema it picks.
type Discriminator struct {
	PropertyName string            `json:"property_name"`
	Mapping      map[string]string `json:"mapping,omitempty"`
}

var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

const schemaPrefix = "#/components/schemas/"

// Extract reads an OpenAPI 3.0 or 3.1 document (YAML or JSON) and returns
// its facts.
func Extract(doc []byte) (*Facts, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("facts: parse document: %w", err)
	}
	tree, ok := plain(&root).(map[string]any)
	if !ok {
		return nil, errors.New("facts: the document is not a mapping")
	}
	version, _ := tree["openapi"].(string)
	if !strings.HasPrefix(version, "3.") {
		return nil, fmt.Errorf("facts: want an OpenAPI 3.x document, got openapi %q", version)
	}
	x := &extractor{root: tree, used: map[string]bool{}}
	f := &Facts{Operations: map[string]*Operation{}, Schemas: map[string]*Schema{}}
	paths, _ := tree["paths"].(map[string]any)
	for path, item := range paths {
		pathItem, _ := x.resolve(item).(map[string]any)
		for _, m := range methods {
			op, ok := pathItem[m].(map[string]any)
			if !ok {
				continue
			}
			o, err := x.operation(pathItem, op)
			if err != nil {
				return nil, fmt.Errorf("facts: %s %s: %w", strings.ToUpper(m), path, err)
			}
			f.Operations[strings.ToUpper(m)+" "+path] = o
		}
	}
	// Schemas reached from operations, then from those schemas, until no
	// new name turns up.
	components, _ := dig(tree, "components", "schemas").(map[string]any)
	for {
		var pending []string
		for name := range x.used {
			if _, done := f.Schemas[name]; !done {
				pending = append(pending, name)
			}
		}
		if len(pending) == 0 {
			break
		}
		for _, name := range pending {
			raw, ok := components[name]
			if !ok {
				return nil, fmt.Errorf("facts: schema %q is referenced but not defined", name)
			}
			f.Schemas[name] = x.schema(raw)
		}
	}
	schemes, _ := dig(tree, "components", "securitySchemes").(map[string]any)
	for _, op := range f.Operations {
		for _, name := range op.Security {
			raw, ok := x.resolve(schemes[name]).(map[string]any)
			if !ok {
				continue
			}
			if f.SecuritySchemes == nil {
				f.SecuritySchemes = map[string]*SecurityScheme{}
			}
			f.SecuritySchemes[name] = &SecurityScheme{
				Type: str(raw["type"]), Scheme: strings.ToLower(str(raw["scheme"])),
				In: str(raw["in"]), Name: str(raw["name"]),
			}
		}
	}
	return f, nil
}

// Marshal renders facts as indented, canonical JSON ending in a newline.
func Marshal(f *Facts) ([]byte, error) {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Unmarshal reads facts written by Marshal.
func Unmarshal(b []byte) (*Facts, error) {
	var f Facts
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("facts: %w", err)
	}
	return &f, nil
}

type extractor struct {
	root map[string]any
	// used collects the names of component schemas met so far.
	used map[string]bool
}

// resolve follows local $refs ("#/components/parameters/RunId") until it
// reaches an object without one. Schema references are not resolved here:
// schema() keeps them as names.
func (x *extractor) resolve(v any) any {
	for range 32 { // a bound against reference cycles
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		ref, ok := m["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#/") {
			return v
		}
		var target any = x.root
		for _, seg := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
			target = dig(target, seg)
		}
		v = target
	}
	return v
}

func (x *extractor) operation(pathItem, op map[string]any) (*Operation, error) {
	o := &Operation{
		OperationID: str(op["operationId"]),
		Internal:    op["x-internal"] == true,
		Deprecated:  op["deprecated"] == true,
		Responses:   map[string]*Response{},
	}
	security, ok := op["security"]
	if !ok {
		security = x.root["security"]
	}
	if list, ok := security.([]any); ok {
		for _, req := range list {
			m, _ := req.(map[string]any)
			if len(m) == 0 {
				o.Security = append(o.Security, "none")
			}
			for name := range m {
				o.Security = append(o.Security, name)
			}
		}
		sort.Strings(o.Security)
	}
	// Path-level parameters first; the operation's own override them.
	for _, list := range []any{pathItem["parameters"], op["parameters"]} {
		params, _ := list.([]any)
		for _, raw := range params {
			p, ok := x.resolve(raw).(map[string]any)
			if !ok {
				return nil, errors.New("a parameter is not an object")
			}
			in, name := str(p["in"]), str(p["name"])
			if o.Parameters == nil {
				o.Parameters = map[string]*Parameter{}
			}
			o.Parameters[in+" "+name] = x.parameter(p)
		}
	}
	if raw, ok := op["requestBody"]; ok {
		rb, _ := x.resolve(raw).(map[string]any)
		o.RequestBody = &Body{Required: rb["required"] == true, Content: x.content(rb["content"])}
		if o.RequestBody.Content == nil {
			o.RequestBody.Content = map[string]*Schema{}
		}
	}
	responses, _ := op["responses"].(map[string]any)
	for code, raw := range responses {
		r, _ := x.resolve(raw).(map[string]any)
		resp := &Response{Content: x.content(r["content"])}
		headers, _ := r["headers"].(map[string]any)
		for name, rawHeader := range headers {
			h, _ := x.resolve(rawHeader).(map[string]any)
			if resp.Headers == nil {
				resp.Headers = map[string]*Header{}
			}
			// Header names are case-insensitive.
			resp.Headers[strings.ToLower(name)] = &Header{Required: h["required"] == true, Schema: x.optionalSchema(h["schema"])}
		}
		o.Responses[strings.ToUpper(code)] = resp
	}
	return o, nil
}

func (x *extractor) parameter(p map[string]any) *Parameter {
	in := str(p["in"])
	style := str(p["style"])
	if style == "" {
		style = map[string]string{"query": "form", "cookie": "form", "path": "simple", "header": "simple"}[in]
	}
	explode := style == "form"
	if e, ok := p["explode"].(bool); ok {
		explode = e
	}
	return &Parameter{
		Required:      p["required"] == true,
		Deprecated:    p["deprecated"] == true,
		Style:         style,
		Explode:       explode,
		AllowReserved: p["allowReserved"] == true,
		Schema:        x.optionalSchema(p["schema"]),
	}
}

func (x *extractor) content(v any) map[string]*Schema {
	m, _ := v.(map[string]any)
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]*Schema, len(m))
	for mediaType, raw := range m {
		media, _ := raw.(map[string]any)
		out[strings.ToLower(mediaType)] = x.optionalSchema(media["schema"])
	}
	return out
}

func (x *extractor) optionalSchema(v any) *Schema {
	if v == nil {
		return nil
	}
	return x.schema(v)
}

func (x *extractor) schema(v any) *Schema {
	m, ok := v.(map[string]any)
	if !ok {
		return &Schema{} // "true" or an odd value: accepts anything
	}
	s := &Schema{}
	if ref, ok := m["$ref"].(string); ok {
		if name, ok := strings.CutPrefix(ref, schemaPrefix); ok {
			x.used[name] = true
			s.Ref = name
		} else {
			s.Ref = ref
		}
		// In 3.1 a $ref may have siblings; only prose is expected there.
		return s
	}
	switch t := m["type"].(type) {
	case string:
		s.Type = t
	case []any:
		var types []string
		for _, e := range t {
			if e == "null" {
				s.Nullable = true
				continue
			}
			types = append(types, str(e))
		}
		sort.Strings(types)
		s.Type = strings.Join(types, "|")
	}
	if m["nullable"] == true {
		s.Nullable = true
	}
	s.Format = str(m["format"])
	if s.Format == "" && m["contentEncoding"] == "base64" {
		s.Format = "byte"
	}
	if e, ok := m["enum"].([]any); ok {
		for _, v := range e {
			if v == nil {
				s.Nullable = true
				continue
			}
			s.Enum = append(s.Enum, v)
		}
		// The order of an enum's values carries no meaning for the contract.
		sort.Slice(s.Enum, func(i, j int) bool { return fmt.Sprint(s.Enum[i]) < fmt.Sprint(s.Enum[j]) })
	}
	s.Default = m["default"]
	s.Deprecated = m["deprecated"] == true
	s.ReadOnly = m["readOnly"] == true
	s.WriteOnly = m["writeOnly"] == true
	s.Minimum, s.Maximum = number(m["minimum"]), number(m["maximum"])
	// 3.0 writes exclusiveMinimum as a boolean beside minimum; 3.1 as the
	// bound itself. Both are recorded as the bound.
	for _, b := range []struct {
		key   string
		bound **float64
		plain **float64
	}{{"exclusiveMinimum", &s.ExclusiveMinimum, &s.Minimum}, {"exclusiveMaximum", &s.ExclusiveMaximum, &s.Maximum}} {
		switch e := m[b.key].(type) {
		case bool:
			if e {
				*b.bound, *b.plain = *b.plain, nil
			}
		default:
			*b.bound = number(e)
		}
	}
	s.MultipleOf = number(m["multipleOf"])
	s.MinLength, s.MaxLength = integer(m["minLength"]), integer(m["maxLength"])
	s.Pattern = str(m["pattern"])
	s.MinItems, s.MaxItems = integer(m["minItems"]), integer(m["maxItems"])
	s.UniqueItems = m["uniqueItems"] == true
	s.MinProperties, s.MaxProperties = integer(m["minProperties"]), integer(m["maxProperties"])
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			s.Required = append(s.Required, str(r))
		}
		sort.Strings(s.Required)
	}
	if props, ok := m["properties"].(map[string]any); ok {
		s.Properties = make(map[string]*Schema, len(props))
		for name, p := range props {
			s.Properties[name] = x.schema(p)
		}
	}
	switch ap := m["additionalProperties"].(type) {
	case bool:
		s.AdditionalPropertiesAllowed = strconv.FormatBool(ap)
	case map[string]any:
		s.AdditionalProperties = x.schema(ap)
	}
	if items, ok := m["items"]; ok {
		s.Items = x.schema(items)
	}
	s.OneOf, s.AnyOf, s.AllOf = x.schemas(m["oneOf"]), x.schemas(m["anyOf"]), x.schemas(m["allOf"])
	if not, ok := m["not"]; ok {
		s.Not = x.schema(not)
	}
	if d, ok := m["discriminator"].(map[string]any); ok {
		s.Discriminator = &Discriminator{PropertyName: str(d["propertyName"])}
		if mapping, ok := d["mapping"].(map[string]any); ok {
			s.Discriminator.Mapping = map[string]string{}
			for value, ref := range mapping {
				name, isSchema := strings.CutPrefix(str(ref), schemaPrefix)
				if isSchema {
					x.used[name] = true
				}
				s.Discriminator.Mapping[value] = name
			}
		}
	}
	return s
}

func (x *extractor) schemas(v any) []*Schema {
	list, _ := v.([]any)
	var out []*Schema
	for _, e := range list {
		out = append(out, x.schema(e))
	}
	return out
}

// plain turns a YAML node into maps with string keys, slices and scalars.
// Every mapping key is kept as written (status codes stay "200").
func plain(n *yaml.Node) any {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return plain(n.Content[0])
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = plain(n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			s = append(s, plain(c))
		}
		return s
	case yaml.AliasNode:
		return plain(n.Alias)
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return n.Value
		}
		// Integers and floats alike become float64, as JSON would read them.
		switch num := v.(type) {
		case int:
			return float64(num)
		case int64:
			return float64(num)
		case uint64:
			return float64(num)
		}
		return v
	}
	return nil
}

func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func number(v any) *float64 {
	if f, ok := v.(float64); ok {
		return &f
	}
	return nil
}

func integer(v any) *int64 {
	if f, ok := v.(float64); ok {
		i := int64(f)
		return &i
	}
	return nil
}
