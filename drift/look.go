package drift

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"github.com/pb33f/libopenapi/orderedmap"
)

// Kind is what a fact of drift is about.
type Kind string

// The kinds of drift.
const (
	// KindOperation is a method and path the document has no operation
	// for, its template guessed (template.go).
	KindOperation Kind = "operation"
	// KindQueryParameter is a query parameter the operation does not
	// declare, sent in a request the server accepted.
	KindQueryParameter Kind = "query-parameter"
	// KindRequestField is a member of a request body its schema does not
	// declare, in a request the server accepted.
	KindRequestField Kind = "request-field"
	// KindResponseField is a member of an answer its schema does not
	// declare.
	KindResponseField Kind = "response-field"
	// KindEnumValue is a value outside the enum its schema declares.
	KindEnumValue Kind = "enum-value"
	// KindStatus is a status the operation does not document.
	KindStatus Kind = "status"
	// KindContentType is a content type the answer's documented status
	// does not list.
	KindContentType Kind = "content-type"
)

// Exchange is what Look reads of one request and its answer.
type Exchange struct {
	Method string
	Path   string // without the version prefix: /agent/runs
	Query  url.Values
	// RequestContentType and RequestBody are the request's.
	RequestContentType string
	RequestBody        []byte
	Status             int
	ContentType        string
	Body               []byte // without its Content-Encoding
}

// Sighting is one thing one exchange showed: a fact of drift (Drift), or,
// for the profile, a documented status, content type or member.
type Sighting struct {
	Drift       bool
	Kind        Kind
	Operation   string // "GET /agent/runs/{runId}"
	Status      int    // 0 for what is about the request
	ContentType string // the answer's media type, without parameters
	// Location names where in the exchange: "body.runs[].state",
	// "query.colour".
	Location string
	Type     string // the JSON type of the value: string, integer, number, boolean, object, array, null
	// Value is the JSON of a value whose schema declares an enum (and of
	// one outside it, for KindEnumValue).
	Value   string
	Example any // the value itself, for a fact's example
	// Target is where in the document an overlay declares the fact, as a
	// JSONPath; Name is the member, parameter, status or method it adds
	// there.
	Target string
	Name   string
	// Pointer is the JSON Pointer (RFC 6901) of a member in its body, set
	// by Extras only.
	Pointer string
}

// apiPrefix is the part of the API the document covers: the rest (the
// mock's control API, a health check) is not its to declare.
const apiPrefix = "/agent"

// Look walks one exchange against the document and calls seen for each
// fact of drift and each documented status, content type and answer member
// (in no particular order).
func (d *Doc) Look(x Exchange, seen func(Sighting)) {
	if x.Path != apiPrefix && !strings.HasPrefix(x.Path, apiPrefix+"/") {
		return
	}
	ct := mediaType(x.ContentType)
	template, item, op := d.route(x.Method, x.Path)
	if op == nil {
		d.lookUndocumented(x, template, ct, seen)
		return
	}
	opName := x.Method + " " + template
	opTarget := "$" + key("paths") + key(template) + key(strings.ToLower(x.Method))
	accepted := x.Status >= 200 && x.Status <= 299
	if accepted {
		d.lookRequest(x, opName, opTarget, item, op, seen)
	}
	resp, respTarget := responseFor(op, x.Status, opTarget)
	seen(Sighting{Kind: KindStatus, Operation: opName, Status: x.Status, ContentType: ct})
	body, isJSON := decode(ct, x.Body)
	if resp == nil {
		seen(Sighting{Drift: true, Kind: KindStatus, Operation: opName, Status: x.Status, ContentType: ct,
			Location: "status", Example: body, Target: opTarget + key("responses"), Name: strconv.Itoa(x.Status)})
		if isJSON {
			w := walker{d: d, op: opName, status: x.Status, ct: ct, seen: seen, profile: true}
			w.shape(body, "body")
		}
		return
	}
	if len(x.Body) == 0 && ct == "" {
		return
	}
	media := mediaOf(resp.Content, ct)
	if media == nil {
		seen(Sighting{Drift: true, Kind: KindContentType, Operation: opName, Status: x.Status, ContentType: ct,
			Location: "content-type", Example: body, Target: respTarget, Name: ct})
		if isJSON {
			w := walker{d: d, op: opName, status: x.Status, ct: ct, seen: seen, profile: true}
			w.shape(body, "body")
		}
		return
	}
	if !isJSON || media.Schema == nil {
		return
	}
	w := walker{d: d, op: opName, status: x.Status, ct: ct, kind: KindResponseField, drift: true, profile: true, seen: seen}
	w.value(body, media.Schema, "body", respTarget+key("content")+key(mediaKey(resp.Content, ct))+key("schema"))
}

