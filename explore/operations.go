package explore

import (
	"slices"
	"strings"

	"github.com/agentruns/agentruns/openapi"
)

// operation is one documented operation as the exploration calls it: its
// path parameters, its query parameters with their schemas, and whether it
// takes a JSON body. It is read from the document's plain tree, the one
// place that says what a parameter accepts.
type operation struct {
	Method, Template string
	PathParams       []string
	Query            []param
	Body             bool
	// Newest marks an operation only the newest official client calls
	// (beyond the published document).
	Newest bool
}

// Name is "METHOD /template", as findings and Unreached name it.
func (o *operation) Name() string { return o.Method + " " + o.Template }

// reads tells whether the operation only reads.
func (o *operation) reads() bool { return o.Method == "GET" || o.Method == "HEAD" }

// param is one query parameter.
type param struct {
	Name   string
	Schema map[string]any // resolved; items resolved too for an array
	Array  bool
	Deep   bool // deepObject: name[key]=value
	Newest bool // only the newest client sends it
}

// operationsOf lists the document's operations in a fixed order (by
// template, then method), leaving out the mock's own parameters
// (x-agentruns-mock), which no other server is asked to know.
func operationsOf(m *openapi.Model) ([]*operation, error) {
	root, err := m.Tree()
	if err != nil {
		return nil, err
	}
	newestOps, err := openapi.NewestClientOperations(m.Bytes())
	if err != nil {
		return nil, err
	}
	newestParts, err := openapi.NewestClientRequestParts(m.Bytes())
	if err != nil {
		return nil, err
	}
	paths, _ := root["paths"].(map[string]any)
	var out []*operation
	for _, template := range sortedKeys(paths) {
		item, _ := paths[template].(map[string]any)
		shared, _ := item["parameters"].([]any)
		for _, method := range []string{"get", "post", "put", "patch", "delete"} {
			raw, ok := item[method].(map[string]any)
			if !ok {
				continue
			}
			op := &operation{Method: strings.ToUpper(method), Template: template}
			op.Newest = newestOps[op.Name()]
			own, _ := raw["parameters"].([]any)
			for _, p := range append(slices.Clone(shared), own...) {
				pm := resolve(root, p)
				if pm == nil || pm["x-agentruns-mock"] == true {
					continue
				}
				name, _ := pm["name"].(string)
				switch pm["in"] {
				case "path":
					op.PathParams = append(op.PathParams, name)
				case "query":
					schema := resolve(root, pm["schema"])
					q := param{Name: name, Schema: schema, Deep: pm["style"] == "deepObject",
						Newest: newestParts[op.Name()].Query[name] || pm["x-agentruns-source"] != nil}
					if schema["type"] == "array" {
						q.Array = true
						items := resolve(root, schema["items"])
						q.Schema = map[string]any{"type": "array", "items": items}
					}
					op.Query = append(op.Query, q)
				}
			}
			if rb := resolve(root, raw["requestBody"]); rb != nil {
				content, _ := rb["content"].(map[string]any)
				_, op.Body = content["application/json"]
			}
			out = append(out, op)
		}
	}
	return out, nil
}

// resolve follows $ref through the document's plain tree.
func resolve(root map[string]any, v any) map[string]any {
	for range 16 {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		ref, _ := m["$ref"].(string)
		if ref == "" {
			return m
		}
		var cur any = root
		for _, seg := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
			next, _ := cur.(map[string]any)
			cur = next[seg]
		}
		v = cur
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
