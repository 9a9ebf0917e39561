package openapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/pb33f/go-yaml"
)

// readableVersion is the versions of OpenAPI the project's readers share:
// libopenapi (the validator, the overlay engine) and kin-openapi (oasdiff,
// the client gate) both read 3.0 and 3.1.
var readableVersion = regexp.MustCompile(`^3\.[01]\.[0-9]+$`)

// CheckDocument says why doc (YAML or JSON) is not an OpenAPI 3.0 or 3.1
// document the project's tools can read, or nil when it is one: checked
// against the OpenAPI schema (a status "abc", a path without its leading
// slash), every $ref resolved and none a cycle no value can end. A tool
// given something else by mistake (an empty file, a drift report, a
// profile, an overlay, Swagger 2.0) says what it was given rather than
// reading it as a document with nothing in it, which would compare as a
// document that lost everything, or one where nothing changed.
func CheckDocument(doc []byte) error {
	if strings.TrimSpace(string(doc)) == "" {
		return errors.New("the file is empty")
	}
	root, err := parseNode(doc)
	if err != nil {
		return fmt.Errorf("neither YAML nor JSON: %w", err)
	}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return errors.New("not an OpenAPI document: its top level is not an object")
	}
	top := map[string]*yaml.Node{}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		top[m.Content[i].Value] = m.Content[i+1]
	}
	version, ok := top["openapi"]
	switch {
	case ok:
	case top["swagger"] != nil:
		return fmt.Errorf("a Swagger %s document, not OpenAPI 3.0 or 3.1: convert it first", top["swagger"].Value)
	case top["overlay"] != nil:
		return errors.New("an overlay, not an OpenAPI document: give it to agentruns-drift apply")
	case top["operations"] != nil:
		return errors.New("a traffic profile (--proxy-profile), not an OpenAPI document")
	case top["facts"] != nil:
		return errors.New("a drift report, not an OpenAPI document")
	default:
		return errors.New(`not an OpenAPI document: it has no "openapi" member`)
	}
	if version.Kind != yaml.ScalarNode || !readableVersion.MatchString(version.Value) {
		return fmt.Errorf("OpenAPI %q: only 3.0.x and 3.1.x are read", version.Value)
	}
	if err := refCycle(root); err != nil {
		return err
	}
	if err := duplicateKeys(root); err != nil {
		return err
	}
	_, err = LoadChecked(asJSON(root, doc))
	return err
}

// libopenapi reads a YAML document's keys twice (looking for a key named
// twice, then making its JSON view), each time comparing every key of an
// object with every other: a document of 100,000 paths took minutes. It
// reads JSON with encoding/json, so the document is given to it as JSON,
// after duplicateKeys has looked for keys named twice through an index.

// duplicateKeys names the keys an object holds twice (the later one would
// be read by some tools and not others), as libopenapi's own check does.
func duplicateKeys(root *yaml.Node) error {
	var found []string
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			type key struct {
				kind  yaml.Kind
				value string
			}
			first := make(map[key]*yaml.Node, len(n.Content)/2)
			twice := false
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				id := key{k.Kind, k.Value}
				if f, ok := first[id]; ok {
					found = append(found, fmt.Sprintf("line %d: mapping key %q already defined at line %d", k.Line, k.Value, f.Line))
					twice = true
					continue
				}
				first[id] = k
			}
			if twice { // as libopenapi: the first mistake in a branch is enough
				return
			}
		}
		if n.Kind == yaml.DocumentNode || n.Kind == yaml.SequenceNode || n.Kind == yaml.MappingNode {
			for _, c := range n.Content {
				walk(c)
			}
		}
	}
	walk(root)
	if len(found) > 10 {
		found = append(found[:10], fmt.Sprintf("and %d more", len(found)-10))
	}
	if len(found) > 0 {
		return errors.New("openapi: keys named twice: " + strings.Join(found, "; "))
	}
	return nil
}

// asJSON is the document as JSON, or doc itself when it holds what JSON
// cannot (a key that is no string, an infinite number): libopenapi then
// reads it as YAML, as before, and says what it makes of it.
func asJSON(root *yaml.Node, doc []byte) []byte {
	var v any
	if err := root.Load(&v, yaml.WithUniqueKeys(false)); err != nil {
		return doc
	}
	b, err := json.Marshal(v)
	if err != nil {
		return doc
	}
	return b
}

// refCycle names a chain of $refs that comes back to where it began
// (A: {$ref: B}, B: {$ref: A}): a schema no value can ever satisfy, and
// one libopenapi lets through when the chain is first reached from an
// array's items (its check for endless cycles spares those, since a
// schema holding a list of itself is fine, and ours has one).
func refCycle(root *yaml.Node) error {
	// done marks the nodes whose chain is known to end; a node met again
	// while its own chain is being followed is a cycle.
	done := map[*yaml.Node]bool{}
	var walk func(n *yaml.Node) error
	walk = func(n *yaml.Node) error {
		if ref := refOf(n); ref != "" && !done[n] {
			onChain := map[*yaml.Node]bool{}
			chain := []string{}
			for at := n; at != nil && !done[at]; {
				r := refOf(at)
				if r == "" {
					break
				}
				if onChain[at] {
					return fmt.Errorf("the $refs %s come back to where they began: a cycle no value can end", strings.Join(chain, " -> "))
				}
				onChain[at] = true
				chain = append(chain, r)
				at = pointTo(root, r)
			}
			for x := range onChain {
				done[x] = true
			}
		}
		for _, c := range n.Content {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(root)
}

// refOf is n's local $ref ("#/components/schemas/A"), or "".
func refOf(n *yaml.Node) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "$ref" && strings.HasPrefix(n.Content[i+1].Value, "#/") {
			return n.Content[i+1].Value
		}
	}
	return ""
}

// pointTo is the node a local $ref names, or nil (a $ref to nothing is
// the validator's to report).
func pointTo(root *yaml.Node, ref string) *yaml.Node {
	at := root
	if at.Kind == yaml.DocumentNode && len(at.Content) > 0 {
		at = at.Content[0]
	}
	for _, seg := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		if u, err := url.PathUnescape(seg); err == nil {
			seg = u
		}
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		var next *yaml.Node
		switch at.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(at.Content); i += 2 {
				if at.Content[i].Value == seg {
					next = at.Content[i+1]
					break
				}
			}
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(at.Content) {
				next = at.Content[i]
			}
		}
		if next == nil {
			return nil
		}
		at = next
	}
	return at
}
