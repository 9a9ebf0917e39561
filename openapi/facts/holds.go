package facts

import (
	"sort"
	"strings"
)

// Holds lists every fact of a client's surface that a document does not
// hold. client holds the facts of an official client library (written by
// openapi/clientfacts from its source): the operations it calls, what it
// sends and what it reads back. Unlike Diff, this is containment, not
// equality, and it is read in the direction each fact travels:
//
//   - every operation the client calls exists, with every parameter and
//     body field it can send, and a public operation (security "none") is
//     public in doc too;
//   - what the client sends, doc accepts: its enum values are doc's, null
//     where the client may send null, and doc requires nothing the client
//     may leave out;
//   - what the client reads, doc declares: every field, with the client's
//     type and enum values, and every field the client declares required
//     is required in doc (so a server following doc sends it).
//
// Client operations have one success response, "2XX"; it is compared with
// doc's lowest 2xx status. Schemas are compared through references on both
// sides; a difference inside a named client schema is reported under
// `schemas["Name"]`, once, however many operations reach it.
//
// In a Difference, Want is the client's fact and Got doc's (empty when doc
// lacks it).
func Holds(client, doc *Facts) []Difference {
	h := &holder{client: client, doc: doc, seen: map[string]bool{}, reported: map[string]bool{}, compared: map[string]bool{}}
	for key, c := range client.Operations {
		p := "operations" + segment(key)
		o, ok := doc.Operations[key]
		if !ok {
			h.add(p, render(c.OperationID), "")
			continue
		}
		h.operation(p, c, o)
	}
	// Types the client exports that no operation reaches (Error, read from
	// every failure) are compared with doc's schema of the same name. Which
	// way they travel is unknown, so required-ness and null are not.
	for name := range client.Schemas {
		if h.compared[name] {
			continue
		}
		if _, ok := doc.Schemas[name]; ok {
			h.schema("schemas"+segment(name), &Schema{Ref: name}, &Schema{Ref: name}, declared)
		}
	}
	sort.Slice(h.out, func(i, j int) bool {
		if h.out[i].Path != h.out[j].Path {
			return h.out[i].Path < h.out[j].Path
		}
		return h.out[i].Want < h.out[j].Want
	})
	return h.out
}

type direction int

const (
	sent     direction = iota // the client sends it: doc must accept it
	read                      // the client reads it: doc must declare it
	declared                  // the client only exports it: doc must have its fields, types and values
)

type holder struct {
	client, doc *Facts
	// seen holds the pairs of schemas already compared, per direction.
	seen     map[string]bool
	reported map[string]bool
	// compared holds the names of client schemas compared so far.
	compared map[string]bool
	out      []Difference
}

func (h *holder) add(path, want, got string) {
	key := path + "\x00" + want + "\x00" + got
	if h.reported[key] {
		return
	}
	h.reported[key] = true
	h.out = append(h.out, Difference{Path: path, Want: want, Got: got})
}

func (h *holder) operation(p string, c, o *Operation) {
	for _, s := range c.Security {
		if !contains(o.Security, s) {
			h.add(p+".security", render(c.Security), render(o.Security))
			break
		}
	}
	for key, cp := range c.Parameters {
		pp := p + ".parameters" + segment(key)
		op, ok := o.Parameters[key]
		if !ok {
			h.add(pp, render(cp), "")
			continue
		}
		if cp.Style != op.Style || cp.Explode != op.Explode {
			h.add(pp+".style", render(cp.Style+explodeWord(cp.Explode)), render(op.Style+explodeWord(op.Explode)))
		}
		if op.Required && !cp.Required {
			h.add(pp+".required", `"optional"`, `"required"`)
		}
		h.schema(pp+".schema", cp.Schema, op.Schema, sent)
	}
	for key, op := range o.Parameters {
		if _, ok := c.Parameters[key]; !ok && op.Required {
			h.add(p+".parameters"+segment(key), `"not sent"`, `"required"`)
		}
	}
	if c.RequestBody != nil {
		cs := c.RequestBody.Content["application/json"]
		if o.RequestBody == nil || o.RequestBody.Content["application/json"] == nil {
			h.add(p+".request_body", render(c.RequestBody), "")
		} else {
			if o.RequestBody.Required && !c.RequestBody.Required {
				h.add(p+".request_body.required", `"optional"`, `"required"`)
			}
			h.schema(p+".request_body.content", cs, o.RequestBody.Content["application/json"], sent)
		}
	}
	cr := c.Responses["2XX"]
	if cr == nil {
		return
	}
	code, or := lowestSuccess(o.Responses)
	rp := p + `.responses["2XX"]`
	if or == nil {
		h.add(rp, render(cr), "")
		return
	}
	cs := cr.Content["application/json"]
	if cs == nil {
		return
	}
	os := or.Content["application/json"]
	if os == nil {
		h.add(rp+".content", render(cs), render("no JSON body on "+code))
		return
	}
	h.schema(rp+".content", cs, os, read)
}

