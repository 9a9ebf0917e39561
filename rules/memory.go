package rules

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Exchange is one request and its answer, as an observer saw them.
type Exchange struct {
	Method string
	// Path is the API path without the server's prefix: "/agent/runs/abc".
	// Paths of the mock's control API ("/__mock/...") are seen too, so that
	// a state forced or a session reset through it is not taken for a
	// server moving a run backwards.
	Path  string
	Query url.Values
	// Session is the mock session the request named (X-Mock-Session), ""
	// against any other server: each session is a world of its own.
	Session string
	// Caller stands for the request's credentials (never the credentials
	// themselves): two requests with the same Caller came from one caller.
	Caller string
	// RequestBody is the request's body, nil when there was none or it was
	// not kept.
	RequestBody []byte
	Status      int
	// Body is the answer's body, nil when it was not kept (too large).
	Body []byte
	// Sent is when the request left, Received when its answer had arrived.
	Sent, Received time.Time
	// Request names the request in messages, e.g. "GET /agent/runs?limit=5".
	Request string
	// Decoded, when set, holds Body and RequestBody decoded already; Memory
	// then reads them from it and decodes neither.
	Decoded *Decoded
}

// Limits bound a Memory. The zero value means the defaults.
type Limits struct {
	Runs   int // runs remembered (their last look and what was done to them); 100 000
	Pages  int // pages of walks remembered; 10 000
	Events int // events remembered; 100 000
	Seen   int // (caller, run) pairs listed or refused; 200 000
}

// Memory holds what the rules across answers need of the answers before:
// the last look at each run, the pages of each walk, which runs each caller
// was refused or shown, the events polled. Everything is bounded: past its
// limits it forgets the oldest, which can only make it miss a violation,
// never report a false one. Safe for concurrent use.
type Memory struct {
	mu       sync.Mutex
	runs     *bounded[*runFacts]
	pages    *bounded[*page]
	bySeq    *bounded[string]
	runSeqs  *bounded[[]float64]
	refused  *bounded[string]
	listed   *bounded[string]
	sessions map[string]int // generation of each session, bumped by a reset

	envNewest *bounded[envRun]    // environment -> the newest run seen created in it
	deleted   *bounded[sighting]  // identity -> its accepted delete
	msgTimes  *bounded[sighting]  // message and field -> the time first seen set
	convRuns  *bounded[[]convRun] // conversation -> the runs seen ended in it
	parents   *bounded[string]    // run -> its parent run, "" for none, as its creation or a look said

	// unexplained are the findings of looks that only a follow-up could
	// explain, none seen yet (restartShaped): held until Settle.
	unexplained []Unexplained
}

// Unexplained is what a look at a run showed that only a follow-up the
// memory has not seen could explain: a run QUEUED again with its first
// started_at. Exchanges reach the memory in the order they end, so a look
// answered just after the server took a follow-up may come before the
// follow-up itself; it is judged once a follow-up had time to arrive.
type Unexplained struct {
	Request    string
	Status     int
	Received   time.Time
	Violations []Violation
	runKey     string
}

// maxUnexplained bounds the looks held; past it the oldest are judged.
const maxUnexplained = 1000

// Settle hands over the findings held for looks answered before cutoff
// that no follow-up explained: they stand. The proxy settles at drain,
// and, for its live summary, what is a while old.
func (m *Memory) Settle(cutoff time.Time) []Unexplained {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Unexplained
	kept := m.unexplained[:0]
	for _, u := range m.unexplained {
		if u.Received.Before(cutoff) {
			out = append(out, u)
		} else {
			kept = append(kept, u)
		}
	}
	m.unexplained = kept
	return out
}

// restartShaped tells whether a look shows a run started again: QUEUED or
// PENDING with a started_at.
func restartShaped(run map[string]any) bool {
	state := Str(run["state"])
	return (state == "QUEUED" || state == "PENDING") && run["started_at"] != nil
}

