package openapi

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/pb33f/go-yaml"
	"github.com/pb33f/libopenapi/datamodel/high/base"
)

// Schema is one schema of the document, read once into what a walk of a
// value needs: where it is declared, its members, its items, its enum.
// Schemas are made as a walk first reaches them and kept by the Model, so
// a walk does no work on the document, only on the value. A Schema's
// members are known once Parts has handed it out.
type Schema struct {
	s *base.Schema
	m *Model
	// where it is declared, as a JSON Pointer
	where string

	once       sync.Once
	allOf      []*Schema
	oneOf      []*Schema
	anyOf      []*Schema
	props      map[string]*Schema
	other      *Schema // additionalProperties, when a schema
	closed     bool    // additionalProperties: false
	items      *Schema
	enum       map[string]bool // the JSON of each value; nil without an enum
	enumTypes  map[string]bool // the JSON types of its values
	constant   string          // the JSON of const, "" without
	types      []string
	required   []string
	composed   bool      // a oneOf or anyOf somewhere in it or its allOf: its parts depend on the value
	staticPart []*Schema // its parts when not composed: itself and its allOf, depth first
}

// schema is the Schema of sp, reached at inPlace (its place unless sp is
// a reference); nil for no schema.
func (m *Model) schema(sp *base.SchemaProxy, inPlace string) *Schema {
	if sp == nil {
		return nil
	}
	if n, ok := m.schemas.Load(sp); ok {
		return n.(*Schema)
	}
	s := sp.Schema()
	if s == nil {
		return nil
	}
	where := inPlace
	if sp.IsReference() && strings.HasPrefix(sp.GetReference(), "#") {
		where = sp.GetReference()
	}
	n, _ := m.schemas.LoadOrStore(sp, &Schema{s: s, m: m, where: where})
	return n.(*Schema)
}

// Where is the place the schema is declared, a JSON Pointer
// ("#/components/schemas/RunItem"): the component a reference names, or
// its place in the document.
func (n *Schema) Where() string { return n.where }

// Property is the schema of the member name, nil when the schema does not
// declare it.
func (n *Schema) Property(name string) *Schema { return n.props[name] }

// DeclaresMembers reports whether the schema declares any member.
func (n *Schema) DeclaresMembers() bool { return len(n.props) > 0 }

// Closed reports additionalProperties: false.
func (n *Schema) Closed() bool { return n.closed }

// Other is the schema additionalProperties gives any other member, nil
// without one.
func (n *Schema) Other() *Schema { return n.other }

// Items is the schema of an array's items, nil without one.
func (n *Schema) Items() *Schema { return n.items }

// Types are the JSON types the schema allows; none when it does not say.
func (n *Schema) Types() []string { return n.types }

// HasEnum reports whether the schema lists its values.
func (n *Schema) HasEnum() bool { return n.enum != nil }

// InEnum reports whether the schema's enum lists the value whose JSON is
// text (as JSONText writes it).
func (n *Schema) InEnum(text string) bool { return n.enum[text] }

// read fills n from its schema, once; its children are made, not read.
func (n *Schema) read() *Schema {
	n.once.Do(func() {
		s, m := n.s, n.m
		for i, sub := range s.AllOf {
			if c := m.schema(sub, n.where+"/allOf/"+strconv.Itoa(i)); c != nil {
				n.allOf = append(n.allOf, c)
			}
		}
		for i, sub := range s.OneOf {
			if c := m.schema(sub, n.where+"/oneOf/"+strconv.Itoa(i)); c != nil {
				n.oneOf = append(n.oneOf, c)
			}
		}
		for i, sub := range s.AnyOf {
			if c := m.schema(sub, n.where+"/anyOf/"+strconv.Itoa(i)); c != nil {
				n.anyOf = append(n.anyOf, c)
			}
		}
		if s.Properties != nil && s.Properties.Len() > 0 {
			n.props = make(map[string]*Schema, s.Properties.Len())
			for pair := s.Properties.First(); pair != nil; pair = pair.Next() {
				if c := m.schema(pair.Value(), n.where+"/properties/"+escapePointer(pair.Key())); c != nil {
					n.props[pair.Key()] = c
				}
			}
		}
		if ap := s.AdditionalProperties; ap != nil {
			switch {
			case ap.IsA() && ap.A != nil:
				n.other = m.schema(ap.A, n.where+"/additionalProperties")
			case ap.IsB() && !ap.B:
				n.closed = true
			}
		}
		if s.Items != nil && s.Items.IsA() {
			n.items = m.schema(s.Items.A, n.where+"/items")
		}
		if len(s.Enum) > 0 {
			n.enum = make(map[string]bool, len(s.Enum))
			n.enumTypes = map[string]bool{}
			for _, e := range s.Enum {
				j := yamlJSON(e)
				n.enum[j] = true
				var v any
				if json.Unmarshal([]byte(j), &v) == nil {
					n.enumTypes[JSONType(v)] = true
				}
			}
		}
		if s.Const != nil {
			n.constant = yamlJSON(s.Const)
		}
		n.types, n.required = s.Type, s.Required
		n.composed = len(n.oneOf) > 0 || len(n.anyOf) > 0
		if !n.composed {
			n.staticPart = []*Schema{n}
			for _, c := range n.allOf {
				c.read()
				if c.composed {
					n.composed, n.staticPart = true, nil
					break
				}
				n.staticPart = append(n.staticPart, c.staticPart...)
			}
		}
	})
	return n
}

