package explore

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/agentruns/agentruns/openapi"
	"github.com/agentruns/agentruns/rules"
)

// sequence is one sequence of calls under way: its own world on the mock
// (a session whose clock moves only when the sequence moves it), what the
// server showed so far, and the first new finding.
type sequence struct {
	e       *explorer
	ctx     context.Context
	session string
	// memory holds the rules across answers, one per team: each team sees
	// a world of its own (its runs, its environments' newest run).
	memory map[string]*rules.Memory
	seen   seen
	calls  []Call

	ownRuns       []string // runs the main team created in this sequence
	ownSchedules  []string
	ownIdentities []string
	cancelled     map[string]bool // own runs the main team cancelled
	looks         map[string]map[string]any
	lookedAt      map[string]int       // the count of changes when each look was had
	listed        []string             // runs the first team's listings showed, in the order first seen
	mainSeen      seen                 // what the first team's answers showed
	lookAt        map[resource]*lookAt // the first team's last looks at its resources (resources.go)
	atCapacity    bool
	began         time.Time     // when the sequence began
	moved         time.Duration // how far the sequence moved the mock's clock

	walks   map[string]*walk // by the cursor that continues it
	cursors []cursorOf       // cursors seen, for the next page and for another query

	found *Finding
	// changes counts what may have moved runs: accepted writes, the clock
	// moved. On the mock nothing else moves them.
	changes int
}

// walk is a walk through the pages of one query.
type walk struct {
	query url.Values // without the cursor
	team  string
	ids   map[string]bool
	// changes is the sequence's count of changes at the walk's last page,
	// start at its first.
	changes, start int
	// expected are own runs that existed when the walk began and match its
	// query on members that never change: the walk must show each.
	expected []string
}

type cursorOf struct {
	team   string
	query  url.Values
	cursor string
}

// memories are the rules' memories a sequence starts with: new ones on the
// mock, where each sequence has a world of its own; elsewhere the same for
// the whole exploration, since each sequence meets the runs the ones
// before it left (and their follow-ups).
func (e *explorer) memories() map[string]*rules.Memory {
	if e.controlURL == nil && e.shared != nil {
		return e.shared
	}
	m := map[string]*rules.Memory{MainTeam: rules.NewMemory(rules.Limits{}), OtherTeam: rules.NewMemory(rules.Limits{})}
	if e.controlURL == nil {
		e.shared = m
	}
	return m
}

func (e *explorer) newSequence(ctx context.Context) *sequence {
	e.cases++
	q := &sequence{e: e, ctx: ctx, memory: e.memories(), seen: seen{},
		cancelled: map[string]bool{}, looks: map[string]map[string]any{}, lookedAt: map[string]int{}, mainSeen: seen{}, walks: map[string]*walk{},
		lookAt: map[resource]*lookAt{}, began: time.Now()}
	if e.controlURL != nil {
		q.session = fmt.Sprintf("explore-%d-%d", e.seed, e.cases)
		e.control(ctx, http.MethodPut, "/clock", q.session, map[string]string{"mode": "virtual"})
	}
	return q
}

// close frees what the sequence made: its session on the mock; on any
// other server, what it created that can be deleted, and its runs, which
// are cancelled.
func (q *sequence) close() {
	ctx := context.WithoutCancel(q.ctx)
	if q.e.controlURL != nil {
		q.e.control(ctx, http.MethodDelete, "/session", q.session, nil)
		return
	}
	for _, id := range q.ownSchedules {
		q.e.send(ctx, Call{Method: http.MethodDelete, Path: "/agent/schedules/" + url.PathEscape(id)}, "")
	}
	for _, id := range q.ownIdentities {
		q.e.send(ctx, Call{Method: http.MethodDelete, Path: "/agent/identities/" + url.PathEscape(id)}, "")
	}
	for _, id := range q.ownRuns {
		if look := q.looks[id]; look != nil && rules.IsTerminal(rules.Str(look["state"])) {
			continue
		}
		q.e.send(ctx, Call{Method: http.MethodPost, Path: "/agent/runs/" + url.PathEscape(id) + "/cancel"}, "")
	}
}

