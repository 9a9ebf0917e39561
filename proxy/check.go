package proxy

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentruns/agentruns/clientcheck"
	"github.com/agentruns/agentruns/drift"
	"github.com/agentruns/agentruns/internal/scrub"
	"github.com/agentruns/agentruns/openapi"
	"github.com/agentruns/agentruns/rules"
)

// The checker checks completed exchanges off the request's path, on
// several workers (one per core by default), each with its own queue. An
// exchange goes to the worker of the run it is about, so the exchanges of
// one run are checked in the order their answers completed, as the rules
// across answers need:
//
//   - a path that names a run (/agent/runs/{id}/..., /agent/events/{id},
//     /__mock/runs/{id}/...): that run;
//   - a create: the run its answer names;
//   - a poll of events for given runs: those runs (one run: its own worker;
//     several: the same set always on the same worker);
//   - a change to a mock session (POST /__mock/reset, DELETE /__mock/session
//     and the control API's other writes): every worker at once. It waits
//     until every worker has checked what came before it and is checked
//     alone, so no exchange is judged in the wrong generation of a session;
//   - anything else (pages of runs, schedules, identities, the control API's
//     reads): the next worker in turn. Round robin rather than by operation,
//     because pages of runs are the costliest exchanges to check and the
//     ones that most need spreading; the rules that relate them to other
//     exchanges compare when each request was sent and each answer arrived,
//     so checking two of them out of order can at worst miss a finding,
//     never invent one.
//
// Each exchange is checked in two parts (prepare and finish). Preparing it
// builds the exchange once (exchange.go: its bodies decoded, the document
// that judges it) and does what needs no order: the document's findings,
// the client versions, drift. Finishing it applies the rules across
// answers, which need its run's exchanges in order, and records what was
// found. Its own worker finishes it in its turn; an idle worker, finding
// its own queue empty, prepares what the others' queues hold (spare), at
// most maxAhead exchanges ahead, so one very busy run (every GET of a
// load naming it) is checked by every core, not by its worker alone.
//
// With an Observer (the recorder) there is one worker: it learns from the
// order of all the traffic, a delete after a read of the same schedule.
//
// The queues hold at most QueueBytes between them: the bodies waiting, and
// exchangeBytes for each exchange besides; no count bounds a queue. Past
// that an exchange passes unchecked and is counted so, rather than memory
// growing without bound, or, with Backpressure, its caller waits for room.

type checker struct {
	// judge says which document each exchange is held to (document.go).
	judge     *judge
	memory    *rules.Memory
	found     *findings
	runs      *seenRuns
	observer  Observer
	observeMu sync.Mutex // the Observer sees one exchange at a time
	// clients tallies the answers per client version (clients.go); safe
	// for every worker at once.
	clients *clientcheck.Tally
	// drift finds what the document does not declare; the ledger and the
	// profile keep it (drift.go). Safe for every worker at once.
	drift   *drift.Doc
	ledger  *drift.Ledger
	profile *drift.Profile
	// maxBody is the largest body checked (Options.MaxBodyBytes), a
	// decoded answer's included.
	maxBody int
	// repeats remembers what an exchange seen before gave (repeat.go).
	repeats repeats

	workers []*queue
	// spare offers every exchange queued on a worker to the others: an
	// idle worker takes one and classifies it and holds it to the
	// document (prepare), the order-free part of its check, so the
	// worker it belongs to is left only the rules across answers. When
	// spare is full an exchange is simply not offered.
	spare        chan *work
	ahead        atomic.Int64  // exchanges prepared by a worker not their own, not yet finished
	turn         atomic.Uint64 // the next worker in turn
	queued       atomic.Int64  // bytes waiting (exchangeBytes)
	queueLimit   int64
	backpressure bool
	room         *sync.Cond // with backpressure: signalled as bodies leave the queues
	roomMu       sync.Mutex
	barrierMu    sync.Mutex // exchanges for every worker are queued one at a time
	closeOnce    sync.Once
	stopped      sync.WaitGroup
	mu           sync.RWMutex // held for reading while enqueueing, for writing by close
	closed       bool
	beforeCheck  func(*pending)                // for tests; see Options
	decoded      func(x *pending, part string) // for tests; see Options
}

