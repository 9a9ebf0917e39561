package openapi

import (
	"encoding/json"
	"strconv"
)

// Undeclared are the members of value (a decoded JSON value) that the
// document's component schema (#/components/schemas/<component>) does not
// declare, at any depth, by JSON Pointer relative to value: the topmost
// undocumented member of each branch, whole. A member of a free-form
// object (one that declares no member, or says what any other member is)
// is declared; one of a closed object is the validator's to refuse. nil
// when there are none, or the document has no such component.
func (m *Model) Undeclared(component string, value any) map[string]json.RawMessage {
	n := m.Component(component)
	if n == nil {
		return nil
	}
	u := undeclared{}
	u.walk(value, n, "", 0)
	return u.found
}

// maxWalkDepth stops a walk down a schema that holds itself (a
// conversation step's sub-steps) at a depth no answer reaches.
const maxWalkDepth = 64

type undeclared struct {
	found   map[string]json.RawMessage
	scratch [][]*Schema // parts, one slice per depth, reused
}

func (u *undeclared) walk(v any, n *Schema, ptr string, depth int) {
	if depth > maxWalkDepth {
		return
	}
	for len(u.scratch) <= depth {
		u.scratch = append(u.scratch, nil)
	}
	parts := n.Parts(v, u.scratch[depth][:0])
	u.scratch[depth] = parts
	switch val := v.(type) {
	case map[string]any:
		u.members(val, parts, ptr, depth)
	case []any:
		for _, p := range parts {
			if p.items != nil {
				for i, el := range val {
					u.walk(el, p.items, ptr+"/"+strconv.Itoa(i), depth+1)
				}
				return
			}
		}
	}
}

func (u *undeclared) members(m map[string]any, parts []*Schema, ptr string, depth int) {
	var other *Schema
	declaresAny, closed := false, false
	for _, p := range parts {
		declaresAny = declaresAny || len(p.props) > 0
		closed = closed || p.closed
		if other == nil {
			other = p.other
		}
	}
	for name, v := range m {
		at := ptr + "/" + escapePointer(name)
		if c := declaredBy(parts, name); c != nil {
			u.walk(v, c, at, depth+1)
			continue
		}
		switch {
		case other != nil:
			u.walk(v, other, at, depth+1)
		case !declaresAny || closed:
		default:
			raw, err := json.Marshal(v)
			if err != nil {
				continue
			}
			if u.found == nil {
				u.found = map[string]json.RawMessage{}
			}
			u.found[at] = raw
		}
	}
}

// declaredBy is the schema the first part that declares the member name
// gives it, nil when none does.
func declaredBy(parts []*Schema, name string) *Schema {
	for _, p := range parts {
		if c := p.props[name]; c != nil {
			return c
		}
	}
	return nil
}
