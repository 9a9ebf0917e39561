package store

import (
	"container/heap"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/btree"
)

// runIndex keeps each team's runs in every order a listing has other than
// creation (the runs table's list is that one), so a page walks from its
// position and stops once full: it costs the page, not the store.
//
// Titles and skills never change once a run is stored, so those orders are
// plain ordered sets. updated_at does change, but only at the moments of a
// run's own timeline: a run that has finished (or waits in BLOCKED) keeps
// its key, and the few still moving wait in a heap by their next moment.
// Before a listing reads the updated_at order, the runs whose moment the
// clock has passed are taken out and put back under their new key; a
// cancel, a forced state or a reported event re-anchors one the same way.
//
// The sets are B-trees (github.com/google/btree, its generic form): an
// ordered set with seeking and walking both ways, small per item (a
// pointer), and used by etcd and others for the same job.
type runIndex struct {
	// mu lets listings, which hold the mock session's read lock, advance
	// the updated_at order one at a time. Writers hold the session's write
	// lock, so they never meet a listing.
	mu    sync.Mutex
	teams map[string]*teamIndex
}

type teamIndex struct {
	updated *btree.BTreeG[*Run] // by Run.indexedAt, then Seq
	// updatedByName is the same order for each agent_config.name, so a
	// listing filtered by name walks only that name's runs.
	updatedByName map[string]*btree.BTreeG[*Run]
	title         *btree.BTreeG[*Run] // by the title in lower case, then Seq
	agent         *btree.BTreeG[*Run] // runs with a skill by its name in lower case, then the rest; then Seq
	moving        movingHeap          // runs whose updated_at will change, by when
	// at is the latest instant the updated_at keys were computed for; a
	// listing for an earlier one (a real clock whose wall time stepped
	// back) cannot use them.
	at time.Time
}

const btreeDegree = 32

func newRunIndex() *runIndex { return &runIndex{teams: map[string]*teamIndex{}} }

func (x *runIndex) team(name string) *teamIndex {
	t := x.teams[name]
	if t == nil {
		t = &teamIndex{
			updated: btree.NewG(btreeDegree, lessUpdated),
			title:   btree.NewG(btreeDegree, lessTitle),
			agent:   btree.NewG(btreeDegree, lessAgent),

			updatedByName: map[string]*btree.BTreeG[*Run]{},
		}
		x.teams[name] = t
	}
	return t
}

// add indexes a new run as it is at now.
func (x *runIndex) add(r *Run, now time.Time) {
	t := x.team(r.Team)
	t.title.ReplaceOrInsert(r)
	t.agent.ReplaceOrInsert(r)
	t.place(r, now)
}

// addAll indexes runs stored together (a load) as add would one by one.
// The orders are apart from each other (place alone writes to a run, and
// only the fields the other orders do not read), so each is built by a
// goroutine of its own: filing a large load is a third of its time.
func (x *runIndex) addAll(runs []*Run, now time.Time) {
	for _, r := range runs {
		x.team(r.Team)
	}
	var wg sync.WaitGroup
	each := func(file func(t *teamIndex, r *Run)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, r := range runs {
				file(x.teams[r.Team], r)
			}
		}()
	}
	each(func(t *teamIndex, r *Run) { t.title.ReplaceOrInsert(r) })
	each(func(t *teamIndex, r *Run) { t.agent.ReplaceOrInsert(r) })
	each(func(t *teamIndex, r *Run) { t.place(r, now) })
	wg.Wait()
}

// remove drops a run from every order.
func (x *runIndex) remove(r *Run) {
	t := x.teams[r.Team]
	if t == nil {
		return
	}
	t.title.Delete(r)
	t.agent.Delete(r)
	t.unfile(r)
	r.nextAt = 0 // its heap entry, if any, is now stale
}

// moved re-keys a run whose timeline was re-anchored at now.
func (x *runIndex) moved(r *Run, now time.Time) {
	t := x.teams[r.Team]
	if t == nil {
		return
	}
	t.unfile(r)
	t.place(r, now)
}

// unfile takes r out of the updated_at orders, before its key changes.
func (t *teamIndex) unfile(r *Run) {
	t.updated.Delete(r)
	if byName := t.updatedByName[runName(r)]; byName != nil {
		byName.Delete(r)
	}
}

func runName(r *Run) string {
	if r.Config == nil {
		return ""
	}
	return r.Config.Name
}

// place puts r into the updated_at order under its key at now, and into
// the heap if that key will change.
func (t *teamIndex) place(r *Run, now time.Time) {
	if now.After(t.at) {
		t.at = now
	}
	snap := r.Timeline.At(now)
	r.indexedAt = snap.UpdatedAt.UnixMilli()
	t.updated.ReplaceOrInsert(r)
	if name := runName(r); name != "" {
		byName := t.updatedByName[name]
		if byName == nil {
			byName = btree.NewG(btreeDegree, lessUpdated)
			t.updatedByName[name] = byName
		}
		byName.ReplaceOrInsert(r)
	}
	r.nextAt = 0
	// A moment past the last instant a clock shows never comes.
	if next, ok := r.Timeline.nextMoment(now); ok && !next.After(MaxInstant) {
		r.nextAt = momentKey(next)
		t.moving.push(moment{at: r.nextAt, r: r})
	}
}

