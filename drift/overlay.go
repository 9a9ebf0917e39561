package drift

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pb33f/go-yaml"

	"github.com/agentruns/agentruns/internal/scrub"
)

// The overlay is an OpenAPI Overlay 1.0 document: one action per place in
// the document that needs a change, each an update (a merge: members are
// added, lists appended), so that applying it declares every fact and
// changes nothing else. A team reviews it like any change to the
// document. Reading and applying overlays is the document model's
// (openapi.ApplyOverlay).

// OverlayVersion is the version of the Overlay specification written.
const OverlayVersion = "1.0.0"

// What the overlay adds is marked as the document marks what it holds
// beyond the published document (x-agentruns-source), so that the drift
// test against the published document names each addition until it is
// listed, with its reason, among the allowed differences.
const (
	sourceKey   = "x-agentruns-source"
	sourceValue = "live traffic"
)

type overlayDoc struct {
	Overlay string         `yaml:"overlay"`
	Info    overlayInfo    `yaml:"info"`
	Extends string         `yaml:"extends,omitempty"`
	Actions []overlayEntry `yaml:"actions"`
}

type overlayInfo struct {
	Title   string `yaml:"title"`
	Version string `yaml:"version"`
}

type overlayEntry struct {
	Target      string         `yaml:"target"`
	Description string         `yaml:"description,omitempty"`
	Update      map[string]any `yaml:"update"`
}