// holdLocked holds vs, found in ex about key, until a follow-up explains
// them or Settle.
func (m *Memory) holdLocked(key string, ex Exchange, vs []Violation) {
	if len(vs) == 0 {
		return
	}
	if len(m.unexplained) >= maxUnexplained {
		m.unexplained = m.unexplained[1:]
	}
	m.unexplained = append(m.unexplained, Unexplained{Request: ex.Request, Status: ex.Status,
		Received: ex.Received, Violations: vs, runKey: key})
}

// explainedLocked drops the held findings about key that a follow-up sent
// at sent explains: those of looks answered after it was sent.
func (m *Memory) explainedLocked(key string, sent time.Time) {
	kept := m.unexplained[:0]
	for _, u := range m.unexplained {
		if u.runKey != key || u.Received.Before(sent) {
			kept = append(kept, u)
		}
	}
	m.unexplained = kept
}

type runFacts struct {
	hasLast bool
	look    Look
	created bool // its creation was seen
	// linkedAt is when a look showing a session link was first answered.
	// Exchanges reach the memory in any order: only a look asked after it
	// must keep the link (a look answered earlier may rightly show none).
	linkedAt            time.Time
	endEvent            string
	endEventBy          string
	endEventAt          time.Time
	reportedEnd         string // a terminal event reported and accepted
	reportedEndBy       string
	reportedEndAt       time.Time
	cancelAccepted      time.Time // when an accepted cancel's answer arrived
	cancelAcceptedBy    string
	cancelRefused       time.Time // when a 400 to a cancel arrived, until the next look
	cancelRefusedAnswer string
	prompt              string // its prompt, when its creation was seen (the first keptPromptBytes)
	// followedUp: a follow-up was accepted for the run, which may start an
	// ended run again (QUEUED once more, with its first started_at).
	followedUp bool
	// followupAnswered is when the answer to the latest accepted follow-up
	// arrived. The server took the follow-up at some moment before then,
	// so an end event that occurred before it may be of an earlier
	// execution, and a look asked before it may show the run as it was
	// before the follow-up: neither binds what comes after.
	followupAnswered time.Time
	newest           *newestFacts // what the rules of memory_newest.go remember
}

// page is one page of a walk in creation order, linked to the page before.
type page struct {
	prev    *page
	depth   int
	ids     map[string]bool
	req     string
	hasNext bool
}

// maxWalkDepth bounds how many pages back a walk is checked.
const maxWalkDepth = 500

// NewMemory returns an empty Memory.
func NewMemory(l Limits) *Memory {
	def := func(n, d int) int {
		if n <= 0 {
			return d
		}
		return n
	}
	return &Memory{
		runs:     newBounded[*runFacts](def(l.Runs, 100_000)),
		pages:    newBounded[*page](def(l.Pages, 10_000)),
		bySeq:    newBounded[string](def(l.Events, 100_000)),
		runSeqs:  newBounded[[]float64](def(l.Runs, 100_000)),
		refused:  newBounded[string](def(l.Seen, 200_000)),
		listed:   newBounded[string](def(l.Seen, 200_000)),
		sessions: map[string]int{},

		envNewest: newBounded[envRun](def(l.Runs, 100_000) / 10),
		deleted:   newBounded[sighting](def(l.Runs, 100_000) / 10),
		msgTimes:  newBounded[sighting](def(l.Events, 100_000)),
		convRuns:  newBounded[[]convRun](def(l.Runs, 100_000) / 10),
		parents:   newBounded[string](def(l.Runs, 100_000)),
	}
}

