package drift

import (
	"encoding/json"

	"github.com/pb33f/libopenapi/datamodel/high/base"
)

// Extras are the members of value (a decoded JSON value) that the
// document's component schema (#/components/schemas/<component>) does not
// declare, at any depth, by JSON Pointer relative to value: the topmost
// undocumented member of each branch, whole. The recorder keeps them so
// that the mock gives back what the real server gave. nil when there are
// none, or the document has no such component.
func (d *Doc) Extras(component string, value any) map[string]json.RawMessage {
	sp := d.component(component)
	if sp == nil {
		return nil
	}
	var out map[string]json.RawMessage
	w := walker{d: d, kind: KindResponseField, drift: true, pointers: true, seen: func(s Sighting) {
		if !s.Drift || s.Pointer == "" || s.Kind == KindEnumValue {
			return
		}
		raw, err := json.Marshal(s.Example)
		if err != nil {
			return
		}
		if out == nil {
			out = map[string]json.RawMessage{}
		}
		out[s.Pointer] = raw
	}}
	w.walk(value, sp, "", "", "$"+key("components")+key("schemas")+key(component), 0)
	return out
}

func (d *Doc) component(name string) *base.SchemaProxy {
	if d.model.Components == nil || d.model.Components.Schemas == nil {
		return nil
	}
	return d.model.Components.Schemas.GetOrZero(name)
}
