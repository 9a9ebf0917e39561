package drift

import "encoding/json"

// Extras are the members of value (a decoded JSON value) that the
// document's component schema (#/components/schemas/<component>) does not
// declare, at any depth, by JSON Pointer relative to value: the topmost
// undocumented member of each branch, whole (openapi.Model.Undeclared).
// The recorder keeps them so that the mock gives back what the real server
// gave. nil when there are none, or the document has no such component.
func (d *Doc) Extras(component string, value any) map[string]json.RawMessage {
	return d.model.Undeclared(component, value)
}
