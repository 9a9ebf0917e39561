package explore

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/agentruns/agentruns/rules"
)

// The causes this file reports.
const (
	CauseLastChange = "a change did not move the last change (updated_at)"
)

// resource is one of the first team's resources the exploration follows
// across calls: a run, a schedule or an agent identity.
type resource struct{ kind, id string }

func (r resource) String() string { return r.kind + " " + r.id }

// resourceKind says where a kind of resource lives.
type resourceKind struct {
	param    string // its path parameter
	get      string // the operation that reads one
	idMember string // the member of its answers that holds its id
}

var resourceKinds = map[string]resourceKind{
	"run":      {param: "runId", get: "/agent/runs/{runId}", idMember: "run_id"},
	"schedule": {param: "scheduleId", get: "/agent/schedules/{scheduleId}", idMember: "id"},
	"identity": {param: "uid", get: "/agent/identities/{uid}", idMember: "uid"},
}

func kindOfParam(param string) string {
	for name, k := range resourceKinds {
		if k.param == param {
			return name
		}
	}
	return ""
}

// resourceOf is the first team's resource a call of op on path names, if
// any: a run under /agent/runs/{runId}, /agent/messages/{runId} and
// /agent/events/{runId}, a schedule, an identity.
func resourceOf(op *operation, path string) (resource, bool) {
	param := ownedKind(op)
	kind := kindOfParam(param)
	if kind == "" {
		return resource{}, false
	}
	tsegs, psegs := strings.Split(op.Template, "/"), strings.Split(path, "/")
	for i, s := range tsegs {
		if s == "{"+param+"}" && i < len(psegs) {
			id, err := url.PathUnescape(psegs[i])
			if err != nil {
				return resource{}, false
			}
			return resource{kind, id}, true
		}
	}
	return resource{}, false
}

// pathOf is the path that reads r.
func (r resource) path() string {
	k := resourceKinds[r.kind]
	return strings.ReplaceAll(k.get, "{"+k.param+"}", url.PathEscape(r.id))
}

// resourcesIn are the resources a success answered with, as the first
// team saw them: a run read; a schedule or an identity created, read,
// changed or listed.
func resourcesIn(s sent) map[resource]map[string]any {
	obj, _ := s.decoded.(map[string]any)
	if obj == nil {
		return nil
	}
	t := s.op.Template
	out := map[resource]map[string]any{}
	for name, k := range resourceKinds {
		collection := strings.TrimSuffix(k.get, "/{"+k.param+"}")
		var items []any
		switch {
		case name == "run" && !(t == k.get && s.op.reads()):
			continue // a run's other answers are not the run
		case t == collection && s.op.reads():
			items, _ = obj[listedIn[name]].([]any) // a listing
		case t == collection || strings.HasPrefix(t, collection+"/"):
			items = []any{obj}
		}
		for _, item := range items {
			m, _ := item.(map[string]any)
			if id := rules.Str(m[k.idMember]); id != "" && m["updated_at"] != nil {
				out[resource{name, id}] = m
			}
		}
	}
	return out
}

// listedIn names the member of a listing that holds its items.
var listedIn = map[string]string{"schedule": "schedules", "identity": "agents"}

// lookAt is the first team's last look at one of its resources.
type lookAt struct {
	obj     map[string]any
	changes int           // the sequence's count of changes when seen
	at      time.Duration // the sequence's time when seen (sequence.elapsed)
	// changedAt is when the first team's first accepted change to the
	// resource since the look was sent; changed says there was one.
	changedAt time.Duration
	changed   bool
}

// elapsed is the sequence's time: on the mock, how far the sequence moved
// the session's clock (nothing else moves it); elsewhere the time since
// the sequence began.
func (q *sequence) elapsed() time.Duration {
	if q.e.controlURL != nil {
		return q.moved
	}
	return time.Since(q.began)
}

// lastChangeGap is how much of the sequence's time must pass between a
// look and a change for the change to have to show a later last change:
// any on the mock, whose instants are exact; elsewhere more than the
// whole seconds a server may write its times in.
func (q *sequence) lastChangeGap() time.Duration {
	if q.e.controlURL != nil {
		return time.Nanosecond
	}
	return 2 * time.Second
}

