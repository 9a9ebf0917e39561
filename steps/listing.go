package steps

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentruns/agentruns/rules"
)

// Listing runs, one page or every page.

// listing is one page of GET /agent/runs. When there is none (no listing
// yet, or the server refused), err says why.
type listing struct {
	op         string
	query      string
	runs       []map[string]any
	hasNext    bool
	nextCursor string
	// shape tells what is wrong with the body's "runs" and "page_info", ""
	// when both are there.
	shape   string
	mine    *roster
	err     error
	refused bool      // the server answered, but not with a 200
	answer  *response // the server's answer, nil when none came
}

// walk is every page of one listing, followed by cursor.
type walk struct {
	pages []*listing
	mine  *roster
	err   error
}

// Steps that list.

// listRuns lists one page; later steps judge it.
func (s *scenario) listRuns(ctx context.Context, q string) error {
	s.listings.page = s.listPage(ctx, q, "")
	s.leave(s.listings.page.answer) // a refusal is judged by the response steps too
	if s.listings.page.refused {
		return nil // a later step judges the refusal
	}
	return s.listings.page.err
}

// walkPages follows next_cursor from the first page to the last.
func (s *scenario) walkPages(ctx context.Context, q string) error {
	const maxPages = 100
	w := &walk{mine: &s.mine}
	s.listings.walk = w
	used := map[string]bool{}
	cursor := ""
	for {
		l := s.listPage(ctx, q, cursor)
		if l.err != nil {
			w.err = fmt.Errorf("page %d: %w", len(w.pages)+1, l.err)
			return w.err
		}
		w.pages = append(w.pages, l)
		switch {
		case !l.hasNext:
			return nil
		case l.nextCursor == "":
			w.err = fmt.Errorf("page %d (%s) says has_next_page but gives no next_cursor", len(w.pages), l.op)
		case used[l.nextCursor]:
			w.err = fmt.Errorf("page %d (%s) hands back a cursor already used: the walk would never end", len(w.pages), l.op)
		case len(w.pages) == maxPages:
			w.err = fmt.Errorf("gave up after %d pages", maxPages)
		}
		if w.err != nil {
			return w.err
		}
		used[l.nextCursor] = true
		cursor = l.nextCursor
	}
}

// listPage gets one page of runs and expects a 200.
func (s *scenario) listPage(ctx context.Context, q, cursor string) *listing {
	l := &listing{mine: &s.mine}
	q, err := s.resolve(ctx, q)
	if err != nil {
		l.err = err
		return l
	}
	l.query = q
	query := parseQuery(q)
	if cursor != "" {
		query.Set("cursor", cursor)
	}
	resp, err := s.ask(ctx, call{method: http.MethodGet, path: "/agent/runs", query: query})
	l.answer = resp
	if l.err = err; l.err != nil {
		return l
	}
	l.op = resp.op
	if l.err = resp.ok("listing runs"); l.err != nil {
		l.refused = true
		return l
	}
	var body struct {
		Runs     *[]map[string]any `json:"runs"`
		PageInfo *struct {
			HasNextPage *bool  `json:"has_next_page"`
			NextCursor  string `json:"next_cursor"`
		} `json:"page_info"`
	}
	if l.err = resp.json(&body); l.err != nil {
		return l
	}
	switch {
	case body.Runs == nil:
		l.shape = "no \"runs\" list"
	case body.PageInfo == nil:
		l.shape = "no \"page_info\""
	case body.PageInfo.HasNextPage == nil:
		l.shape = "no \"page_info.has_next_page\""
	default:
		l.runs, l.hasNext, l.nextCursor = *body.Runs, *body.PageInfo.HasNextPage, body.PageInfo.NextCursor
	}
	if limit, _ := strconv.Atoi(query.Get("limit")); limit > 0 && len(l.runs) > limit {
		l.err = fmt.Errorf("%s: expected at most limit=%d runs, got %d", l.op, limit, len(l.runs))
		return l
	}
	var mismatched []error
	for _, run := range l.runs {
		if err := matchesFilters(query, run); err != nil {
			mismatched = append(mismatched, err)
		}
	}
	if len(mismatched) > 0 {
		l.err = fmt.Errorf("%s: expected only runs matching every filter, got:\n  %w", l.op, errors.Join(mismatched...))
	}
	return l
}

// page is the last page listed.
func (s *scenario) page() *listing {
	if s.listings.page == nil {
		return &listing{err: errors.New("no runs were listed")}
	}
	return s.listings.page
}

