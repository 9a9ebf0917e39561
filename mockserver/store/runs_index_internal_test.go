package store

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/stretchr/testify/require"
)

// TestIndexEqualsScan holds the runs index to a plain scan of the same
// runs: after random creates, cancels, fates, forced states and clock
// moves, every order, both directions and a few filters list the same runs
// page by page, following positions, as looking at every run does.
func TestIndexEqualsScan(t *testing.T) {
	st := newTestStore(t)
	ms := open(t, st, "")
	rng := rand.New(rand.NewSource(23))
	titles := []string{"Fix the build", "fix the build", "Émigré notes", "add tests", "Zebra", "ünïcode", "ADD TESTS", ""}
	skills := []string{"", "", "acme/skills:review/SKILL.md", "acme/skills:Deploy/SKILL.md", "lint", "acme:a:b/SKILL.md"}
	finals := []State{Succeeded, Succeeded, Failed, Errored}
	people := [](func(*Store) *fixtures.Principal){alice, carol, ciBot}
	var ids []string
	// checkAll compares every order, direction and filter, for each
	// person, with the plain scan.
	checkAll := func(round int, ms *Session) {
		now := ms.Now()
		for _, sortBy := range []string{"updated_at", "title", "agent", "created_at"} {
			for _, desc := range []bool{false, true} {
				for fi, filter := range []func(*ListQuery){
					func(*ListQuery) {},
					func(q *ListQuery) { q.States = map[State]bool{InProgress: true, Succeeded: true} },
					func(q *ListQuery) { q.Name = "b" },
					func(q *ListQuery) { q.UpdatedAfter = now.Add(-3 * time.Second) },
					func(q *ListQuery) { q.Metadata = map[string]string{"ticket_id": "T-1"} },
					func(q *ListQuery) {
						q.Metadata, q.AutomationID = map[string]string{"ticket_id": "T-2"}, "nightly"
					},
					func(q *ListQuery) { q.Executor = alice(st).UID },
					func(q *ListQuery) { q.FactoryUID = "factory-1" },
					func(q *ListQuery) { q.ModelID = "m1" },
					func(q *ListQuery) { q.Name, q.ModelID, q.SkillSpec = "a", "m2", "lint" },
					func(q *ListQuery) { q.AncestorID = ids[rng.Intn(min(len(ids), 4))] },
					func(q *ListQuery) { q.AncestorID, q.Name = ids[rng.Intn(len(ids))], "b" },
				} {
					for _, p := range people {
						q := ListQuery{Limit: 1 + rng.Intn(4), SortBy: sortBy, Desc: desc}
						filter(&q)
						if q.AncestorID != "" {
							if _, err := ms.Run(q.AncestorID); err != nil {
								continue
							}
							if v, _ := ms.Run(q.AncestorID); v.Run.Team != p(st).Team {
								continue // not an ancestor the caller may name
							}
						}
						checkPages(t, ms, p(st), q, fmt.Sprintf("round %d, %s desc=%v filter %d", round, sortBy, desc, fi))
					}
				}
			}
		}
	}
	for round := 0; round < 60; round++ {
		for op := 0; op < 8; op++ {
			switch k := rng.Intn(10); {
			case k < 5:
				var steps Steps
				for i := range steps {
					steps[i] = time.Duration(rng.Intn(4)) * 500 * time.Millisecond
				}
				n := NewRun{
					Title:  titles[rng.Intn(len(titles))],
					Prompt: fmt.Sprintf("run %d", len(ids)),
					Config: &AgentConfig{Name: []string{"a", "b"}[rng.Intn(2)], SkillSpec: skills[rng.Intn(len(skills))],
						ModelID: []string{"", "m1", "m2"}[rng.Intn(3)]},
					Fate: Fate{Final: finals[rng.Intn(len(finals))], Steps: steps},
				}
				if m := rng.Intn(3); m > 0 {
					n.Metadata = map[string]string{"ticket_id": fmt.Sprint("T-", m), "automation_id": []string{"nightly", "weekly"}[rng.Intn(2)]}
				}
				who := people[rng.Intn(len(people))](st)
				if len(ids) > 0 && rng.Intn(2) == 0 { // trees of runs, deep ones among the first
					n.ParentRunID = ids[rng.Intn(min(len(ids), 1+rng.Intn(12)))]
				}
				v, err := ms.Create(who, n)
				if errors.Is(err, ErrNoParent) { // a parent of another team's
					n.ParentRunID = ""
					v, err = ms.Create(who, n)
				}
				require.NoError(t, err)
				ids = append(ids, v.Run.ID)
			case k < 7 && len(ids) > 0:
				id := ids[rng.Intn(len(ids))]
				v, err := ms.Run(id)
				require.NoError(t, err)
				_ = ms.Cancel(v.Run.Creator.Principal, id) // refused when finished; either is fine
			case k < 8 && len(ids) > 0 && rng.Intn(3) == 0:
				// A follow-up: an ended run is queued again, and moves
				// within the index like any run that changed.
				id := ids[rng.Intn(len(ids))]
				v, err := ms.Run(id)
				require.NoError(t, err)
				_, _ = ms.Followup(v.Run.Creator.Principal, id, "and more", "")
			case k < 8 && len(ids) > 0:
				_, _ = ms.Force(ids[rng.Intn(len(ids))], []State{InProgress, Blocked, Failed, Succeeded}[rng.Intn(4)], nil)
			default:
				_, err := ms.Advance(time.Duration(rng.Intn(2500)) * time.Millisecond)
				require.NoError(t, err)
			}
		}
		if round%6 != 5 {
			continue
		}
		checkAll(round, ms)
		if round%12 == 11 {
			// A load builds the orders all at once (runIndex.addAll):
			// the same pages from a store that loaded this one's save.
			var buf bytes.Buffer
			require.NoError(t, st.Save(&buf))
			loaded := newTestStore(t)
			require.NoError(t, loaded.Load(&buf))
			checkAll(round, open(t, loaded, ""))
		}
	}
}