// movesOnItsOwn are the members of a schedule or an identity that change
// without a change of the caller's: a schedule's ticks.
var movesOnItsOwn = map[string]bool{"history": true, "last_ran": true, "next_run": true, "last_spawn_error": true}

// changedBy tells which members the first team's change made differ
// between two looks at a resource: for a run, its state (the rest of a
// run moves as it works); for a schedule or an identity, any member but
// its times and what its ticks move.
func changedBy(kind string, before, now map[string]any) []string {
	if kind == "run" {
		if rules.Str(before["state"]) != rules.Str(now["state"]) {
			return []string{"state"}
		}
		return nil
	}
	var out []string
	for _, k := range sortedKeys(now) {
		if strings.HasSuffix(k, "_at") || movesOnItsOwn[k] {
			continue
		}
		if b, ok := before[k]; ok && !reflect.DeepEqual(b, now[k]) {
			out = append(out, k)
		}
	}
	return out
}

// noteResource keeps what a first team's success showed of its
// resources, and holds the answer to its last change: a change to a
// resource moves updated_at, which records its last change.
func (q *sequence) noteResource(s sent, n int) {
	if q.lookAt == nil {
		q.lookAt = map[resource]*lookAt{}
	}
	if !s.op.reads() {
		if r, ok := resourceOf(s.op, s.call.Path); ok {
			if l := q.lookAt[r]; l != nil && !l.changed {
				l.changed, l.changedAt = true, q.elapsed()
			}
		}
	}
	shown := resourcesIn(s)
	for _, r := range slices.SortedFunc(maps.Keys(shown), func(a, b resource) int { return strings.Compare(a.String(), b.String()) }) {
		q.lastChange(r, shown[r], s, n)
		if q.found != nil {
			return
		}
	}
}

// lastChange holds a look at r to its last change: when the first team
// changed r after its last look, time having passed between, and the
// change shows, updated_at must be later than the look's.
func (q *sequence) lastChange(r resource, obj map[string]any, s sent, n int) {
	if before := q.lookAt[r]; before != nil && before.changed && before.changedAt-before.at >= q.lastChangeGap() {
		if members := changedBy(r.kind, before.obj, obj); len(members) > 0 {
			then, err1 := time.Parse(time.RFC3339Nano, rules.Str(before.obj["updated_at"]))
			now, err2 := time.Parse(time.RFC3339Nano, rules.Str(obj["updated_at"]))
			if err1 == nil && err2 == nil && !now.After(then) {
				q.report(CauseLastChange, fmt.Sprintf("%s: %s changed (%s), %s after it was last seen, yet updated_at is %s, not later than the %s seen before the change",
					r, strings.Join(members, ", "), s.op.Name(), before.changedAt-before.at, rules.Str(obj["updated_at"]), rules.Str(before.obj["updated_at"])), n)
			}
		}
	}
	q.lookAt[r] = &lookAt{obj: obj, changes: q.changes, at: q.elapsed()}
}

// otherTeamTriesAll is the other team calling the operations on one of
// the first team's resources (each drawn in, most often every one), reads first, deletes last: each must be
// refused, and each refused write must leave the resource as the first
// team sees it.
func (q *sequence) otherTeamTriesAll(t *rapid.T) {
	r, ok := drawResource(t, "other team's", map[string][]string{
		"run":      append(slices.Clone(q.ownRuns), q.mainSeen["run_id"]...),
		"schedule": append(slices.Clone(q.ownSchedules), q.mainSeen["schedules.id"]...),
		"identity": append(slices.Clone(q.ownIdentities), q.mainSeen["identities.uid"]...),
	})
	if !ok {
		return
	}
	kind := r.kind
	var ops []*operation
	for _, op := range q.e.ops {
		if kindOfParam(ownedKind(op)) == kind && len(op.PathParams) == 1 {
			ops = append(ops, op)
		}
	}
	order := func(op *operation) int {
		switch {
		case op.reads():
			return 0
		case op.Method == http.MethodDelete:
			return 2
		}
		return 1
	}
	slices.SortStableFunc(ops, func(a, b *operation) int { return order(a) - order(b) })
	for _, op := range ops {
		if q.found != nil || !q.e.budgetLeft(q.ctx) {
			return
		}
		// Each operation drawn in, most often: a shrunk sequence keeps
		// only the calls its finding needs.
		if rapid.IntRange(0, 3).Draw(t, "skip "+op.Name()) == 0 {
			continue
		}
		c, why, k, ok := q.drawOn(t, op, OtherTeam, r)
		if !ok || k != valid {
			continue
		}
		if startsRun(op) && q.atCapacity {
			continue
		}
		q.sendAndJudge(c, op, k, why)
	}
}