// yamlJSON is the JSON of a value written in the document.
func yamlJSON(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return n.Value
	}
	b, err := json.Marshal(v)
	if err != nil {
		return n.Value
	}
	return string(b)
}

// Holds tells whether a value of JSON type typ could be one of n's enum:
// the schema's type allows it, and so do the values it lists.
func (n *Schema) Holds(typ string) bool {
	if len(n.types) > 0 && !TypeAllowed(typ, n.types) {
		return false
	}
	return n.enumTypes[typ] || typ == "integer" && n.enumTypes["number"] || typ == "number" && n.enumTypes["integer"]
}

// Parts appends to out the schemas that apply to v, each read: n's own,
// those of its allOf, and those of the oneOf and anyOf branches v fits
// (all of them when it fits none: then the validator reports it).
func (n *Schema) Parts(v any, out []*Schema) []*Schema { return n.parts(v, out, 0) }

func (n *Schema) parts(v any, out []*Schema, depth int) []*Schema {
	n.read()
	if !n.composed {
		return append(out, n.staticPart...)
	}
	if depth > 16 {
		return out
	}
	out = append(out, n)
	for _, c := range n.allOf {
		out = c.parts(v, out, depth+1)
	}
	for _, branches := range [][]*Schema{n.oneOf, n.anyOf} {
		if len(branches) == 0 {
			continue
		}
		fitting := 0
		for _, b := range branches {
			if b.fits(v) {
				fitting++
				out = b.parts(v, out, depth+1)
			}
		}
		if fitting == 0 {
			for _, b := range branches {
				out = b.parts(v, out, depth+1)
			}
		}
	}
	return out
}

// fits tells whether v could be of branch b: its type, its const, its
// required members, and the members it fixes with an enum or a const.
func (b *Schema) fits(v any) bool {
	b.read()
	if len(b.types) > 0 && !TypeAllowed(JSONType(v), b.types) {
		return false
	}
	if b.constant != "" && v != nil && JSONText(v) != b.constant {
		return false
	}
	m, ok := v.(map[string]any)
	if !ok {
		return true
	}
	for _, r := range b.required {
		if _, ok := m[r]; !ok {
			return false
		}
	}
	for name, p := range b.props {
		got, ok := m[name]
		if !ok || got == nil {
			continue
		}
		p.read()
		if p.constant != "" && JSONText(got) != p.constant || p.enum != nil && !p.enum[JSONText(got)] {
			return false
		}
	}
	return true
}

// TypeAllowed reports whether a value of JSON type t fits a schema that
// allows the types allowed (an integer is a number).
func TypeAllowed(t string, allowed []string) bool {
	for _, a := range allowed {
		if a == t || a == "number" && t == "integer" {
			return true
		}
	}
	return false
}

// JSONType is the JSON type of a decoded value; a number without a
// fraction or exponent is an integer.
func JSONType(v any) string {
	switch val := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		if strings.ContainsAny(string(val), ".eE") {
			return "number"
		}
		return "integer"
	case float64:
		if val == float64(int64(val)) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

// JSONText is the JSON of a decoded value, numbers as written, as an enum
// is compared with it (InEnum).
func JSONText(v any) string {
	if s, ok := v.(string); ok && plainString(s) {
		return `"` + s + `"`
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// plainString tells a string JSON writes as it is, between quotes.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// MemberValues are the string values the enum of member of the component
// schema lists (through $ref and allOf), nil when it lists none or the
// component does not declare the member.
func (m *Model) MemberValues(component, member string) []string {
	n := m.Component(component)
	if n == nil {
		return nil
	}
	var out []string
	for _, p := range n.Parts(map[string]any{}, nil) {
		c := p.Property(member)
		if c == nil {
			continue
		}
		for _, q := range c.Parts(nil, nil) {
			for _, e := range q.s.Enum {
				if e != nil && e.Tag == "!!str" {
					out = append(out, e.Value)
				}
			}
		}
		break
	}
	return out
}
