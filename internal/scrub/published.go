package scrub

import (
	"strings"
	"sync"

	"github.com/pb33f/go-yaml"

	"github.com/agentruns/agentruns/openapi"
)

// The values the OpenAPI document lists for a field (its enums) are
// published: whatever the field's name, such a value is no secret, and
// replacing it would give the mock a value the document does not allow.

var (
	enumsOnce sync.Once
	enums     map[string]map[string]bool // field name -> the values the document lists for it
)

// published reports whether the document lists value among the values of
// some field called name.
func published(name, value string) bool {
	enumsOnce.Do(func() { enums = readEnums(openapi.Document) })
	return enums[name][value]
}

// readEnums indexes every property of every schema of doc by its name:
// the string values its enum lists, through $ref and oneOf/anyOf/allOf.
func readEnums(doc []byte) map[string]map[string]bool {
	var root map[string]any
	if yaml.Unmarshal(doc, &root) != nil {
		return nil
	}
	out := map[string]map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if props, ok := v["properties"].(map[string]any); ok {
				for name, prop := range props {
					for _, val := range enumOf(root, prop, 0) {
						if out[name] == nil {
							out[name] = map[string]bool{}
						}
						out[name][val] = true
					}
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(root)
	return out
}

// enumOf is the string values a schema's enum lists, following $ref and
// the branches of oneOf, anyOf and allOf.
func enumOf(root map[string]any, v any, depth int) []string {
	s, ok := v.(map[string]any)
	if !ok || depth > 8 {
		return nil
	}
	if ref, ok := s["$ref"].(string); ok {
		var cur any = root
		for _, seg := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			m, _ := cur.(map[string]any)
			cur = m[seg]
		}
		return enumOf(root, cur, depth+1)
	}
	var out []string
	if list, ok := s["enum"].([]any); ok {
		for _, x := range list {
			if x, ok := x.(string); ok {
				out = append(out, x)
			}
		}
	}
	for _, key := range []string{"oneOf", "anyOf", "allOf"} {
		if branches, ok := s[key].([]any); ok {
			for _, b := range branches {
				out = append(out, enumOf(root, b, depth+1)...)
			}
		}
	}
	return out
}
