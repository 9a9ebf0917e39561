package drift

import (
	"slices"

	"github.com/agentruns/agentruns/openapi"
)

// walker walks one JSON value alongside its schema, as the document's
// model reads it (openapi.Schema).
type walker struct {
	op      string
	status  int
	ct      string
	kind    Kind // of a member the schema does not declare
	drift   bool // report undocumented members and values
	profile bool // report every member, for the profile
	seen    func(Sighting)
	scratch [][]*openapi.Schema // parts, one slice per depth, reused
}

// maxDepth stops a walk down a schema that holds itself (a conversation
// step's sub-steps) at a depth no answer reaches.
const maxDepth = 64

// value walks v against media's schema, or reports its shape when the
// schema does not resolve.
func (w *walker) value(v any, s *openapi.Schema, loc string) {
	if s != nil {
		w.walk(v, s, loc, 0)
		return
	}
	w.shape(v, loc)
}

func (w *walker) walk(v any, n *openapi.Schema, loc string, depth int) {
	if depth > maxDepth {
		w.shape(v, loc)
		return
	}
	for len(w.scratch) <= depth {
		w.scratch = append(w.scratch, nil)
	}
	parts := n.Parts(v, w.scratch[depth][:0])
	w.scratch[depth] = parts
	var enum *openapi.Schema
	typ := jsonType(v)
	for _, p := range parts {
		if p.HasEnum() && enum == nil {
			enum = p
		}
		// A whole number where the document says number is a number:
		// a cost of 0 is not another type than a cost of 0.5.
		if typ == "integer" && slices.Contains(p.Types(), "number") && !slices.Contains(p.Types(), "integer") {
			typ = "number"
		}
	}
	var value string
	if enum != nil && v != nil {
		value = jsonText(v)
		// A value of another type than the enum's is no new value of it
		// (a 5 where the states are strings): the validator reports it,
		// and no overlay could declare it.
		if w.drift && !enum.InEnum(value) && enum.Holds(typ) {
			w.seen(Sighting{Drift: true, Kind: KindEnumValue, Operation: w.op, Status: w.status, ContentType: w.ct,
				Location: loc, Type: typ, Value: value, Example: v, Target: refTarget(enum.Where())})
		}
	}
	if w.profile {
		w.seen(Sighting{Kind: w.kindOrResponse(), Operation: w.op, Status: w.status, ContentType: w.ct, Location: loc, Type: typ, Value: value})
	}
	switch val := v.(type) {
	case map[string]any:
		w.members(val, parts, loc, depth)
	case []any:
		for _, p := range parts {
			if items := p.Items(); items != nil {
				itemLoc := loc + "[]"
				for _, el := range val {
					w.walk(el, items, itemLoc, depth+1)
				}
				return
			}
		}
	}
}

func (w *walker) kindOrResponse() Kind {
	if w.kind == "" {
		return KindResponseField
	}
	return w.kind
}

// members walks the members of an object: each declared one against its
// schema; one no part declares is drift, unless the object is free-form
// (no part declares any member, or one says what any other member is).
func (w *walker) members(m map[string]any, parts []*openapi.Schema, loc string, depth int) {
	var other *openapi.Schema
	declaresAny, closed := false, false
	for _, p := range parts {
		declaresAny = declaresAny || p.DeclaresMembers()
		closed = closed || p.Closed()
		if other == nil {
			other = p.Other()
		}
	}
	visit := func(name string, v any) {
		for _, p := range parts {
			if c := p.Property(name); c != nil {
				w.walk(v, c, loc+"."+name, depth+1)
				return
			}
		}
		switch {
		case other != nil:
			w.walk(v, other, loc+".*", depth+1)
		case !declaresAny || closed:
			// Free-form: anything goes. Closed: an extra member is the
			// validator's to report, not drift.
		default:
			if w.drift {
				w.seen(Sighting{Drift: true, Kind: w.kindOrResponse(), Operation: w.op, Status: w.status, ContentType: w.ct,
					Location: loc + "." + name, Type: jsonType(v), Example: v, Target: refTarget(parts[0].Where()), Name: name})
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

// jsonType is the JSON type of a decoded value; a number without a
// fraction or exponent is an integer.
func jsonType(v any) string { return openapi.JSONType(v) }

// jsonText is the JSON of a decoded value, numbers as written.
func jsonText(v any) string { return openapi.JSONText(v) }
