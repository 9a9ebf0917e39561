package store

import (
	"cmp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentruns/agentruns/fixtures"
)

// ListQuery is a checked listing of runs: its filters, order, page size and
// where the page starts.
type ListQuery struct {
	Limit int
	// After, when set, starts the page after this position.
	After *Position
	// Filters; empty ones match every run.
	States                               map[State]bool
	Name, ModelID, Creator, Source       string
	EnvironmentID, ScheduleID, SkillSpec string
	ArtifactType, ExecutionLocation      string
	// Metadata keeps the runs whose metadata holds every pair;
	// AutomationID those whose metadata says this automation_id; Executor
	// those this user or agent executes (ExecutorUID). FactoryUID matches
	// no run: the mock has no factories, and the service matches nothing
	// for a factory the caller cannot see.
	Metadata                           map[string]string
	AutomationID, Executor, FactoryUID string
	// AncestorID keeps the runs descended from this run (children,
	// grandchildren, ...); List checks that the caller may see it.
	AncestorID                                string
	CreatedAfter, CreatedBefore, UpdatedAfter time.Time
	Terms                                     []string // lower case; all must appear in title, prompt or skill
	// Order: SortBy is updated_at (the default, ""), created_at, title or
	// agent.
	SortBy string
	Desc   bool

	descendants map[*Run]bool // of AncestorID, filled in by List
}

// Position is a place in one listing's order: after the run with Seq (and
// Key, for orders other than creation time). Generation ties it to the mock
// session's contents since its last reset. How a client carries it (the
// signed cursor) is the HTTP layer's business.
type Position struct {
	Generation int64
	Key        string
	Seq        int64
}

// ErrStalePosition is a position from before the mock session's last
// reset. A listing's errors name the query parameter they are about.
var ErrStalePosition = sentinel(Invalid, "cursor: the mock was reset after this cursor was issued")

// ErrNoAncestor is an ancestor run that does not exist or that the caller
// may not see.
var ErrNoAncestor = sentinel(Invalid, "ancestor_run_id: no run that you may see")

// Page is one page of runs; Next is set when more follow.
type Page struct {
	Runs []View
	Next *Position

	// the listing's order, for After
	sortBy     string
	desc       bool
	generation int64
}

// After is the position just after Runs[i], so a caller that sends fewer
// runs than the page holds (a page over its byte budget) can still say
// where the next page starts. It is made on demand: a page needs one
// position at most, and a key is a string to build.
func (p Page) After(i int) Position {
	v := p.Runs[i]
	pos := Position{Generation: p.generation, Seq: v.Run.Seq}
	if p.sortBy != "created_at" {
		pos.Key = sortKeyOf(p.sortBy, p.desc, v.Run, v.Snap).String()
	}
	return pos
}

// List answers one page. In creation order it walks the runs (or the name
// index) from the position and stops once the page is full, so a page costs
// what it holds rather than what the store holds; runs created meanwhile
// sort before the first page and never shift later ones. The other orders
// (the default, updated_at, among them) walk the runs index the same way
// (runs_index.go); only when it cannot serve (the clock shows an instant
// before the index's) do they look at every match and keep the best
// limit+1 after the position.
func (ms *Session) List(p *fixtures.Principal, q ListQuery) (Page, error) {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	if q.After != nil && q.After.Generation != ms.runs.generation {
		return Page{}, ErrStalePosition
	}
	now := ms.clock.Now()
	// candidates are the runs a match must be among: every run, or the
	// fewest that one of the equality filters (or ancestor_run_id) names.
	candidates, narrowed := ms.runs.list, false
	for _, k := range q.filterKeys(&[maxFilterKeys]filterKey{}) {
		if list := ms.runs.byKey[k]; !narrowed || len(list) < len(candidates) {
			candidates, narrowed = list, true
		}
	}
	if q.AncestorID != "" {
		if _, err := ms.visibleLocked(p, q.AncestorID); err != nil {
			return Page{}, ErrNoAncestor.because("ancestor_run_id: no run %q that you may see", q.AncestorID)
		}
		var list []*Run
		list, q.descendants = ms.descendantsLocked(q.AncestorID)
		if !narrowed || len(list) < len(candidates) {
			candidates, narrowed = list, true
		}
	}
	var page []*Run
	switch {
	case q.SortBy == "created_at":
		page = q.walkCreated(p, candidates, now)
	case narrowed && q.fewerToSort(len(candidates), ms.runs.index.size(p.Team)):
		page = q.sortAll(p, candidates, now)
	default:
		indexed, at, ok := ms.runs.index.indexedPage(p.Team, &q, ms.clock.Now)
		if ok {
			now = at // the page and its views tell the same instant
		} else {
			ms.runs.sortedAll.Add(1)
			indexed = q.sortAll(p, candidates, now)
		}
		page = indexed
	}
	out := Page{Runs: make([]View, 0, min(len(page), q.Limit)),
		sortBy: q.SortBy, desc: q.Desc, generation: ms.runs.generation}
	for i, r := range page {
		if i == q.Limit {
			next := out.After(i - 1)
			out.Next = &next
			break
		}
		out.Runs = append(out.Runs, r.view(now))
	}
	return out, nil
}