// job is an exchange to check, a marker whose channel closes once
// everything before it on its worker is checked, or a barrier.
type job struct {
	w       *work
	marker  chan struct{}
	barrier *barrier
}

// work is one exchange on its way through the checker: prepared once, by
// whichever worker takes it first, then finished by its own worker.
type work struct {
	x        *pending
	taken    atomic.Bool
	prepared chan struct{} // closed once e is set
	e        *exchange
	ahead    bool // prepared by another worker than its own
}

func newWork(x *pending) *work { return &work{x: x, prepared: make(chan struct{})} }

// barrier is an exchange queued on every worker: the last worker to reach
// it checks it, and the others wait until then.
type barrier struct {
	w       *work
	waiting atomic.Int32 // workers yet to reach it
	done    chan struct{}
}

// queue is one worker's queue: as long as the bytes waiting allow
// (QueueBytes), never full by count.
type queue struct {
	mu     sync.Mutex
	jobs   []job
	head   int
	ready  chan struct{} // holds a token while jobs may be waiting
	closed bool
}

func newQueue() *queue { return &queue{ready: make(chan struct{}, 1)} }

func (q *queue) push(j job) {
	q.mu.Lock()
	q.jobs = append(q.jobs, j)
	q.mu.Unlock()
	q.signal()
}

func (q *queue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

// next takes the first job; ok is false when there is none, and done
// when there will be none (the queue is closed and empty).
func (q *queue) next() (j job, ok, done bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.head == len(q.jobs) {
		if len(q.jobs) > 0 {
			q.jobs, q.head = q.jobs[:0], 0
		}
		return job{}, false, q.closed
	}
	j = q.jobs[q.head]
	q.jobs[q.head] = job{}
	q.head++
	if q.head > 1024 && q.head*2 > len(q.jobs) {
		q.jobs, q.head = append([]job(nil), q.jobs[q.head:]...), 0
	}
	return j, true, false
}

// spareSlots is how many exchanges spare offers at once; maxAhead is how
// many, prepared by an idle worker, may wait for their own worker to
// finish them: a prepared exchange holds its decoded bodies, which cost
// several times their bytes, so an idle worker stays only so far ahead.
const (
	spareSlots = 1 << 12
	maxAhead   = 64
)

// exchangeBytes is what an exchange costs waiting beyond its bodies (its
// request line, headers, times), counted so that a flood of exchanges
// without bodies is bounded by QueueBytes too.
const exchangeBytes = 512

func newChecker(j *judge, m *rules.Memory, f *findings, runs *seenRuns, o Observer, queueLimit int64, workers int, backpressure bool) *checker {
	if o != nil || workers < 1 {
		workers = 1
	}
	c := &checker{judge: j, memory: m, found: f, runs: runs, observer: o, queueLimit: queueLimit, backpressure: backpressure}
	c.room = sync.NewCond(&c.roomMu)
	c.workers = make([]*queue, workers)
	if workers > 1 {
		c.spare = make(chan *work, spareSlots)
	}
	for i := range c.workers {
		c.workers[i] = newQueue()
		c.stopped.Add(1)
		go c.loop(c.workers[i])
	}
	return c
}

// loop checks the jobs of its queue in order; while it has none, it
// prepares the exchanges spare offers.
func (c *checker) loop(q *queue) {
	defer c.stopped.Done()
	for {
		j, ok, done := q.next()
		switch {
		case done:
			return
		case !ok:
			select {
			case <-q.ready:
			case w := <-c.spare: // nil without spare: never
				if c.ahead.Load() < maxAhead {
					c.prepareAhead(w)
				}
			}
			continue
		}
		switch {
		case j.marker != nil:
			close(j.marker)
		case j.barrier != nil:
			b := j.barrier
			if b.waiting.Add(-1) > 0 {
				<-b.done
				continue
			}
			c.check(b.w)
			close(b.done)
		default:
			c.check(j.w)
		}
	}
}

func size(x *pending) int64 {
	return int64(x.respBody.buf.Len()) + int64(len(x.reqBody.bytes())) + exchangeBytes
}

// leave takes x off the bytes waiting, making room.
func (c *checker) leave(x *pending) {
	c.queued.Add(-size(x))
	if c.backpressure {
		c.roomMu.Lock()
		c.room.Broadcast()
		c.roomMu.Unlock()
	}
}

// reserve counts n more bytes waiting, false when they do not fit. With
// backpressure it waits for room instead; an exchange larger than the
// whole bound waits for empty queues.
func (c *checker) reserve(n int64) bool {
	if !c.backpressure {
		if c.queued.Add(n) > c.queueLimit {
			c.queued.Add(-n)
			return false
		}
		return true
	}
	c.roomMu.Lock()
	defer c.roomMu.Unlock()
	for {
		q := c.queued.Load()
		if q == 0 || q+n <= c.queueLimit {
			if c.queued.CompareAndSwap(q, q+n) {
				return true
			}
			continue
		}
		c.room.Wait()
	}
}

func (c *checker) enqueue(x *pending) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		c.found.notChecked(x, "the check queue was full")
		return
	}
	w := newWork(x)
	i, ok := c.workerOf(x)
	if ok {
		if !c.reserve(size(x)) {
			c.found.notChecked(x, "the check queue was full")
			return
		}
		c.workers[i].push(job{w: w})
		if c.spare != nil {
			select {
			case c.spare <- w:
			default:
			}
		}
		return
	}
	// A barrier is never skipped, and waits for room: skipping a
	// session's reset would judge what follows it against the world before
	// it.
	c.queued.Add(size(x))
	b := &barrier{w: w, done: make(chan struct{})}
	b.waiting.Store(int32(len(c.workers)))
	c.barrierMu.Lock()
	defer c.barrierMu.Unlock()
	for _, q := range c.workers {
		q.push(job{barrier: b})
	}
}

