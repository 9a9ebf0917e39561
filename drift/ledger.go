package drift

import (
	"encoding/json"
	"hash/fnv"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	// NotDeclared, when set, says why the overlay does not declare the
	// fact: what the OpenAPI format cannot hold (a method it does not
	// know, a status outside 100 to 599), a name kept cut, a secret.
	NotDeclared string `json:"not_declared,omitempty"`

	also int // other facts an overlay declares with this one (overlay.go)
}

// Report is what a Ledger holds, as the proxy serves it.
type Report struct {
	Facts []Fact `json:"facts"`
	// Distinct is how many distinct facts were seen; Dropped how many of
	// them were not kept, past the ledger's bounds (a count of facts or
	// of bytes).
	Distinct int `json:"distinct"`
	Dropped  int `json:"dropped"`
	// Bytes is what the facts kept hold, about; the ledger keeps at most
	// its budget (DefaultBytes).
	Bytes int `json:"bytes"`
}

// What one fact may hold: a name or a location past these is kept cut,
// "…" saying so, and the fact is then not declared by the overlay (a cut
// name would declare another member). Whatever the traffic, a fact is
// then a few KiB at most.
const (
	// exampleBytes is the longest example kept: enough for a problem
	// document or a small answer, whole, so that the overlay can show it.
	exampleBytes = 1024
	// textBytes bounds an operation, a location and a target.
	textBytes = 512
	// nameBytes bounds a member's, parameter's or method's name, a value
	// outside an enum and a content type.
	nameBytes = 256
	// factOverhead is what a fact costs beside its text: the struct, its
	// map entry and times.
	factOverhead = 256
)

// Ledger keeps the facts of drift seen, at most Limit of them and at most
// DefaultBytes of their text; more are counted, not kept, so that a proxy
// running for weeks against a server that answers a new member every time
// keeps constant memory. Safe for concurrent use.
type Ledger struct {
	limit    int
	maxBytes int
	mu       sync.Mutex
	facts    map[string]*Fact
	bytes    int
	dropped  map[uint64]bool // told apart up to droppedKeys, by a digest of each
	over     int             // dropped past droppedKeys
}

// DefaultLimit is how many facts a ledger keeps by default.
const DefaultLimit = 2000

// DefaultBytes is how many bytes of facts a ledger keeps by default.
const DefaultBytes = 4 << 20

const droppedKeys = 10 * DefaultLimit

// NewLedger makes a ledger that keeps at most limit facts (DefaultLimit
// when limit < 1) and DefaultBytes of them.
func NewLedger(limit int) *Ledger {
	return NewLedgerBytes(limit, 0)
}

// NewLedgerBytes makes a ledger that keeps at most limit facts
// (DefaultLimit when limit < 1) and maxBytes of them (DefaultBytes when
// maxBytes < 1).
func NewLedgerBytes(limit, maxBytes int) *Ledger {
	if limit < 1 {
		limit = DefaultLimit
	}
	if maxBytes < 1 {
		maxBytes = DefaultBytes
	}
	return &Ledger{limit: limit, maxBytes: maxBytes, facts: map[string]*Fact{}, dropped: map[uint64]bool{}}
}

