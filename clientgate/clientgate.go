// Package clientgate compares two OpenAPI documents of the API (a server's
// next release against today's, or a server's own against the project's)
// and names, for each breaking difference, the released official client
// versions it breaks. The comparison itself is oasdiff's
// (github.com/oasdiff/oasdiff), a maintained OpenAPI diff with some three
// hundred checks; what this package adds is the client dimension, read from
// each version's facts (package clientcheck):
//
//   - an operation removed breaks the versions that call it;
//   - an answer's field removed, or made optional, breaks the versions
//     that declare it required;
//   - an answer's field whose type changed breaks the versions that read
//     that field; one that may now be null, or hold a value added to its
//     set, those that read it without null or without that value;
//   - a request that must now carry a field or parameter breaks the
//     versions that call the operation without always sending it;
//   - any other breaking change to an operation breaks the versions that
//     call it (said so: "calls the operation").
//
// A difference on a field or an operation no version reads breaks none.
package clientgate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oasdiff/oasdiff/checker"
	"github.com/oasdiff/oasdiff/diff"
	"github.com/oasdiff/oasdiff/load"

	"github.com/agentruns/agentruns/clientcheck"
	"github.com/agentruns/agentruns/openapi/facts"
)

// Change is one breaking difference between the two documents.
type Change struct {
	// ID is oasdiff's name of the check, e.g.
	// "response-required-property-removed".
	ID string
	// Level is "error" (breaking) or "warning" (may break), as oasdiff
	// grades it.
	Level string
	// Operation is "METHOD /path" ("" for a change outside operations).
	Operation string
	// Text is oasdiff's sentence for it.
	Text string
	// Breaks names the client versions it breaks, each with why.
	Breaks []Broken
}

// Broken is one client version a change breaks.
type Broken struct {
	Version string
	// Why says what of the version the change meets: "requires
	// runs[].title", "calls the operation".
	Why string
}

// Compare returns the breaking differences from base to revision (YAML or
// JSON documents), most severe first, each with the client versions it
// breaks.
func Compare(base, revision []byte, versions []*clientcheck.Version) ([]Change, error) {
	loader := openapi3.NewLoader()
	s1, err := load.NewSpecInfoFromData(loader, base, "base")
	if err != nil {
		return nil, fmt.Errorf("reading the base document: %w", err)
	}
	s2, err := load.NewSpecInfoFromData(openapi3.NewLoader(), revision, "revision")
	if err != nil {
		return nil, fmt.Errorf("reading the revised document: %w", err)
	}
	d, sources, err := diff.GetWithOperationsSourcesMap(diff.NewConfig(), s1, s2)
	if err != nil {
		return nil, fmt.Errorf("comparing the documents: %w", err)
	}
	found := checker.CheckBackwardCompatibilityUntilLevel(checker.NewConfig(checker.GetAllChecks()), d, sources, checker.WARN)
	slices.SortStableFunc(found, checker.CompareChanges)
	loc := checker.NewDefaultLocalizer()
	out := make([]Change, 0, len(found))
	for _, c := range found {
		ch := Change{ID: c.GetId(), Level: level(c.GetLevel()), Text: c.GetUncolorizedText(loc)}
		if c.GetPath() != "" {
			ch.Operation = strings.ToUpper(c.GetOperation()) + " " + c.GetPath()
			for _, v := range versions {
				if why, breaks := judge(v, ch.ID, ch.Operation, c.GetArgs()); breaks {
					ch.Breaks = append(ch.Breaks, Broken{Version: v.Name, Why: why})
				}
			}
		}
		out = append(out, ch)
	}
	return out, nil
}

// BrokenVersions names the client versions any of the changes breaks, in the
// order of versions.
func BrokenVersions(changes []Change, versions []*clientcheck.Version) []string {
	var out []string
	for _, v := range versions {
		if slices.ContainsFunc(changes, func(c Change) bool {
			return slices.ContainsFunc(c.Breaks, func(b Broken) bool { return b.Version == v.Name })
		}) {
			out = append(out, v.Name)
		}
	}
	return out
}

func level(l checker.Level) string {
	if l >= checker.ERR {
		return "error"
	}
	return "warning"
}

// judge says whether one change to an operation breaks a version, and why.
func judge(v *clientcheck.Version, id, operation string, args []any) (string, bool) {
	key, op, calls := v.Operation(operation)
	if !calls {
		return "", false
	}
	switch {
	case strings.HasPrefix(id, "api-removed"), strings.HasPrefix(id, "api-path-removed"):
		return "calls " + key, true
	case strings.HasPrefix(id, "response-"):
		return judgeAnswer(v, id, key, op, args)
	case strings.HasPrefix(id, "request-"), strings.HasPrefix(id, "new-"), strings.Contains(id, "request"):
		return judgeRequest(v, id, key, op, args)
	}
	return "calls " + key + " (" + id + ")", true
}