// actions are the steps rapid draws a sequence from, by name: each
// operation called validly, each called with one thing wrong, the next
// page of a walk, the other team's calls, the clock moved. rapid draws
// among the names alike, so the steps that find the most (listings and
// their pages, creations, looks at runs) are given several names.
func (q *sequence) actions() map[string]func(*rapid.T) {
	acts := map[string]func(*rapid.T){"": q.failIfFound}
	add := func(name string, times int, f func(*rapid.T)) {
		acts[name] = f
		for i := 2; i <= times; i++ {
			acts[fmt.Sprintf("%s (%d)", name, i)] = f
		}
	}
	for _, op := range q.e.ops {
		add("call "+op.Name(), max(1, weights[op.Name()]), func(t *rapid.T) { q.do(t, op, MainTeam, valid) })
		if len(op.Query) > 0 || op.Body || len(op.PathParams) > 0 {
			add("break "+op.Name(), max(1, weights["break "+op.Name()]), func(t *rapid.T) { q.do(t, op, MainTeam, invalid) })
		}
		if q.e.o.OtherAPIKey != "" && ownedKind(op) != "" {
			add("other team "+op.Name(), 1, func(t *rapid.T) { q.do(t, op, OtherTeam, valid) })
		}
	}
	if op := q.e.byName["GET /agent/runs"]; op != nil {
		add("next page", 10, func(t *rapid.T) { q.nextPage(t, op, false) })
		add("cursor of another query", 1, func(t *rapid.T) { q.nextPage(t, op, true) })
		add("odd GET /agent/runs", 1, func(t *rapid.T) { q.do(t, op, MainTeam, odd) })
		if q.e.o.OtherAPIKey != "" {
			add("other team GET /agent/runs", 2, func(t *rapid.T) { q.do(t, op, OtherTeam, valid) })
		}
	}
	add("change a resource after a while", 1, q.changeAfterAWhile)
	if q.e.o.OtherAPIKey != "" {
		// The other team's listings, where the first team's schedules
		// and identities must not show.
		for _, name := range []string{"GET /agent/schedules", "GET /agent/identities"} {
			if op := q.e.byName[name]; op != nil {
				add("other team "+name, 1, func(t *rapid.T) { q.do(t, op, OtherTeam, valid) })
			}
		}
		add("other team tries every operation on one resource", 1, q.otherTeamTriesAll)
	}
	if q.e.controlURL != nil {
		add("advance the clock", 3, q.advance)
	}
	return acts
}

// weights are how many names an action has (1 when not listed).
var weights = map[string]int{
	"GET /agent/runs":                 10,
	"break GET /agent/runs":           3,
	"GET /agent/runs/{runId}":         3,
	"POST /agent/runs":                3,
	"POST /agent/run":                 1,
	"GET /agent/events":               2,
	"GET /agent/schedules":            2,
	"GET /agent/identities":           2,
	"POST /agent/runs/{runId}/cancel": 2,
	// The first team's schedules and identities, changed: the last
	// change each must show.
	"POST /agent/schedules":             2,
	"PUT /agent/schedules/{scheduleId}": 2,
	"PUT /agent/identities/{uid}":       2,
}

// ownedKind is the kind of the first team's resource an operation names,
// "" when it names none the exploration creates.
func ownedKind(op *operation) string {
	for _, p := range op.PathParams {
		switch p {
		case "runId", "scheduleId", "uid":
			return p
		}
	}
	return ""
}

// advance moves the session's clock, so runs move.
func (q *sequence) advance(t *rapid.T) {
	q.advanceBy(rapid.SampledFrom([]time.Duration{time.Second, 5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute}).Draw(t, "by"))
}

// advanceBy moves the session's clock by by.
func (q *sequence) advanceBy(by time.Duration) {
	if !q.e.budgetLeft(q.ctx) {
		return
	}
	sent := time.Now()
	status, body := q.e.control(q.ctx, http.MethodPost, "/clock/advance", q.session, map[string]string{"by": by.String()})
	q.e.calls++
	q.e.spend() // a call like any other: the budget bounds them all
	if status/100 == 2 {
		q.calls = append(q.calls, Call{Clock: by, Status: status})
	}
	for _, m := range q.memory {
		m.Observe(rules.Exchange{Method: http.MethodPost, Path: "/__mock/clock/advance", Session: q.session,
			Status: status, Body: body, Sent: sent, Received: time.Now(), Request: "POST /__mock/clock/advance"})
	}
	q.atCapacity = false
	q.changes++
	q.moved += by
}

// kinds of request.
type kind int

const (
	valid   kind = iota
	invalid      // exactly one thing wrong: must be refused with a 4xx problem
	odd          // valid, but odd (an unknown or repeated parameter, a cursor of another query): never a 5xx
)

// do draws one call of op and judges its answer.
func (q *sequence) do(t *rapid.T, op *operation, team string, k kind) {
	c, why, k, ok := q.draw(t, op, team, k)
	if !ok || !q.e.budgetLeft(q.ctx) || q.found != nil {
		return
	}
	if creates := startsRun(op); creates && (q.atCapacity || (q.e.o.MaxRuns > 0 && q.e.runs >= q.e.o.MaxRuns)) {
		return
	}
	q.sendAndJudge(c, op, k, why)
}

