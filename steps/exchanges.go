package steps

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/agentruns/agentruns/rules"
)

// Any request as written, by either team, and the checks that hold for any
// answer: the steps a scenario printed from an exploration's finding is
// written with (package explore), so that a sequence of calls of any
// operation reads as the suite's own steps and runs as a feature.
//
// The request is written as it goes on the wire, its path and query
// escaped as in a URL: "GET /agent/runs?state=QUEUED&name=a%26b". A
// "{name}" in the path, a query value or the body is a value remembered
// from an earlier answer ("I remember the response field … as …"), so that
// ids the server gives anew on each run are carried by name; it is
// escaped where it goes.

// exchangesRoom is what the steps of this file remember.
type exchangesRoom struct {
	// sent is the request of the last step of this file, for the checks
	// that read it (the query a listing was asked with).
	sent *call
	// looks is, by run id, the run as the last answer that showed it
	// showed it (a listing, a get, a create), with the scenario's key;
	// before is, for each run of the last answer, the look before it.
	looks, before map[string]map[string]any
	// created are the runs created with the scenario's key, in order.
	created []string
	// walks holds, by the cursor a page handed back, the runs of that page
	// and of the pages before it in its walk.
	walks map[string][]string
	// walked is the runs of the walk the last page ended, that page's
	// included, and the query it walked (its cursor left out).
	walked      []string
	walkedQuery url.Values
	// memory holds the exchanges of this file's requests to the rules
	// across answers, as the validating proxy holds live traffic; broke
	// is what it found, in the order the answers came.
	memory *rules.Memory
	broke  []brokenRule
}

// brokenRule is a rule an answer broke, and the request it answered.
type brokenRule struct {
	request string
	rules.Violation
}

// registerExchanges registers the steps of any request as written and the
// checks of any answer.
func (s *scenario) registerExchanges(sc stepContext) {
	sc.Step(`^(I|the other team) sends? the request "(GET|HEAD|POST|PUT|PATCH|DELETE) ([^"]*)"(?: with the body (.*))?$`, s.sendRequest)
	sc.Step(`^the response is not a server error$`, s.responseIsNoServerError)
	sc.Step(`^the response is a success$`, s.responseIsSuccess)
	sc.Step(`^the response is a problem with a 4xx status$`, s.responseIsClientProblem)
	sc.Step(`^the response follows the document$`, s.responseFollowsDocument)
	sc.Step(`^every run listed matches the query$`, s.listedRunsMatchQuery)
	sc.Step(`^the listed runs are in the order the query asks for$`, s.listedRunsInQueryOrder)
	sc.Step(`^the listing holds no more runs than the query's limit$`, s.listingWithinQueryLimit)
	sc.Step(`^the runs agree with the last look at them before$`, s.runsAgreeWithLookBefore)
	sc.Step(`^the listing shows none of the runs I created$`, s.listingShowsNoneOfMine)
	sc.Step(`^the walk holds every run I created that matches its query$`, s.walkHoldsMine)
	sc.Step(`^the response field "([^"]*)" is not "([^"]*)"$`, s.responseFieldIsNot)
	sc.Step(`^the answers keep the rule "([a-z-]+)"$`, s.answersKeepRule)
	sc.Step(`^the response field "([^"]*)" is later than the remembered "([^"]*)"$`, s.responseFieldLaterThanRemembered)
	sc.Step(`^a moment passes$`, s.aMoment)
	sc.Step(`^the response does not show "([^"]*)"$`, s.responseDoesNotShow)
	sc.Step(`^(\d+) (millisecond|second|minute|hour)s? pass(?:es)? on the mock's clock$`, s.timePassesOnTheMocksClock)
}

// sendRequest sends a request as written, with the scenario's key or the
// other team's, and makes its answer the last response.
// responseDoesNotShow checks that a value (a remembered id, as "{mine}")
// appears nowhere in the last answer: another team's listing must not
// show what the first team created.
func (s *scenario) responseDoesNotShow(value string) error {
	if s.last == nil {
		return errNoRequest
	}
	v := s.expand(value)
	quoted, _ := json.Marshal(v)
	if bytes.Contains(s.last.body, quoted) {
		return fmt.Errorf("%s: the answer shows %s\n%s", s.last.op, quoted, s.last.excerpt())
	}
	return nil
}

// timePassesOnTheMocksClock moves the mock's clock, as an exploration
// moved it between two calls.
func (s *scenario) timePassesOnTheMocksClock(ctx context.Context, n int, unit string) error {
	if s.api.control == nil {
		return errNoControl
	}
	units := map[string]time.Duration{"millisecond": time.Millisecond, "second": time.Second, "minute": time.Minute, "hour": time.Hour}
	return s.api.advanceClock(ctx, time.Duration(n)*units[unit])
}