// lookUndocumented reports an operation the document lacks, unless the
// server has none either.
func (d *Doc) lookUndocumented(x Exchange, template, ct string, seen func(Sighting)) {
	switch x.Status {
	case 404, 405, 501:
		return // the server does not have it either
	}
	target := "$" + key("paths")
	name := strings.ToLower(x.Method)
	if template == "" {
		template = d.templateOf(x.Path)
	} else {
		target += key(template) // the path is documented, the method not
	}
	opName := x.Method + " " + template
	body, isJSON := decode(ct, x.Body)
	seen(Sighting{Drift: true, Kind: KindOperation, Operation: opName, Status: x.Status, ContentType: ct,
		Location: template, Example: body, Target: target, Name: name})
	seen(Sighting{Kind: KindStatus, Operation: opName, Status: x.Status, ContentType: ct})
	if isJSON {
		w := walker{d: d, op: opName, status: x.Status, ct: ct, seen: seen, profile: true}
		w.shape(body, "body")
	}
}

// lookRequest reports the query parameters and request members the
// operation does not declare.
func (d *Doc) lookRequest(x Exchange, opName, opTarget string, item *v3.PathItem, op *v3.Operation, seen func(Sighting)) {
	if len(x.Query) > 0 {
		declared := map[string]bool{}
		for _, list := range [][]*v3.Parameter{item.Parameters, op.Parameters} {
			for _, p := range list {
				if p != nil && p.In == "query" {
					declared[p.Name] = true
				}
			}
		}
		for name, values := range x.Query {
			if declared[name] {
				continue
			}
			typ, example := "string", any(values[0])
			if len(values) > 1 {
				typ, example = "array", values
			}
			seen(Sighting{Drift: true, Kind: KindQueryParameter, Operation: opName, Location: "query." + name, Type: typ,
				Example: example, Target: opTarget, Name: name})
		}
	}
	if op.RequestBody == nil || len(x.RequestBody) == 0 {
		return
	}
	ct := mediaType(x.RequestContentType)
	media := mediaOf(op.RequestBody.Content, ct)
	body, isJSON := decode(ct, x.RequestBody)
	if media == nil || media.Schema == nil || !isJSON {
		return
	}
	w := walker{d: d, op: opName, kind: KindRequestField, drift: true, seen: seen}
	target := opTarget + key("requestBody")
	if ref := op.RequestBody.GoLow(); ref != nil && ref.IsReference() {
		target = refTarget(ref.GetReference())
	}
	w.value(body, media.Schema, "body", target+key("content")+key(mediaKey(op.RequestBody.Content, ct))+key("schema"))
}

// responseFor is the response documented for status (the exact code, then
// its range, then default) and where it is declared in the document.
func responseFor(op *v3.Operation, status int, opTarget string) (*v3.Response, string) {
	if op.Responses == nil {
		return nil, ""
	}
	keys := []string{strconv.Itoa(status), fmt.Sprintf("%dXX", status/100)}
	if op.Responses.Codes != nil {
		for _, k := range keys {
			if r := op.Responses.Codes.GetOrZero(k); r != nil {
				return r, responseTarget(r, opTarget+key("responses")+key(k))
			}
		}
	}
	if r := op.Responses.Default; r != nil {
		return r, responseTarget(r, opTarget+key("responses")+key("default"))
	}
	return nil, ""
}

