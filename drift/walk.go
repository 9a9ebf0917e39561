package drift

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi/datamodel/high/base"
)

// A node is one schema of the document, read once into what a walk needs:
// where it is declared, its members, its items, its enum. Nodes are made
// as a walk first reaches them and kept (Doc.nodes), so a walk does no
// work on the document, only on the value.
type node struct {
	s      *base.Schema
	target string // where it is declared, as a JSONPath

	once       sync.Once
	allOf      []*node
	oneOf      []*node
	anyOf      []*node
	props      map[string]*node
	other      *node // additionalProperties, when a schema
	closed     bool  // additionalProperties: false
	items      *node
	enum       map[string]bool // the JSON of each value; nil without an enum
	enumTypes  map[string]bool // the JSON types of its values
	constant   string          // the JSON of const, "" without
	types      []string
	required   []string
	composed   bool    // a oneOf or anyOf somewhere in it or its allOf: its parts depend on the value
	staticPart []*node // its parts when not composed: itself and its allOf, depth first
}

// node is the node of sp, reached at inPlace (its target unless sp is a
// reference); nil for no schema.
func (d *Doc) node(sp *base.SchemaProxy, inPlace string) *node {
	if sp == nil {
		return nil
	}
	if n, ok := d.nodes.Load(sp); ok {
		return n.(*node)
	}
	s := sp.Schema()
	if s == nil {
		return nil
	}
	n, _ := d.nodes.LoadOrStore(sp, &node{s: s, target: targetOf(sp, inPlace)})
	return n.(*node)
}