// workerOf is the worker that checks x; false for an exchange every
// worker must reach first (see the top of this file).
func (c *checker) workerOf(x *pending) (int, bool) {
	n := len(c.workers)
	if n == 1 {
		return 0, true
	}
	key, everyone := shardKey(x)
	switch {
	case everyone:
		return 0, false
	case key == "":
		return int(c.turn.Add(1) % uint64(n)), true
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(n)), true
}

// shardKey is the run (or set of runs) an exchange is about, "" for none;
// everyone is true for a change to a mock session.
func shardKey(x *pending) (key string, everyone bool) {
	p := x.apiPath
	if rest, ok := strings.CutPrefix(p, "/__mock/"); ok {
		if id, ok := strings.CutPrefix(rest, "runs/"); ok {
			return firstSegment(id), false
		}
		return "", x.method != http.MethodGet && x.method != http.MethodHead
	}
	if rest, ok := strings.CutPrefix(p, "/agent/runs/"); ok {
		return firstSegment(rest), false
	}
	if rest, ok := strings.CutPrefix(p, "/agent/events/"); ok {
		return firstSegment(rest), false
	}
	switch {
	case x.method == http.MethodPost && (p == "/agent/run" || p == "/agent/runs"):
		return createdRun(x), false
	case p == "/agent/events":
		ids := append([]string(nil), x.query["run_ids"]...)
		sort.Strings(ids)
		return strings.Join(ids, ","), false
	}
	return "", false
}

func firstSegment(p string) string {
	if i := strings.IndexByte(p, '/'); i >= 0 {
		p = p[:i]
	}
	if id, err := url.PathUnescape(p); err == nil {
		return id
	}
	return p
}

// createdRun is the run a create's answer names, "" when it names none
// or is compressed (the create then goes to the next worker in turn).
func createdRun(x *pending) string {
	if x.status < 200 || x.status > 299 || x.respHeader.Get("Content-Encoding") != "" {
		return ""
	}
	var created struct {
		RunID string `json:"run_id"`
	}
	_ = json.Unmarshal(x.respBody.bytes(), &created)
	return created.RunID
}