// walk is the last walk over every page.
func (s *scenario) walk() *walk {
	if s.listings.walk == nil {
		return &walk{err: errors.New("no walk over the pages was made")}
	}
	return s.listings.walk
}

// Steps that check a listing: one line each.

func (s *scenario) listingHoldsExactly(ctx context.Context, names string) error {
	l := s.wholeListing(ctx)
	err := l.holdsExactly(names)
	if err != nil && l.err == nil {
		// A run out of place at a time bound its shown digits leave
		// undecided is no failure (precision.go).
		if want, perr := l.mine.pick(names); perr == nil {
			if why := s.ambiguousListing(ctx, l, want); why != "" {
				return s.inconclusive(why)
			}
		}
	}
	return err
}

// wholeListing is the last listing with the pages that follow it, if any:
// a page may hold fewer runs than the limit (it is a maximum), so what a
// listing holds is judged over all of its pages. The pages after the first
// are checked against the filters as every page is.
func (s *scenario) wholeListing(ctx context.Context) *listing {
	first := s.page()
	if first.err != nil || !first.hasNext {
		return first
	}
	whole := *first
	whole.op = first.op + " and the pages after it"
	whole.runs = slices.Clone(first.runs)
	used := map[string]bool{}
	for l := first; l.hasNext; {
		if l.nextCursor == "" || used[l.nextCursor] || len(used) == 100 {
			whole.err = fmt.Errorf("%s says has_next_page but gives no new next_cursor", l.op)
			return &whole
		}
		used[l.nextCursor] = true
		if l = s.listPage(ctx, first.query, l.nextCursor); l.err != nil {
			whole.err = l.err
			return &whole
		}
		whole.runs = append(whole.runs, l.runs...)
	}
	whole.hasNext = false
	return &whole
}

func (s *scenario) listingHoldsAndMaybe(ctx context.Context, must, may, _ string) error {
	return s.wholeListing(ctx).holdsAndMaybe(must, may)
}

func (s *scenario) listingHoldsAtMost(n int) error { return s.page().holdsAtMost(n) }

func (s *scenario) listingHoldsCount(n int) error { return s.page().holdsCount(n) }

// listingHoldsCreatedInOrder judges the listing with the pages after it: a
// server may hold pages shorter than the limit.
func (s *scenario) listingHoldsCreatedInOrder(ctx context.Context, which string) error {
	return s.wholeListing(ctx).holdsMineInOrder(which == "newest")
}

func (s *scenario) listingOrderedBy(field, which string) error {
	return s.page().orderedBy(field, which == "newest")
}

func (s *scenario) listingHasRunsAndPageInfo() error { return s.page().hasRunsAndPageInfo() }

func (s *scenario) listingHasNextPage() error { return s.page().hasNextPage() }

func (s *scenario) listedRunsSayWhy() error { return s.page().eachSaysWhy() }

func (s *scenario) listingHasNoNextPage() error { return s.page().hasNoNextPage() }

func (s *scenario) walkPagesWithin(limit int) error { return s.walk().pagesWithin(limit) }

func (s *scenario) listingHoldsBetween(least, most int) error {
	if err := s.page().holdsAtMost(most); err != nil {
		return err
	}
	l := s.page()
	if len(l.runs) < least {
		return fmt.Errorf("%s: expected at least %d runs, got %d", l.op, least, len(l.runs))
	}
	return nil
}

// withoutLimitHoldsAtMost judges the default page size over the runs the
// last listing found: when it held more than most (its limit was larger),
// the same listing without a limit must hold from 1 to most runs and say
// more follow. A key that can see no more than most runs leaves it
// inconclusive: the suite creates no runs only to fill a page.
func (s *scenario) withoutLimitHoldsAtMost(ctx context.Context, most int) error {
	l := s.page()
	if l.err != nil {
		return l.err
	}
	if len(l.runs) <= most {
		return s.inconclusive(fmt.Sprintf("%s found only %d runs: a page without a limit shows its size only over more than %d", l.op, len(l.runs), most))
	}
	var without []string
	for _, part := range strings.Split(l.query, "&") {
		if !strings.HasPrefix(part, "limit=") {
			without = append(without, part)
		}
	}
	if err := s.listRuns(ctx, strings.Join(without, "&")); err != nil {
		return err
	}
	if err := s.listingHoldsBetween(1, most); err != nil {
		return err
	}
	return s.listingHasNextPage()
}