func explodeWord(explode bool) string {
	if explode {
		return ", explode"
	}
	return ""
}

func lowestSuccess(responses map[string]*Response) (string, *Response) {
	var codes []string
	for code := range responses {
		if strings.HasPrefix(code, "2") || strings.HasPrefix(code, "3") {
			codes = append(codes, code)
		}
	}
	if len(codes) == 0 {
		return "", nil
	}
	sort.Strings(codes)
	return codes[0], responses[codes[0]]
}

// resolveDoc follows doc's references to the schema itself.
func (h *holder) resolveDoc(s *Schema) (*Schema, string) {
	name := ""
	for range 32 {
		if s == nil || s.Ref == "" {
			break
		}
		name = s.Ref
		s = h.doc.Schemas[s.Ref]
	}
	return s, name
}

func (h *holder) schema(p string, c, o *Schema, dir direction) {
	if c == nil {
		return
	}
	if c.Ref != "" {
		_, oName := h.resolveDoc(o)
		key := c.Ref + "\x00" + oName + "\x00" + string(rune('0'+dir))
		if h.seen[key] {
			return
		}
		h.seen[key] = true
		h.compared[c.Ref] = true
		p = "schemas" + segment(c.Ref)
		c = h.client.Schemas[c.Ref]
		if c == nil {
			return
		}
	}
	o, _ = h.resolveDoc(o)
	if o == nil {
		h.add(p, render(c), "")
		return
	}
	if len(c.OneOf) > 0 {
		h.union(p, c, o, dir)
		return
	}
	h.plain(p, c, o, dir)
}

// union matches each branch of a client union with the branch of doc that
// holds it best (doc itself when it has no branches).
func (h *holder) union(p string, c, o *Schema, dir direction) {
	branches := o.OneOf
	if len(branches) == 0 {
		branches = append(branches, o.AnyOf...)
	}
	if len(branches) == 0 {
		branches = []*Schema{o}
	}
	for _, cb := range c.OneOf {
		var best []Difference
		for _, ob := range branches {
			trial := &holder{client: h.client, doc: h.doc, seen: map[string]bool{}, reported: map[string]bool{}, compared: h.compared}
			trial.schema(p+".one_of", cb, ob, dir)
			if best == nil || len(trial.out) < len(best) {
				best = trial.out
				if best == nil {
					best = []Difference{}
				}
			}
			if len(best) == 0 {
				break
			}
		}
		for _, d := range best {
			h.add(d.Path, d.Want, d.Got)
		}
	}
}

func (h *holder) plain(p string, c, o *Schema, dir direction) {
	if c.Type != "" && o.Type != "" && !typeHolds(c.Type, o.Type) {
		h.add(p+".type", render(c.Type), render(o.Type))
	}
	if len(o.Enum) > 0 {
		var missing []any
		for _, v := range c.Enum {
			if !containsValue(o.Enum, v) {
				missing = append(missing, v)
			}
		}
		if len(missing) > 0 {
			h.add(p+".enum", render(c.Enum), render(o.Enum))
		} else if len(c.Enum) == 0 && dir == sent && c.Type != "" {
			h.add(p+".enum", render("any "+c.Type), render(o.Enum))
		}
	}
	switch {
	case dir == sent && c.Nullable && !o.Nullable:
		h.add(p+".nullable", "true", "false")
	case dir == read && o.Nullable && !c.Nullable:
		h.add(p+".nullable", "false", "true")
	}
	for name, cp := range c.Properties {
		pp := p + ".properties" + segment(name)
		op, ok := o.Properties[name]
		if !ok {
			if o.AdditionalProperties != nil {
				h.schema(pp, cp, o.AdditionalProperties, dir)
				continue
			}
			if o.Type == "" && len(o.Properties) == 0 {
				continue // doc accepts anything here
			}
			h.add(pp, render(cp), "")
			continue
		}
		h.schema(pp, cp, op, dir)
	}
	switch dir {
	case read:
		for _, name := range c.Required {
			if !contains(o.Required, name) {
				h.add(p+".required"+segment(name), `"required"`, `"optional"`)
			}
		}
	case sent:
		for _, name := range o.Required {
			if !contains(c.Required, name) {
				h.add(p+".required"+segment(name), `"optional"`, `"required"`)
			}
		}
	}
	if c.Items != nil {
		h.schema(p+".items", c.Items, o.Items, dir)
	}
	if c.AdditionalProperties != nil {
		oa := o.AdditionalProperties
		if oa == nil && o.AdditionalPropertiesAllowed != "false" {
			oa = &Schema{}
		}
		h.schema(p+".additional_properties", c.AdditionalProperties, oa, dir)
	}
}

// typeHolds: a client's "number" is any JSON number, an integer included.
func typeHolds(client, doc string) bool {
	if client == doc {
		return true
	}
	return client == "number" && doc == "integer"
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func containsValue(list []any, v any) bool {
	for _, e := range list {
		if render(e) == render(v) {
			return true
		}
	}
	return false
}
