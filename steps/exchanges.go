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
	// listed is, by run id, the run as the last listing that showed it
	// showed it, for a get to agree with.
	listed map[string]map[string]any
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
	sc.Step(`^the run fetched agrees with the listing that showed it$`, s.fetchedAgreesWithListing)
	sc.Step(`^the answers keep the rule "([a-z-]+)"$`, s.answersKeepRule)
	sc.Step(`^the response field "([^"]*)" is later than the remembered "([^"]*)"$`, s.responseFieldLaterThanRemembered)
	sc.Step(`^a moment passes$`, s.aMoment)
}

// sendRequest sends a request as written, with the scenario's key or the
// other team's, and makes its answer the last response.
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
	sent := time.Now()
	if body != "" {
		if body, err = s.resolve(ctx, body); err != nil {
			return err
		}
		c.body = []byte(body)
	}
	s.exchanges.sent = &c
	var resp *response
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
			s.noteListed(c, resp)
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

// noteListed remembers the runs a listing showed, for a later get to
// agree with.
func (s *scenario) noteListed(c call, resp *response) {
	if c.method != http.MethodGet || resp.status != http.StatusOK || strings.TrimSuffix(c.path, "/") != "/agent/runs" {
		return
	}
	var page struct {
		Runs []map[string]any `json:"runs"`
	}
	if json.Unmarshal(resp.body, &page) != nil {
		return
	}
	if s.exchanges.listed == nil {
		s.exchanges.listed = map[string]map[string]any{}
	}
	for _, r := range page.Runs {
		if id := str(r["run_id"]); id != "" {
			s.exchanges.listed[id] = r
		}
	}
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

// fetchedAgreesWithListing checks the run of the last answer, a get,
// against the last listing that showed it: while its updated_at is the
// same, every field both show is the same; a run that moved in between
// keeps its id, its creation and its creator.
func (s *scenario) fetchedAgreesWithListing() error {
	if s.last == nil {
		return errNoRequest
	}
	if err := s.last.ok("fetching a run"); err != nil {
		return err
	}
	got, err := s.last.object()
	if err != nil {
		return err
	}
	id := str(got["run_id"])
	listed, ok := s.exchanges.listed[id]
	if !ok {
		return fmt.Errorf("%s: run %q was not shown by a listing sent with \"I send the request …\" before", s.last.op, id)
	}
	fields, since := []string{"run_id", "created_at", "creator"}, "though it moved since"
	if str(listed["updated_at"]) == str(got["updated_at"]) {
		fields, since = fields[:0], "and it has not moved since"
		for k := range listed {
			if _, both := got[k]; both {
				fields = append(fields, k)
			}
		}
		sort.Strings(fields)
	}
	var errs []error
	for _, f := range fields {
		if !reflect.DeepEqual(listed[f], got[f]) {
			errs = append(errs, fmt.Errorf("%s: run %s shows %s %s, but the listing showed %s, %s (updated_at %s)",
				s.last.op, id, f, show(got[f]), show(listed[f]), since, show(got["updated_at"])))
		}
	}
	return errors.Join(errs...)
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