// Observe checks one exchange against every rule of a single answer and
// against what was seen before, then remembers what later answers are
// checked against. The rules of the OpenAPI document are not here: the
// caller checks them with the project's validator.
func (m *Memory) Observe(ex Exchange) []Violation {
	if strings.HasPrefix(ex.Path, "/__mock/") {
		m.control(ex)
		return nil
	}
	doc, ok := ex.answer()
	if !ok {
		return nil // not JSON: the document check says what is wrong
	}
	obj, _ := doc.(map[string]any)
	if ex.Status >= 400 {
		if obj != nil {
			return append(ProblemStatus(ex.Status, obj), m.refusal(ex)...)
		}
		return m.refusal(ex)
	}
	if ex.Status < 200 || ex.Status > 299 {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	scope := m.scopeLocked(ex.Session)
	if out, handled := m.resourceLocked(scope, ex, doc); handled {
		return out
	}
	if ex.Status != http.StatusOK {
		return nil
	}
	switch {
	case ex.Method == http.MethodPost && (ex.Path == "/agent/run" || ex.Path == "/agent/runs"):
		if id := Str(obj["run_id"]); id != "" {
			f := m.factsLocked(scope, id)
			f.created = true
			m.createdLocked(scope, ex, id)
		}
	case ex.Method == http.MethodGet && ex.Path == "/agent/runs":
		return m.listingLocked(scope, ex, obj)
	case ex.Method == http.MethodGet && isRunPath(ex.Path):
		if obj != nil {
			out := IsTheOneAsked("run_id", runIDOf(ex.Path), obj)
			return append(out, m.runLocked(scope, ex, "body", obj, false)...)
		}
	case ex.Method == http.MethodGet && obj != nil && strings.HasPrefix(ex.Path, "/agent/artifacts/"):
		return append(IsTheOneAsked("artifact_uid", lastSegment(ex.Path), obj), PlanContent(obj)...)
	case ex.Method == http.MethodGet && obj != nil && strings.HasPrefix(ex.Path, "/agent/schedules/") && strings.Count(ex.Path, "/") == 3:
		return IsTheOneAsked("id", lastSegment(ex.Path), obj)
	case ex.Method == http.MethodPost && strings.HasPrefix(ex.Path, "/agent/events/"):
		return m.reportedLocked(scope, ex)
	case ex.Method == http.MethodPost && isFollowupPath(ex.Path):
		// What was seen of the run before no longer binds what comes next.
		f := m.factsLocked(scope, runIDOf(ex.Path))
		m.explainedLocked(scope+"/"+runIDOf(ex.Path), ex.Sent)
		m.followedUpLocked(f, ex)
		f.cancelAccepted = time.Time{} // a run started again ends as its new execution does
		f.hasLast, f.endEvent, f.reportedEnd, f.followedUp = false, "", "", true
		f.followupAnswered = ex.Received
	case ex.Method == http.MethodGet && obj != nil && isHandoffPath(ex.Path):
		m.handoffLocked(scope, ex, obj)
	case ex.Method == http.MethodPost && isCancelPath(ex.Path):
		id := runIDOf(ex.Path)
		f := m.factsLocked(scope, id)
		f.cancelAccepted, f.cancelAcceptedBy = ex.Received, ex.Request
	case ex.Method == http.MethodGet && ex.Path == "/agent/events":
		if list, ok := doc.([]any); ok {
			return m.eventsLocked(scope, ex, list)
		}
	}
	return nil
}

// refusal notes a 4xx to a run's fetch or cancel.
func (m *Memory) refusal(ex Exchange) []Violation {
	m.mu.Lock()
	defer m.mu.Unlock()
	scope := m.scopeLocked(ex.Session)
	switch {
	case ex.Method == http.MethodGet && isRunPath(ex.Path) && (ex.Status == http.StatusForbidden || ex.Status == http.StatusNotFound):
		id := runIDOf(ex.Path)
		if ex.Caller == "" || id == "" {
			return nil
		}
		key := scope + "/" + ex.Caller + "/" + id
		if _, ok := m.refused.get(key); !ok {
			m.refused.put(key, ex.Request)
		}
		if by, ok := m.listed.get(key); ok {
			return []Violation{{Rule: RefusedRunNeverListed, Field: "status", RunID: id,
				Expected: "the run, which was listed to this caller by " + by, Got: strconv.Itoa(ex.Status)}}
		}
	case ex.Method == http.MethodPost && isCancelPath(ex.Path) && ex.Status == http.StatusBadRequest:
		f := m.factsLocked(scope, runIDOf(ex.Path))
		f.cancelRefused, f.cancelRefusedAnswer = ex.Received, ex.Request
	}
	return nil
}

func (m *Memory) listingLocked(scope string, ex Exchange, obj map[string]any) []Violation {
	if obj == nil {
		return nil
	}
	page := membersOf(obj)
	runs := page.objs("runs")
	info := page.object("page_info")
	next, hasNext := info.str("next_cursor"), info.boolean("has_next_page")
	if !page.ok || !info.ok {
		return nil
	}
	out := ListingMatchesQuery(ex.Query, runs)
	out = append(out, AncestorListing(ex.Query, runs, func(id string) (string, bool) { return m.parents.get(scope + "/" + id) })...)
	out = append(out, ListingInOrder(ex.Query, runs)...)
	out = append(out, PageWithin(ex.Query, runs)...)
	out = append(out, OneRunPerTick(runs)...)
	out = append(out, m.walkLocked(scope, ex, runs, next, hasNext)...)
	for i, run := range runs {
		out = append(out, m.runLocked(scope, ex, at("body.runs", i), run, true)...)
	}
	return out
}

// walkLocked checks a page of a walk in creation order against the pages
// before it, found by the cursor that asked for it.
func (m *Memory) walkLocked(scope string, ex Exchange, runs []map[string]any, next string, hasNext bool) []Violation {
	if field, _ := SortedBy(ex.Query); field != "created_at" {
		return nil
	}
	var prev *page
	if c := ex.Query.Get("cursor"); c != "" {
		prev, _ = m.pages.get(scope + "/" + c)
	}
	p := &page{prev: prev, ids: make(map[string]bool, len(runs)), req: ex.Request, hasNext: hasNext}
	if prev != nil {
		p.depth = prev.depth + 1
	}
	var out []Violation
	// A run may leave a filter on its state or last update between two
	// pages; nothing else makes a promised page empty.
	mutable := ex.Query.Has("state") || ex.Query.Has("updated_after")
	if prev != nil && prev.hasNext && len(runs) == 0 && !mutable {
		out = append(out, Violation{Rule: NextPageHasRuns, Field: "body.runs",
			Expected: "runs, since the page before (" + prev.req + ") said has_next_page: true", Got: "an empty page"})
	}
	for i, run := range runs {
		id := Str(run["run_id"])
		for q, n := prev, 0; q != nil && n < maxWalkDepth; q, n = q.prev, n+1 {
			if q.ids[id] {
				out = append(out, Violation{Rule: WalkNeverRepeats, Field: at("body.runs", i) + ".run_id", RunID: id,
					Expected: "a run not listed on an earlier page of this walk (" + q.req + ")", Got: id})
				break
			}
		}
		p.ids[id] = true
	}
	if next != "" && p.depth < maxWalkDepth {
		m.pages.put(scope+"/"+next, p)
	}
	return out
}

// runLocked checks one look at a run.
func (m *Memory) runLocked(scope string, ex Exchange, field string, run map[string]any, listed bool) (out []Violation) {
	out = RunAlone(field, run)
	id := Str(run["run_id"])
	if id == "" {
		return append(out, DerivedAlone(field, run, false)...)
	}
	defer func() { out = distinct(out) }()
	if ex.Caller != "" {
		key := scope + "/" + ex.Caller + "/" + id
		if by, ok := m.refused.get(key); ok {
			out = append(out, Violation{Rule: RefusedRunNeverListed, Field: field + ".run_id", RunID: id,
				Expected: "no run refused to this caller (by " + by + ")", Got: id})
		}
		if listed {
			if _, ok := m.listed.get(key); !ok {
				m.listed.put(key, ex.Request)
			}
		}
	}
	if parent := Str(run["parent_run_id"]); parent != "" {
		m.parents.put(scope+"/"+id, parent)
	}
	f := m.factsLocked(scope, id)
	held := !f.followedUp && restartShaped(run) // a follow-up not seen yet may explain it
	var started []Violation                     // what only a follow-up explains, held
	if f.followedUp || held {                   // started again: QUEUED with its first started_at
		var kept []Violation
		for _, v := range out {
			if v.Rule != StartedAtFitsState {
				kept = append(kept, v)
			} else {
				started = append(started, v)
			}
		}
		out = kept
		if held {
			strict, lenient := DerivedAlone(field, run, false), DerivedAlone(field, run, true)
			for _, v := range strict {
				if !slices.Contains(lenient, v) {
					started = append(started, v)
				}
			}
			defer func() { m.holdLocked(scope+"/"+id, ex, started) }()
		}
	}
	out = append(out, DerivedAlone(field, run, f.followedUp || held)...)
	if f.created {
		wasLinked := !f.linkedAt.IsZero() && f.linkedAt.Before(ex.Sent)
		out = append(out, CreatedRunRules(field, run, wasLinked)...)
	}
	m.sawRunLocked(scope, ex, f, run)
	out = append(out, m.newestLookLocked(f, ex, field, run)...)
	if Str(run["session_link"]) != "" && (f.linkedAt.IsZero() || ex.Received.Before(f.linkedAt)) {
		f.linkedAt = ex.Received
	}
	now := LookAt(run, ex.Sent, ex.Received, ex.Request)
	if f.endEvent != "" && f.endEventAt.Before(ex.Sent) && now.State != f.endEvent {
		out = append(out, Violation{Rule: EventsTellTheEnd, Field: field + ".state", RunID: id,
			Expected: f.endEvent + ", as the events polled by " + f.endEventBy + " said", Got: now.State})
		f.endEvent = "" // said once
	}
	if f.hasLast && f.look.Before(now) {
		vs := MovedOn(field, id, f.look, now)
		vs = append(vs, KeptAcrossExecutions(field, id, f.look, now)...)
		vs = append(vs, EndedRunStopped(field, id, f.look, now)...)
		if held {
			started = append(started, vs...)
		} else {
			out = append(out, vs...)
		}
	}
	// "The run ends in CANCELLED": not at once, a server may take a while
	// (the run still shows where it was), but the end it is seen in is
	// CANCELLED.
	if !f.cancelAccepted.IsZero() && f.cancelAccepted.Before(ex.Sent) && IsTerminal(now.State) {
		if now.State != "CANCELLED" {
			out = append(out, Violation{Rule: AcceptedCancelCancels, Field: field + ".state", RunID: id,
				Expected: "CANCELLED, the end of a run whose cancel was accepted (" + f.cancelAcceptedBy + ")", Got: now.State})
		}
		f.cancelAccepted = time.Time{} // judged once
	}
	if !f.cancelRefused.IsZero() && f.cancelRefused.Before(ex.Sent) {
		// States only move forward: a run still QUEUED or PENDING after the
		// refusal was so when it came, neither ended nor BLOCKED.
		if now.State == "QUEUED" || now.State == "PENDING" {
			out = append(out, Violation{Rule: CancelRefusedOnlyLate, Field: field + ".state", RunID: id,
				Expected: "a run that had ended or was BLOCKED when " + f.cancelRefusedAnswer + " was refused with 400", Got: now.State + " afterwards"})
		}
		f.cancelRefused = time.Time{}
	}
	// A look asked while a follow-up was on its way may show the run before
	// the follow-up took it: it is no baseline for the looks after.
	overlapsFollowup := f.followedUp && ex.Sent.Before(f.followupAnswered)
	if !overlapsFollowup && (!f.hasLast || now.Received.After(f.look.Received)) {
		f.look, f.hasLast = now, true
	}
	return out
}

func (m *Memory) eventsLocked(scope string, ex Exchange, list []any) []Violation {
	events := make([]map[string]any, 0, len(list))
	for _, e := range list {
		if o, ok := e.(map[string]any); ok {
			events = append(events, o)
		}
	}
	out := EventsInOrder(events)
	seqs := map[string]map[float64]bool{} // run -> sequences in this poll
	for i, e := range events {
		field, run := at("body", i), Str(e["run_id"])
		data, _ := json.Marshal(e)
		if key, ok := EventBySequence(e); ok {
			if first, seen := m.bySeq.get(scope + "/" + key); seen {
				out = append(out, EventUnchanged(field, run, first, string(data))...)
			} else {
				m.bySeq.put(scope+"/"+key, string(data))
			}
		}
		if seq, ok := e["sequence"].(float64); ok {
			if seqs[run] == nil {
				seqs[run] = map[float64]bool{}
			}
			seqs[run][seq] = true
		}
		if end := EndOf(Str(e["event_type"])); end != "" {
			f := m.factsLocked(scope, run)
			occurred, err := time.Parse(time.RFC3339Nano, Str(e["occurred_at"]))
			earlier := err == nil && occurred.Before(f.followupAnswered) // maybe an execution before a follow-up
			if f.hasLast && IsTerminal(f.look.State) && f.look.State != end && !earlier {
				out = append(out, Violation{Rule: EventsTellTheEnd, Field: field + ".event_type", RunID: run,
					Expected: "the event of the state the run ended in, " + f.look.State + " (seen by " + f.look.Request + ")", Got: Str(e["event_type"])})
			}
			if f.endEvent == "" && !earlier {
				f.endEvent, f.endEventBy, f.endEventAt = end, ex.Request, ex.Received
			}
		}
	}
	limit := 100.0
	if n, err := strconv.Atoi(ex.Query.Get("limit")); err == nil {
		limit = float64(n)
	}
	since, _ := strconv.ParseFloat(ex.Query.Get("since"), 64)
	for _, run := range ex.Query["run_ids"] {
		key := scope + "/" + run
		before, _ := m.runSeqs.get(key)
		if float64(len(events)) < limit {
			out = append(out, EventsStillThere(run, since, before, seqs[run])...)
			if f, ok := m.runs.get(key); ok && since == 0 && f.newest != nil && f.newest.sentBack != nil && f.newest.sentBack.Received.Before(ex.Sent) {
				out = append(out, m.sentBackJudgedLocked(f, run, events)...)
			}
		}
		for seq := range seqs[run] {
			if !slices.Contains(before, seq) && len(before) < maxEventsPerRun {
				before = append(before, seq)
			}
		}
		m.runSeqs.put(key, before)
	}
	return out
}

// maxEventsPerRun bounds the sequences remembered of one run.
const maxEventsPerRun = 1000

// reportedLocked checks an accepted report of an event against the run's
// last look: a finished run takes no event that would move it.
func (m *Memory) reportedLocked(scope string, ex Exchange) []Violation {
	if ex.Status < 200 || ex.Status > 299 {
		return nil
	}
	body, ok := ex.request()
	if !ok {
		return nil
	}
	var report struct{ EventType string }
	read := membersOf(body)
	if report.EventType = read.str("event_type"); !read.ok {
		return nil
	}
	id := lastSegment(ex.Path)
	to := StateOf(report.EventType)
	f := m.factsLocked(scope, id)
	ended, by := "", ""
	switch {
	case f.hasLast && IsTerminal(f.look.State) && f.look.Before(Look{Sent: ex.Sent}):
		ended, by = f.look.State, "seen by "+f.look.Request
	case f.reportedEnd != "" && f.reportedEndAt.Before(ex.Sent):
		ended, by = f.reportedEnd, "reported by "+f.reportedEndBy+" and accepted"
	}
	if ended == "" {
		if end := EndOf(report.EventType); end != "" {
			f.reportedEnd, f.reportedEndBy, f.reportedEndAt = end, ex.Request, ex.Received
		}
		return nil
	}
	if to == "" || to == ended {
		return nil
	}
	return []Violation{{Rule: FinishedRunTakesNoEvent, Field: "status", RunID: id,
		Expected: "a 4xx refusing " + report.EventType + " for a run that had ended " + ended + " (" + by + ")",
		Got:      strconv.Itoa(ex.Status)}}
}

// control follows what the mock's control API does to its world: a state
// forced by fiat is no server moving a run, and a reset session is a new
// world.
func (m *Memory) control(ex Exchange) {
	if ex.Status < 200 || ex.Status > 299 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case ex.Method == http.MethodPost && strings.HasPrefix(ex.Path, "/__mock/runs/") && strings.HasSuffix(ex.Path, "/state"):
		id, _ := url.PathUnescape(strings.TrimSuffix(strings.TrimPrefix(ex.Path, "/__mock/runs/"), "/state"))
		m.runs.del(m.scopeLocked(ex.Session) + "/" + id)
	case ex.Method == http.MethodPost && ex.Path == "/__mock/reset", ex.Method == http.MethodDelete && ex.Path == "/__mock/session":
		if len(m.sessions) > 100_000 {
			m.sessions = map[string]int{} // generations restart; old keys are forgotten with them
		}
		m.sessions[ex.Session]++
	}
}