func (s *scenario) sendRequest(ctx context.Context, who, method, target, body string) error {
	path, rawQuery, _ := strings.Cut(target, "?")
	path, err := s.resolveEscaped(ctx, path, url.PathEscape)
	if err != nil {
		return err
	}
	query, err := s.queryAsWritten(ctx, rawQuery)
	if err != nil {
		return err
	}
	c := call{method: method, path: path, query: query}
	if body != "" {
		if body, err = s.resolve(ctx, body); err != nil {
			return err
		}
		c.body = []byte(body)
	}
	s.exchanges.sent = &c
	var resp *response
	sent := time.Now()
	if who == "I" {
		resp, err = s.ask(ctx, c)
	} else {
		if s.suite.cfg.OtherAPIKey == "" {
			return errors.New("the other team's requests need its key: pass --other-api-key (Config.OtherAPIKey) and tag the scenario @two-callers")
		}
		resp, err = s.other().do(ctx, c)
	}
	s.leave(resp)
	if resp != nil {
		s.observeExchange(who, c, resp, sent)
		if who == "I" {
			s.noteLooks(c, resp)
		}
	}
	return err
}

// observeExchange holds an exchange to the rules across answers.
func (s *scenario) observeExchange(who string, c call, resp *response, sent time.Time) {
	if s.exchanges.memory == nil {
		// A scenario's few exchanges: small bounds.
		s.exchanges.memory = rules.NewMemory(rules.Limits{Runs: 1000, Pages: 100, Events: 1000, Seen: 1000})
	}
	path := c.path
	if p, err := url.PathUnescape(path); err == nil {
		path = p
	}
	for _, v := range s.exchanges.memory.Observe(rules.Exchange{
		Method: c.method, Path: path, Query: c.query, Session: s.api.session, Caller: who,
		RequestBody: c.body, Status: resp.status, Body: resp.body, Sent: sent, Received: resp.received, Request: resp.op,
	}) {
		s.exchanges.broke = append(s.exchanges.broke, brokenRule{resp.op, v})
	}
}

// answersKeepRule checks that no answer to a request of this file broke
// the rule of package rules named id, over the answers before it too: a
// walk that repeats a run, a deleted identity still served, a message
// whose times moved.
func (s *scenario) answersKeepRule(id string) error {
	if _, ok := rules.RuleByID(id); !ok {
		return fmt.Errorf("no rule is named %q (package rules)", id)
	}
	if s.exchanges.memory == nil {
		return errors.New(`no request was sent with "I send the request …"`)
	}
	var errs []error
	for _, v := range s.exchanges.broke {
		if v.Rule == id {
			errs = append(errs, fmt.Errorf("%s: %s", v.request, v.Violation))
		}
	}
	return errors.Join(errs...)
}

// resolveEscaped replaces the placeholders of text, each value escaped
// with escape, and leaves the rest as written.
func (s *scenario) resolveEscaped(ctx context.Context, text string, escape func(string) string) (string, error) {
	var firstErr error
	out := placeholder.ReplaceAllStringFunc(text, func(m string) string {
		v, err := s.resolve(ctx, m)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			return m
		}
		return escape(v)
	})
	return out, firstErr
}

// queryAsWritten reads an escaped query, its placeholders filled in:
// repeated and unknown parameters stay as written.
func (s *scenario) queryAsWritten(ctx context.Context, raw string) (url.Values, error) {
	q := url.Values{}
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		var err error
		if k, err = s.unescapedQueryPart(ctx, k); err != nil {
			return nil, err
		}
		if v, err = s.unescapedQueryPart(ctx, v); err != nil {
			return nil, err
		}
		q.Add(k, v)
	}
	return q, nil
}

func (s *scenario) unescapedQueryPart(ctx context.Context, part string) (string, error) {
	part, err := s.resolveEscaped(ctx, part, url.QueryEscape)
	if err != nil {
		return "", err
	}
	out, err := url.QueryUnescape(part)
	if err != nil {
		return "", fmt.Errorf("query %q: %w", part, err)
	}
	return out, nil
}

