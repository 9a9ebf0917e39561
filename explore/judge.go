package explore

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/agentruns/agentruns/rules"
)

// The causes of findings other than the rules of package rules, which are
// reported by their id.
const (
	CauseNoAnswer        = "no answer"
	CauseServerError     = "server error on a valid request"
	CauseOddServerError  = "server error on an odd but valid request"
	CauseBadServerError  = "server error on an invalid request"
	CauseRefused         = "valid request refused"
	CauseAccepted        = "invalid request accepted"
	CauseNothingAnswered = "an id of nothing answered with a success"
	CauseDocument        = "answer breaks the document"
	CauseOtherTeam       = "another team's call accepted"
	CauseOtherTeamListed = "another team's runs are listed"
	CauseOtherTeamShown  = "another team's listing shows the first team's resource"
	CauseOtherTeamChange = "another team's refused call changed the resource"
	CauseWalkSkips       = "a walk through the pages skips a run"
	CauseLooksDisagree   = "two looks at a run disagree"
	CauseExact           = "a listing breaks a time bound or its order at the very instant"
)

// plainParams are the listing's parameters whose every value the
// document's schema says in full.
var plainParams = []string{"limit", "sort_by", "sort_order", "state", "created_after", "created_before", "updated_after", "source"}

// mayRefuseValid are the query parameters whose value the server may find
// wrong although the document accepts it: a run that must exist, a skill
// or factory it must know.
var mayRefuseValid = []string{"ancestor_run_id", "factory_uid", "skill", "skill_spec", "run_ids", "since"}

// judge holds one answer to everything it must be, in order; the first
// thing broken is the sequence's finding.
func (q *sequence) judge(s sent, k kind, why string) {
	n := len(q.calls)
	c := s.call
	if s.err != nil {
		q.report(CauseNoAnswer, fmt.Sprintf("%s %s gave no answer: %v", c.Method, c.Path, s.err), n)
		return
	}
	status := c.Status
	name := s.op.Name()
	switch {
	case (k == invalid && strings.HasPrefix(why, namesNothing) || k == valid && why == inventedID) && status >= 200 && status < 300 && q.declares(s.op, http.StatusNotFound):
		q.report(CauseNothingAnswered, fmt.Sprintf("%s answered %d to a request with %s, where it declares a 404", name, status, why), n)
	case k == invalid && status >= 200 && status < 300:
		q.report(CauseAccepted, fmt.Sprintf("%s answered %d to a request with %s", name, status, why), n)
	case k == invalid && status >= 500:
		q.report(CauseBadServerError, fmt.Sprintf("%s answered %d to a request with %s", name, status, why), n)
	case k == odd && status >= 500:
		q.report(CauseOddServerError, fmt.Sprintf("%s answered %d to a valid request with %s", name, status, why), n)
	case k == valid && status >= 500:
		q.report(CauseServerError, fmt.Sprintf("%s answered %d to a valid request", name, status), n)
	case k == valid && c.Team == OtherTeam && ownedKind(s.op) != "" && status >= 200 && status < 300:
		q.report(CauseOtherTeam, fmt.Sprintf("%s answered %d to another team's key, on a resource of the first team's", name, status), n)
	case k == valid && status >= 400 && status < 500 && !q.mayRefuse(s, why):
		q.report(CauseRefused, fmt.Sprintf("%s answered %d to a valid request: %s", name, status, firstLine(string(c.Answer))), n)
	}
	if q.found != nil {
		return
	}
	if err := q.e.doc.ValidateResponse(asRequest(c), asResponse(s)); err != nil {
		q.report(CauseDocument, err.Error(), n)
		return
	}
	if !(k == invalid && status < 400) {
		ex := rules.Exchange{Method: c.Method, Path: c.Path, Query: c.Query, Session: q.session,
			Caller: callerOf(c.Team), RequestBody: c.Body, Status: status, Body: c.Answer,
			Sent: s.sentAt, Received: s.gotAt, Request: c.Method + " " + c.Path + querySuffix(c.Query)}
		if k == odd && c.Query.Has("cursor") && strings.HasPrefix(why, "a cursor of another query") {
			// The walk it continues is another query's: judge it as a first page.
			ex.Query = without(c.Query, "cursor")
		}
		for _, v := range q.memory[c.Team].Observe(ex) {
			q.report(v.Rule, v.String(), n)
			return
		}
	}
	if status >= 200 && status < 300 {
		if c.Method != http.MethodGet && c.Method != http.MethodHead {
			q.changes++
		}
		q.learn(s, k, why)
	} else if status == http.StatusTooManyRequests && startsRun(s.op) {
		q.atCapacity = true // the team's capacity: back off until runs end
	}
	if q.found == nil && c.Team == OtherTeam && status >= 400 && status < 500 && !s.op.reads() {
		q.unchangedForTheFirstTeam(s)
	}
	if q.found == nil && k == valid && status == http.StatusOK && s.op.Name() == "GET /agent/runs" && q.e.controlURL != nil {
		q.emptyIsNoFilter(s)
	}
}

