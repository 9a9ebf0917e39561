package openapi

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/pb33f/go-yaml"
	"github.com/pb33f/libopenapi"
	highoverlay "github.com/pb33f/libopenapi/datamodel/high/overlay"
	applier "github.com/pb33f/libopenapi/overlay"
	"github.com/pb33f/libopenapi/utils"
)

// ApplyOverlay applies an OpenAPI Overlay to a document and returns the
// document it makes (YAML), to be read through Load like any other. An action whose target matches nothing in the document
// is an error: the overlay was written for another document. So is a
// file that is no overlay, and an action removing the whole document
// (the engine ignores it, and the overlay would seem to have applied).
//
// The engine merges an update into an object by looking its members up
// one by one, so N actions each adding a member to one object took time
// in N² (32,000 took 13 s): consecutive updates of one object are merged
// into one update first (coalesce), which the engine merges through an
// index.
func ApplyOverlay(doc, overlay []byte) ([]byte, error) {
	ov, err := libopenapi.NewOverlayDocument(overlay)
	if err != nil || ov.Overlay == "" {
		if err := checkOverlayFile(overlay); err != nil {
			return nil, err
		}
	}
	if err != nil {
		return nil, fmt.Errorf("read overlay: %w", err)
	}
	for i, a := range ov.Actions {
		if a != nil && a.Remove && strings.TrimSpace(a.Target) == "$" {
			return nil, fmt.Errorf("action %d removes the whole document (target $): an overlay changes a document, it cannot remove it", i+1)
		}
	}
	root, err := parseNode(doc)
	if err != nil {
		return nil, fmt.Errorf("read document: %w", err)
	}
	merged := *ov
	merged.Actions = coalesce(root, ov.Actions)
	res, err := applier.Apply(doc, &merged)
	if err != nil {
		return nil, fmt.Errorf("apply overlay: %w", err)
	}
	var problems []string
	for _, w := range res.Warnings {
		problems = append(problems, w.String())
	}
	if len(problems) > 10 { // the first few say what is wrong; 100,000 would bury it
		problems = append(problems[:10], fmt.Sprintf("and %d more", len(problems)-10))
	}
	if len(problems) > 0 {
		return nil, errors.New("apply overlay: " + strings.Join(problems, "; "))
	}
	return reindent(res.Bytes)
}

// checkOverlayFile says what a file given as an overlay is when it is
// not one, rather than the engine's "missing required 'overlay' field".
func checkOverlayFile(b []byte) error {
	if strings.TrimSpace(string(b)) == "" {
		return errors.New("not an overlay: the file is empty")
	}
	root, err := parseNode(b)
	if err != nil {
		return fmt.Errorf("not an overlay: neither YAML nor JSON: %w", err)
	}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return errors.New("not an overlay: its top level is not an object")
	}
	has := map[string]bool{}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		has[m.Content[i].Value] = true
	}
	switch {
	case has["overlay"]:
		return nil
	case has["openapi"], has["swagger"]:
		return errors.New("an OpenAPI document, not an overlay: give the document with --document and the overlay as the argument")
	case has["operations"]:
		return errors.New("a traffic profile (--proxy-profile), not an overlay: compare profiles with agentruns-drift compare")
	case has["facts"]:
		return errors.New("a drift report, not an overlay: the overlay is what --proxy-overlay or GET /__mock/proxy/drift/overlay.yaml writes")
	}
	return errors.New(`not an overlay: it has no "overlay" member`)
}

// coalesce merges the update actions on one object into a single action,
// wherever they stand in the overlay, when that gives the same document:
// the target names one place ($.a['b'], no wildcard or filter), which is
// an object in the document (an update never changes what kind of node
// it meets) and neither removed nor inside a place removed by an action
// before (after a removal of what is not one place, nothing is known),
// and every update on it is an object. Merging an update into an object adds its members,
// merges objects and appends lists member by member, and replaces a
// scalar, so merging the updates first and the result once makes the
// same object.
//
// Updates of two places neither inside the other change disjoint parts
// of the document, so they commute: the updates of each place are
// gathered, in their order, until an action that is not such an update,
// or an update of a place inside (or around) one gathered, whose order
// against the gathered ones matters; there the gathered updates are
// written out, one action per place in the order the places first came.
// Updates that would not merge (an object against a list) are left as
// they are, for the engine to report.
func coalesce(doc *yaml.Node, actions []*highoverlay.Action) []*highoverlay.Action {
	out := make([]*highoverlay.Action, 0, len(actions))
	g := gathered{at: map[string][]*highoverlay.Action{}, around: map[string]bool{}}
	flush := func() {
		for _, place := range g.order {
			out = append(out, mergeRun(g.at[place])...)
		}
		g = gathered{at: map[string][]*highoverlay.Action{}, around: map[string]bool{}}
	}
	find := finder{index: map[*yaml.Node]map[string]*yaml.Node{}}
	gone, anyGone := map[string]bool{}, false // the places removed; whether one was not one place
	for _, a := range actions {
		if a != nil && a.Remove {
			if members, ok := targetPlace(a.Target); ok {
				gone[placeKey(members)] = true
			} else {
				anyGone = true
			}
		}
		members, ok := singular(a)
		if !ok || anyGone || within(gone, members) || !isObject(find.lookup(doc, members)) {
			flush()
			out = append(out, a)
			continue
		}
		place := placeKey(members)
		if _, known := g.at[place]; !known {
			if g.nests(members) {
				flush()
			}
			g.add(members)
		}
		g.at[place] = append(g.at[place], a)
	}
	flush()
	return out
}

// gathered is the update actions held back, by place (its members joined
// by NUL), with every place around a held one, to tell in one look-up
// whether a new place lies inside or around one held.
type gathered struct {
	order  []string
	at     map[string][]*highoverlay.Action
	around map[string]bool
}

