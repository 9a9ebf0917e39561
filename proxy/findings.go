package proxy

import (
	"sync"
	"time"

	"github.com/agentruns/agentruns/clientcheck"
	"github.com/agentruns/agentruns/drift"
	"github.com/agentruns/agentruns/rules"
)

// What the proxy found, kept for /__mock/proxy, the dashboard and the
// reports: counts without bound (one number per rule), the details of the
// latest ones within a ring, so that a proxy running for days keeps
// constant memory.

// Finding is one violation with the exchange it was found in.
type Finding struct {
	At      string `json:"at"`
	Request string `json:"request"` // "GET /agent/runs?limit=5", signatures left out
	Status  int    `json:"status"`
	rules.Violation
}

// OffDocument is a request the document does not allow: the client's to
// fix, not the server's. The server is held to refusing it (rule
// invalid-request-refused).
type OffDocument struct {
	At      string   `json:"at"`
	Request string   `json:"request"`
	Status  int      `json:"status"`
	Issues  []string `json:"issues"`
}

// Entry is one forwarded request in the proxy's journal. Its first fields
// are those of the mock's journal (GET /__mock/requests), so the dashboard
// shows both alike.
type Entry struct {
	At         string `json:"at"`
	Method     string `json:"method"`
	Path       string `json:"path"`
	Status     int    `json:"status"`
	RetryCount *int   `json:"retry_count,omitempty"`
	// Millis is how long the upstream took, headers to last byte.
	Millis     float64  `json:"upstream_ms"`
	Violations []string `json:"violations,omitempty"` // the rules broken, one entry per violation
	// Unchecked says why the exchange was not checked, if it was not.
	Unchecked string `json:"unchecked,omitempty"`
}

// Sizes of the rings.
const (
	keptFindings    = 1000
	keptOffDocument = 200
	keptEntries     = 500
	keptIssues      = 20 // per request off the document
)

type ring[T any] struct {
	items []T
	next  int
	limit int
}

func (r *ring[T]) add(v T) {
	if len(r.items) < r.limit {
		r.items = append(r.items, v)
		return
	}
	r.items[r.next] = v
	r.next = (r.next + 1) % r.limit
}

// list returns the items oldest first.
func (r *ring[T]) list() []T {
	out := make([]T, 0, len(r.items))
	out = append(out, r.items[r.next:]...)
	return append(out, r.items[:r.next]...)
}

// findings is everything found so far. Safe for concurrent use.
type findings struct {
	mu          sync.Mutex
	since       time.Time
	byRule      map[string]int
	latest      ring[Finding]
	offDoc      ring[OffDocument]
	offDocCount int
	journal     ring[Entry]
	exchanges   int // forwarded and answered
	checked     int
	unchecked   map[string]int // why not, how many
	upstreamErr int
}

func newFindings(now time.Time) *findings {
	return &findings{
		since:     now,
		byRule:    map[string]int{},
		latest:    ring[Finding]{limit: keptFindings},
		offDoc:    ring[OffDocument]{limit: keptOffDocument},
		journal:   ring[Entry]{limit: keptEntries},
		unchecked: map[string]int{},
	}
}

// Summary is GET /__mock/proxy.
type Summary struct {
	Upstream string `json:"upstream"`
	// Document says which document the upstream is held to, and why:
	// named by the operator, or the surface the upstream serves.
	Document  string `json:"document"`
	Since     string `json:"since"`
	Exchanges int    `json:"exchanges"`
	Checked   int    `json:"checked"`
	// Unchecked counts the exchanges not checked, by reason (a body over
	// the size limit, the check queue full).
	Unchecked      map[string]int `json:"unchecked"`
	UpstreamErrors int            `json:"upstream_errors"`
	Violations     int            `json:"violations"`
	Rules          []RuleCount    `json:"rules"`
	// Latest are the latest violations, oldest first (at most 1000 kept).
	Latest []Finding `json:"latest"`
	// OffDocument counts the requests the document does not allow;
	// LatestOffDocument lists the latest (at most 200 kept).
	OffDocument       int           `json:"requests_off_document"`
	LatestOffDocument []OffDocument `json:"latest_requests_off_document"`
	// Clients is what each released client version made of the checked
	// success answers (clients.go).
	Clients []clientcheck.Count `json:"clients"`
	// Drift is what the traffic showed that the document does not
	// declare (drift.go): not violations, a list of its own.
	Drift drift.Report `json:"drift"`
	// LeftOut, in GET /__mock/proxy only, says what its lists leave out
	// to stay within SummaryAnswerBytes (answer.go).
	LeftOut *LeftOut `json:"left_out,omitempty"`
}

// RuleCount is one rule and how often it was broken.
type RuleCount struct {
	rules.Rule
	Violations int `json:"violations"`
}

func (f *findings) summary(upstream string) Summary {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := Summary{
		Upstream: upstream, Since: f.since.UTC().Format(time.RFC3339Nano),
		Exchanges: f.exchanges, Checked: f.checked, Unchecked: map[string]int{}, UpstreamErrors: f.upstreamErr,
		Latest: f.latest.list(), OffDocument: f.offDocCount, LatestOffDocument: f.offDoc.list(),
	}
	for k, v := range f.unchecked {
		s.Unchecked[k] = v
	}
	for _, r := range rules.All {
		if !rules.SeenInTraffic(r.ID) {
			continue // the suite's alone: the proxy never applies it
		}
		n := f.byRule[r.ID]
		s.Violations += n
		s.Rules = append(s.Rules, RuleCount{Rule: r, Violations: n})
	}
	return s
}

func (f *findings) entries() []Entry {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.journal.list()
}