// checkPages follows q's pages to the end and compares each with the
// scan's answer from the same position.
func checkPages(t *testing.T, ms *Session, p *fixtures.Principal, q ListQuery, what string) {
	t.Helper()
	var got, want []string
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10_000, what)
		page, err := ms.List(p, q)
		require.NoError(t, err, what)
		scan := scanPage(ms, p, q)
		var ids []string
		for _, v := range page.Runs {
			ids = append(ids, v.Run.ID)
		}
		require.Equal(t, scan, ids, "%s: page %d", what, pages)
		got = append(got, ids...)
		if page.Next == nil {
			break
		}
		q.After = page.Next
	}
	q.After = nil
	q.Limit = 1 << 30
	want = scanPage(ms, p, q)
	require.Equal(t, want, got, "%s: every page together", what)
	require.False(t, slices.Contains(got, ""), what)
}

// scanPage is the page the plain scan gives: every run looked at.
func scanPage(ms *Session, p *fixtures.Principal, q ListQuery) []string {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	now := ms.clock.Now()
	if q.AncestorID != "" {
		q.descendants = scanDescendants(ms, q.AncestorID)
	}
	var runs []*Run
	if q.SortBy == "created_at" {
		runs = q.walkCreated(p, ms.runs.list, now)
	} else {
		runs = q.sortAll(p, ms.runs.list, now)
	}
	var ids []string
	for i, r := range runs {
		if i == q.Limit {
			break
		}
		ids = append(ids, r.ID)
	}
	return ids
}

// scanDescendants is every run whose chain of parents reaches id, found by
// following each run's chain up.
func scanDescendants(ms *Session, id string) map[*Run]bool {
	out := map[*Run]bool{}
	for _, r := range ms.runs.list {
		seen := map[*Run]bool{}
		for cur := ms.runs.byID[r.ParentRunID]; cur != nil && !seen[cur]; cur = ms.runs.byID[cur.ParentRunID] {
			seen[cur] = true
			if cur.ID == id {
				out[r] = true
				break
			}
		}
	}
	return out
}

// FuzzCompareLower holds the title and agent orders' comparison to its
// definition: strings.ToLower of both, compared as strings. The seeds
// cover the ASCII fast path, a shared prefix, a non-ASCII byte after an
// ASCII prefix, case folding beyond ASCII and invalid UTF-8.
func FuzzCompareLower(f *testing.F) {
	for _, seed := range [][2]string{
		{"", ""}, {"a", ""}, {"Flaky test 41", "flaky test 42"}, {"Flaky test 4", "flaky test 41"},
		{"ABC", "abc"}, {"abc", "ABD"}, {"Zebra", "apple"}, {"[x]", "Ax"}, {"_a", "Za"},
		{"Émile", "émile"}, {"Straße", "STRASSE"}, {"test Ä", "test ä"}, {"test Ä", "test b"},
		{"ﬁle", "FILE"}, {"\xff", "\xef\xbf\xbd"}, {"a\xffb", "A\xfeB"}, {"İ", "i"}, {"Σ", "σ"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		want := strings.Compare(strings.ToLower(a), strings.ToLower(b))
		if got := compareLower(a, b); got != want {
			t.Fatalf("compareLower(%q, %q) = %d, strings.Compare of their lower cases = %d", a, b, got, want)
		}
	})
}

// TestCrossingListingsUseTheIndex lists from several goroutines at once on
// the real clock: a listing that read the clock before another and came to
// the index after it used to find the keys advanced past its instant and
// sort every run instead, a cost that grows with the store. No listing may
// fall back while the clock only moves forward.
func TestCrossingListingsUseTheIndex(t *testing.T) {
	st := newTestStore(t, func(o *Options) { o.ClockMode, o.ClockStart = RealClock, time.Time{} })
	ms := open(t, st, "")
	for i := range 200 {
		create(t, ms, alice(st), fmt.Sprintf("run %d", i))
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 300 {
				_, err := ms.List(alice(st), ListQuery{Limit: 1, SortBy: "updated_at", Desc: true})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	require.Zero(t, ms.runs.sortedAll.Load(), "listings that sorted every run instead of walking the index")
}
