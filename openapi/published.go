package openapi

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/pb33f/go-yaml"
)

// The document holds both the service's published document (May 2026) and
// what the newest official client (oz-agent-sdk 1.4.0-alpha.6) adds to
// it; each addition is marked with the extension newestClientMark. Added
// fields and values cost a server that lacks them nothing, since it never
// sends them; but a field the newest client requires in an answer (an
// identity's updated_at, default_runner_uid, memory, secrets, skills)
// would fail every answer of a server built to the published document.
// The published view judges such a server: the same document, with no
// answer required to carry a field only the newest client has.

// newestClientMark marks what the newest client added to the published
// document.
const newestClientMark = "x-agentruns-source"

// NewPublishedValidator returns a Validator for the published view of the
// embedded Document (see PublishedView): what a server built to the
// published document must answer, the newest client's additions accepted
// but never required.
func NewPublishedValidator() (*Validator, error) {
	m, err := Embedded()
	if err != nil {
		return nil, err
	}
	published, err := m.Published()
	if err != nil {
		return nil, err
	}
	return NewValidatorFor(published), nil
}

// Published is the model of the published view of m's document (see
// PublishedView), read once.
func (m *Model) Published() (*Model, error) { return m.published() }

func publishedOf(m *Model) func() (*Model, error) {
	return sync.OnceValues(func() (*Model, error) {
		view, err := PublishedView(m.doc)
		if err != nil {
			return nil, err
		}
		return Load(view)
	})
}

// PublishedView returns doc with every field marked as the newest
// client's (newestClientMark on the property, or on the component schema
// it refers to) taken out of the required list of the schema that holds
// it. Everything else, the newest client's fields, operations and enum
// values included, stays as it is.
func PublishedView(doc []byte) ([]byte, error) {
	root, err := parseNode(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: published view: %w", err)
	}
	marked := markedComponents(root)
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			unrequireNewest(n, marked)
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(root)
	out, err := yaml.Marshal(root)
	if err != nil {
		return nil, fmt.Errorf("openapi: published view: %w", err)
	}
	return out, nil
}

// markedComponents names the component schemas that are the newest
// client's as a whole.
func markedComponents(root *yaml.Node) map[string]bool {
	marked := map[string]bool{}
	doc := root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = doc.Content[0]
	}
	schemas := value(value(doc, "components"), "schemas")
	if schemas == nil {
		return marked
	}
	for i := 0; i+1 < len(schemas.Content); i += 2 {
		if value(schemas.Content[i+1], newestClientMark) != nil {
			marked[schemas.Content[i].Value] = true
		}
	}
	return marked
}

// unrequireNewest drops from a schema's required list the properties that
// are the newest client's.
func unrequireNewest(schema *yaml.Node, marked map[string]bool) {
	required, props := value(schema, "required"), value(schema, "properties")
	if required == nil || props == nil || required.Kind != yaml.SequenceNode {
		return
	}
	required.Content = slices.DeleteFunc(required.Content, func(name *yaml.Node) bool {
		p := value(props, name.Value)
		if p == nil {
			return false
		}
		if value(p, newestClientMark) != nil {
			return true
		}
		ref := value(p, "$ref")
		return ref != nil && marked[strings.TrimPrefix(ref.Value, "#/components/schemas/")]
	})
	// A flow-style list keeps its style; an empty one must stay a list.
	if len(required.Content) == 0 {
		required.Style = yaml.FlowStyle
	}
}

// value is the value of key in a mapping node, nil when there is none.
func value(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// NewestClientOperations names the operations of doc that only the newest
// client has (newestClientMark on the operation), as "METHOD /template",
// e.g. "GET /agent/identities/{uid}". A server that answers one of them
// with a success serves the newest client's surface; one that answers
// them 404, 405 or 501 serves the published document.
func NewestClientOperations(doc []byte) (map[string]bool, error) {
	root, err := parseNode(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: newest client's operations: %w", err)
	}
	top := root
	if top.Kind == yaml.DocumentNode && len(top.Content) > 0 {
		top = top.Content[0]
	}
	ops := map[string]bool{}
	paths := value(top, "paths")
	if paths == nil {
		return ops, nil
	}
	for i := 0; i+1 < len(paths.Content); i += 2 {
		item := paths.Content[i+1]
		for j := 0; j+1 < len(item.Content); j += 2 {
			method := strings.ToUpper(item.Content[j].Value)
			if httpMethods[method] && value(item.Content[j+1], newestClientMark) != nil {
				ops[method+" "+paths.Content[i].Value] = true
			}
		}
	}
	return ops, nil
}

var httpMethods = map[string]bool{"GET": true, "PUT": true, "POST": true, "DELETE": true, "OPTIONS": true, "HEAD": true, "PATCH": true, "TRACE": true}

// NewestRequestParts are what of one operation's request only the newest
// client sends: query parameters (a deepObject one such as metadata
// stands for metadata[key] too) and top-level fields of the JSON body.
type NewestRequestParts struct {
	Query, Body map[string]bool
}

// NewestClientRequestParts names, per operation ("METHOD /template"), the
// query parameters and body fields marked as the newest client's. A server
// of the published document ignores them, as a server ignores what it does
// not know; judging such a server, they are what to read a request
// without.
func NewestClientRequestParts(doc []byte) (map[string]NewestRequestParts, error) {
	root, err := parseNode(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: newest client's request parts: %w", err)
	}
	top := root
	if top.Kind == yaml.DocumentNode && len(top.Content) > 0 {
		top = top.Content[0]
	}
	marked := markedComponents(root)
	components := value(top, "components")
	resolve := func(n *yaml.Node) (*yaml.Node, string) {
		ref := value(n, "$ref")
		if ref == nil {
			return n, ""
		}
		parts := strings.Split(strings.TrimPrefix(ref.Value, "#/components/"), "/")
		if len(parts) != 2 {
			return n, ""
		}
		return value(value(components, parts[0]), parts[1]), parts[1]
	}
	isNewest := func(n *yaml.Node) bool {
		if value(n, newestClientMark) != nil {
			return true
		}
		target, name := resolve(n)
		return name != "" && (marked[name] || value(target, newestClientMark) != nil)
	}
	out := map[string]NewestRequestParts{}
	paths := value(top, "paths")
	if paths == nil {
		return out, nil
	}
	for i := 0; i+1 < len(paths.Content); i += 2 {
		item := paths.Content[i+1]
		for j := 0; j+1 < len(item.Content); j += 2 {
			method := strings.ToUpper(item.Content[j].Value)
			if !httpMethods[method] {
				continue
			}
			op := item.Content[j+1]
			parts := NewestRequestParts{Query: map[string]bool{}, Body: map[string]bool{}}
			if params := value(op, "parameters"); params != nil {
				for _, p := range params.Content {
					target, _ := resolve(p)
					if value(target, "in") != nil && value(target, "in").Value == "query" && isNewest(p) {
						parts.Query[value(target, "name").Value] = true
					}
				}
			}
			requestBody, _ := resolve(value(op, "requestBody"))
			schema := value(value(value(requestBody, "content"), "application/json"), "schema")
			if schema != nil {
				body, _ := resolve(schema)
				props := value(body, "properties")
				for k := 0; props != nil && k+1 < len(props.Content); k += 2 {
					if isNewest(props.Content[k+1]) {
						parts.Body[props.Content[k].Value] = true
					}
				}
			}
			if len(parts.Query) > 0 || len(parts.Body) > 0 {
				out[method+" "+paths.Content[i].Value] = parts
			}
		}
	}
	return out, nil
}