// judgeAnswer: a change to the success answer meets the version where it
// reads the field the change names; a change to the answer as a whole
// (a status or media type removed) meets every version that calls it.
func judgeAnswer(v *clientcheck.Version, id, key string, op *facts.Operation, args []any) (string, bool) {
	ok := op.Responses["2XX"]
	if ok == nil || ok.Content["application/json"] == nil {
		return "", false
	}
	if !strings.Contains(id, "property") {
		return "reads the answer of " + key, true
	}
	field, s, required, found := findField(v, ok.Content["application/json"], args)
	if !found {
		return "", false // a field the version does not read
	}
	switch {
	case strings.Contains(id, "removed") && !strings.Contains(id, "enum-value-removed"), strings.Contains(id, "became-optional"),
		strings.Contains(id, "became-write-only"):
		if required {
			return "requires " + field + " in " + key, true
		}
		return "", false
	case strings.Contains(id, "became-nullable"):
		if s.Nullable {
			return "", false // the version reads null there already
		}
		return "reads " + field + " of " + key + " as never null", true
	case strings.Contains(id, "enum-value-added"):
		value := fmt.Sprint(args[0])
		if len(s.Enum) > 0 && slices.ContainsFunc(s.Enum, func(e any) bool { return fmt.Sprint(e) == value }) {
			return "", false // the version knows the value already
		}
		return "reads " + field + " of " + key + " without the value " + value, true
	}
	return "reads " + field + " of " + key, true
}

// judgeRequest: a request that must now carry something breaks the
// versions that do not always send it; a narrower field breaks those that
// may send it.
func judgeRequest(v *clientcheck.Version, id, key string, op *facts.Operation, args []any) (string, bool) {
	for _, a := range args {
		name, _ := a.(string)
		if name == "" {
			continue
		}
		leaf := name[strings.LastIndex(name, "/")+1:]
		for pk, p := range op.Parameters {
			if strings.HasSuffix(pk, " "+leaf) {
				if p.Required && strings.Contains(id, "required") {
					return "", false // the version always sends it
				}
				return "sends " + pk + " to " + key, true
			}
		}
		if op.RequestBody != nil {
			if s := op.RequestBody.Content["application/json"]; s != nil {
				if field, _, required, found := findField(v, s, []any{name}); found {
					if required && strings.Contains(id, "required") {
						return "", false
					}
					return "sends " + field + " to " + key, true
				}
			}
		}
	}
	if strings.Contains(id, "new-required") || strings.Contains(id, "became-required") || strings.Contains(id, "added-required") {
		return "calls " + key + " without it", true
	}
	return "", false // a field the version never sends
}

// findField resolves the first argument that names a field of schema in
// the version's facts (oasdiff writes "runs/items/title"), saying whether
// the version requires it there.
func findField(v *clientcheck.Version, schema *facts.Schema, args []any) (field string, s *facts.Schema, required, found bool) {
	for _, a := range args {
		name, ok := a.(string)
		if !ok || name == "" || strings.ContainsAny(name, " ") {
			continue
		}
		if field, s, required, ok := walk(v, schema, strings.Split(name, "/")); ok {
			return field, s, required, true
		}
	}
	return "", nil, false, false
}

func walk(v *clientcheck.Version, schema *facts.Schema, segs []string) (string, *facts.Schema, bool, bool) {
	s := v.Schema(schema)
	var path []string
	required := false
	for i := 0; i < len(segs); i++ {
		seg := segs[i]
		if s == nil {
			return "", nil, false, false
		}
		switch {
		case seg == "items" && s.Items != nil:
			if len(path) > 0 {
				path[len(path)-1] += "[]"
			}
			s = v.Schema(s.Items)
			continue
		case strings.HasPrefix(seg, "oneOf[") || strings.HasPrefix(seg, "anyOf[") || strings.HasPrefix(seg, "allOf["):
			continue // a branch: the field is looked up in each below
		}
		if len(s.OneOf) > 0 {
			for _, b := range s.OneOf {
				if f, fs, req, ok := walk(v, b, segs[i:]); ok {
					return strings.Join(append(path, f), "."), fs, req, true
				}
			}
			return "", nil, false, false
		}
		p, ok := s.Properties[seg]
		if !ok {
			return "", nil, false, false
		}
		required = slices.Contains(s.Required, seg)
		path = append(path, seg)
		s = v.Schema(p)
	}
	if len(path) == 0 {
		return "", nil, false, false
	}
	return strings.Join(path, "."), s, required, true
}
