// Package clientcheck judges one answer of the API as a released official
// client would read it. The document is the contract, but a server ships to
// the people who call it through the clients, at whatever version they have
// installed; each version declares what it reads (openapi/clientfacts), and
// an answer the document allows may still break it:
//
//   - a field the version declares required is missing;
//   - a field has a JSON type the version would not read (null included,
//     where the version does not declare it nullable);
//   - a value lies outside the set of literals the version declares.
//
// Only success answers with a JSON body are judged, since those are what
// each client's facts describe, and only for versions that call the
// operation. Fields a version does not declare are ignored: the clients
// pass them through.
package clientcheck

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentruns/agentruns/openapi/clientfacts"
	"github.com/agentruns/agentruns/openapi/facts"
)

// Version is one released client version and what it reads.
type Version struct {
	// Name is "<language>-<version>", e.g. "typescript-1.0.0-alpha.8".
	Name  string
	facts *facts.Facts
	// routes are the version's operations, for matching a request path.
	routes []route
}

type route struct {
	method   string
	segments []string // "{runId}" stands for any one segment
	key      string   // "GET /agent/runs/{runId}"
	answer   *facts.Schema
}

// Break is one way an answer breaks a client version.
type Break struct {
	// Operation is the version's operation, "GET /agent/runs/{runId}".
	Operation string `json:"operation"`
	// Field is where in the answer, "runs[].state" ("" for the whole body).
	Field string `json:"field"`
	// Expected is what the version declares, Got what the answer holds.
	Expected string `json:"expected"`
	Got      string `json:"got"`
}

func (b Break) String() string {
	field := b.Field
	if field == "" {
		field = "(the body)"
	}
	return fmt.Sprintf("%s %s: expected %s, got %s", b.Operation, field, b.Expected, b.Got)
}

// Names lists the known client versions, for a command's help; if their
// facts cannot be read, it says so instead.
func Names() string {
	versions, err := Load()
	if err != nil {
		return "(the client facts cannot be read: " + err.Error() + ")"
	}
	names := make([]string, 0, len(versions))
	for _, v := range versions {
		names = append(names, v.Name)
	}
	return strings.Join(names, ", ")
}

// Load returns every known client version (openapi/clientfacts), in the
// order of clientfacts.All.
func Load() ([]*Version, error) {
	all, err := clientfacts.All()
	if err != nil {
		return nil, err
	}
	out := make([]*Version, 0, len(all))
	for _, f := range all {
		out = append(out, New(f))
	}
	return out, nil
}

// New makes a Version of one client's facts, which must name their client.
func New(f *facts.Facts) *Version {
	v := &Version{Name: clientfacts.Name(f.Client), facts: f}
	for key, op := range f.Operations {
		method, path, _ := strings.Cut(key, " ")
		r := route{method: method, segments: strings.Split(strings.Trim(path, "/"), "/"), key: key}
		if ok := op.Responses["2XX"]; ok != nil {
			r.answer = ok.Content["application/json"]
		}
		v.routes = append(v.routes, r)
	}
	// A literal segment wins over a parameter: /agent/runs/followups is
	// not /agent/runs/{runId}. Sorting by key keeps the choice stable.
	slices.SortFunc(v.routes, func(a, b route) int { return strings.Compare(a.key, b.key) })
	return v
}

// Calls tells whether the version calls the operation a request with this
// method and path (relative to the API's base, unescaped) reaches, and
// names it as the version does.
func (v *Version) Calls(method, path string) (operation string, ok bool) {
	r := v.match(method, path)
	if r == nil {
		return "", false
	}
	return r.key, true
}

func (v *Version) match(method, path string) *route {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var best *route
	bestLiterals := -1
	for i := range v.routes {
		r := &v.routes[i]
		if r.method != method || len(r.segments) != len(segs) {
			continue
		}
		literals, ok := 0, true
		for j, s := range r.segments {
			switch {
			case strings.HasPrefix(s, "{"):
			case s == segs[j]:
				literals++
			default:
				ok = false
			}
		}
		if ok && literals > bestLiterals {
			best, bestLiterals = r, literals
		}
	}
	return best
}