// responseTarget is where a response is declared: the component a
// reference names, or in place.
func responseTarget(r *v3.Response, inPlace string) string {
	if low := r.GoLow(); low != nil && low.IsReference() {
		return refTarget(low.GetReference())
	}
	return inPlace
}

// mediaOf finds the media type of a content map that serves ct: the same
// type, a wildcard, or, for a request or answer without a type, the only
// one.
func mediaOf(content *orderedmap.Map[string, *v3.MediaType], ct string) *v3.MediaType {
	k := mediaKey(content, ct)
	if k == "" {
		return nil
	}
	return content.GetOrZero(k)
}

func mediaKey(content *orderedmap.Map[string, *v3.MediaType], ct string) string {
	if content == nil || content.Len() == 0 {
		return ""
	}
	if ct == "" {
		if content.Len() == 1 {
			return content.First().Key()
		}
		return ""
	}
	major, _, _ := strings.Cut(ct, "/")
	var wildcard string
	for p := content.First(); p != nil; p = p.Next() {
		k := strings.ToLower(p.Key())
		if mt := mediaType(k); mt == ct {
			return p.Key()
		} else if mt == "*/*" || mt == major+"/*" {
			wildcard = p.Key()
		}
	}
	return wildcard
}

// mediaType is a Content-Type without its parameters, lower case.
func mediaType(ct string) string {
	if ct == "" {
		return ""
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		return mt
	}
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// decode reads a JSON body, numbers kept as written so that an integer
// is told from a number.
func decode(ct string, body []byte) (any, bool) {
	if len(body) == 0 || ct != "" && !strings.Contains(ct, "json") {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
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
}

// part is one schema that applies to a value, with where it is declared.
type part struct {
	s      *base.Schema
	target string
}

// maxDepth stops a walk down a schema that holds itself (a conversation
// step's sub-steps) at a depth no answer reaches.
const maxDepth = 64

func (w *walker) value(v any, sp *base.SchemaProxy, loc, target string) {
	w.walk(v, sp, loc, "", target, 0)
}

func (w *walker) walk(v any, sp *base.SchemaProxy, loc, ptr, target string, depth int) {
	parts := w.d.parts(v, sp, target, nil, 0)
	if len(parts) == 0 || depth > maxDepth {
		w.shape(v, loc)
		return
	}
	typ := jsonType(v)
	var enumPart *part
	for i := range parts {
		if len(parts[i].s.Enum) > 0 {
			enumPart = &parts[i]
			break
		}
	}
	var value string
	if enumPart != nil && v != nil {
		value = jsonText(v)
		if w.drift && !w.d.enumHas(enumPart.s, value) {
			w.seen(Sighting{Drift: true, Kind: KindEnumValue, Operation: w.op, Status: w.status, ContentType: w.ct,
				Location: loc, Type: typ, Value: value, Example: v, Target: enumPart.target})
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
			if p.s.Items != nil && p.s.Items.IsA() {
				items, itemsTarget := p.s.Items.A, targetOf(p.s.Items.A, p.target+key("items"))
				for i, el := range val {
					w.walk(el, items, loc+"[]", w.step(ptr, strconv.Itoa(i)), itemsTarget, depth+1)
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
	return ptr + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(name)
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
func (w *walker) members(m map[string]any, parts []part, loc, ptr string, depth int) {
	type declared struct {
		sp     *base.SchemaProxy
		target string
	}
	props := map[string]declared{}
	var other *declared
	closed := false
	for _, p := range parts {
		if p.s.Properties != nil {
			for pair := p.s.Properties.First(); pair != nil; pair = pair.Next() {
				if _, ok := props[pair.Key()]; !ok {
					props[pair.Key()] = declared{pair.Value(), targetOf(pair.Value(), p.target+key("properties")+key(pair.Key()))}
				}
			}
		}
		if ap := p.s.AdditionalProperties; ap != nil && other == nil {
			switch {
			case ap.IsA() && ap.A != nil:
				other = &declared{ap.A, targetOf(ap.A, p.target+key("additionalProperties"))}
			case ap.IsB() && !ap.B:
				closed = true
			}
		}
	}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names) // the same fact is first seen the same way every time
	for _, name := range names {
		v := m[name]
		if d, ok := props[name]; ok {
			w.walk(v, d.sp, loc+"."+name, w.step(ptr, name), d.target, depth+1)
			continue
		}
		switch {
		case other != nil:
			w.walk(v, other.sp, loc+".*", w.step(ptr, name), other.target, depth+1)
		case len(props) == 0 || closed:
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

// parts are the schemas that apply to v: sp's own, those of its allOf,
// and those of the oneOf and anyOf branches v fits (all of them when it
// fits none: then the validator reports it, and drift says nothing more).
func (d *Doc) parts(v any, sp *base.SchemaProxy, target string, out []part, depth int) []part {
	if sp == nil || depth > 16 {
		return out
	}
	s := sp.Schema()
	if s == nil {
		return out
	}
	target = targetOf(sp, target)
	out = append(out, part{s, target})
	for i, sub := range s.AllOf {
		out = d.parts(v, sub, fmt.Sprintf("%s%s[%d]", target, key("allOf"), i), out, depth+1)
	}
	for _, branches := range []struct {
		name string
		list []*base.SchemaProxy
	}{{"oneOf", s.OneOf}, {"anyOf", s.AnyOf}} {
		if len(branches.list) == 0 {
			continue
		}
		fits := make([]int, 0, len(branches.list))
		for i, b := range branches.list {
			if d.fits(v, b.Schema()) {
				fits = append(fits, i)
			}
		}
		if len(fits) == 0 {
			for i := range branches.list {
				fits = append(fits, i)
			}
		}
		for _, i := range fits {
			out = d.parts(v, branches.list[i], fmt.Sprintf("%s%s[%d]", target, key(branches.name), i), out, depth+1)
		}
	}
	return out
}

// fits tells whether v could be of branch s: its type, its required
// members, and the members it fixes with an enum or a const.
func (d *Doc) fits(v any, s *base.Schema) bool {
	if s == nil {
		return false
	}
	if len(s.Type) > 0 && !typeAllowed(jsonType(v), s.Type) {
		return false
	}
	if s.Const != nil && v != nil && jsonText(v) != yamlJSON(s.Const) {
		return false
	}
	m, ok := v.(map[string]any)
	if !ok {
		return true
	}
	for _, r := range s.Required {
		if _, ok := m[r]; !ok {
			return false
		}
	}
	if s.Properties != nil {
		for pair := s.Properties.First(); pair != nil; pair = pair.Next() {
			got, ok := m[pair.Key()]
			ps := pair.Value().Schema()
			if !ok || ps == nil || got == nil {
				continue
			}
			if ps.Const != nil && jsonText(got) != yamlJSON(ps.Const) {
				return false
			}
			if len(ps.Enum) > 0 && !d.enumHas(ps, jsonText(got)) {
				return false
			}
		}
	}
	return true
}

func typeAllowed(t string, allowed []string) bool {
	for _, a := range allowed {
		if a == t || a == "number" && t == "integer" {
			return true
		}
	}
	return false
}

// enumHas tells whether s's enum lists the value whose JSON is value.
func (d *Doc) enumHas(s *base.Schema, value string) bool {
	if set, ok := d.enums.Load(s); ok {
		return set.(map[string]bool)[value]
	}
	set := make(map[string]bool, len(s.Enum))
	for _, n := range s.Enum {
		set[yamlJSON(n)] = true
	}
	d.enums.Store(s, set)
	return set[value]
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
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
