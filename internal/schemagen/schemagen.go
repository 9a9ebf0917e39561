// Package schemagen makes random JSON values that the schemas of the
// OpenAPI document accept, for property tests: bodies no person picked,
// carrying fields a hand-written example forgets.
//
// It reads the document's JSON Schema keywords as this project's document
// uses them (types and type lists, enum, const, properties, required,
// additionalProperties, maxProperties, items, min/maxItems, minLength,
// maxLength, minimum, maximum, formats, contentEncoding base64, $ref,
// allOf, oneOf, anyOf). It does
// not promise every value is valid: a test checks each one with the real
// validator and draws again when it is not (see Draw).
package schemagen

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"time"

	"github.com/agentruns/agentruns/openapi"
)

// Generator draws values from one document. It is not safe for concurrent
// use: it shares its random source.
type Generator struct {
	root map[string]any
	rng  *rand.Rand
	// Optional is the chance an optional property is present; 1 puts in
	// every property the schema names.
	Optional float64
}

// New draws from the document of m, as its plain tree (openapi.Model.Tree).
func New(m *openapi.Model, rng *rand.Rand) (*Generator, error) {
	root, err := m.Tree()
	if err != nil {
		return nil, fmt.Errorf("schemagen: %w", err)
	}
	return &Generator{root: root, rng: rng, Optional: 1}, nil
}

// Component draws a value of the schema #/components/schemas/name.
func (g *Generator) Component(name string) any {
	return g.value(g.resolve("#/components/schemas/"+name), 0)
}

// RequestBody draws the JSON body of an operation, e.g. ("POST",
// "/agent/runs"); false when it takes none.
func (g *Generator) RequestBody(method, path string) (any, bool) {
	s := g.media(g.operation(method, path)["requestBody"])
	if s == nil {
		return nil, false
	}
	return g.value(s, 0), true
}

// Response draws the JSON body of an operation's answer with status, e.g.
// ("GET", "/agent/runs/{runId}", "200"); false when none is documented.
func (g *Generator) Response(method, path, status string) (any, bool) {
	responses, _ := g.operation(method, path)["responses"].(map[string]any)
	s := g.media(responses[status])
	if s == nil {
		return nil, false
	}
	return g.value(s, 0), true
}

