package drift

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// A Profile is the shape of the answers of some traffic: per operation
// and status, how many, their content types, and every member seen (by
// location, "body.runs[].state") with its JSON types and, where the
// document declares an enum, its values. Ids, times and free text are
// never kept, nor the order of members, so two servers given the same
// traffic have the same profile unless they answer differently. Safe for
// concurrent use; bounded (maxOperations operations, maxFields members
// per answer, maxValues values per member, names cut as a ledger cuts
// them, and ProfileBytes of them in all), what is past the bounds counted
// in Dropped.
type Profile struct {
	mu      sync.Mutex
	ops     map[string]map[int]*answerShape
	dropped int
	bytes   int
	// gen counts the resets, for ProfileMark.
	gen uint64
}

type answerShape struct {
	count        int
	contentTypes map[string]bool
	fields       map[string]*fieldShape
}

type fieldShape struct {
	types  map[string]bool
	values map[string]bool
}

const (
	maxOperations = 1000
	maxFields     = 2000
	maxValues     = 64
	// ProfileBytes bounds the text a profile keeps: its operations,
	// members' locations and values, each counted with what it costs
	// beside (shapeOverhead).
	ProfileBytes  = 8 << 20
	shapeOverhead = 128
)

// NewProfile makes an empty profile.
func NewProfile() *Profile { return &Profile{ops: map[string]map[int]*answerShape{}} }

// Add counts a sighting that is not drift: a status, or a member.
func (p *Profile) Add(s Sighting) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.addLocked(s)
}

// ProfileMark remembers, of sightings added with AddAgain, that the
// profile holds every one of them.
type ProfileMark struct {
	held uint64 // the profile's gen+1 when it held them all; 0 when not
}

// AddAgain adds sightings that come again and again the same (those of
// the same answer to the same request), as Add adds each. Once the
// profile holds every one of them (mark says so until the profile is
// reset), adding them again only counts their answers: the members,
// types, values and content types they show are there already.
func (p *Profile) AddAgain(ss []Sighting, mark *ProfileMark) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if mark.held == p.gen+1 {
		for _, s := range ss {
			if s.Kind == KindStatus && !s.Drift {
				s, _ = bounded(s)
				p.ops[s.Operation][s.Status].count++
			}
		}
		return
	}
	held := true
	for _, s := range ss {
		held = p.addLocked(s) && held
	}
	if held {
		mark.held = p.gen + 1
	}
}

// addLocked adds s, false when the profile's bounds dropped it; p.mu is
// held.
func (p *Profile) addLocked(s Sighting) bool {
	if s.Drift || s.Kind != KindStatus && s.Kind != KindResponseField {
		return true
	}
	s, _ = bounded(s) // names cut, a secret value replaced
	op := p.ops[s.Operation]
	if op == nil {
		if len(p.ops) >= maxOperations || !p.room(len(s.Operation)) {
			p.dropped++
			return false
		}
		op = map[int]*answerShape{}
		p.ops[strings.Clone(s.Operation)] = op // a copy: see Ledger.Add
	}
	a := op[s.Status]
	if a == nil {
		if !p.room(0) {
			p.dropped++
			return false
		}
		a = &answerShape{contentTypes: map[string]bool{}, fields: map[string]*fieldShape{}}
		op[s.Status] = a
	}
	if s.Kind == KindStatus {
		a.count++
		if s.ContentType != "" && !a.contentTypes[s.ContentType] {
			if !p.room(len(s.ContentType)) {
				p.dropped++
				return false
			}
			a.contentTypes[strings.Clone(s.ContentType)] = true
		}
		return true
	}
	f := a.fields[s.Location]
	if f == nil {
		if len(a.fields) >= maxFields || !p.room(len(s.Location)) {
			p.dropped++
			return false
		}
		f = &fieldShape{types: map[string]bool{}, values: map[string]bool{}}
		a.fields[strings.Clone(s.Location)] = f
	}
	f.types[s.Type] = true // one of a few constants
	if s.Value != "" && !f.values[s.Value] {
		if len(f.values) >= maxValues || !p.room(len(s.Value)) {
			p.dropped++
			return false
		}
		f.values[strings.Clone(s.Value)] = true
	}
	return true
}

// room takes n bytes (and a shape's overhead) from the profile's budget,
// false when they do not fit; p.mu is held.
func (p *Profile) room(n int) bool {
	if p.bytes+n+shapeOverhead > ProfileBytes {
		return false
	}
	p.bytes += n + shapeOverhead
	return true
}

// Reset forgets everything.
func (p *Profile) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ops, p.dropped, p.bytes = map[string]map[int]*answerShape{}, 0, 0
	p.gen++
}

// ProfileData is a profile as JSON: what --proxy-profile writes and
// Compare reads.
type ProfileData struct {
	Operations []OperationShape `json:"operations"`
	Dropped    int              `json:"dropped"`
}

// OperationShape is one operation's answers.
type OperationShape struct {
	Operation string        `json:"operation"`
	Answers   []AnswerShape `json:"answers"`
}

// AnswerShape is the answers of one status.
type AnswerShape struct {
	Status       int          `json:"status"`
	Count        int          `json:"count"`
	ContentTypes []string     `json:"content_types,omitempty"`
	Fields       []FieldShape `json:"fields,omitempty"`
}

// FieldShape is one member, wherever it was seen in those answers.
type FieldShape struct {
	Location string   `json:"location"`
	Types    []string `json:"types"`
	Values   []string `json:"values,omitempty"`
}