func (m *Memory) scopeLocked(session string) string {
	return session + "#" + strconv.Itoa(m.sessions[session])
}

func (m *Memory) factsLocked(scope, id string) *runFacts {
	key := scope + "/" + id
	f, ok := m.runs.get(key)
	if !ok {
		f = &runFacts{}
		m.runs.put(key, f)
	}
	return f
}

// lastSegment is the last segment of a path, unescaped.
func lastSegment(p string) string {
	seg := p[strings.LastIndexByte(p, '/')+1:]
	if v, err := url.PathUnescape(seg); err == nil {
		return v
	}
	return seg
}

// isRunPath tells whether p is /agent/runs/{id}.
func isRunPath(p string) bool {
	rest, ok := strings.CutPrefix(p, "/agent/runs/")
	return ok && rest != "" && !strings.Contains(rest, "/")
}

// isFollowupPath tells whether p is /agent/runs/{id}/followups.
func isFollowupPath(p string) bool {
	rest, ok := strings.CutPrefix(p, "/agent/runs/")
	id, ok2 := strings.CutSuffix(rest, "/followups")
	return ok && ok2 && id != "" && !strings.Contains(id, "/")
}

// isHandoffPath tells whether p is /agent/runs/{id}/handoff/attachments.
func isHandoffPath(p string) bool {
	rest, ok := strings.CutPrefix(p, "/agent/runs/")
	id, ok2 := strings.CutSuffix(rest, "/handoff/attachments")
	return ok && ok2 && id != "" && !strings.Contains(id, "/")
}

func isCancelPath(p string) bool {
	rest, ok := strings.CutPrefix(p, "/agent/runs/")
	id, ok2 := strings.CutSuffix(rest, "/cancel")
	return ok && ok2 && id != "" && !strings.Contains(id, "/")
}

// runIDOf is the run id in /agent/runs/{id}[/...], unescaped.
func runIDOf(p string) string {
	rest := strings.TrimPrefix(p, "/agent/runs/")
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[:i]
	}
	id, err := url.PathUnescape(rest)
	if err != nil {
		return rest
	}
	return id
}

// distinct drops a violation that repeats an earlier one's rule and field:
// a rule checked both over the whole history of a run and between two
// looks says one thing once.
func distinct(vs []Violation) []Violation {
	seen := map[[2]string]bool{}
	return slices.DeleteFunc(vs, func(v Violation) bool {
		k := [2]string{v.Rule, v.Field}
		if seen[k] {
			return true
		}
		seen[k] = true
		return false
	})
}