// placeKey is one string for a place: each member after a NUL, so that
// the whole document and its member named "" differ.
func placeKey(members []string) string {
	var b strings.Builder
	for _, m := range members {
		b.WriteByte(0)
		b.WriteString(m)
	}
	return b.String()
}

// nests is whether the place members lies inside or around a held place.
func (g *gathered) nests(members []string) bool {
	if g.around[placeKey(members)] {
		return true
	}
	for n := range len(members) {
		if _, ok := g.at[placeKey(members[:n])]; ok {
			return true
		}
	}
	return false
}

func (g *gathered) add(members []string) {
	place := placeKey(members)
	g.order = append(g.order, place)
	g.at[place] = nil
	for n := range len(members) {
		g.around[placeKey(members[:n])] = true
	}
}

// mergeRun is the one action run makes, or run itself when its updates
// do not merge.
func mergeRun(run []*highoverlay.Action) []*highoverlay.Action {
	if len(run) == 1 {
		return run
	}
	m := merger{index: map[*yaml.Node]map[string]*yaml.Node{}}
	update := utils.CloneYAMLNode(run[0].Update)
	for _, a := range run[1:] {
		if !m.merge(update, a.Update) {
			return run
		}
	}
	one := &highoverlay.Action{Target: run[0].Target, Description: run[0].Description, Update: update}
	return []*highoverlay.Action{one}
}

// merger merges YAML nodes as the overlay engine does, finding an
// object's members through an index kept for each object it merges into.
type merger struct {
	index map[*yaml.Node]map[string]*yaml.Node
}

func (m *merger) merge(into, from *yaml.Node) bool {
	if into.Kind != from.Kind {
		return false
	}
	switch into.Kind {
	case yaml.MappingNode:
		idx := m.index[into]
		if idx == nil {
			idx = make(map[string]*yaml.Node, len(into.Content)/2)
			for k := 0; k+1 < len(into.Content); k += 2 {
				idx[into.Content[k].Value] = into.Content[k+1]
			}
			m.index[into] = idx
		}
		for k := 0; k+1 < len(from.Content); k += 2 {
			key, value := from.Content[k], from.Content[k+1]
			if have := idx[key.Value]; have != nil {
				if !m.merge(have, value) {
					return false
				}
				continue
			}
			v := utils.CloneYAMLNode(value)
			into.Content = append(into.Content, utils.CloneYAMLNode(key), v)
			idx[key.Value] = v
		}
	case yaml.SequenceNode:
		for _, c := range from.Content {
			into.Content = append(into.Content, utils.CloneYAMLNode(c))
		}
	case yaml.ScalarNode:
		into.Value, into.Tag, into.Style = from.Value, from.Tag, from.Style
	default:
		return false
	}
	return true
}

// A singular target is $ followed by members, each .name or ['name'].
var (
	singularTarget = regexp.MustCompile(`^\$((\.[A-Za-z_][A-Za-z0-9_-]*|\['[^'\\]*'\]|\["[^"\\]*"\])*)$`)
	singularMember = regexp.MustCompile(`\.([A-Za-z_][A-Za-z0-9_-]*)|\['([^'\\]*)'\]|\["([^"\\]*)"\]`)
)

// singular is the members an update action's target names one after
// the other, when it names one place; ok is false for any other action.
func singular(a *highoverlay.Action) (members []string, ok bool) {
	if a == nil || a.Update == nil || a.Update.Kind != yaml.MappingNode || a.Remove || a.Copy != "" || a.Ref != "" ||
		(a.GoLow() != nil && a.GoLow().Ref.KeyNode != nil) {
		return nil, false
	}
	return targetPlace(a.Target)
}

// targetPlace is the members target names one after the other, when it
// names one place.
func targetPlace(target string) (members []string, ok bool) {
	target = strings.TrimSpace(target)
	if !singularTarget.MatchString(target) {
		return nil, false
	}
	for _, m := range singularMember.FindAllStringSubmatch(target, -1) {
		members = append(members, m[1]+m[2]+m[3])
	}
	return members, true
}

// within is whether the place members, or a place around it, is in gone.
func within(gone map[string]bool, members []string) bool {
	if len(gone) == 0 {
		return false
	}
	for n := range len(members) + 1 {
		if gone[placeKey(members[:n])] {
			return true
		}
	}
	return false
}

// finder finds places in a document that does not change while it is
// used, through an index of each object's members made the first time it
// is passed: an overlay of many actions on the members of one wide object
// (the paths) would otherwise scan it once per action.
type finder struct {
	index map[*yaml.Node]map[string]*yaml.Node
}

// lookup is the node at members in doc, or nil. A member named twice is
// its first, as the engine's targets find it.
func (f *finder) lookup(doc *yaml.Node, members []string) *yaml.Node {
	at := doc
	if at.Kind == yaml.DocumentNode && len(at.Content) > 0 {
		at = at.Content[0]
	}
	for _, name := range members {
		if at.Kind != yaml.MappingNode {
			return nil
		}
		idx := f.index[at]
		if idx == nil {
			idx = make(map[string]*yaml.Node, len(at.Content)/2)
			for k := len(at.Content) - 2; k >= 0; k -= 2 {
				idx[at.Content[k].Value] = at.Content[k+1]
			}
			f.index[at] = idx
		}
		if at = idx[name]; at == nil {
			return nil
		}
	}
	return at
}

func isObject(n *yaml.Node) bool { return n != nil && n.Kind == yaml.MappingNode }

// reindent writes a YAML document again with two spaces a level, as
// openapi.yaml is written (the overlay engine writes four), so that the
// applied document differs from the one before by what the overlay adds.
func reindent(doc []byte) ([]byte, error) {
	root, err := parseNode(doc)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