// mayRefuse tells whether the document lets the server refuse a valid
// request with the 4xx it gave: the team's capacity (429), a status the
// operation declares for an id (404, 403, 409, 410), a 400 for a body (whose
// meaning the server judges beyond the schema: a model or an environment
// it does not know) or for an id or value it may not know.
func (q *sequence) mayRefuse(s sent, why string) bool {
	status := s.call.Status
	declared := q.declares(s.op, status)
	switch status {
	case http.StatusTooManyRequests:
		return declared
	case http.StatusNotFound, http.StatusForbidden, http.StatusConflict, http.StatusGone:
		return declared
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		// The document declares a 400 for what it describes only in words
		// (a repository written owner/repo, a skill that must exist), so a
		// valid request refused with it is a finding only where nothing of
		// the sort is asked: a listing of runs by plain parameters.
		if !declared {
			return false
		}
		if s.op.Name() != "GET /agent/runs" || why != "" {
			return true
		}
		for k := range s.call.Query {
			if !slices.Contains(plainParams, k) {
				return true
			}
		}
		return false
	}
	return false
}

// learn keeps what a success showed: ids and values, the resources the
// first team created, the looks at runs, the pages of walks.
func (q *sequence) learn(s sent, k kind, why string) {
	c := s.call
	if s.decodedOK {
		q.seen.harvest(areaOf(c.Path), s.decoded)
		if c.Team == MainTeam {
			q.mainSeen.harvest(areaOf(c.Path), s.decoded)
		}
	}
	obj, _ := s.decoded.(map[string]any)
	main := c.Team == MainTeam
	if main {
		q.noteResource(s, len(q.calls))
	}
	switch {
	case main && startsRun(s.op):
		q.e.runs++
		if strings.HasSuffix(s.op.Template, "/followups") {
			q.e.result.Created["follow-ups"]++
		} else if id := rules.Str(obj["run_id"]); id != "" {
			q.ownRuns = append(q.ownRuns, id)
			q.e.result.Created["runs"]++
		}
	case main && c.Method == http.MethodPost && s.op.Template == "/agent/schedules":
		if id := firstOf(obj, "id", "schedule_id"); id != "" {
			q.ownSchedules = append(q.ownSchedules, id)
			q.e.result.Created["schedules"]++
		}
	case main && c.Method == http.MethodPost && s.op.Template == "/agent/identities":
		if id := firstOf(obj, "uid"); id != "" {
			q.ownIdentities = append(q.ownIdentities, id)
			q.e.result.Created["agent identities"]++
		}
	case main && c.Method == http.MethodPost && s.op.Template == "/agent/messages":
		q.e.result.Created["messages"]++
	case main && c.Method == http.MethodDelete && s.op.Template == "/agent/schedules/{scheduleId}":
		q.ownSchedules = slices.DeleteFunc(q.ownSchedules, func(id string) bool { return strings.HasSuffix(c.Path, "/"+url.PathEscape(id)) })
	case main && c.Method == http.MethodDelete && s.op.Template == "/agent/identities/{uid}":
		q.ownIdentities = slices.DeleteFunc(q.ownIdentities, func(id string) bool { return strings.HasSuffix(c.Path, "/"+url.PathEscape(id)) })
	case main && c.Method == http.MethodPost && s.op.Template == "/agent/runs/{runId}/cancel":
		q.cancelled[runIDOf(c.Path)] = true
	case c.Method == http.MethodGet && s.op.Template == "/agent/runs/{runId}" && obj != nil:
		q.look(obj, len(q.calls))
	case c.Method == http.MethodGet && s.op.Template == "/agent/runs" && obj != nil:
		q.page(s, obj, k, why)
	case c.Team == OtherTeam && c.Method == http.MethodGet && obj != nil:
		q.otherTeamListing(s, obj)
	}
}