// Operations lists every documented "METHOD /path" that takes a JSON body.
func (g *Generator) Operations() []string {
	var out []string
	paths, _ := g.root["paths"].(map[string]any)
	for path, item := range paths {
		ops, _ := item.(map[string]any)
		for method := range ops {
			if g.media(g.operation(method, path)["requestBody"]) != nil {
				out = append(out, strings.ToUpper(method)+" "+path)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Draw calls draw until valid accepts what it drew, at most tries times:
// the generator reads the keywords, the validator has the last word.
func Draw(tries int, draw func() any, valid func(any) error) (any, error) {
	var errs []error
	for range tries {
		v := draw()
		err := valid(v)
		if err == nil {
			return v, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("no valid value in %d draws: %w", tries, errors.Join(errs[:min(3, len(errs))]...))
}

func (g *Generator) operation(method, path string) map[string]any {
	paths, _ := g.root["paths"].(map[string]any)
	item, _ := paths[path].(map[string]any)
	op, _ := item[strings.ToLower(method)].(map[string]any)
	return op
}

// media is the schema of a request body or answer's JSON content.
func (g *Generator) media(v any) map[string]any {
	m := g.resolve(v)
	content, _ := m["content"].(map[string]any)
	for _, ct := range []string{"application/json", "application/problem+json"} {
		if mt, ok := content[ct].(map[string]any); ok {
			if s, ok := mt["schema"]; ok {
				return g.resolve(s)
			}
		}
	}
	return nil
}

// resolve follows $ref (a pointer into the document) until a schema
// without one; a string is taken as a pointer.
func (g *Generator) resolve(v any) map[string]any {
	for range 32 {
		m, ok := v.(map[string]any)
		ref := ""
		if ok {
			ref, _ = m["$ref"].(string)
		} else if s, isStr := v.(string); isStr {
			ref = s
		}
		if ref == "" {
			return m
		}
		var cur any = g.root
		for _, seg := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
			next, _ := cur.(map[string]any)
			cur = next[seg]
		}
		v = cur
	}
	return nil
}

// maxDepth bounds nesting: past it only required properties are drawn and
// lists are empty where they may be.
const maxDepth = 8

func (g *Generator) value(s map[string]any, depth int) any {
	if s == nil {
		return map[string]any{}
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[g.rng.Intn(len(e))]
	}
	if all, ok := s["allOf"].([]any); ok {
		merged := map[string]any{}
		for k, v := range s {
			if k != "allOf" {
				merged[k] = v
			}
		}
		for _, part := range all {
			merged = mergeSchemas(merged, g.resolve(part))
		}
		return g.value(merged, depth)
	}
	if one, ok := s["oneOf"].([]any); ok && len(one) > 0 {
		return g.oneOf(s, one, depth)
	}
	if anyOf, ok := s["anyOf"].([]any); ok && len(anyOf) > 0 {
		return g.value(g.resolve(anyOf[g.rng.Intn(len(anyOf))]), depth)
	}
	switch g.typeOf(s) {
	case "null":
		return nil
	case "boolean":
		return g.rng.Intn(2) == 0
	case "integer":
		lo, hi := bound(s, "minimum", 0), bound(s, "maximum", 1000)
		hi = max(hi, lo)
		return int64(lo) + g.rng.Int63n(int64(hi-lo)+1)
	case "number":
		lo, hi := bound(s, "minimum", 0), bound(s, "maximum", 1000)
		hi = max(hi, lo)
		return lo + g.rng.Float64()*(hi-lo)
	case "string":
		return g.str(s)
	case "array":
		lo, hi := int(bound(s, "minItems", 0)), int(bound(s, "maxItems", 3))
		hi = max(hi, lo)
		if depth >= maxDepth {
			hi = lo
		}
		n := lo + g.rng.Intn(hi-lo+1)
		out := make([]any, n)
		for i := range out {
			out[i] = g.value(g.resolve(s["items"]), depth+1)
		}
		return out
	}
	return g.object(s, nil, depth)
}

// typeOf picks one of a schema's types; null only now and then.
func (g *Generator) typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		var types []string
		for _, x := range t {
			if x, ok := x.(string); ok && (x != "null" || len(t) == 1 || g.rng.Intn(5) == 0) {
				types = append(types, x)
			}
		}
		if len(types) == 0 {
			return "null"
		}
		return types[g.rng.Intn(len(types))]
	}
	if _, ok := s["items"]; ok {
		return "array"
	}
	return "object"
}

// object draws an object: every required property, each optional one with
// the chance Optional (none of those in skip), and a few entries of a map.
func (g *Generator) object(s map[string]any, skip map[string]bool, depth int) any {
	out := map[string]any{}
	required := map[string]bool{}
	for _, r := range asList(s["required"]) {
		required[r] = true
	}
	props, _ := s["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names) // the same seed draws the same value
	for _, name := range names {
		if skip[name] {
			continue
		}
		if required[name] || depth < maxDepth && g.rng.Float64() < g.Optional {
			out[name] = g.value(g.resolve(props[name]), depth+1)
		}
	}
	if extra, ok := s["additionalProperties"].(map[string]any); ok && depth < maxDepth {
		n := g.rng.Intn(3) + 1
		if m, ok := s["maxProperties"]; ok {
			n = min(n, int(toFloat(m)))
		}
		for i := 0; i < n; i++ {
			out[g.word(1, 10)+fmt.Sprint(i)] = g.value(g.resolve(extra), depth+1)
		}
	}
	return out
}

// oneOf draws from one branch. Branches that only list required
// properties ("exactly one of warp_id, command, url") pick one of those
// groups and leave the others' properties out.
func (g *Generator) oneOf(s map[string]any, branches []any, depth int) any {
	base := map[string]any{}
	for k, v := range s {
		if k != "oneOf" && k != "discriminator" {
			base[k] = v
		}
	}
	onlyRequired := true
	for _, b := range branches {
		m := g.resolve(b)
		if len(m) != 1 || m["required"] == nil {
			onlyRequired = false
		}
	}
	pick := g.rng.Intn(len(branches))
	if !onlyRequired {
		return g.value(mergeSchemas(base, g.resolve(branches[pick])), depth)
	}
	skip := map[string]bool{}
	for i, b := range branches {
		if i != pick {
			for _, r := range asList(g.resolve(b)["required"]) {
				skip[r] = true
			}
		}
	}
	base["required"] = append(asList(base["required"]), asList(g.resolve(branches[pick])["required"])...)
	return g.object(base, skip, depth)
}

func (g *Generator) str(s map[string]any) string {
	if s["contentEncoding"] == "base64" {
		b := make([]byte, g.rng.Intn(32))
		g.rng.Read(b)
		return base64.StdEncoding.EncodeToString(b)
	}
	switch s["format"] {
	case "date-time":
		t := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(g.rng.Int63n(int64(2 * 365 * 24 * time.Hour))))
		if g.rng.Intn(2) == 0 {
			return t.Format(time.RFC3339Nano)
		}
		return t.Truncate(time.Second).Format(time.RFC3339)
	case "uuid":
		b := make([]byte, 16)
		g.rng.Read(b)
		b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
		return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
	case "uri":
		return "https://" + g.word(3, 8) + ".example.com/" + g.word(1, 8) + "?sig=" + g.word(8, 16)
	case "email":
		return g.word(1, 8) + "@example.com"
	}
	lo, hi := int(bound(s, "minLength", 0)), int(bound(s, "maxLength", 24))
	if lo == 0 && g.rng.Intn(10) > 0 {
		lo = 1 // mostly not empty, but now and then
	}
	return g.word(lo, min(hi, 24))
}

const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_ .é/"

// word is a random text of lo to hi characters, mostly letters.
func (g *Generator) word(lo, hi int) string {
	if hi < lo {
		hi = lo
	}
	n := lo + g.rng.Intn(hi-lo+1)
	var b strings.Builder
	for i := 0; i < n; i++ {
		alphabet := letters[:62]
		if i > 0 && g.rng.Intn(6) == 0 {
			alphabet = letters
		}
		r := []rune(alphabet)
		b.WriteRune(r[g.rng.Intn(len(r))])
	}
	return b.String()
}

// mergeSchemas is a schema both a and b describe, as allOf means: the
// properties and the required of both.
func mergeSchemas(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		switch k {
		case "properties":
			props := map[string]any{}
			if p, ok := out["properties"].(map[string]any); ok {
				for pk, pv := range p {
					props[pk] = pv
				}
			}
			for pk, pv := range v.(map[string]any) {
				props[pk] = pv
			}
			out[k] = props
		case "required":
			out[k] = append(asList(out["required"]), asList(v)...)
		case "description":
		default:
			out[k] = v
		}
	}
	return out
}

func asList(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	}
	if l, ok := v.([]string); ok {
		out = append(out, l...)
	}
	return out
}

func bound(s map[string]any, key string, dflt float64) float64 {
	if v, ok := s[key]; ok {
		return toFloat(v)
	}
	return dflt
}

func toFloat(v any) float64 {
	switch n := v.(type) {
	case int:
		return float64(n)
	case int64:
		return float64(n)
	case uint64:
		return float64(n)
	case float64:
		return n
	}
	return 0
}