// Overlay writes facts as an overlay of the document at extends (a URL
// or a path; "" leaves it out), versioned by when it was written.
func Overlay(facts []Fact, extends string, written time.Time) ([]byte, error) {
	byTarget := map[string]*overlayEntry{}
	var order []string
	entry := func(target string) *overlayEntry {
		e := byTarget[target]
		if e == nil {
			e = &overlayEntry{Target: target, Update: map[string]any{}}
			byTarget[target] = e
			order = append(order, target)
		}
		return e
	}
	for _, f := range mergeSightings(facts) {
		if f.Target == "" || f.NotDeclared != "" || undeclarable(&f) != "" {
			continue
		}
		e := entry(f.Target)
		seen := seenText(f)
		switch f.Kind {
		case KindResponseField, KindRequestField:
			props := child(e.Update, "properties")
			prop, _ := props[f.Name].(map[string]any)
			props[f.Name] = fieldSchema(prop, f, seen)
		case KindEnumValue:
			var v any
			if json.Unmarshal([]byte(f.Value), &v) == nil {
				list, _ := e.Update["enum"].([]any)
				e.Update["enum"] = append(list, v)
			}
		case KindQueryParameter:
			list, _ := e.Update["parameters"].([]any)
			schema := map[string]any{"type": "string"}
			if slices.Contains(f.Types, "array") {
				schema = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
			}
			param := map[string]any{
				"name": f.Name, "in": "query", "required": false, "description": seen, "schema": schema, sourceKey: sourceValue,
			}
			if v, ok := exampleValue(f); ok {
				param["example"] = v
			}
			e.Update["parameters"] = append(list, param)
		case KindStatus:
			addResponse(e.Update, f, seen)
		case KindContentType:
			child(e.Update, "content")[f.ContentType] = mediaWithExample(f)
		case KindOperation:
			method := f.Name
			holder := e.Update
			if f.Target == "$"+key("paths") {
				holder = child(e.Update, f.Location)
				if _, ok := holder["parameters"]; !ok {
					if params := pathParameters(f.Location); len(params) > 0 {
						holder["parameters"] = params
					}
				}
			}
			op := child(holder, method)
			op["summary"] = "Not in the document: seen in live traffic"
			op[sourceKey] = sourceValue
			addResponse(child(op, "responses"), f, seen)
		}
	}
	sort.Strings(order)
	doc := overlayDoc{
		Overlay: OverlayVersion,
		Info:    overlayInfo{Title: "What live traffic showed that the document does not declare", Version: written.UTC().Format(time.RFC3339)},
		Extends: extends,
		Actions: make([]overlayEntry, 0, len(order)),
	}
	for _, t := range order {
		e := byTarget[t]
		e.Description = describe(e.Update)
		doc.Actions = append(doc.Actions, *e)
	}
	if len(doc.Actions) == 0 {
		// An overlay has at least one action: without drift, one that
		// changes nothing says so.
		doc.Actions = append(doc.Actions, overlayEntry{Target: "$" + key("info"), Update: map[string]any{},
			Description: "Nothing to declare: the traffic showed nothing the document does not declare"})
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// child is m[name] as a map, made if missing.
func child(m map[string]any, name string) map[string]any {
	c, ok := m[name].(map[string]any)
	if !ok {
		c = map[string]any{}
		m[name] = c
	}
	return c
}

// mergeSightings makes one fact of those that declare the same thing in
// the same place (a member missing from one schema, seen in two
// operations): counted together, from the first sighting to the last.
func mergeSightings(facts []Fact) []Fact {
	out := make([]Fact, 0, len(facts))
	at := map[string]int{}
	for _, f := range facts {
		k := ""
		switch f.Kind {
		case KindResponseField, KindRequestField, KindQueryParameter:
			k = string(f.Kind) + "\x00" + f.Target + "\x00" + f.Name
		case KindEnumValue:
			k = string(f.Kind) + "\x00" + f.Target + "\x00" + f.Value
		}
		i, ok := at[k]
		if k == "" || !ok {
			if k != "" {
				at[k] = len(out)
			}
			f.Types = append([]string(nil), f.Types...)
			out = append(out, f)
			continue
		}
		m := &out[i]
		m.Count += f.Count
		if f.FirstSeen.Before(m.FirstSeen) {
			m.FirstSeen = f.FirstSeen
		}
		if f.LastSeen.After(m.LastSeen) {
			m.LastSeen = f.LastSeen
		}
		for _, t := range f.Types {
			if !slices.Contains(m.Types, t) {
				m.Types = append(m.Types, t)
			}
		}
		if m.Example == "" {
			m.Example = f.Example
		}
		m.also++
	}
	return out
}

// seenText says when and how often a fact was seen, and where.
func seenText(f Fact) string {
	where := f.Operation
	if f.Status != 0 {
		where += fmt.Sprintf(" (%d)", f.Status)
	}
	also := ""
	if f.also > 0 {
		also = fmt.Sprintf(" and %d other place(s)", f.also)
	}
	return fmt.Sprintf("Seen in live traffic %d time(s) from %s to %s, in %s at %s%s.",
		f.Count, f.FirstSeen.UTC().Format(time.RFC3339), f.LastSeen.UTC().Format(time.RFC3339), where, f.Location, also)
}

// fieldSchema declares a member of the types seen (merged with what an
// earlier fact declared of the same member), with its example. An object
// or a list is declared free-form: what it holds is the reviewer's to
// describe.
func fieldSchema(prev map[string]any, f Fact, seen string) map[string]any {
	types := map[string]bool{}
	if prev != nil {
		switch t := prev["type"].(type) {
		case string:
			types[t] = true
		case []any:
			for _, x := range t {
				types[fmt.Sprint(x)] = true
			}
		}
	}
	for _, t := range f.Types {
		types[t] = true
	}
	if types["integer"] && types["number"] {
		delete(types, "integer")
	}
	list := make([]string, 0, len(types))
	for t := range types {
		list = append(list, t)
	}
	sort.Strings(list)
	s := map[string]any{}
	switch len(list) {
	case 0:
	case 1:
		s["type"] = list[0]
	default:
		anyList := make([]any, len(list))
		for i, t := range list {
			anyList[i] = t
		}
		s["type"] = anyList
	}
	if prev != nil {
		for _, k := range []string{"description", sourceKey, "examples"} {
			if v, ok := prev[k]; ok {
				s[k] = v
			}
		}
		return s
	}
	s["description"] = seen
	s[sourceKey] = sourceValue
	if v, ok := exampleValue(f); ok {
		s["examples"] = []any{v}
	}
	return s
}

// addResponse declares the status of f, with its media type, in a
// responses object.
func addResponse(responses map[string]any, f Fact, seen string) {
	r := child(responses, fmt.Sprint(f.Status))
	if _, ok := r["description"]; !ok {
		r["description"] = seen
		r[sourceKey] = sourceValue
	}
	if f.ContentType != "" {
		child(r, "content")[f.ContentType] = mediaWithExample(f)
	}
}

// mediaWithExample is a media type of any schema, with the example seen.
func mediaWithExample(f Fact) map[string]any {
	m := map[string]any{"schema": map[string]any{}, sourceKey: sourceValue}
	if v, ok := exampleValue(f); ok {
		m["example"] = v
	}
	return m
}

func exampleValue(f Fact) (any, bool) {
	var v any
	if f.Example == "" || json.Unmarshal([]byte(f.Example), &v) != nil {
		return nil, false // none, or cut short
	}
	return v, true
}

// methods are the operations a path item holds (OpenAPI 3.0 and 3.1):
// any other method, "$REF" or "QUERY" or "PARAMETERS", would write a
// member that is no operation, or a reference that resolves nowhere.
var methods = map[string]bool{"get": true, "put": true, "post": true, "delete": true, "options": true, "head": true, "patch": true, "trace": true}

// undeclarable says why the overlay cannot declare f, "" when it can:
// only what an OpenAPI document can hold is written; the rest stays in
// the drift report, with this reason.
func undeclarable(f *Fact) string {
	switch {
	case f.Kind == KindOperation && !methods[f.Name]:
		return fmt.Sprintf("%q is not one of the methods an OpenAPI path holds (get, put, post, delete, options, head, patch, trace)", f.Name)
	case f.Kind == KindOperation && !strings.HasPrefix(f.Location, "/"):
		return "a path template must begin with /"
	case (f.Kind == KindOperation || f.Kind == KindStatus) && (f.Status < 100 || f.Status > 599):
		return fmt.Sprintf("status %d is outside the 100 to 599 an OpenAPI response is declared for", f.Status)
	case (f.Kind == KindContentType || f.ContentType != "" && f.Kind != KindQueryParameter && f.Kind != KindRequestField) && !isMediaType(f.ContentType):
		return fmt.Sprintf("%q is not a media type (type/subtype)", f.ContentType)
	case f.Kind == KindEnumValue && f.Value == `"`+scrub.Redacted+`"`:
		return "a value under a secret name is not written down"
	}
	return ""
}

// isMediaType tells a media type, type/subtype, from anything else a
// Content-Type header may carry.
func isMediaType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	major, minor, ok := strings.Cut(mt, "/")
	return err == nil && ok && major != "" && minor != ""
}

// pathParameters declares the parameters of a template.
func pathParameters(template string) []any {
	var out []any
	for _, seg := range strings.Split(template, "/") {
		if isParam(seg) {
			out = append(out, map[string]any{
				"name": strings.Trim(seg, "{}"), "in": "path", "required": true, "schema": map[string]any{"type": "string"},
			})
		}
	}
	return out
}

// describe says in a line what an action adds.
func describe(update map[string]any) string {
	var parts []string
	for _, k := range sortedKeys(update) {
		switch v := update[k].(type) {
		case map[string]any:
			parts = append(parts, k+": "+strings.Join(sortedKeys(v), ", "))
		case []any:
			var names []string
			for _, x := range v {
				if m, ok := x.(map[string]any); ok {
					names = append(names, fmt.Sprint(m["name"]))
				} else {
					b, _ := json.Marshal(x)
					names = append(names, string(b))
				}
			}
			parts = append(parts, k+": "+strings.Join(names, ", "))
		}
	}
	return "Declares what live traffic showed: " + strings.Join(parts, "; ")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
