package store

import (
	"errors"
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
	States                                    map[State]bool
	Name, ModelID, Creator, Source            string
	EnvironmentID, ScheduleID, SkillSpec      string
	ArtifactType                              string
	CreatedAfter, CreatedBefore, UpdatedAfter time.Time
	Terms                                     []string // lower case; all must appear in title, prompt or skill
	// Order: SortBy is created_at (the default, ""), updated_at, title or agent.
	SortBy string
	Desc   bool
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

// ErrStalePosition is a position from before the mock session's last reset.
var ErrStalePosition = errors.New("the mock session was reset after this position was issued")

// Page is one page of runs; Next is set when more follow.
type Page struct {
	Runs []View
	Next *Position
}

// List answers one page. In creation order, the default, it walks the runs
// (or the name index) from the position and stops once the page is full, so
// a page costs what it holds rather than what the store holds; runs created
// meanwhile sort before the first page and never shift later ones. Other
// orders depend on derived values and sort every match.
func (ms *Session) List(p *fixtures.Principal, q ListQuery) (Page, error) {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	if q.After != nil && q.After.Generation != ms.generation {
		return Page{}, ErrStalePosition
	}
	now := ms.clock.Now()
	candidates := ms.runs
	if q.Name != "" {
		candidates = ms.byName[q.Name]
	}
	var page []*Run
	if q.SortBy == "" || q.SortBy == "created_at" {
		page = q.walkCreated(p, candidates, now)
	} else {
		page = q.sortAll(p, candidates, now)
	}
	out := Page{Runs: make([]View, 0, min(len(page), q.Limit))}
	for i, r := range page {
		if i == q.Limit {
			last := page[i-1]
			out.Next = &Position{Generation: ms.generation, Key: q.sortKey(last, now), Seq: last.Seq}
			break
		}
		out.Runs = append(out.Runs, r.view(now))
	}
	return out, nil
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
		!q.CreatedAfter.IsZero() && !r.CreatedAt.After(q.CreatedAfter),
		!q.CreatedBefore.IsZero() && !r.CreatedAt.Before(q.CreatedBefore),
		!q.UpdatedAfter.IsZero() && !snap.UpdatedAt.After(q.UpdatedAfter):
		return false
	}
	if q.ArtifactType != "" && (snap.State != Succeeded || !slices.Contains(r.ArtifactTypes, q.ArtifactType)) {
		return false
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

func (q *ListQuery) sortKey(r *Run, now time.Time) string {
	switch q.SortBy {
	case "updated_at":
		return timeKey(r.Timeline.At(now).UpdatedAt)
	case "title":
		return strings.ToLower(r.Title)
	case "agent":
		if r.Config != nil {
			return r.Config.Name
		}
		return ""
	}
	return ""
}

// timeKey is a key that sorts as t does, to the millisecond the API shows:
// fixed-width digits of the milliseconds, the sign bit flipped so earlier
// than 1970 sorts first too.
func timeKey(t time.Time) string {
	u := uint64(t.UnixMilli()) ^ 1<<63
	b := strconv.AppendUint(make([]byte, 0, 20), u, 10)
	return strings.Repeat("0", 20-len(b)) + string(b)
}

// sortAll collects every match, sorts by the key and then by Seq, and keeps
// up to limit+1 after the position.
func (q *ListQuery) sortAll(p *fixtures.Principal, runs []*Run, now time.Time) []*Run {
	type keyed struct {
		key string
		r   *Run
	}
	var all []keyed
	for _, r := range runs {
		if r.Team == p.Team && q.matches(r, r.Timeline.At(now)) {
			all = append(all, keyed{q.sortKey(r, now), r})
		}
	}
	// less is the page order; equal keys fall back to Seq, so it is total.
	less := func(ak string, as int64, bk string, bs int64) bool {
		switch {
		case ak != bk:
			return ak < bk != q.Desc
		case as != bs:
			return as < bs != q.Desc
		}
		return false
	}
	sort.Slice(all, func(i, j int) bool { return less(all[i].key, all[i].r.Seq, all[j].key, all[j].r.Seq) })
	start := 0
	if c := q.After; c != nil {
		start = sort.Search(len(all), func(i int) bool { return less(c.Key, c.Seq, all[i].key, all[i].r.Seq) })
	}
	out := make([]*Run, 0, q.Limit+1)
	for i := start; i < len(all) && len(out) <= q.Limit; i++ {
		out = append(out, all[i].r)
	}
	return out
}