// Data is the profile as JSON, in a stable order.
func (p *Profile) Data() ProfileData {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := ProfileData{Operations: []OperationShape{}, Dropped: p.dropped}
	for _, name := range sortedNames(p.ops) {
		op := OperationShape{Operation: name}
		statuses := make([]int, 0, len(p.ops[name]))
		for st := range p.ops[name] {
			statuses = append(statuses, st)
		}
		sort.Ints(statuses)
		for _, st := range statuses {
			a := p.ops[name][st]
			as := AnswerShape{Status: st, Count: a.count, ContentTypes: setList(a.contentTypes)}
			for _, loc := range sortedNames(a.fields) {
				f := a.fields[loc]
				as.Fields = append(as.Fields, FieldShape{Location: loc, Types: setList(f.types), Values: setList(f.values)})
			}
			op.Answers = append(op.Answers, as)
		}
		out.Operations = append(out.Operations, op)
	}
	return out
}

// Difference is one way two profiles differ.
type Difference struct {
	Operation string `json:"operation"`
	Status    int    `json:"status,omitempty"`
	// What differs: operation, status, content-type, field, type, value.
	What     string `json:"what"`
	Location string `json:"location,omitempty"`
	// Left and Right are what each side showed; "" is nothing.
	Left  string `json:"left"`
	Right string `json:"right"`
}

// Compare lists how two profiles differ: an operation, a status, a
// content type or a member seen on one side only, a member seen with
// other types, and the values of an enum member seen on one side only.
func Compare(left, right ProfileData) []Difference {
	var out []Difference
	l, r := index(left), index(right)
	for _, name := range unionNames(l, r) {
		lo, lok := l[name]
		ro, rok := r[name]
		if !lok || !rok {
			out = append(out, Difference{Operation: name, What: "operation", Left: answered(lo), Right: answered(ro)})
			continue
		}
		for _, st := range unionStatuses(lo, ro) {
			la, lok := lo[st]
			ra, rok := ro[st]
			if !lok || !rok {
				out = append(out, Difference{Operation: name, Status: st, What: "status", Left: count(la), Right: count(ra)})
				continue
			}
			if lt, rt := strings.Join(la.ContentTypes, ", "), strings.Join(ra.ContentTypes, ", "); lt != rt {
				out = append(out, Difference{Operation: name, Status: st, What: "content-type", Left: lt, Right: rt})
			}
			lf, rf := fieldIndex(la), fieldIndex(ra)
			for _, loc := range unionNames(lf, rf) {
				a, aok := lf[loc]
				b, bok := rf[loc]
				switch {
				case !aok || !bok:
					// What a member seen on one side only holds is seen on
					// that side only too: the member says it.
					if oneSidedParent(loc, lf, rf, aok) != "" {
						continue
					}
					out = append(out, Difference{Operation: name, Status: st, What: "field", Location: loc, Left: types(a, aok), Right: types(b, bok)})
				case strings.Join(a.Types, "|") != strings.Join(b.Types, "|"):
					out = append(out, Difference{Operation: name, Status: st, What: "type", Location: loc, Left: types(a, true), Right: types(b, true)})
				default:
					onlyA, onlyB := minus(a.Values, b.Values), minus(b.Values, a.Values)
					if len(onlyA) > 0 || len(onlyB) > 0 {
						out = append(out, Difference{Operation: name, Status: st, What: "value", Location: loc,
							Left: strings.Join(onlyA, ", "), Right: strings.Join(onlyB, ", ")})
					}
				}
			}
		}
	}
	return out
}

// oneSidedParent is the nearest enclosing member of loc seen on the same
// side only ("body.a[].b" encloses "body.a[].b.c" and "body.a[].b[]"), ""
// for none.
func oneSidedParent(loc string, left, right map[string]FieldShape, onLeft bool) string {
	for {
		i := strings.LastIndexAny(loc, ".[")
		if i <= 0 {
			return ""
		}
		loc = loc[:i]
		_, l := left[loc]
		_, r := right[loc]
		if l != r && l == onLeft {
			return loc
		}
	}
}

func index(p ProfileData) map[string]map[int]AnswerShape {
	out := map[string]map[int]AnswerShape{}
	for _, op := range p.Operations {
		m := map[int]AnswerShape{}
		for _, a := range op.Answers {
			m[a.Status] = a
		}
		out[op.Operation] = m
	}
	return out
}

func fieldIndex(a AnswerShape) map[string]FieldShape {
	out := make(map[string]FieldShape, len(a.Fields))
	for _, f := range a.Fields {
		out[f.Location] = f
	}
	return out
}

func answered(op map[int]AnswerShape) string {
	if op == nil {
		return ""
	}
	var parts []string
	for _, st := range unionStatuses(op, nil) {
		parts = append(parts, fmt.Sprintf("%d ×%d", st, op[st].Count))
	}
	return strings.Join(parts, ", ")
}

func count(a AnswerShape) string {
	if a.Count == 0 {
		return ""
	}
	return fmt.Sprintf("×%d", a.Count)
}

func types(f FieldShape, ok bool) string {
	if !ok {
		return ""
	}
	return strings.Join(f.Types, "|")
}

func minus(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if !in[x] {
			out = append(out, x)
		}
	}
	return out
}

func unionNames[V any](a, b map[string]V) []string {
	seen := map[string]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	return setList(seen)
}

func unionStatuses(a, b map[int]AnswerShape) []int {
	seen := map[int]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	out := make([]int, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func setList(m map[string]bool) []string {
	if len(m) == 0 {
		return nil
	}
	return sortedNames(m)
}