// advance brings every updated_at key to now. It reports false if now is
// before the keys' instant, when they cannot serve.
func (t *teamIndex) advance(now time.Time) bool {
	if now.Before(t.at) {
		return false
	}
	t.at = now
	// Each moment taken out is filed again at a key after now, or not at
	// all, so the walk ends by construction; the count bounds it even so.
	key := now.UnixMilli()
	for n := len(t.moving); n > 0 && len(t.moving) > 0 && t.moving[0].at <= key; n-- {
		m := t.moving.pop()
		if m.r.nextAt != m.at { // re-anchored or removed since
			continue
		}
		t.unfile(m.r)
		t.place(m.r, now)
	}
	return true
}

// nextMoment is the first instant after now at which the timeline's state
// changes, if it ever does on its own. Like At, it walks progression once.
func (tl *Timeline) nextMoment(now time.Time) (time.Time, bool) {
	at := tl.Anchor
	for idx := progressionIndex(tl.AnchorState); idx >= 0 && idx < len(progression); idx++ {
		next := at.Add(tl.Steps[idx])
		if now.Before(next) {
			return next, true
		}
		at = next
	}
	return time.Time{}, false
}

// momentKey is the heap's key of an instant: Unix milliseconds, rounded
// up, so a moment is taken out only once a clock showing whole
// milliseconds has passed it. Milliseconds, not nanoseconds: a clock goes
// to year 9999, and Unix nanoseconds end in 2262 (past it they wrapped
// round, and a listing walked the heap for ever).
func momentKey(t time.Time) int64 {
	k := t.UnixMilli()
	if t.Nanosecond()%int(time.Millisecond) != 0 {
		k++
	}
	return k
}

// moment is a moving run and the instant (momentKey) its key next changes.
type moment struct {
	at int64
	r  *Run
}

type movingHeap []moment

func (h movingHeap) Len() int           { return len(h) }
func (h movingHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h movingHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *movingHeap) Push(x any)        { *h = append(*h, x.(moment)) }

// push and pop are heap.Push and heap.Pop without putting the moment in
// an interface, which costs an allocation for every run a create or a
// listing files.
func (h *movingHeap) push(m moment) {
	*h = append(*h, m)
	heap.Fix(h, len(*h)-1)
}

func (h *movingHeap) pop() moment {
	old := *h
	n := len(old) - 1
	m := old[0]
	old[0] = old[n]
	old[n] = moment{}
	*h = old[:n]
	if n > 0 {
		heap.Fix(h, 0)
	}
	return m
}

func (h *movingHeap) Pop() any {
	old := *h
	m := old[len(old)-1]
	old[len(old)-1] = moment{}
	*h = old[:len(old)-1]
	return m
}

func lessUpdated(a, b *Run) bool {
	if a.indexedAt != b.indexedAt {
		return a.indexedAt < b.indexedAt
	}
	return a.Seq < b.Seq
}

func lessTitle(a, b *Run) bool {
	if c := compareLower(a.Title, b.Title); c != 0 {
		return c < 0
	}
	return a.Seq < b.Seq
}

// agentName is the skill name a run sorts by in the agent order, and
// whether it has one.
func agentName(r *Run) (string, bool) {
	if r == nil {
		return "", false
	}
	if r.ID == "" { // a stand-in (ListQuery.pivot)
		return r.Prompt, r.FromSkill
	}
	if r.Config != nil && r.Config.SkillSpec != "" {
		return SkillName(r.Config.SkillSpec), true
	}
	return "", false
}

func lessAgent(a, b *Run) bool {
	an, aok := agentName(a)
	bn, bok := agentName(b)
	if aok != bok {
		return aok // runs with a skill come first
	}
	if c := compareLower(an, bn); c != 0 {
		return c < 0
	}
	return a.Seq < b.Seq
}

// compareLower compares a and b as strings.ToLower(a) and
// strings.ToLower(b) compare, without making either. Titles are mostly
// ASCII and a team's titles often share a long prefix ("Flaky test 41",
// "Flaky test 42"), so bytes are compared as bytes until the first that
// is not ASCII; from there on, rune by rune (compareLowerRunes). Both
// halves start at the same offset, a rune boundary in both strings, as
// every byte before it was ASCII.
func compareLower(a, b string) int {
	if a == b { // a team's repeated titles: one comparison of bytes
		return 0
	}
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		ca, cb := a[i], b[i]
		if ca == cb {
			if ca < utf8.RuneSelf {
				continue
			}
			return compareLowerRunes(a[i:], b[i:])
		}
		if ca >= utf8.RuneSelf || cb >= utf8.RuneSelf {
			return compareLowerRunes(a[i:], b[i:])
		}
		if 'A' <= ca && ca <= 'Z' {
			ca += 'a' - 'A'
		}
		if 'A' <= cb && cb <= 'Z' {
			cb += 'a' - 'A'
		}
		if ca != cb {
			if ca < cb {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a) == len(b):
		return 0
	case len(a) < len(b):
		return -1
	}
	return 1
}