// read fills n from its schema, once; its children are made, not read.
func (n *node) read(d *Doc) *node {
	n.once.Do(func() {
		s := n.s
		for i, sub := range s.AllOf {
			if c := d.node(sub, n.target+key("allOf")+"["+strconv.Itoa(i)+"]"); c != nil {
				n.allOf = append(n.allOf, c)
			}
		}
		for i, sub := range s.OneOf {
			if c := d.node(sub, n.target+key("oneOf")+"["+strconv.Itoa(i)+"]"); c != nil {
				n.oneOf = append(n.oneOf, c)
			}
		}
		for i, sub := range s.AnyOf {
			if c := d.node(sub, n.target+key("anyOf")+"["+strconv.Itoa(i)+"]"); c != nil {
				n.anyOf = append(n.anyOf, c)
			}
		}
		if s.Properties != nil && s.Properties.Len() > 0 {
			n.props = make(map[string]*node, s.Properties.Len())
			for pair := s.Properties.First(); pair != nil; pair = pair.Next() {
				if c := d.node(pair.Value(), n.target+key("properties")+key(pair.Key())); c != nil {
					n.props[pair.Key()] = c
				}
			}
		}
		if ap := s.AdditionalProperties; ap != nil {
			switch {
			case ap.IsA() && ap.A != nil:
				n.other = d.node(ap.A, n.target+key("additionalProperties"))
			case ap.IsB() && !ap.B:
				n.closed = true
			}
		}
		if s.Items != nil && s.Items.IsA() {
			n.items = d.node(s.Items.A, n.target+key("items"))
		}
		if len(s.Enum) > 0 {
			n.enum = make(map[string]bool, len(s.Enum))
			n.enumTypes = map[string]bool{}
			for _, e := range s.Enum {
				j := yamlJSON(e)
				n.enum[j] = true
				var v any
				if json.Unmarshal([]byte(j), &v) == nil {
					n.enumTypes[jsonType(v)] = true
				}
			}
		}
		if s.Const != nil {
			n.constant = yamlJSON(s.Const)
		}
		n.types, n.required = s.Type, s.Required
		n.composed = len(n.oneOf) > 0 || len(n.anyOf) > 0
		if !n.composed {
			n.staticPart = []*node{n}
			for _, c := range n.allOf {
				c.read(d)
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

// holds tells whether a value of JSON type typ could be one of n's enum:
// the schema's type allows it, and so do the values it lists.
func (n *node) holds(typ string) bool {
	if len(n.types) > 0 && !typeAllowed(typ, n.types) {
		return false
	}
	return n.enumTypes[typ] || typ == "integer" && n.enumTypes["number"] || typ == "number" && n.enumTypes["integer"]
}

// parts are the schemas that apply to v: n's own, those of its allOf,
// and those of the oneOf and anyOf branches v fits (all of them when it
// fits none: then the validator reports it, and drift says nothing more).
func (d *Doc) parts(v any, n *node, out []*node, depth int) []*node {
	n.read(d)
	if !n.composed {
		return append(out, n.staticPart...)
	}
	if depth > 16 {
		return out
	}
	out = append(out, n)
	for _, c := range n.allOf {
		out = d.parts(v, c, out, depth+1)
	}
	for _, branches := range [][]*node{n.oneOf, n.anyOf} {
		if len(branches) == 0 {
			continue
		}
		fitting := 0
		for _, b := range branches {
			if d.fits(v, b) {
				fitting++
				out = d.parts(v, b, out, depth+1)
			}
		}
		if fitting == 0 {
			for _, b := range branches {
				out = d.parts(v, b, out, depth+1)
			}
		}
	}
	return out
}

// fits tells whether v could be of branch b: its type, its const, its
// required members, and the members it fixes with an enum or a const.
func (d *Doc) fits(v any, b *node) bool {
	b.read(d)
	if len(b.types) > 0 && !typeAllowed(jsonType(v), b.types) {
		return false
	}
	if b.constant != "" && v != nil && jsonText(v) != b.constant {
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
		p.read(d)
		if p.constant != "" && jsonText(got) != p.constant || p.enum != nil && !p.enum[jsonText(got)] {
			return false
		}
	}
	return true
}

// walker walks one JSON value alongside its schema.
type walker struct {
	d       *Doc
	op      string
	status  int
	ct      string
	kind    Kind // of a member the schema does not declare
	drift   bool // report undocumented members and values
	profile bool // report every member, for the profile
	// pointers makes the walk say where each member is (Sighting.Pointer).
	pointers bool
	seen     func(Sighting)
	scratch  [][]*node // parts, one slice per depth, reused
}

// maxDepth stops a walk down a schema that holds itself (a conversation
// step's sub-steps) at a depth no answer reaches.
const maxDepth = 64

func (w *walker) value(v any, sp *base.SchemaProxy, loc, target string) {
	if n := w.d.node(sp, target); n != nil {
		w.walk(v, n, loc, "", 0)
		return
	}
	w.shape(v, loc)
}

func (w *walker) walk(v any, n *node, loc, ptr string, depth int) {
	if depth > maxDepth {
		w.shape(v, loc)
		return
	}
	for len(w.scratch) <= depth {
		w.scratch = append(w.scratch, nil)
	}
	parts := w.d.parts(v, n, w.scratch[depth][:0], 0)
	w.scratch[depth] = parts
	var enum *node
	typ := jsonType(v)
	for _, p := range parts {
		if p.enum != nil && enum == nil {
			enum = p
		}
		// A whole number where the document says number is a number:
		// a cost of 0 is not another type than a cost of 0.5.
		if typ == "integer" && slices.Contains(p.types, "number") && !slices.Contains(p.types, "integer") {
			typ = "number"
		}
	}
	var value string
	if enum != nil && v != nil {
		value = jsonText(v)
		// A value of another type than the enum's is no new value of it
		// (a 5 where the states are strings): the validator reports it,
		// and no overlay could declare it.
		if w.drift && !enum.enum[value] && enum.holds(typ) {
			w.seen(Sighting{Drift: true, Kind: KindEnumValue, Operation: w.op, Status: w.status, ContentType: w.ct,
				Location: loc, Type: typ, Value: value, Example: v, Target: enum.target})
		}
	}
	if w.profile {
		w.seen(Sighting{Kind: w.kindOrResponse(), Operation: w.op, Status: w.status, ContentType: w.ct, Location: loc, Type: typ, Value: value})
	}
	switch val := v.(type) {
	case map[string]any:
		w.members(val, parts, loc, ptr, depth)
	case []any:
		for _, p := range parts {
			if p.items != nil {
				itemLoc := loc + "[]"
				for i, el := range val {
					w.walk(el, p.items, itemLoc, w.step(ptr, strconv.Itoa(i)), depth+1)
				}
				return
			}
		}
	}
}

// step is the pointer of a member of the value at ptr, when the walk
// tracks pointers.
func (w *walker) step(ptr, name string) string {
	if !w.pointers {
		return ""
	}
	return ptr + "/" + pointerEscaper.Replace(name)
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

func (w *walker) kindOrResponse() Kind {
	if w.kind == "" {
		return KindResponseField
	}
	return w.kind
}

// members walks the members of an object: each declared one against its
// schema; one no part declares is drift, unless the object is free-form
// (no part declares any member, or one says what any other member is).
func (w *walker) members(m map[string]any, parts []*node, loc, ptr string, depth int) {
	var other *node
	declaresAny, closed := false, false
	for _, p := range parts {
		declaresAny = declaresAny || len(p.props) > 0
		closed = closed || p.closed
		if other == nil {
			other = p.other
		}
	}
	visit := func(name string, v any) {
		for _, p := range parts {
			if c := p.props[name]; c != nil {
				w.walk(v, c, loc+"."+name, w.step(ptr, name), depth+1)
				return
			}
		}
		switch {
		case other != nil:
			w.walk(v, other, loc+".*", w.step(ptr, name), depth+1)
		case !declaresAny || closed:
			// Free-form: anything goes. Closed: an extra member is the
			// validator's to report, not drift.
		default:
			if w.drift {
				w.seen(Sighting{Drift: true, Kind: w.kindOrResponse(), Operation: w.op, Status: w.status, ContentType: w.ct,
					Location: loc + "." + name, Type: jsonType(v), Example: v, Target: parts[0].target, Name: name,
					Pointer: w.step(ptr, name)})
			}
			w.shape(v, loc+"."+name)
		}
	}
	for name, v := range m {
		visit(name, v)
	}
}

// shape reports, for the profile, a value no schema describes, and what
// it holds.
func (w *walker) shape(v any, loc string) {
	if !w.profile {
		return
	}
	w.seen(Sighting{Kind: KindResponseField, Operation: w.op, Status: w.status, ContentType: w.ct, Location: loc, Type: jsonType(v)})
	switch val := v.(type) {
	case map[string]any:
		for name, el := range val {
			w.shape(el, loc+"."+name)
		}
	case []any:
		for _, el := range val {
			w.shape(el, loc+"[]")
		}
	}
}

func typeAllowed(t string, allowed []string) bool {
	for _, a := range allowed {
		if a == t || a == "number" && t == "integer" {
			return true
		}
	}
	return false
}

// jsonType is the JSON type of a decoded value; a number without a
// fraction or exponent is an integer.
func jsonType(v any) string {
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

// jsonText is the JSON of a decoded value, numbers as written.
func jsonText(v any) string {
	if s, ok := v.(string); ok && plain(s) {
		return `"` + s + `"`
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// plain tells a string JSON writes as it is, between quotes.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