func (s *scenario) walkSawEachOnce() error { return s.walk().sawEachOnce() }

// Assertions on a page.

// holdsExactly checks the page holds these runs of the scenario ("alpha and
// beta", "no runs", "the runs I created") once each, and nothing else.
func (l *listing) holdsExactly(names string) error {
	if l.err != nil {
		return l.err
	}
	want, err := l.mine.pick(names)
	if err != nil {
		return err
	}
	return l.mine.sameRuns(l.op, want, l.runs)
}

// holdsAndMaybe checks the page holds the runs named by must, perhaps some
// of those named by may (whether they belong is up to the filters, which
// every page is checked against), once each, and nothing else.
func (l *listing) holdsAndMaybe(must, may string) error {
	if l.err != nil {
		return l.err
	}
	want, err := l.mine.pick(must)
	if err != nil {
		return err
	}
	maybe, err := l.mine.pick(may)
	if err != nil {
		return err
	}
	ok := map[string]bool{}
	for _, r := range maybe {
		ok[r.id] = true
	}
	var got []map[string]any
	for _, run := range l.runs {
		if id := str(run["run_id"]); ok[id] {
			delete(ok, id) // a second listing of it is judged as unwanted
			continue
		}
		got = append(got, run)
	}
	return l.mine.sameRuns(l.op, want, got)
}

func (l *listing) holdsAtMost(n int) error {
	if l.err != nil {
		return l.err
	}
	if len(l.runs) > n {
		return fmt.Errorf("%s: expected at most %d runs, got %d", l.op, n, len(l.runs))
	}
	return nil
}

func (l *listing) holdsCount(n int) error {
	if l.err != nil {
		return l.err
	}
	if len(l.runs) != n {
		return fmt.Errorf("%s: expected %d runs, got %d", l.op, n, len(l.runs))
	}
	return nil
}

// holdsMineInOrder checks the page holds exactly the scenario's runs, by
// creation time.
func (l *listing) holdsMineInOrder(newestFirst bool) error {
	if err := l.holdsExactly("the runs I created"); err != nil {
		return err
	}
	want := make([]string, len(l.mine.runs))
	for i, r := range l.mine.runs {
		if newestFirst {
			i = len(want) - 1 - i
		}
		want[i] = l.mine.nick(r.id)
	}
	got := make([]string, len(l.runs))
	for i, run := range l.runs {
		got[i] = l.mine.nick(str(run["run_id"]))
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		order := map[bool]string{true: "newest", false: "oldest"}[newestFirst]
		return fmt.Errorf("%s: expected the runs %s first, in the order [%s], got [%s]", l.op, order, strings.Join(want, ", "), strings.Join(got, ", "))
	}
	return nil
}

// orderedBy checks a timestamp field never increases (newest first) or
// never decreases (oldest first) down the page. Equal times may come in
// any order.
func (l *listing) orderedBy(field string, newestFirst bool) error {
	if l.err != nil {
		return l.err
	}
	var prev time.Time
	for i, run := range l.runs {
		t, err := timestamp(run, field)
		if err != nil {
			return fmt.Errorf("%s: run %s: %w", l.op, str(run["run_id"]), err)
		}
		if i > 0 && (newestFirst && t.After(prev) || !newestFirst && t.Before(prev)) {
			order, than := "newest", "newer"
			if !newestFirst {
				order, than = "oldest", "older"
			}
			return fmt.Errorf("%s: expected runs ordered by %s, %s first, but listed run %d, %s (%s %s), is %s than listed run %d, %s (%s %s)",
				l.op, field, order, i+1, l.mine.nick(str(run["run_id"])), field, t.Format(time.RFC3339Nano),
				than, i, l.mine.nick(str(l.runs[i-1]["run_id"])), field, prev.Format(time.RFC3339Nano))
		}
		prev = t
	}
	return nil
}

// hasRunsAndPageInfo checks the page's shape: a list of runs, and page_info
// saying whether more follow, with a cursor to them when they do.
func (l *listing) hasRunsAndPageInfo() error {
	if l.err != nil {
		return l.err
	}
	if l.shape != "" {
		return fmt.Errorf("%s: expected a list of runs and page_info with has_next_page, got %s", l.op, l.shape)
	}
	if l.hasNext && l.nextCursor == "" {
		return fmt.Errorf("%s: expected a next_cursor in page_info, since has_next_page is true, got none", l.op)
	}
	return nil
}