// Add counts one sighting of drift, seen at at; sightings that are not
// drift are ignored.
func (l *Ledger) Add(s Sighting, at time.Time) {
	if !s.Drift {
		return
	}
	s, cutShort := bounded(s)
	// The target is part of a fact: a member at one location can be
	// missing from two schemas (two branches of a oneOf), each its own
	// change to the document.
	k := string(s.Kind) + "\x00" + s.Operation + "\x00" + strconv.Itoa(s.Status) + "\x00" + s.ContentType + "\x00" + s.Location + "\x00" + s.Value + "\x00" + s.Target
	at = at.UTC()
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.facts[k]
	if f == nil {
		// Copies: a name may be a piece of a request's whole line or body,
		// which it would otherwise keep alive.
		f = &Fact{Kind: s.Kind, Operation: strings.Clone(s.Operation), Status: s.Status, ContentType: strings.Clone(s.ContentType),
			Location: strings.Clone(s.Location), Value: strings.Clone(s.Value), FirstSeen: at, Target: strings.Clone(s.Target),
			Name: strings.Clone(s.Name), Example: example(s)}
		cost := factBytes(f, k)
		if len(l.facts) >= l.limit || l.bytes+cost > l.maxBytes {
			h := fnv.New64a()
			h.Write([]byte(k))
			if d := h.Sum64(); len(l.dropped) < droppedKeys {
				l.dropped[d] = true
			} else if !l.dropped[d] {
				l.over++
			}
			return
		}
		switch {
		case cutShort:
			f.NotDeclared = "a name or location longer than the ledger keeps, kept cut"
		default:
			f.NotDeclared = undeclarable(f)
		}
		l.facts[strings.Clone(k)] = f
		l.bytes += cost
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

// factBytes is about what f costs kept under key k.
func factBytes(f *Fact, k string) int {
	return factOverhead + len(k) + len(f.Kind) + len(f.Operation) + len(f.ContentType) + len(f.Location) +
		len(f.Value) + len(f.Example) + len(f.Target) + len(f.Name) + 64
}

// bounded is s with every name and location cut to what a fact keeps
// (cutShort says whether any was), its enum value scrubbed when it lies
// under a secret name.
func bounded(s Sighting) (Sighting, bool) {
	cutShort := false
	cutTo := func(v *string, n int) {
		if len(*v) > n {
			*v, cutShort = cut(*v, n), true
		}
	}
	cutTo(&s.Operation, textBytes)
	cutTo(&s.Location, textBytes)
	cutTo(&s.Target, textBytes)
	cutTo(&s.Name, nameBytes)
	cutTo(&s.ContentType, nameBytes)
	cutTo(&s.Value, nameBytes)
	if s.Value != "" {
		s.Value = secretValue(s.Value, s.Location)
	}
	return s, cutShort
}

// secretValue is the JSON of a value found at loc, "REDACTED" when a
// member of loc names a secret and the document does not publish it.
func secretValue(value, loc string) string {
	if !secretLocation(loc) {
		return value
	}
	var v any
	if json.Unmarshal([]byte(value), &v) != nil {
		return value
	}
	if clean := scrub.At(v, scrub.Location(loc)...); !reflect.DeepEqual(clean, v) {
		b, _ := json.Marshal(clean)
		return string(b)
	}
	return value
}

// secretLocation tells whether a member of loc names a secret; the
// answers of the first secretCacheSize locations asked are kept, since
// the same few locations hold an enum in every answer.
func secretLocation(loc string) bool {
	if v, ok := secretCache.Load(loc); ok {
		return v.(bool)
	}
	secret := false
	for _, n := range scrub.Location(loc) {
		secret = secret || scrub.SecretName(n)
	}
	if secretCached.Add(1) <= secretCacheSize {
		secretCache.Store(loc, secret)
	}
	return secret
}

const secretCacheSize = 4096

var (
	secretCache  sync.Map // location -> bool
	secretCached atomic.Int64
)

// cut is s cut at n bytes, never inside a character, "…" saying so.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// Report lists the facts by operation, kind and location.
func (l *Ledger) Report() Report {
	l.mu.Lock()
	out := Report{Facts: make([]Fact, 0, len(l.facts)), Dropped: len(l.dropped) + l.over, Bytes: l.bytes}
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
	l.facts, l.dropped, l.over, l.bytes = map[string]*Fact{}, map[uint64]bool{}, 0, 0
}

// example is the JSON of the sighting's value without its secrets, cut
// at exampleBytes. A member's value is scrubbed as found under every
// member of its location (a value deep under harness_auth_secrets is a
// secret whatever its own name), a query parameter's by the parameter's
// name, an answer's (of an operation, status or content type) as a whole.
func example(s Sighting) string {
	if s.Example == nil {
		return ""
	}
	var clean any
	switch s.Kind {
	case KindResponseField, KindRequestField, KindEnumValue:
		clean = scrub.At(s.Example, scrub.Location(s.Location)...)
	case KindQueryParameter:
		clean = scrub.Value(s.Example)
		if scrub.SecretParam(s.Name) {
			clean = scrub.At(s.Example, "secret")
		}
	default:
		clean = scrub.Value(s.Example)
	}
	b, err := json.Marshal(clean)
	if err != nil {
		return ""
	}
	if len(b) > exampleBytes {
		return cut(string(b), exampleBytes)
	}
	return string(b)
}