// otherTeamListing checks the other team's listing of schedules or agent
// identities: none the first team created may be on it.
func (q *sequence) otherTeamListing(s sent, obj map[string]any) {
	for r := range resourcesIn(s) {
		if (r.kind == "schedule" && slices.Contains(q.ownSchedules, r.id)) || (r.kind == "identity" && slices.Contains(q.ownIdentities, r.id)) {
			q.report(CauseOtherTeamShown, fmt.Sprintf("another team's %s shows %s, which the first team created", s.op.Name(), r), len(q.calls))
			return
		}
	}
}

// unchangedForTheFirstTeam checks, after the other team's write was
// refused, that the first team sees its resource as before: still there,
// not cancelled, not holding what the other team sent; on the mock, where
// nothing moves unless the sequence moves it, exactly as its last look.
func (q *sequence) unchangedForTheFirstTeam(s sent) {
	c := s.call
	r, ok := resourceOf(s.op, c.Path)
	if !ok {
		return
	}
	get := q.e.byName["GET "+resourceKinds[r.kind].get]
	if get == nil || !q.e.budgetLeft(q.ctx) {
		return
	}
	// The first team's last look, unless it changed the resource since
	// without seeing the change; fresh when nothing at all changed since.
	var before map[string]any
	fresh := false
	if l := q.lookAt[r]; l != nil && !l.changed {
		before, fresh = l.obj, l.changes == q.changes
	}
	beforeState := ""
	if r.kind == "run" && q.looks[r.id] != nil && q.lookedAt[r.id] == q.changes {
		beforeState = rules.Str(q.looks[r.id]["state"])
	}
	path := r.path()
	after := q.sendAndJudge(Call{Method: http.MethodGet, Path: path, Query: url.Values{}}, get, valid, "")
	if q.found != nil {
		return
	}
	n := len(q.calls)
	refused := fmt.Sprintf("after another team's %s %s was refused (%d)", c.Method, c.Path, c.Status)
	if after.call.Status == http.StatusNotFound {
		if (r.kind == "schedule" && slices.Contains(q.ownSchedules, r.id)) || (r.kind == "identity" && slices.Contains(q.ownIdentities, r.id)) {
			// Only what the first team created and has not deleted is
			// known to be there before.
			q.report(CauseOtherTeamChange, fmt.Sprintf("%s, the first team's GET %s answers 404", refused, path), n)
		}
		return
	}
	obj, _ := after.decoded.(map[string]any)
	if after.call.Status != http.StatusOK || obj == nil {
		return
	}
	if r.kind == "run" && beforeState != "" && !rules.IsTerminal(beforeState) && rules.Str(obj["state"]) == "CANCELLED" && !q.cancelled[r.id] {
		q.report(CauseOtherTeamChange, fmt.Sprintf("%s, the first team's run is CANCELLED", refused), n)
		return
	}
	if q.e.controlURL != nil && fresh {
		for _, k := range sortedKeys(obj) {
			if b, ok := before[k]; ok && !reflect.DeepEqual(b, obj[k]) {
				q.report(CauseOtherTeamChange, fmt.Sprintf("%s, the first team's GET %s shows %s %s, which was %s, with nothing else changed",
					refused, path, k, jsonOf(obj[k]), jsonOf(b)), n)
				return
			}
		}
	}
	// A schedule or an identity changes only when its team changes it (but
	// for its times and its ticks): since the first team's last look it
	// changed nothing. Off the mock, only what the sequence created, which
	// no other client of the team knows of.
	own := (r.kind == "schedule" && slices.Contains(q.ownSchedules, r.id)) || (r.kind == "identity" && slices.Contains(q.ownIdentities, r.id))
	if before != nil && r.kind != "run" && (q.e.controlURL != nil || own) {
		if members := changedBy(r.kind, before, obj); len(members) > 0 {
			q.report(CauseOtherTeamChange, fmt.Sprintf("%s, the first team's GET %s shows %s changed since its last look, though the first team changed nothing",
				refused, path, strings.Join(members, ", ")), n)
			return
		}
	}
	// What the other team sent, now held by the resource, though it held
	// something else before.
	body, _ := s.requestDecoded.(map[string]any)
	if before == nil {
		return
	}
	for _, k := range sortedKeys(body) {
		if b, ok := before[k]; ok && !reflect.DeepEqual(b, body[k]) && reflect.DeepEqual(obj[k], body[k]) {
			q.report(CauseOtherTeamChange, fmt.Sprintf("%s, the first team's GET %s shows %s %s, as the other team sent it (it was %s)",
				refused, path, k, jsonOf(obj[k]), jsonOf(b)), n)
			return
		}
	}
}