// look compares a look at a run with the looks before: what never changes
// must not.
func (q *sequence) look(run map[string]any, n int) {
	id := rules.Str(run["run_id"])
	if id == "" {
		return
	}
	if before := q.looks[id]; before != nil {
		for _, field := range []string{"created_at", "prompt"} {
			a, b := rules.Str(before[field]), rules.Str(run[field])
			if a != "" && b != "" && a != b {
				q.report(CauseLooksDisagree, fmt.Sprintf("run %s: %s was %q, now %q", id, field, a, b), n)
				return
			}
		}
	}
	q.looks[id] = run
	q.lookedAt[id] = q.changes
}

// stableFilters are the filters a walk's skip check holds runs to, by the
// member each reads: none of them changes once a run is created.
var stableFilters = map[string]string{
	"name": "agent_config.name", "model_id": "agent_config.model_id", "creator": "creator.uid",
	"source": "source", "environment_id": "agent_config.environment_id",
}

// page follows walks through the pages of listings.
func (q *sequence) page(s sent, obj map[string]any, k kind, why string) {
	c := s.call
	n := len(q.calls)
	list, _ := obj["runs"].([]any)
	info, _ := obj["page_info"].(map[string]any)
	var ids []string
	for _, r := range list {
		run, _ := r.(map[string]any)
		if run == nil {
			continue
		}
		id := rules.Str(run["run_id"])
		ids = append(ids, id)
		if c.Team == MainTeam {
			q.look(run, n)
			if !slices.Contains(q.listed, id) {
				q.listed = append(q.listed, id)
			}
		}
	}
	if q.e.controlURL != nil && k == valid {
		// The mock keeps its instants exactly as it shows them: the
		// bounds and the order are judged at the very instant.
		if detail := exactly(c.Query, list); detail != "" {
			q.report(CauseExact, detail, n)
			return
		}
	}
	if c.Team == OtherTeam {
		for _, id := range ids {
			if slices.Contains(q.ownRuns, id) {
				q.report(CauseOtherTeamListed, "another team's listing shows run "+id+", which the first team created", n)
				return
			}
		}
	}
	query := without(c.Query, "cursor")
	var w *walk
	if cur := c.Query.Get("cursor"); cur != "" && k == valid {
		// A cursor may be handed back twice: each time the walk goes on
		// from the pages before it, not from the other's.
		if before := q.walks[cur]; before != nil {
			w = before.clone()
		}
	} else if cur == "" {
		w = &walk{query: query, team: c.Team, ids: map[string]bool{}, expected: q.expectedIn(c), changes: q.changes, start: q.changes}
	}
	next, _ := info["next_cursor"].(string)
	hasNext, _ := info["has_next_page"].(bool)
	if next != "" {
		q.cursors = append(q.cursors, cursorOf{team: c.Team, query: query, cursor: next})
	}
	if w == nil {
		return
	}
	if still := q.e.controlURL != nil && w.changes == q.changes; still && c.Query.Get("cursor") != "" && len(ids) == 0 {
		q.report(rules.NextPageHasRuns, "a page reached by the cursor of a page that said has_next_page: true is empty, with nothing changed in between: GET /agent/runs?"+encodeQuery(c.Query), n)
		return
	}
	// On the mock, with nothing changed since the page before, no run can
	// have moved: the pages of a walk must not repeat one, whatever the
	// order.
	still := q.e.controlURL != nil && w.changes == q.changes && len(w.ids) > 0
	for _, id := range ids {
		if still && w.ids[id] {
			q.report(rules.WalkNeverRepeats, fmt.Sprintf("the walk through GET /agent/runs?%s shows run %s again on a later page, with nothing changed in between", encodeQuery(w.query), id), n)
			return
		}
		w.ids[id] = true
	}
	w.changes = q.changes
	if hasNext && next != "" {
		q.walks[next] = w
		return
	}
	// What moves a run (an update, a state) may rightly carry it past the
	// cursor: only a walk by creation on stable filters is held to what
	// changed during it.
	steady := w.query.Get("sort_by") == "created_at" && !w.query.Has("state")
	if !hasNext && (steady || w.start == q.changes) {
		for _, id := range w.expected {
			if !w.ids[id] {
				q.report(CauseWalkSkips, fmt.Sprintf("the walk through %s ended without run %s, created before it began and matching its filters", "GET /agent/runs?"+encodeQuery(w.query), id), n)
				return
			}
		}
	}
}