// drain waits for everything queued so far to be checked. Taking the lock
// for writing first waits for the exchanges being queued, those waiting
// for room among them.
func (c *checker) drain(ctx context.Context) error {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	c.mu.RLock()
	if closed || c.closed {
		c.mu.RUnlock()
		return nil
	}
	markers := make([]chan struct{}, len(c.workers))
	for i, q := range c.workers {
		markers[i] = make(chan struct{})
		q.push(job{marker: markers[i]})
	}
	c.mu.RUnlock()
	for _, m := range markers {
		select {
		case <-m:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c.settle(time.Now())
	return nil
}

// unexplainedGrace is how long a look that only a follow-up could explain
// waits for the follow-up before a live summary counts it: the follow-up's
// answer ends moments after the look's. Drain and close wait for nothing:
// everything answered before them has been checked.
const unexplainedGrace = 10 * time.Second

// settle records what the rules held for looks answered before cutoff that
// no follow-up explained (rules.Memory.Settle).
func (c *checker) settle(cutoff time.Time) {
	for _, u := range c.memory.Settle(cutoff) {
		c.found.recordLate(u)
	}
}

func (c *checker) close() {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		for _, q := range c.workers {
			q.close()
		}
		c.mu.Unlock()
		c.stopped.Wait()
		c.settle(time.Now().Add(time.Hour))
	})
}

// check checks one exchange, in its turn on its worker: prepared already
// by an idle worker, or now.
func (c *checker) check(w *work) {
	if !w.taken.Swap(true) {
		c.prepare(w)
	}
	<-w.prepared
	c.finish(w.e)
	if w.ahead {
		c.ahead.Add(-1)
	}
	// spare may still offer w: it keeps nothing of the exchange.
	w.x, w.e = nil, nil
}

// prepareAhead prepares w, queued on another worker, unless a worker has
// taken it already.
func (c *checker) prepareAhead(w *work) {
	if w.taken.Swap(true) {
		return
	}
	w.ahead = true
	c.ahead.Add(1)
	c.prepare(w)
}

// prepare builds w's exchange and does the order-free part of its check:
// the document's findings, the client versions and drift. The worker that
// took w (work.taken) calls it; safe for every worker at once.
func (c *checker) prepare(w *work) {
	defer close(w.prepared)
	c.leave(w.x)
	e := c.classify(w.x) // exchange.go
	w.e = e
	if e.unchecked != "" {
		return
	}
	x := e.x
	if strings.HasPrefix(x.apiPath, "/agent") {
		d := c.judgeByDocument(e)
		e.issues = d.issues
		e.found = append(e.found, rules.Refused(x.status, d.issues)...)
		e.found = append(e.found, d.answer...)
	}
	if value := e.json(); value != nil {
		c.judgeForClients(e, value) // clients.go
	}
	c.lookForDrift(e) // drift.go
}

// finish does the part of an exchange's check that needs its run's
// exchanges in order: the rules across answers, then records what was
// found; the runs the dashboard shows and the Observer see it too.
func (c *checker) finish(e *exchange) {
	x := e.x
	if c.beforeCheck != nil {
		c.beforeCheck(x)
	}
	if e.unchecked != "" {
		c.found.notChecked(x, e.unchecked)
		return
	}
	if len(e.issues) > 0 {
		c.found.offDocument(x, e.ex.Request, e.issues)
	}
	found := append(e.found, c.memory.Observe(e.judged)...)
	c.found.record(x, e.ex.Request, found)
	c.runs.observe(e)
	if c.observer != nil {
		c.observeMu.Lock()
		c.observer.Observe(e.ex)
		c.observeMu.Unlock()
	}
}

// judgeByDocument is what the exchange's document finds in it: taken
// from the same exchange before when there was one (repeat.go). The
// verdict's validator and whether the operation is served follow from
// the parts the exchange is remembered by.
func (c *checker) judgeByDocument(e *exchange) *documentVerdict {
	v := e.verdict.validator
	if e.repeat != nil {
		if d := e.repeat.verdict(v); d != nil {
			return d
		}
	}
	d := &documentVerdict{}
	d.issues, d.routed = c.requestIssues(v, e)
	if d.routed && !e.verdict.notServed {
		d.answer = c.responseViolations(v, e)
	}
	if e.repeat != nil {
		e.repeat.keepVerdict(v, d)
	}
	return d
}

