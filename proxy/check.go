package proxy

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentruns/agentruns/openapi"
	"github.com/agentruns/agentruns/rules"
)

// The checker takes completed exchanges off a queue, in the order their
// answers completed, and checks them on one goroutine: the rules across
// answers need that order, and the caller has its answer already. The
// queue holds at most QueueBytes of bodies; past that an exchange passes
// unchecked and is counted so, rather than memory growing without bound.

type checker struct {
	validator *openapi.Validator
	memory    *rules.Memory
	found     *findings
	runs      *seenRuns
	observer  Observer

	queue      chan job
	queued     atomic.Int64 // bytes of bodies waiting
	queueLimit int64
	closeOnce  sync.Once
	stopped    chan struct{}
	mu         sync.RWMutex // held for reading while enqueueing, for writing by close
	closed     bool
}

// job is an exchange to check, or a marker whose channel closes once
// everything before it is checked.
type job struct {
	x      *pending
	marker chan struct{}
}

func newChecker(v *openapi.Validator, m *rules.Memory, f *findings, runs *seenRuns, o Observer, queueLimit int64) *checker {
	c := &checker{validator: v, memory: m, found: f, runs: runs, observer: o, queue: make(chan job, 4096), queueLimit: queueLimit, stopped: make(chan struct{})}
	go c.loop()
	return c
}

func (c *checker) loop() {
	defer close(c.stopped)
	for j := range c.queue {
		if j.marker != nil {
			close(j.marker)
			continue
		}
		c.queued.Add(-size(j.x))
		c.checkOne(j.x)
	}
}

func size(x *pending) int64 {
	return int64(x.respBody.buf.Len()) + int64(len(x.reqBody.bytes()))
}

func (c *checker) enqueue(x *pending) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := size(x)
	if c.closed || c.queued.Add(n) > c.queueLimit {
		if !c.closed {
			c.queued.Add(-n)
		}
		c.found.notChecked(x, "the check queue was full")
		return
	}
	select {
	case c.queue <- job{x: x}:
	default:
		c.queued.Add(-n)
		c.found.notChecked(x, "the check queue was full")
	}
}

// drain waits for everything queued so far to be checked.
func (c *checker) drain(ctx context.Context) error {
	marker := make(chan struct{})
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return nil
	}
	select {
	case c.queue <- job{marker: marker}:
	case <-ctx.Done():
		c.mu.RUnlock()
		return ctx.Err()
	}
	c.mu.RUnlock()
	select {
	case <-marker:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *checker) close() {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		close(c.queue)
		c.mu.Unlock()
		<-c.stopped
	})
}

// checkOne checks one exchange against the document and the rules, and
// records what it found.
func (c *checker) checkOne(x *pending) {
	body, err := decoded(x.respHeader, x.respBody.bytes())
	if err != nil {
		c.found.notChecked(x, "an answer body the proxy could not decode: "+err.Error())
		return
	}
	ex := rules.Exchange{
		Method: x.method, Path: x.apiPath, Query: x.query, Session: x.session, Caller: x.caller,
		Status: x.status, Body: body, RequestBody: x.reqBody.bytes(), Sent: x.sent, Received: x.received,
		Request: requestName(x.method, x.apiPath, x.query),
	}
	var found []rules.Violation
	if strings.HasPrefix(x.apiPath, "/agent") {
		issues, routed := c.requestIssues(x)
		found = append(found, rules.Refused(x.status, issues)...)
		if len(issues) > 0 {
			c.found.offDocument(x, ex.Request, issues)
		}
		if routed {
			found = append(found, c.responseViolations(x, body)...)
		}
	}
	found = append(found, c.memory.Observe(ex)...)
	c.found.record(x, ex.Request, found)
	c.runs.observe(ex)
	if c.observer != nil {
		c.observer.Observe(ex)
	}
}

// requestIssues checks the request against the document; routed is false
// when the document has no operation for it (its answer is then not
// checked against the document either).
func (c *checker) requestIssues(x *pending) (issues []string, routed bool) {
	req := c.request(x)
	routed = true
	collect := func(err error) {
		var ve *openapi.ValidationError
		if !errors.As(err, &ve) {
			if err != nil {
				issues = append(issues, err.Error())
			}
			return
		}
		for _, f := range ve.Findings {
			if f.Field == "path" || f.Field == "method" {
				routed = false
			}
			issues = append(issues, redactText(f.Field+": "+f.Message))
		}
	}
	collect(c.validator.ValidateSecurity(req))
	if routed {
		collect(c.validator.ValidateRequest(req))
	}
	return dedupe(issues), routed
}