// expectedIn are the first team's runs a walk that starts with c must
// show: every run the first team created or its listings showed whose last
// look matches each filter, when the filters are on what never changes
// and the order is by creation (a run updated between two pages may
// rightly move past the cursor). On the mock, where nothing moves but what
// the sequence moves, any order and the state filter too, judged on looks
// had since the last change.
func (q *sequence) expectedIn(c Call) []string {
	if c.Team != MainTeam {
		return nil
	}
	mock := q.e.controlURL != nil
	if c.Query.Get("sort_by") != "created_at" && !mock {
		return nil
	}
	for k := range c.Query {
		if _, ok := stableFilters[k]; ok || k == "sort_by" || k == "sort_order" || k == "limit" || (mock && k == "state") {
			continue
		}
		return nil
	}
	var out []string
	for _, id := range append(slices.Clone(q.ownRuns), q.listed...) {
		look := q.looks[id]
		if slices.Contains(out, id) || (look == nil && len(c.Query) > 0 && !onlyOrder(c.Query)) {
			continue
		}
		matches := true
		for k, field := range stableFilters {
			if !c.Query.Has(k) {
				continue
			}
			v, ok := rules.Lookup(look, field)
			matches = matches && look != nil && ok && rules.Str(v) == c.Query.Get(k)
		}
		if states := c.Query["state"]; len(states) > 0 {
			matches = matches && look != nil && q.lookedAt[id] == q.changes && slices.Contains(states, rules.Str(look["state"]))
		}
		if matches {
			out = append(out, id)
		}
	}
	return out
}

func onlyOrder(q url.Values) bool {
	for k := range q {
		if k != "sort_by" && k != "sort_order" && k != "limit" {
			return false
		}
	}
	return true
}

func asResponse(s sent) *http.Response {
	h := s.header
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{StatusCode: s.call.Status, Header: h, Body: io.NopCloser(bytes.NewReader(s.call.Answer))}
}

func callerOf(team string) string {
	if team == OtherTeam {
		return "other team"
	}
	return "first team"
}

func querySuffix(q url.Values) string {
	if len(q) == 0 {
		return ""
	}
	return "?" + encodeQuery(q)
}

func without(q url.Values, name string) url.Values {
	out := url.Values{}
	for k, v := range q {
		if k != name {
			out[k] = v
		}
	}
	return out
}

func firstOf(obj map[string]any, names ...string) string {
	for _, n := range names {
		if v := rules.Str(obj[n]); v != "" {
			return v
		}
	}
	return ""
}

// runIDOf is the run id of a path /agent/runs/{runId}/...
func runIDOf(path string) string {
	rest := strings.TrimPrefix(path, "/agent/runs/")
	id, _, _ := strings.Cut(rest, "/")
	if v, err := url.PathUnescape(id); err == nil {
		return v
	}
	return id
}