// requestIssues checks the request against the document; routed is false
// when the document has no operation for it (its answer is then not
// checked against the document either).
func (c *checker) requestIssues(v *openapi.Validator, e *exchange) (issues []string, routed bool) {
	req := e.x.request()
	routed = true
	collect := func(err error) {
		var ve *openapi.ValidationError
		if !errors.As(err, &ve) {
			if err != nil {
				issues = append(issues, redactText(err.Error()))
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
	collect(v.ValidateSecurity(req))
	if routed {
		collect(v.ValidateRequestBody(req, e.x.reqBody.bytes()))
	}
	return dedupe(issues), routed
}

func (c *checker) responseViolations(v *openapi.Validator, e *exchange) []rules.Violation {
	req := e.x.request()
	h := e.x.respHeader.Clone()
	h.Del("Content-Encoding") // the body is decoded already
	resp := &http.Response{StatusCode: e.x.status, Header: h, Body: io.NopCloser(bytes.NewReader(e.body)), Request: req}
	// The validator judges the answer from the value decoded already,
	// and decodes the bytes itself only for what it finds wrong.
	err := v.ValidateResponseValue(req, resp, e.body, e.answer, e.answerOK)
	doc := e.json()
	var ve *openapi.ValidationError
	if !errors.As(err, &ve) {
		return nil
	}
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
		got, message := "an answer that does not", f.Message
		if v, ok := valueAt(doc, f.Field); ok {
			clean := scrub.At(v, scrub.Location(f.Field)...)
			got = short(clean)
			if s, ok := v.(string); ok && clean != v && s != "" {
				message = strings.ReplaceAll(message, s, scrub.Redacted) // the validator may quote it
			}
		} else if strings.HasPrefix(f.Field, "body.") {
			got = "nothing"
		}
		out = append(out, rules.Violation{Rule: rules.ResponseFollowsDocument, Field: f.Field,
			Expected: "as " + op + " is documented: " + message, Got: got})
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
func (x *pending) request() *http.Request {
	body := x.reqBody.bytes()
	return &http.Request{
		Method: x.method, URL: &url.URL{Path: x.path, RawQuery: x.rawQuery}, Header: x.header,
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Host: "upstream",
	}
}

// errDecodedTooLarge is an answer that decodes past the size checked.
var errDecodedTooLarge = errors.New("the decoded answer is over the size the proxy checks")

// decoded undoes a gzip Content-Encoding, which the proxy passes through
// as the upstream sent it, to at most limit bytes: past it,
// errDecodedTooLarge, having held no more than limit.
func decoded(h http.Header, body []byte, limit int) ([]byte, error) {
	if !strings.EqualFold(h.Get("Content-Encoding"), "gzip") || len(body) == 0 {
		return body, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(zr, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(out) > limit {
		return nil, errDecodedTooLarge
	}
	return out, nil
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
		v.Field, v.Expected, v.Got, v.RunID = cut(v.Field, keptText), redactText(v.Expected), redactText(v.Got), cut(v.RunID, keptText)
		f.byRule[v.Rule]++
		f.latest.add(Finding{At: at, Request: request, Status: x.status, Violation: v})
		e.Violations = append(e.Violations, v.Rule)
	}
	if !x.observer {
		f.journal.add(e)
	}
}

// recordLate records the violations of an exchange already counted, found
// once the rules could tell that nothing explained them.
func (f *findings) recordLate(u rules.Unexplained) {
	at := u.Received.UTC().Format(time.RFC3339Nano)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, v := range u.Violations {
		v.Field, v.Expected, v.Got, v.RunID = cut(v.Field, keptText), redactText(v.Expected), redactText(v.Got), cut(v.RunID, keptText)
		f.byRule[v.Rule]++
		f.latest.add(Finding{At: at, Request: u.Request, Status: u.Status, Violation: v})
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
	// At most keptIssues issues of keptText each: the validator may name
	// each of a thousand members.
	if len(issues) > keptIssues {
		issues = append(issues[:keptIssues:keptIssues], fmt.Sprintf("and %d more", len(issues)-keptIssues))
	}
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