func (l *listing) hasNextPage() error {
	if l.err != nil {
		return l.err
	}
	if !l.hasNext || l.nextCursor == "" {
		return fmt.Errorf("%s: expected page_info to say has_next_page with a next_cursor, got has_next_page=%t next_cursor=%q", l.op, l.hasNext, l.nextCursor)
	}
	return nil
}

// eachSaysWhy checks every listed run carries a status message with a
// message and an error code.
func (l *listing) eachSaysWhy() error {
	if l.err != nil {
		return l.err
	}
	var errs []error
	for _, run := range l.runs {
		doc := subject{what: "run " + str(run["run_id"]) + " (" + str(run["state"]) + ")", doc: run}
		errs = append(errs, doc.nonEmpty("status_message.message"), doc.nonEmpty("status_message.error_code"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: %w", l.op, err)
	}
	return nil
}

// hasNoNextPage checks the page says it is the last: has_next_page false,
// even when it is exactly full.
func (l *listing) hasNoNextPage() error {
	if l.err != nil {
		return l.err
	}
	if l.shape != "" {
		return fmt.Errorf("%s: expected page_info with has_next_page, got %s", l.op, l.shape)
	}
	if l.hasNext {
		return fmt.Errorf("%s: expected has_next_page false on the last page (%d runs, no more match), got true with next_cursor %q", l.op, len(l.runs), l.nextCursor)
	}
	return nil
}

// Assertions on a walk.

// pagesWithin checks that no page of the walk held more than limit runs,
// and none was empty (but the only page of a walk that matched nothing):
// has_next_page must be false on a last page, full or not, so that a client
// never asks for an empty one. How many runs a page holds below the limit is
// the server's to choose (the limit is a maximum).
func (w *walk) pagesWithin(limit int) error {
	if w.err != nil {
		return w.err
	}
	sizes := make([]string, len(w.pages))
	for i, p := range w.pages {
		sizes[i] = strconv.Itoa(len(p.runs))
	}
	for i, p := range w.pages {
		switch {
		case len(p.runs) > limit:
			return fmt.Errorf("page %d of %d (%s): expected at most %d runs, got %d (pages of %s runs)", i+1, len(w.pages), p.op, limit, len(p.runs), strings.Join(sizes, ", "))
		case len(p.runs) == 0 && i > 0:
			return fmt.Errorf("page %d of %d (%s) is empty: page %d (%s) said there was a next page although it held the last runs (pages of %s runs)",
				i+1, len(w.pages), p.op, i, w.pages[i-1].op, strings.Join(sizes, ", "))
		case len(p.runs) == 0 && len(w.pages) > 1:
			return fmt.Errorf("page 1 of %d (%s) is empty but says a next page follows (pages of %s runs)", len(w.pages), p.op, strings.Join(sizes, ", "))
		}
	}
	return nil
}

// sawEachOnce checks the pages together hold each of the scenario's runs
// once, and nothing else.
func (w *walk) sawEachOnce() error {
	if w.err != nil {
		return w.err
	}
	// Only creation time never changes: in an order by a key that moves
	// while runs progress (updated_at, the default, or state-derived keys),
	// a server keeps the document's promises and may still show a run on
	// two pages or on none. The claim is made where it holds only.
	if v, err := url.ParseQuery(w.pages[0].query); err != nil || v.Get("sort_by") != "created_at" {
		return fmt.Errorf("a walk sees each run exactly once only in creation order (sort_by=created_at), not over %q", w.pages[0].query)
	}
	var all []map[string]any
	for _, p := range w.pages {
		all = append(all, p.runs...)
	}
	return w.mine.sameRuns(fmt.Sprintf("walking %d pages of %q", len(w.pages), w.pages[0].query), w.mine.runs, all)
}

// sameRuns checks that got holds each run of want once and nothing else.
func (m *roster) sameRuns(op string, want []*trackedRun, got []map[string]any) error {
	wanted := map[string]bool{}
	for _, r := range want {
		wanted[r.id] = true
	}
	var problems []string
	count := map[string]int{}
	for _, run := range got {
		id := str(run["run_id"])
		count[id]++
		switch {
		case count[id] == 2:
			problems = append(problems, m.describe(run)+" is listed more than once")
		case count[id] == 1 && !wanted[id]:
			problems = append(problems, m.describe(run)+" should not be listed")
		}
	}
	for _, r := range want {
		if count[r.id] == 0 {
			problems = append(problems, "run "+m.nameOf(r)+" is missing")
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: expected exactly %s, got %d runs:\n  %s", op, m.list(want), len(got), strings.Join(problems, "\n  "))
	}
	return nil
}

// listingRoom is what the listing steps leave for later steps.
type listingRoom struct {
	page *listing // the page listed last
	walk *walk    // the last walk through every page
}

// registerListing registers the steps of listing runs and walking their pages.
func (s *scenario) registerListing(sc stepContext) {
	sc.Step(`^I list runs with "([^"]*)"$`, s.listRuns)
	sc.Step(`^I walk every page of "([^"]*)"$`, s.walkPages)
	sc.Step(`^the listing holds exactly (.+)$`, s.listingHoldsExactly)
	sc.Step(`^the listing holds ([a-z-]+), and of ([a-z-]+(?: and [a-z-]+)*) only runs that moved since ([a-z-]+) was created$`, s.listingHoldsAndMaybe)
	sc.Step(`^the listing holds at most (\d+) runs?$`, s.listingHoldsAtMost)
	sc.Step(`^the listing holds (\d+) runs?$`, s.listingHoldsCount)
	sc.Step(`^the listing holds the runs I created, (newest|oldest) first$`, s.listingHoldsCreatedInOrder)
	sc.Step(`^the listed runs are ordered by "([^"]*)", (newest|oldest) first$`, s.listingOrderedBy)
	sc.Step(`^the listing has a list of runs and page information saying whether more follow$`, s.listingHasRunsAndPageInfo)
	sc.Step(`^the listing says there is a next page$`, s.listingHasNextPage)
	sc.Step(`^the listing says there is no next page$`, s.listingHasNoNextPage)
	sc.Step(`^every listed run carries a status message with a message and an error code$`, s.listedRunsSayWhy)
	sc.Step(`^no page of the walk held more than (\d+) runs?, and none was empty$`, s.walkPagesWithin)
	sc.Step(`^the listing holds from (\d+) to (\d+) runs$`, s.listingHoldsBetween)
	sc.Step(`^without a limit, the same listing holds from 1 to (\d+) runs and says there is a next page$`, s.withoutLimitHoldsAtMost)
	sc.Step(`^the walk saw each of the runs I created exactly once$`, s.walkSawEachOnce)
	sc.Step(`^I list runs by the executor of the run$`, s.listByExecutor)
	sc.Step(`^an empty "([^"]*)" added to "([^"]*)" lists the same runs, or is refused with a 400$`, s.emptyFilterIsNoFilter)
}

func (s *scenario) listByExecutor(ctx context.Context) error {
	if s.current == nil || s.current.details == nil {
		return fmt.Errorf("the run's details have not been fetched")
	}
	// A run that shows no executor was executed by its creator.
	uid := str(mustLookup(s.current.details, "executor.uid"))
	if uid == "" && mustLookup(s.current.details, "executor") == nil {
		uid = str(mustLookup(s.current.details, "creator.uid"))
	}
	if uid == "" {
		return fmt.Errorf("the run reports no executor.uid, nor a creator.uid; got executor %s", show(mustLookup(s.current.details, "executor")))
	}
	return s.listRuns(ctx, "name={label}&executor="+url.QueryEscape(uid))
}

// emptyFilterIsNoFilter lists runs with query, then with query and an
// empty param: the same runs, or a 400 (rules.EmptyFilterAnswer). The runs
// of query must not move between the two listings (runs that have ended).
func (s *scenario) emptyFilterIsNoFilter(ctx context.Context, param, query string) error {
	if err := s.listRuns(ctx, query); err != nil {
		return err
	}
	if s.listings.page.refused {
		return fmt.Errorf("%s: expected the listing without %s=, got %d", s.listings.page.op, param, s.listings.page.answer.status)
	}
	without := runIDs(s.listings.page.runs)
	empty := query + "&" + param + "="
	s.listings.page = s.listPage(ctx, empty, "")
	if s.listings.page.err != nil && !s.listings.page.refused {
		return s.listings.page.err
	}
	return violations(s.listings.page.op, rules.EmptyFilterAnswer(param, s.listings.page.answer.status, runIDs(s.listings.page.runs), without))
}

func runIDs(runs []map[string]any) []string {
	ids := make([]string, 0, len(runs))
	for _, r := range runs {
		ids = append(ids, str(r["run_id"]))
	}
	return slices.Clip(ids)
}