// Operation returns the facts of an operation of the version, by its key
// ("GET /agent/runs/{runId}") with any names for its path parameters.
func (v *Version) Operation(key string) (string, *facts.Operation, bool) {
	method, path, _ := strings.Cut(key, " ")
	r := v.match(method, path)
	if r == nil {
		return "", nil, false
	}
	// A parameter segment must meet a parameter segment, not a literal.
	for i, s := range strings.Split(strings.Trim(path, "/"), "/") {
		if strings.HasPrefix(s, "{") != strings.HasPrefix(r.segments[i], "{") {
			return "", nil, false
		}
	}
	return r.key, v.facts.Operations[r.key], true
}

// Schema resolves a reference to one of the version's named schemas; a
// schema without one is returned as it is.
func (v *Version) Schema(s *facts.Schema) *facts.Schema {
	for range 16 {
		if s == nil || s.Ref == "" {
			return s
		}
		named, ok := v.facts.Schemas[s.Ref]
		if !ok {
			return &facts.Schema{}
		}
		if s.Nullable && !named.Nullable {
			c := *named
			c.Nullable = true
			named = &c
		}
		s = named
	}
	return s
}

// Judge judges one decoded JSON answer (as encoding/json decodes into an
// any) of a request with this method and path, which the server answered
// with status. checked tells whether the version reads such an answer at
// all: a success of an operation it calls that has a JSON body.
func (v *Version) Judge(method, path string, status int, body any) (checked bool, breaks []Break) {
	if status < 200 || status > 299 {
		return false, nil
	}
	r := v.match(method, path)
	if r == nil || r.answer == nil {
		return false, nil
	}
	j := judge{v: v, op: r.key}
	j.value("", r.answer, body)
	return true, j.breaks
}

type judge struct {
	v      *Version
	op     string
	breaks []Break
}

func (j *judge) add(field, expected, got string) {
	j.breaks = append(j.breaks, Break{Operation: j.op, Field: field, Expected: expected, Got: got})
}

func (j *judge) value(field string, s *facts.Schema, v any) {
	s = j.v.Schema(s)
	if s == nil {
		return
	}
	if v == nil {
		if !s.Nullable && !anything(s) {
			j.add(field, describe(s), "null")
		}
		return
	}
	if len(s.OneOf) > 0 {
		j.oneOf(field, s, v)
		return
	}
	if !typeHolds(s.Type, v) {
		j.add(field, describe(s), got(v))
		return
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return e == v }) {
		j.add(field, "one of "+values(s.Enum), got(v))
		return
	}
	switch v := v.(type) {
	case map[string]any:
		for _, name := range s.Required {
			if _, ok := v[name]; !ok {
				j.add(join(field, name), "required "+describe(j.v.Schema(s.Properties[name])), "missing")
			}
		}
		for name, fv := range v {
			if p, ok := s.Properties[name]; ok {
				j.value(join(field, name), p, fv)
			} else if s.AdditionalProperties != nil {
				j.value(join(field, name), s.AdditionalProperties, fv)
			}
		}
	case []any:
		if s.Items != nil {
			// One report per field, not per element: "runs[].state".
			before := len(j.breaks)
			for _, e := range v {
				j.value(field+"[]", s.Items, e)
				if len(j.breaks) > before {
					break
				}
			}
		}
	}
}