func (w *walk) clone() *walk {
	c := *w
	c.ids = make(map[string]bool, len(w.ids))
	for id := range w.ids {
		c.ids[id] = true
	}
	return &c
}

// exactly judges a page of runs at the very instant its timestamps show:
// the strict time bounds, and the order by created_at or updated_at (the
// default), ties in any order. "" when it holds.
func exactly(q url.Values, list []any) string {
	bounds := []struct {
		param, field string
		after        bool
	}{{"created_after", "created_at", true}, {"created_before", "created_at", false}, {"updated_after", "updated_at", true}}
	var runs []map[string]any
	for _, r := range list {
		if run, ok := r.(map[string]any); ok {
			runs = append(runs, run)
		}
	}
	for _, b := range bounds {
		raw := q.Get(b.param)
		bound, err := time.Parse(time.RFC3339Nano, raw)
		if raw == "" || err != nil {
			continue
		}
		for _, run := range runs {
			at, err := time.Parse(time.RFC3339Nano, rules.Str(run[b.field]))
			if err != nil {
				continue
			}
			if (b.after && !at.After(bound)) || (!b.after && !at.Before(bound)) {
				return fmt.Sprintf("%s=%s lists run %s, whose %s is %s", b.param, raw, rules.Str(run["run_id"]), b.field, rules.Str(run[b.field]))
			}
		}
	}
	field := q.Get("sort_by")
	if field == "" {
		field = "updated_at"
	}
	if field != "created_at" && field != "updated_at" {
		return ""
	}
	desc := q.Get("sort_order") != "asc"
	for i := 1; i < len(runs); i++ {
		a, errA := time.Parse(time.RFC3339Nano, rules.Str(runs[i-1][field]))
		b, errB := time.Parse(time.RFC3339Nano, rules.Str(runs[i][field]))
		if errA != nil || errB != nil {
			continue
		}
		if (desc && a.Before(b)) || (!desc && a.After(b)) {
			order := "newest first"
			if !desc {
				order = "oldest first"
			}
			return fmt.Sprintf("runs %s and %s are out of order by %s, %s: %s then %s", rules.Str(runs[i-1]["run_id"]), rules.Str(runs[i]["run_id"]), field, order, rules.Str(runs[i-1][field]), rules.Str(runs[i][field]))
		}
	}
	return ""
}

// emptyIsNoFilter holds a listing with an empty filter on who created or
// executed a run (no one has an empty uid) to the same listing without it,
// asked at once: an empty value is no filter (or the request is refused).
// On the mock only, where nothing moves between the two.
func (q *sequence) emptyIsNoFilter(s sent) {
	c := s.call
	var empty []string
	for _, p := range emptiable {
		if vs, ok := c.Query[p]; ok && len(vs) == 1 && vs[0] == "" {
			empty = append(empty, p)
		}
	}
	if len(empty) == 0 || c.Query.Has("cursor") || !q.e.budgetLeft(q.ctx) {
		return
	}
	plain := c.Query
	for _, p := range empty {
		plain = without(plain, p)
	}
	after := q.sendAndJudge(Call{Team: c.Team, Method: c.Method, Path: c.Path, Query: plain}, s.op, valid, "")
	if q.found != nil || after.call.Status != http.StatusOK {
		return
	}
	if a, b := runIDs(s.decoded), runIDs(after.decoded); !slices.Equal(a, b) {
		q.report(rules.EmptyFilterIsNoFilter, fmt.Sprintf("GET /agent/runs?%s lists %v, the same listing without the empty %s lists %v", encodeQuery(c.Query), a, strings.Join(empty, " and "), b), len(q.calls))
	}
}

func runIDs(doc any) []string {
	obj, _ := doc.(map[string]any)
	list, _ := obj["runs"].([]any)
	var out []string
	for _, r := range list {
		run, _ := r.(map[string]any)
		out = append(out, rules.Str(run["run_id"]))
	}
	return out
}