// filterKey is one value of one field a listing filters on by equality,
// named by its query parameter: the runs table lists the runs that have
// it (runTable.byKey).
type filterKey struct{ field, value string }

// maxFilterKeys is how many filterKeys a run or a query has at most.
const maxFilterKeys = 8

// filterKeys are the keys r is listed under, in buf.
func (r *Run) filterKeys(buf *[maxFilterKeys]filterKey) []filterKey {
	keys := buf[:0]
	add := func(field, value string) {
		if value != "" {
			keys = append(keys, filterKey{field, value})
		}
	}
	if cfg := r.Config; cfg != nil {
		add("name", cfg.Name)
		add("model_id", cfg.ModelID)
		add("environment_id", cfg.EnvironmentID)
		add("skill_spec", cfg.SkillSpec)
	}
	add("creator", r.Creator.UID)
	if r.Schedule != nil {
		add("schedule_id", r.Schedule.ID)
	}
	add("ancestor_run_id", r.ParentRunID) // its parent's children; descendantsLocked follows them down
	return keys
}

// filterKeys are the keys q asks for, in buf: a match is listed under
// each of them.
func (q *ListQuery) filterKeys(buf *[maxFilterKeys]filterKey) []filterKey {
	keys := buf[:0]
	for _, k := range []filterKey{
		{"name", q.Name}, {"model_id", q.ModelID}, {"environment_id", q.EnvironmentID},
		{"skill_spec", q.SkillSpec}, {"creator", q.Creator}, {"schedule_id", q.ScheduleID},
	} {
		if k.value != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// fewerToSort reports whether sorting n candidates costs less than
// walking an order of a team's size runs: a walk that keeps one run in
// size/n (the candidates' share, if the other filters keep most of them)
// visits about (limit+1)·size/n runs before the page is full, so sorting
// wins when n² is below (limit+1)·size. Either way a page costs at most
// about the square root of (limit+1)·size, never the store.
func (q *ListQuery) fewerToSort(n, size int) bool {
	return int64(n)*int64(n) <= int64(q.Limit+1)*int64(size)
}

// matches reports whether a run passes every filter of q at the given snapshot.
func (q *ListQuery) matches(r *Run, snap Snapshot) bool {
	cfg := r.Config
	if cfg == nil {
		cfg = &AgentConfig{}
	}
	switch {
	case q.States != nil && !q.States[snap.State],
		q.Name != "" && cfg.Name != q.Name,
		q.ModelID != "" && cfg.ModelID != q.ModelID,
		q.Creator != "" && r.Creator.UID != q.Creator,
		q.Source != "" && r.Source != q.Source,
		q.EnvironmentID != "" && cfg.EnvironmentID != q.EnvironmentID,
		q.SkillSpec != "" && cfg.SkillSpec != q.SkillSpec,
		q.ScheduleID != "" && (r.Schedule == nil || r.Schedule.ID != q.ScheduleID),
		q.ExecutionLocation != "" && r.ExecutionLocation() != q.ExecutionLocation,
		q.AutomationID != "" && r.Metadata["automation_id"] != q.AutomationID,
		q.Executor != "" && r.ExecutorUID() != q.Executor,
		q.FactoryUID != "",
		q.descendants != nil && !q.descendants[r],
		!q.CreatedAfter.IsZero() && !r.CreatedAt.After(q.CreatedAfter),
		!q.CreatedBefore.IsZero() && !r.CreatedAt.Before(q.CreatedBefore),
		!q.UpdatedAfter.IsZero() && !snap.UpdatedAt.After(q.UpdatedAfter):
		return false
	}
	if q.ArtifactType != "" && (!(View{Run: r, Snap: snap}).ShowsArtifacts() || !slices.Contains(r.ArtifactTypes, q.ArtifactType)) {
		return false
	}
	for k, v := range q.Metadata {
		if got, ok := r.Metadata[k]; !ok || got != v {
			return false
		}
	}
	if len(q.Terms) > 0 {
		text := strings.ToLower(r.Title + "\n" + r.Prompt + "\n" + cfg.SkillSpec)
		for _, t := range q.Terms {
			if !strings.Contains(text, t) {
				return false
			}
		}
	}
	return true
}

// walkCreated collects up to limit+1 matches in creation order.
func (q *ListQuery) walkCreated(p *fixtures.Principal, runs []*Run, now time.Time) []*Run {
	out := make([]*Run, 0, min(q.Limit+1, 64))
	step, i := 1, 0
	if q.Desc {
		step, i = -1, len(runs)-1
	}
	if c := q.After; c != nil {
		// runs are in Seq order: find the first one past the position.
		i = sort.Search(len(runs), func(k int) bool { return runs[k].Seq > c.Seq })
		if q.Desc {
			i = sort.Search(len(runs), func(k int) bool { return runs[k].Seq >= c.Seq }) - 1
		}
	}
	for ; i >= 0 && i < len(runs) && len(out) <= q.Limit; i += step {
		r := runs[i]
		// Creation times only grow with Seq, so the time bounds end the walk.
		if q.Desc && !q.CreatedAfter.IsZero() && !r.CreatedAt.After(q.CreatedAfter) ||
			!q.Desc && !q.CreatedBefore.IsZero() && !r.CreatedAt.Before(q.CreatedBefore) {
			break
		}
		if r.Team == p.Team && q.matches(r, r.Timeline.At(now)) {
			out = append(out, r)
		}
	}
	return out
}

// sortKey is a run's place in an order other than creation time: a number
// (updated_at, in milliseconds) or a text, compared in that order.
type sortKey struct {
	num  int64
	text string
}

func (q *ListQuery) sortKey(r *Run, now time.Time) sortKey {
	return sortKeyOf(q.SortBy, q.Desc, r, r.Timeline.At(now))
}

// sortKeyOf is r's key in the order sortBy (desc: descending), with snap
// its state at the listing's instant.
func sortKeyOf(sortBy string, desc bool, r *Run, snap Snapshot) sortKey {
	switch sortBy {
	case "title":
		return sortKey{text: strings.ToLower(r.Title)}
	case "agent":
		// By skill; runs without one after every skill, whichever the
		// direction: num is 0 for a skill and 1 or -1 without (after in
		// ascending and in descending order alike).
		if r.Config != nil && r.Config.SkillSpec != "" {
			return sortKey{text: strings.ToLower(SkillName(r.Config.SkillSpec))}
		}
		if desc {
			return sortKey{num: -1}
		}
		return sortKey{num: 1}
	}
	return sortKey{num: snap.UpdatedAt.UnixMilli()}
}

// String is the key as a Position carries it.
func (k sortKey) String() string { return strconv.FormatInt(k.num, 10) + ":" + k.text }

func parseSortKey(s string) sortKey {
	n, text, _ := strings.Cut(s, ":")
	num, _ := strconv.ParseInt(n, 10, 64)
	return sortKey{num: num, text: text}
}

// keyed is a match with its place in the order.
type keyed struct {
	key sortKey
	r   *Run
}

// before reports whether a comes before b in the page order; equal keys
// fall back to Seq, so the order is total.
func (q *ListQuery) before(a, b keyed) bool {
	switch {
	case a.key.num != b.key.num:
		return a.key.num < b.key.num != q.Desc
	case a.key.text != b.key.text:
		return a.key.text < b.key.text != q.Desc
	case a.r.Seq != b.r.Seq:
		return a.r.Seq < b.r.Seq != q.Desc
	}
	return false
}

// sortAll looks at every match and keeps, in order, the first limit+1
// after the position. A bounded heap keeps the cost at n·log(limit) rather
// than sorting every match.
func (q *ListQuery) sortAll(p *fixtures.Principal, runs []*Run, now time.Time) []*Run {
	var after *keyed
	if c := q.After; c != nil {
		after = &keyed{key: parseSortKey(c.Key), r: &Run{Seq: c.Seq}}
	}
	keep := q.Limit + 1
	// best is a heap whose root is the last of the kept runs, the first to
	// give way to a better one.
	best := make([]keyed, 0, min(keep, 64))
	worse := func(i, j int) bool { return q.before(best[j], best[i]) }
	for _, r := range runs {
		if r.Team != p.Team || !q.matches(r, r.Timeline.At(now)) {
			continue
		}
		k := keyed{q.sortKey(r, now), r}
		if after != nil && !q.before(*after, k) {
			continue
		}
		if len(best) < keep {
			best = append(best, k)
			heapUp(best, len(best)-1, worse)
		} else if q.before(k, best[0]) {
			best[0] = k
			heapDown(best, 0, worse)
		}
	}
	sort.Slice(best, func(i, j int) bool { return q.before(best[i], best[j]) })
	out := make([]*Run, len(best))
	for i, k := range best {
		out[i] = k.r
	}
	return out
}

func heapUp(h []keyed, i int, less func(i, j int) bool) {
	for i > 0 {
		parent := (i - 1) / 2
		if !less(i, parent) {
			return
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func heapDown(h []keyed, i int, less func(i, j int) bool) {
	for {
		l, m := 2*i+1, i
		if l < len(h) && less(l, m) {
			m = l
		}
		if r := l + 1; r < len(h) && less(r, m) {
			m = r
		}
		if m == i {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// descendantsLocked is every run whose chain of parents reaches id, in
// creation order and as a set. It follows the runs table's lists of
// children down from id, so it costs the descendants, not the store.
func (ms *Session) descendantsLocked(id string) ([]*Run, map[*Run]bool) {
	var list []*Run
	set := map[*Run]bool{}
	for next := []string{id}; len(next) > 0; {
		parent := next[len(next)-1]
		next = next[:len(next)-1]
		for _, r := range ms.runs.byKey[filterKey{"ancestor_run_id", parent}] {
			if !set[r] { // a cycle of parents (runs adopted by tests) ends here
				set[r] = true
				list = append(list, r)
				next = append(next, r.ID)
			}
		}
	}
	slices.SortFunc(list, func(a, b *Run) int { return cmp.Compare(a.Seq, b.Seq) })
	return list, set
}