// oneOf judges a value against a union: it holds when one branch takes it
// whole. When every branch tells itself apart by one literal property
// (artifact_type: "PLAN"), a value naming none is reported as that
// property outside the set, and a value naming one is judged by that
// branch alone.
func (j *judge) oneOf(field string, s *facts.Schema, v any) {
	var best []Break
	for i, b := range s.OneOf {
		sub := judge{v: j.v, op: j.op}
		sub.value(field, b, v)
		if len(sub.breaks) == 0 {
			return
		}
		if i == 0 || len(sub.breaks) < len(best) {
			best = sub.breaks
		}
	}
	if obj, ok := v.(map[string]any); ok {
		if tag, branches := j.discriminator(s); tag != "" {
			var all []any
			for value, b := range branches {
				if obj[tag] == value {
					j.value(field, b, v)
					return
				}
				all = append(all, value)
			}
			slices.SortFunc(all, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
			j.add(join(field, tag), "one of "+values(all), got(obj[tag]))
			return
		}
	}
	j.breaks = append(j.breaks, best...)
}

// discriminator finds the property every branch of a union requires with
// a single literal value, and each branch by its value.
func (j *judge) discriminator(s *facts.Schema) (string, map[any]*facts.Schema) {
	first := j.v.Schema(s.OneOf[0])
	for _, name := range first.Required {
		branches := map[any]*facts.Schema{}
		for _, b := range s.OneOf {
			bs := j.v.Schema(b)
			p := j.v.Schema(bs.Properties[name])
			if p == nil || len(p.Enum) != 1 || !slices.Contains(bs.Required, name) {
				branches = nil
				break
			}
			branches[p.Enum[0]] = bs
		}
		if len(branches) == len(s.OneOf) {
			return name, branches
		}
	}
	return "", nil
}

func join(field, name string) string {
	if field == "" {
		return name
	}
	return field + "." + name
}

// anything tells whether a schema declares nothing (unknown, any).
func anything(s *facts.Schema) bool {
	return s.Type == "" && len(s.OneOf) == 0 && len(s.Enum) == 0 && s.Properties == nil && s.Items == nil && s.AdditionalProperties == nil
}

// typeHolds tells whether a JSON value has one of the declared types
// ("string", "number|string"); no type holds anything.
func typeHolds(declared string, v any) bool {
	if declared == "" {
		return true
	}
	for _, t := range strings.Split(declared, "|") {
		switch v := v.(type) {
		case string:
			if t == "string" {
				return true
			}
		case bool:
			if t == "boolean" {
				return true
			}
		case float64:
			if t == "number" || t == "integer" && v == float64(int64(v)) {
				return true
			}
		case map[string]any:
			if t == "object" {
				return true
			}
		case []any:
			if t == "array" {
				return true
			}
		}
	}
	return false
}

// describe says what a schema declares, briefly: "string", "RunState".
func describe(s *facts.Schema) string {
	if s == nil {
		return "a value"
	}
	t := s.Type
	switch {
	case len(s.Enum) > 0:
		t += " (one of " + values(s.Enum) + ")"
	case t == "" && len(s.OneOf) > 0:
		t = "one of " + fmt.Sprint(len(s.OneOf)) + " shapes"
	case t == "":
		t = "a value"
	}
	if s.Nullable {
		t += " or null"
	}
	return t
}

func values(vs []any) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ", ")
}

// got says what a JSON value is, with the value where it is short.
func got(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		return fmt.Sprintf("string %q", v)
	case bool:
		return fmt.Sprintf("boolean %t", v)
	case float64:
		return fmt.Sprintf("number %v", v)
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// Select reads a choice of versions as --fail-on-client takes it: "all",
// or version names separated by commas. An unknown name is refused with
// the list of the known ones.
func Select(versions []*Version, spec string) (map[string]bool, error) {
	chosen := map[string]bool{}
	var known []string
	for _, v := range versions {
		known = append(known, v.Name)
	}
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "all":
			for _, k := range known {
				chosen[k] = true
			}
		case slices.Contains(known, name):
			chosen[name] = true
		default:
			return nil, fmt.Errorf("no client version %q: the known ones are %s, or all", name, strings.Join(known, ", "))
		}
	}
	return chosen, nil
}