// noteLooks remembers the runs an answer showed, the runs created, and
// the pages of walks, for the checks that compare answers.
func (s *scenario) noteLooks(c call, resp *response) {
	x := &s.exchanges
	if x.looks == nil {
		x.looks, x.walks = map[string]map[string]any{}, map[string][]string{}
	}
	x.before = map[string]map[string]any{}
	var page struct {
		Runs     []map[string]any `json:"runs"`
		PageInfo struct {
			NextCursor string `json:"next_cursor"`
		} `json:"page_info"`
	}
	var runs []map[string]any
	listing := c.method == http.MethodGet && strings.TrimSuffix(c.path, "/") == "/agent/runs"
	switch {
	case resp.status/100 != 2:
	case listing:
		if json.Unmarshal(resp.body, &page) == nil {
			runs = page.Runs
		}
	default:
		var run map[string]any
		if json.Unmarshal(resp.body, &run) == nil && str(run["run_id"]) != "" {
			runs = []map[string]any{run}
			if isRunCreate(c) {
				x.created = append(x.created, str(run["run_id"]))
			}
		}
	}
	var ids []string
	for _, r := range runs {
		id := str(r["run_id"])
		if id == "" {
			continue
		}
		ids = append(ids, id)
		if prior, ok := x.looks[id]; ok {
			x.before[id] = prior
		}
		x.looks[id] = r
	}
	if !listing || resp.status != http.StatusOK {
		return
	}
	walk := append(append([]string(nil), x.walks[c.query.Get("cursor")]...), ids...)
	if c.query.Get("cursor") == "" {
		walk = ids
	}
	if next := page.PageInfo.NextCursor; next != "" {
		x.walks[next] = walk
	}
	q := url.Values{}
	for k, v := range c.query {
		if k != "cursor" {
			q[k] = v
		}
	}
	x.walked, x.walkedQuery = walk, q
}

func (s *scenario) responseIsNoServerError() error {
	if s.last == nil {
		return errNoRequest
	}
	if s.last.status >= 500 {
		return fmt.Errorf("%s: expected no server error, got status %d\n%s", s.last.op, s.last.status, s.last.excerpt())
	}
	return nil
}

func (s *scenario) responseIsSuccess() error {
	if s.last == nil {
		return errNoRequest
	}
	if s.last.status/100 != 2 {
		return fmt.Errorf("%s: expected a success (2xx), got status %d\n%s", s.last.op, s.last.status, s.last.excerpt())
	}
	return nil
}

// responseIsClientProblem checks the answer to a request that is wrong on
// purpose: the server refuses it, saying so in a problem document, and
// neither takes it nor breaks on it.
func (s *scenario) responseIsClientProblem() error {
	if s.last == nil {
		return errNoRequest
	}
	if s.last.status/100 != 4 {
		return fmt.Errorf("%s: expected a problem with a 4xx status, got status %d\n%s", s.last.op, s.last.status, s.last.excerpt())
	}
	if err := checkProblem(s.last); err != nil {
		return fmt.Errorf("%s: %w\n%s", s.last.op, err, s.last.excerpt())
	}
	return nil
}