func (c *checker) responseViolations(x *pending, body []byte) []rules.Violation {
	req := c.request(x)
	h := x.respHeader.Clone()
	h.Del("Content-Encoding") // the body is decoded already
	resp := &http.Response{StatusCode: x.status, Header: h, Body: io.NopCloser(bytes.NewReader(body)), Request: req}
	err := c.validator.ValidateResponse(req, resp)
	var ve *openapi.ValidationError
	if !errors.As(err, &ve) {
		return nil
	}
	var doc any
	_ = json.Unmarshal(body, &doc)
	op := ve.Operation
	if ve.Status != 0 {
		op += " " + strconv.Itoa(ve.Status)
	}
	out := make([]rules.Violation, 0, len(ve.Findings))
	for _, f := range ve.Findings {
		if f.Expected != "" {
			// The validator split it already: a status or a Content-Type
			// the document does not list for the operation.
			out = append(out, rules.Violation{Rule: rules.ResponseFollowsDocument, Field: f.Field, Expected: f.Expected, Got: f.Got})
			continue
		}
		got := "an answer that does not"
		if v, ok := valueAt(doc, f.Field); ok {
			got = short(v)
		} else if strings.HasPrefix(f.Field, "body.") {
			got = "nothing"
		}
		out = append(out, rules.Violation{Rule: rules.ResponseFollowsDocument, Field: f.Field,
			Expected: "as " + op + " is documented: " + f.Message, Got: got})
	}
	return out
}

// valueAt finds the value a finding's field names, "body.runs[2].state",
// in the decoded body.
func valueAt(doc any, field string) (any, bool) {
	rest, ok := strings.CutPrefix(field, "body")
	if !ok || doc == nil {
		return nil, false
	}
	cur := doc
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, "."):
			rest = rest[1:]
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[rest[:end]]; !ok {
				return nil, false
			}
			rest = rest[end:]
		case strings.HasPrefix(rest, "["):
			end := strings.IndexByte(rest, ']')
			i, err := strconv.Atoi(rest[1:max(end, 1)])
			list, ok := cur.([]any)
			if end < 0 || err != nil || !ok || i < 0 || i >= len(list) {
				return nil, false
			}
			cur, rest = list[i], rest[end+1:]
		default:
			return nil, false
		}
	}
	return cur, true
}

// short is a JSON value as a violation shows it, cut at 200 bytes.
func short(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// request rebuilds the request for the validator from what was kept.
func (c *checker) request(x *pending) *http.Request {
	body := x.reqBody.bytes()
	return &http.Request{
		Method: x.method, URL: &url.URL{Path: x.path, RawQuery: x.rawQuery}, Header: x.header,
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Host: "upstream",
	}
}

// decoded undoes a gzip Content-Encoding, which the proxy passes through
// as the upstream sent it.
func decoded(h http.Header, body []byte) ([]byte, error) {
	if !strings.EqualFold(h.Get("Content-Encoding"), "gzip") || len(body) == 0 {
		return body, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(zr, 64<<20))
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	out := in[:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// What the findings keep of each outcome.

func (f *findings) record(x *pending, request string, vs []rules.Violation) {
	at := x.received.UTC().Format(time.RFC3339Nano)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.exchanges++
	f.checked++
	e := f.entry(x)
	for _, v := range vs {
		v.Expected, v.Got = redactText(v.Expected), redactText(v.Got)
		f.byRule[v.Rule]++
		f.latest.add(Finding{At: at, Request: request, Status: x.status, Violation: v})
		e.Violations = append(e.Violations, v.Rule)
	}
	if !x.observer {
		f.journal.add(e)
	}
}

func (f *findings) notChecked(x *pending, why string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.exchanges++
	f.unchecked[why]++
	e := f.entry(x)
	e.Unchecked = why
	if !x.observer {
		f.journal.add(e)
	}
}

func (f *findings) upstreamFailed(x *pending, status int, detail string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.upstreamErr++
	if x == nil || x.observer {
		return
	}
	x.status, x.received = status, time.Now()
	e := f.entry(x)
	e.Unchecked = detail
	f.journal.add(e)
}

func (f *findings) offDocument(x *pending, request string, issues []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.offDocCount++
	f.offDoc.add(OffDocument{At: x.received.UTC().Format(time.RFC3339Nano), Request: request, Status: x.status, Issues: issues})
}

// entry is the journal line of x; f.mu is held.
func (f *findings) entry(x *pending) Entry {
	return Entry{
		At: x.received.UTC().Format(time.RFC3339Nano), Method: x.method, Path: redactPath(x.apiPath), Status: x.status,
		RetryCount: x.retry, Millis: float64(x.received.Sub(x.sent).Microseconds()) / 1000,
	}
}

// reset forgets what was found (DELETE /__mock/proxy); the rules' memory
// of the runs stays.
func (f *findings) reset(now time.Time) {
	fresh := newFindings(now)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.since, f.byRule, f.latest, f.offDoc, f.offDocCount = fresh.since, fresh.byRule, fresh.latest, fresh.offDoc, 0
	f.journal, f.exchanges, f.checked, f.unchecked, f.upstreamErr = fresh.journal, 0, 0, fresh.unchecked, 0
}
