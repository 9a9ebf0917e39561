package drift

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/agentruns/agentruns/internal/scrub"
)

// Fact is one thing live traffic showed that the document does not
// declare, with how often and when it was seen.
type Fact struct {
	Kind        Kind   `json:"kind"`
	Operation   string `json:"operation"`
	Status      int    `json:"status"`
	ContentType string `json:"content_type,omitempty"`
	// Location is where in the exchange: "body.runs[].rollout_ring",
	// "query.colour", "status", "content-type", or the template of an
	// operation.
	Location string   `json:"location"`
	Types    []string `json:"types,omitempty"`
	// Value is the JSON of a value outside its enum.
	Value     string    `json:"value,omitempty"`
	Count     int       `json:"count"`
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
	// Example is the JSON of the first value seen, its secrets replaced
	// (the recorder's redaction), cut at exampleBytes.
	Example string `json:"example,omitempty"`
	// Target and Name say where an overlay declares it: the JSONPath of
	// the schema, operation, responses or paths it changes, and the
	// member, parameter, status, media type or method it adds.
	Target string `json:"target"`
	Name   string `json:"name,omitempty"`

	also int // other facts an overlay declares with this one (overlay.go)
}

// Report is what a Ledger holds, as the proxy serves it.
type Report struct {
	Facts []Fact `json:"facts"`
	// Distinct is how many distinct facts were seen; Dropped how many of
	// them were not kept, past the ledger's bound.
	Distinct int `json:"distinct"`
	Dropped  int `json:"dropped"`
}

// exampleBytes is the longest example kept: enough for a problem
// document or a small answer, whole, so that the overlay can show it.
const exampleBytes = 1024

// Ledger keeps the facts of drift seen, at most Limit of them; more are
// counted, not kept, so that a proxy running for weeks against a server
// that answers a new member every time keeps constant memory. Safe for
// concurrent use.
type Ledger struct {
	limit   int
	mu      sync.Mutex
	facts   map[string]*Fact
	dropped map[string]bool // told apart up to droppedKeys
	over    int             // dropped past droppedKeys
}

// DefaultLimit is how many facts a ledger keeps by default.
const DefaultLimit = 2000

const droppedKeys = 10 * DefaultLimit

// NewLedger makes a ledger that keeps at most limit facts (DefaultLimit
// when limit < 1).
func NewLedger(limit int) *Ledger {
	if limit < 1 {
		limit = DefaultLimit
	}
	return &Ledger{limit: limit, facts: map[string]*Fact{}, dropped: map[string]bool{}}
}

// Add counts one sighting of drift, seen at at; sightings that are not
// drift are ignored.
func (l *Ledger) Add(s Sighting, at time.Time) {
	if !s.Drift {
		return
	}
	// The target is part of a fact: a member at one location can be
	// missing from two schemas (two branches of a oneOf), each its own
	// change to the document.
	k := string(s.Kind) + "\x00" + s.Operation + "\x00" + strconv.Itoa(s.Status) + "\x00" + s.ContentType + "\x00" + s.Location + "\x00" + s.Value + "\x00" + s.Target
	at = at.UTC()
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.facts[k]
	if f == nil {
		if len(l.facts) >= l.limit {
			if len(l.dropped) < droppedKeys {
				l.dropped[k] = true
			} else if !l.dropped[k] {
				l.over++
			}
			return
		}
		f = &Fact{Kind: s.Kind, Operation: s.Operation, Status: s.Status, ContentType: s.ContentType, Location: s.Location,
			Value: s.Value, FirstSeen: at, Target: s.Target, Name: s.Name, Example: example(s.Name, s.Example)}
		l.facts[k] = f
	}
	f.Count++
	if at.After(f.LastSeen) {
		f.LastSeen = at
	}
	if at.Before(f.FirstSeen) {
		f.FirstSeen = at
	}
	if s.Type != "" && !slices.Contains(f.Types, s.Type) {
		f.Types = append(f.Types, s.Type)
		sort.Strings(f.Types)
	}
}

// Report lists the facts by operation, kind and location.
func (l *Ledger) Report() Report {
	l.mu.Lock()
	out := Report{Facts: make([]Fact, 0, len(l.facts)), Dropped: len(l.dropped) + l.over}
	for _, f := range l.facts {
		c := *f
		c.Types = append([]string(nil), f.Types...)
		out.Facts = append(out.Facts, c)
	}
	l.mu.Unlock()
	out.Distinct = len(out.Facts) + out.Dropped
	sortFacts(out.Facts)
	return out
}

// sortFacts orders facts by operation, kind, status, location and value.
func sortFacts(facts []Fact) {
	sort.Slice(facts, func(i, j int) bool {
		a, b := facts[i], facts[j]
		switch {
		case a.Operation != b.Operation:
			return a.Operation < b.Operation
		case a.Kind != b.Kind:
			return a.Kind < b.Kind
		case a.Status != b.Status:
			return a.Status < b.Status
		case a.Location != b.Location:
			return a.Location < b.Location
		case a.ContentType != b.ContentType:
			return a.ContentType < b.ContentType
		}
		return a.Value < b.Value
	})
}

// Reset forgets every fact.
func (l *Ledger) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.facts, l.dropped, l.over = map[string]*Fact{}, map[string]bool{}, 0
}

// example is the JSON of v without its secrets (scrub.Value, which knows
// a secret by the name it is under), cut at exampleBytes.
func example(name string, v any) string {
	if v == nil {
		return ""
	}
	if name == "" {
		name = "value"
	}
	clean := scrub.Value(map[string]any{name: v}).(map[string]any)[name]
	b, err := json.Marshal(clean)
	if err != nil {
		return ""
	}
	if len(b) > exampleBytes {
		return string(b[:exampleBytes]) + "…"
	}
	return string(b)
}