// responseFollowsDocument validates the last answer of a request of this
// file again, as every answer is when it comes, for a scenario to say
// what it checks.
func (s *scenario) responseFollowsDocument() error {
	c, resp := s.exchanges.sent, s.last
	if c == nil || resp == nil {
		return errors.New(`no request was sent with "I send the request …"`)
	}
	req, err := http.NewRequest(c.method, c.path, nil)
	if err != nil {
		return err
	}
	if p, err := url.PathUnescape(c.path); err == nil {
		req.URL.Path, req.URL.RawPath = p, c.path
	}
	req.URL.RawQuery = c.query.Encode()
	hr := &http.Response{
		StatusCode: resp.status,
		Status:     fmt.Sprintf("%d %s", resp.status, http.StatusText(resp.status)),
		Header:     resp.header,
		Body:       io.NopCloser(bytes.NewReader(resp.body)),
		Request:    req,
	}
	var errs []error
	if err := s.api.validator.ValidateResponse(req, hr); err != nil {
		errs = append(errs, fmt.Errorf("%s: contract violation: %w", resp.op, err))
	}
	if resp.status >= 400 {
		if err := checkProblem(resp); err != nil {
			errs = append(errs, fmt.Errorf("%s answered %d: %w", resp.op, resp.status, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w\n%s", err, resp.excerpt())
	}
	return nil
}

// listedPage is the runs of the last answer, a listing, and the query it
// was asked with.
func (s *scenario) listedPage() (url.Values, []map[string]any, error) {
	c, resp := s.exchanges.sent, s.last
	if c == nil || resp == nil {
		return nil, nil, errors.New(`no listing was asked for with "I send the request …"`)
	}
	if err := resp.ok("listing runs"); err != nil {
		return nil, nil, err
	}
	var page struct {
		Runs []map[string]any `json:"runs"`
	}
	if err := resp.json(&page); err != nil {
		return nil, nil, err
	}
	return c.query, page.Runs, nil
}

func (s *scenario) listedRunsMatchQuery() error {
	q, runs, err := s.listedPage()
	if err != nil {
		return err
	}
	return violations(s.last.op, rules.ListingMatchesQuery(q, runs))
}

func (s *scenario) listedRunsInQueryOrder() error {
	q, runs, err := s.listedPage()
	if err != nil {
		return err
	}
	return violations(s.last.op, rules.ListingInOrder(q, runs))
}

func (s *scenario) listingWithinQueryLimit() error {
	q, runs, err := s.listedPage()
	if err != nil {
		return err
	}
	return violations(s.last.op, rules.PageWithin(q, runs))
}

// runsAgreeWithLookBefore checks each run of the last answer (a get, a
// listing) against the last answer before that showed it: while its
// updated_at is the same, every field both show is the same; a run that
// moved in between keeps its id, its creation and its creator.
func (s *scenario) runsAgreeWithLookBefore() error {
	if s.last == nil {
		return errNoRequest
	}
	if len(s.exchanges.before) == 0 {
		return fmt.Errorf("%s: no run of this answer was shown by an answer before it to a request sent with \"I send the request …\"", s.last.op)
	}
	ids := make([]string, 0, len(s.exchanges.before))
	for id := range s.exchanges.before {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var errs []error
	for _, id := range ids {
		errs = append(errs, agrees(s.last.op, id, s.exchanges.before[id], s.exchanges.looks[id]))
	}
	return errors.Join(errs...)
}

// agrees compares two looks at run id, then before now.
func agrees(op, id string, then, now map[string]any) error {
	fields, since := []string{"run_id", "created_at", "creator"}, "though it moved since"
	if str(then["updated_at"]) != "" && str(then["updated_at"]) == str(now["updated_at"]) {
		fields, since = fields[:0], "and it has not moved since"
		for k := range then {
			fields = append(fields, k)
		}
		sort.Strings(fields)
	}
	var errs []error
	for _, f := range fields {
		a, inThen := then[f]
		b, inNow := now[f]
		if inThen && inNow && !reflect.DeepEqual(a, b) {
			errs = append(errs, fmt.Errorf("%s: run %s shows %s %s, but the answer before showed %s, %s (updated_at %s)",
				op, id, f, show(b), show(a), since, show(now["updated_at"])))
		}
	}
	return errors.Join(errs...)
}

// listingShowsNoneOfMine checks a listing, the other team's, against the
// runs created with the scenario's key.
func (s *scenario) listingShowsNoneOfMine() error {
	if s.last == nil {
		return errNoRequest
	}
	if err := s.last.ok("listing runs"); err != nil {
		return err
	}
	var page struct {
		Runs []map[string]any `json:"runs"`
	}
	if err := s.last.json(&page); err != nil {
		return err
	}
	mine := map[string]bool{}
	for _, id := range s.exchanges.created {
		mine[id] = true
	}
	var errs []error
	for _, r := range page.Runs {
		if id := str(r["run_id"]); mine[id] {
			errs = append(errs, fmt.Errorf("%s: the listing shows run %s, which the scenario's own key created", s.last.op, id))
		}
	}
	return errors.Join(errs...)
}

// walkHoldsMine checks the walk the last page ended: every run created
// with the scenario's key before it, whose last look matches the walk's
// filters, is on one of its pages.
func (s *scenario) walkHoldsMine() error {
	x := &s.exchanges
	if x.walkedQuery == nil {
		return errors.New(`no listing was asked for with "I send the request …"`)
	}
	on := map[string]bool{}
	for _, id := range x.walked {
		on[id] = true
	}
	var errs []error
	for _, id := range x.created {
		look := x.looks[id]
		if on[id] || look == nil || len(rules.ListingMatchesQuery(x.walkedQuery, []map[string]any{look})) > 0 {
			continue
		}
		errs = append(errs, fmt.Errorf("the walk of GET /agent/runs?%s ended without run %s, created before it and matching its query", x.walkedQuery.Encode(), id))
	}
	return errors.Join(errs...)
}

func (s *scenario) responseFieldIsNot(field, unwanted string) error {
	sub := s.last.subject()
	if sub.err != nil {
		return sub.err
	}
	if v, _ := lookup(sub.doc, field); str(v) == s.expand(unwanted) {
		return fmt.Errorf("%s: expected %q not to be %q", sub.what, field, str(v))
	}
	return nil
}

// responseFieldLaterThanRemembered checks a time that records a change
// against the one remembered before it: a change moves it.
func (s *scenario) responseFieldLaterThanRemembered(field, name string) error {
	before, ok := s.cache[name]
	if !ok {
		return fmt.Errorf("nothing remembered as %q", name)
	}
	if s.last == nil {
		return errNoRequest
	}
	doc, err := s.last.object()
	if err != nil {
		return err
	}
	now, err := timestamp(doc, field)
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", s.last.op, err, s.last.excerpt())
	}
	then, err := time.Parse(time.RFC3339Nano, before)
	if err != nil {
		return fmt.Errorf("the remembered %q, %q, is not an RFC 3339 timestamp", name, before)
	}
	if !now.After(then) {
		return fmt.Errorf("%s: expected %q later than the remembered %q (%s), got %s", s.last.op, field, name, before, show(doc[field]))
	}
	return nil
}