// compareLowerRunes is compareLower rune by rune, for strings that are
// not all ASCII.
func compareLowerRunes(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra < utf8.RuneSelf && rb < utf8.RuneSelf {
			if 'A' <= ra && ra <= 'Z' {
				ra += 'a' - 'A'
			}
			if 'A' <= rb && rb <= 'Z' {
				rb += 'a' - 'A'
			}
		} else {
			ra, rb = unicode.ToLower(ra), unicode.ToLower(rb)
		}
		if ra != rb {
			if ra < rb {
				return -1
			}
			return 1
		}
		a, b = a[na:], b[nb:]
	}
	switch {
	case a == "" && b == "":
		return 0
	case a == "":
		return -1
	}
	return 1
}

// size is how many runs of team's the index holds.
func (x *runIndex) size(team string) int {
	x.mu.Lock()
	defer x.mu.Unlock()
	if t := x.teams[team]; t != nil {
		return t.title.Len()
	}
	return 0
}

// indexedPage collects up to limit+1 of a team's matches after the
// query's position, in an order other than creation time, as they stand at
// the instant it returns. It reads the clock itself, under the index's
// lock: two listings that read it before and came to the lock in the other
// order would otherwise find the keys advanced past their instant, and the
// later one would fall back to sorting every run (a full sort per listing
// under concurrent load, growing with the store). It reports false only
// when the clock shows an instant before the keys' (see teamIndex.at).
func (x *runIndex) indexedPage(team string, q *ListQuery, clock func() time.Time) (page []*Run, now time.Time, ok bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	now = clock()
	t := x.teams[team]
	if t == nil {
		return nil, now, true
	}
	if !t.advance(now) {
		return nil, now, false
	}
	tree, less := t.updated, lessUpdated
	if q.Name != "" {
		tree = t.updatedByName[q.Name]
		if tree == nil {
			return nil, now, true
		}
	}
	switch q.SortBy {
	case "title":
		tree, less = t.title, lessTitle
	case "agent":
		tree, less = t.agent, lessAgent
	}
	pivot := q.pivot()
	out := make([]*Run, 0, min(q.Limit+1, 64))
	visit := func(r *Run) bool {
		if pivot != nil && !less(pivot, r) && !less(r, pivot) {
			return true // the position itself
		}
		if q.matches(r, r.Timeline.At(now)) {
			out = append(out, r)
		}
		return len(out) <= q.Limit
	}
	if q.SortBy != "title" && q.SortBy != "agent" && !q.UpdatedAfter.IsZero() {
		// updated_after bounds the walk: where it starts going up, where
		// it ends going down.
		floor := &Run{indexedAt: q.UpdatedAfter.UnixMilli()}
		if !q.Desc && (pivot == nil || lessUpdated(pivot, floor)) {
			pivot = floor
		}
		if q.Desc {
			inner := visit
			visit = func(r *Run) bool { return r.indexedAt >= floor.indexedAt && inner(r) }
		}
	}
	full := func() bool { return len(out) > q.Limit }
	switch {
	case !q.Desc && pivot == nil:
		tree.Ascend(visit)
	case !q.Desc:
		tree.AscendGreaterOrEqual(pivot, visit)
	case q.SortBy == "agent":
		// Runs without a skill come last in both directions: the skills
		// downwards, then the rest downwards.
		_, pivotSkill := agentName(pivot)
		if pivot == nil || pivotSkill {
			from := pivot
			if from == nil {
				from = &Run{} // before every run without a skill, after every skill
			}
			tree.DescendLessOrEqual(from, visit)
			pivot = nil
		}
		if !full() {
			rest := func(r *Run) bool { _, skill := agentName(r); return !skill && visit(r) }
			if pivot == nil {
				tree.Descend(rest)
			} else {
				tree.DescendLessOrEqual(pivot, rest)
			}
		}
	case pivot == nil:
		tree.Descend(visit)
	default:
		tree.DescendLessOrEqual(pivot, visit)
	}
	return out, now, true
}

// pivot is a stand-in run at the query's position, for seeking in the
// index. Stand-ins have no ID; agentName reads theirs from Prompt.
func (q *ListQuery) pivot() *Run {
	c := q.After
	if c == nil {
		return nil
	}
	k := parseSortKey(c.Key)
	switch q.SortBy {
	case "title":
		return &Run{Seq: c.Seq, Title: k.text}
	case "agent":
		return &Run{Seq: c.Seq, Prompt: k.text, FromSkill: k.num == 0}
	}
	return &Run{Seq: c.Seq, indexedAt: k.num}
}