func (q *sequence) sendAndJudge(c Call, op *operation, k kind, why string) sent {
	q.e.spend()
	q.e.reached[op.Name()] = true
	s := q.e.send(q.ctx, c, q.session)
	s.op = op
	q.calls = append(q.calls, s.call)
	if q.e.o.Trace != nil {
		q.e.o.Trace(s.call)
	}
	q.judge(s, k, why)
	return s
}

// startsRun tells whether op starts a run (one of the runs MaxRuns counts).
func startsRun(op *operation) bool {
	return op.Method == http.MethodPost && (op.Template == "/agent/run" || op.Template == "/agent/runs" || strings.HasSuffix(op.Template, "/followups"))
}

// nextPage continues a walk: the next page of a query seen, or, with
// another, a cursor handed back with a query it did not come from.
func (q *sequence) nextPage(t *rapid.T, op *operation, another bool) {
	if len(q.cursors) == 0 {
		return
	}
	cur := q.cursors[rapid.IntRange(0, len(q.cursors)-1).Draw(t, "cursor")]
	query := url.Values{}
	for k, v := range cur.query {
		query[k] = append([]string(nil), v...)
	}
	k := valid
	why := ""
	if another {
		drawn, _, drawnAs, _ := q.draw(t, op, cur.team, valid)
		if drawnAs != valid {
			return
		}
		if encodeQuery(drawn.Query) == encodeQuery(cur.query) {
			return
		}
		query = drawn.Query
		k, why = odd, "a cursor of another query ("+encodeQuery(cur.query)+")"
	}
	if !q.e.budgetLeft(q.ctx) || q.found != nil {
		return
	}
	query.Set("cursor", cur.cursor)
	q.sendAndJudge(Call{Team: cur.team, Method: op.Method, Path: op.Template, Query: query}, op, k, why)
}

// failIfFound fails the sequence at its first new finding. It is rapid's
// check after every step, so a failure always comes from this one place
// and reads the same: the finding's key, which shrinking keeps.
func (q *sequence) failIfFound(t *rapid.T) {
	if q.found == nil {
		return
	}
	key := findingKey(q.found.Cause, q.found.Calls)
	e := q.e
	if e.failing == "" {
		e.failing = key
	}
	if key == e.failing {
		e.repro[key]++
		if b := e.best[key]; b == nil || len(q.found.Calls) < len(b.Calls) {
			f := *q.found
			f.Seed, f.Replay = e.seed, e.result.Replay
			e.best[key] = &f
		}
	}
	t.Fatalf("%s", key)
}

// findingKey names a finding for the exploration's bookkeeping: what is
// known, what is shrunk. A rule across answers of package rules is one
// finding whatever call it showed at: it may only be sure at a later call
// (a look held until what follows explains it), so the operation of that
// call says nothing of the defect, and a rule broken once would come back
// once per operation that happened to follow. Any other cause is one
// finding per operation.
func findingKey(cause string, calls []Call) string {
	if _, ok := rules.RuleByID(cause); ok {
		return cause
	}
	return cause + " | " + calls[len(calls)-1].operationKey()
}

// operationKey names the operation of a call for the finding's key:
// "METHOD /template".
func (c Call) operationKey() string {
	if c.Clock > 0 {
		return "the mock's clock"
	}
	if m, err := openapi.Embedded(); err == nil {
		if tmpl, op := m.Match(c.Method, c.Path); op != nil {
			return c.Method + " " + tmpl
		}
	}
	return c.Method + " " + c.Path
}

// settle hands the findings the memory held back (looks that only a
// follow-up could explain) once the sequence is over.
func (q *sequence) settle() {
	if q.found != nil {
		return
	}
	for _, team := range []string{MainTeam, OtherTeam} {
		for _, u := range q.memory[team].Settle(time.Now().Add(time.Hour)) {
			for _, v := range u.Violations {
				q.report(v.Rule, v.String(), lastRequest(q.calls))
				return
			}
		}
	}
}

// lastRequest is how many calls there are up to the last request of the
// API among them: a finding ends at a request, not at a move of the clock.
func lastRequest(calls []Call) int {
	n := len(calls)
	for n > 0 && calls[n-1].Clock > 0 {
		n--
	}
	return n
}

// report records a finding shown by the calls so far, unless one was
// recorded already or it is known.
func (q *sequence) report(cause, detail string, upTo int) {
	if q.found != nil || upTo == 0 {
		return
	}
	calls := append([]Call(nil), q.calls[:upTo]...)
	key := findingKey(cause, calls)
	if q.e.known[key] {
		return
	}
	if q.e.failing != "" && key != q.e.failing {
		return // while shrinking, only the finding under shrink counts
	}
	q.found = &Finding{Cause: cause, Detail: detail, Calls: calls}
}

func jsonOf(v any) []byte {
	data, _ := json.Marshal(v)
	return data
}