// changeAfterAWhile is the first team changing one of its resources a
// while after it last looked at it (on the mock, the clock moved a moment
// between: too short for a run to move on its own, so that what the
// change shows is the change's): the change must show a later last
// change. A run is looked at first and after, since a cancel answers with
// its id only; what the clock moves in, the sequence's other steps draw.
func (q *sequence) changeAfterAWhile(t *rapid.T) {
	r, ok := drawResource(t, "changed", map[string][]string{"run": q.ownRuns, "schedule": q.ownSchedules, "identity": q.ownIdentities})
	if !ok {
		return
	}
	kind := r.kind
	var ops []*operation
	for _, op := range q.e.ops {
		// Not what starts a run (a follow-up): runs are priced.
		if kindOfParam(ownedKind(op)) == kind && len(op.PathParams) == 1 && !op.reads() && op.Method != http.MethodDelete && !startsRun(op) &&
			(kind != "run" || strings.HasPrefix(op.Template, "/agent/runs/")) {
			ops = append(ops, op)
		}
	}
	if len(ops) == 0 {
		return
	}
	op := rapid.SampledFrom(ops).Draw(t, "change")
	get := q.e.byName["GET "+resourceKinds[kind].get]
	look := func() bool {
		if get == nil || q.found != nil || !q.e.budgetLeft(q.ctx) {
			return false
		}
		q.sendAndJudge(Call{Method: http.MethodGet, Path: r.path(), Query: url.Values{}}, get, valid, "")
		return q.found == nil
	}
	if kind == "run" && !look() {
		return
	}
	if q.e.controlURL != nil {
		q.advanceBy(time.Millisecond) // a moment: the change is later than the look
	}
	c, why, k, ok := q.drawOn(t, op, MainTeam, r)
	if !ok || k != valid || q.found != nil || !q.e.budgetLeft(q.ctx) {
		return
	}
	if s := q.sendAndJudge(c, op, k, why); kind == "run" && s.call.Status < 300 {
		look()
	}
}

// drawOn draws a valid call of op on r, an operation with r's id as its
// one path parameter.
func (q *sequence) drawOn(t *rapid.T, op *operation, team string, r resource) (Call, string, kind, bool) {
	c, why, k, ok := q.draw(t, op, team, valid)
	c.Path = strings.ReplaceAll(op.Template, "{"+op.PathParams[0]+"}", url.PathEscape(r.id))
	if why == inventedID {
		why = "" // the id drawn is replaced by r's
	}
	return c, why, k, ok
}

// drawResource draws a kind of resource among those with ids in pools,
// then one of its ids; false when every pool is empty. label names the
// draws (rapid shows them when a check fails).
func drawResource(t *rapid.T, label string, pools map[string][]string) (resource, bool) {
	var kinds []string
	for _, k := range sortedKeys(pools) {
		if len(pools[k]) > 0 {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		return resource{}, false
	}
	kind := rapid.SampledFrom(kinds).Draw(t, label+" kind")
	return resource{kind, rapid.SampledFrom(pools[kind]).Draw(t, label+" "+kind)}, true
}
