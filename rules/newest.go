package rules

import (
	"reflect"
	"slices"
	"strings"
	"time"
)

// The rules of the newest client's surface, as pure functions: what a
// follow-up does by the state the run was in, what a new execution of a
// run keeps, what the derived fields (run_time, request_usage,
// is_run_type_cancellable, executor) mean and when they may change, and
// what the newer filters mean. Memory applies them to the traffic it
// observes, and the suite to every run it sees.
//
// They hold only what the newest official client (oz-agent-sdk
// 1.4.0-alpha.6) and the project's document say. Where those leave a choice
// open (a run started again may go straight to INPROGRESS; started_at may
// be the first execution's or the latest's; run_time may count to the
// present while the run works; executor may be left out when it is the
// creator; an empty filter value may be ignored or refused), every choice
// passes.

// The rules of this file, by ID.
const (
	FollowupKeepsLiveRun  = "followup-keeps-live-run"
	DerivedFieldsAgree    = "derived-fields-agree"
	EndedRunStopsCounting = "ended-run-stops-counting"
	OnBehalfOfCreator     = "on-behalf-of-creator-executor"
	AncestorNotItsOwn     = "ancestor-filter-lists-descendants"
	EmptyFilterIsNoFilter = "empty-filter-is-no-filter"
)

// uncancellableSources are the kinds of run the service does not drive:
// their session lives on someone's machine or in a workflow.
var uncancellableSources = []string{"LOCAL", "GITHUB_ACTION"}

// FollowupStartedEndedRun checks the first look at a run asked after a
// follow-up to it was answered (now) against the look that showed it ended
// before the follow-up was sent (before): an ended run is started again,
// so the look shows it going, or ended again since, at a later updated_at.
// Every end counts: a CANCELLED or FAILED run is started again as a
// SUCCEEDED one is.
func FollowupStartedEndedRun(field, id, followup string, before, now Look) []Violation {
	if !IsTerminal(before.State) {
		return nil
	}
	if now.State == before.State && reflect.DeepEqual(now.UpdatedAt, before.UpdatedAt) {
		return []Violation{{Rule: FollowupStartsEndedRun, Field: field + ".state", RunID: id,
			Expected: "the run started again by " + followup + ", accepted after it was seen " + before.State + " (" + before.Request + ")",
			Got:      now.State + ", updated_at " + Str(now.UpdatedAt) + " as before"}}
	}
	return nil
}

// FollowupKeptLiveRun checks a run seen not ended before a follow-up
// (before) and again after the follow-up was answered (now): the execution
// under way takes the message, so the run is not sent back to an earlier
// state. A run may have ended between the two looks and been started again
// by the follow-up, legitimately QUEUED again: ends is when the run's
// events say each of its executions ended (occurred_at), as polled after
// now. The run was sent back only if no end came by now's updated_at.
// Callers that have not polled the run's events do not call this.
func FollowupKeptLiveRun(field, id, followup string, before, now Look, ends []time.Time) []Violation {
	if IsTerminal(before.State) || Rank(before.State) < 0 || Rank(now.State) < 0 || Rank(now.State) >= Rank(before.State) {
		return nil
	}
	if updated, err := time.Parse(time.RFC3339Nano, Str(now.UpdatedAt)); err == nil {
		unit := ShownUnit(Str(now.UpdatedAt))
		for _, end := range ends {
			if !end.After(updated.Add(unit)) {
				return nil // ended, then started again by the follow-up
			}
		}
	}
	return []Violation{{Rule: FollowupKeepsLiveRun, Field: field + ".state", RunID: id,
		Expected: "at least " + before.State + ", as seen (" + before.Request + ") before " + followup + ", with no end in the run's events before it went back",
		Got:      now.State}}
}

// EventsReachPast tells whether a poll of a run's events reaches past the
// moment a look (now) shows as the run's updated_at: some event occurred
// after it, as shown to the unit both are shown in. Only then does a poll
// that lists no end before that moment show that there was none: a server
// may list an event a while after it occurred, but lists them in order,
// so an end that came before a listed event is listed too. Until then
// FollowupKeptLiveRun's verdict waits for a later poll.
func EventsReachPast(now Look, occurred []time.Time) bool {
	updated, err := time.Parse(time.RFC3339Nano, Str(now.UpdatedAt))
	if err != nil {
		return true // no moment to wait for
	}
	past := updated.Add(ShownUnit(Str(now.UpdatedAt)))
	for _, t := range occurred {
		if !t.Before(past) {
			return true
		}
	}
	return false
}

// KeptAcrossExecutions checks a later look at a run (now) against an
// earlier one (before), across any follow-ups between them: a run stays
// the run it was. Its created_at, creator, prompt, kind
// (is_run_type_cancellable) and metadata never change; a started_at shown
// stays shown; the conversation it belongs to stays the same once shown;
// and what it accumulates over its executions, run_time and each figure of
// request_usage, never shrinks.
func KeptAcrossExecutions(field, id string, before, now Look) []Violation {
	var out []Violation
	broke := func(name, expected string, got any) {
		out = append(out, Violation{Rule: RunKeepsItsHistory, Field: field + "." + name, RunID: id, Expected: expected, Got: Show(got)})
	}
	seen := func() string { return " as " + before.Request + " showed it" }
	for _, f := range []struct {
		name string
		a, b any
	}{
		{"created_at", before.CreatedAt, now.CreatedAt},
		{"creator.uid", uidOf(before.Creator), uidOf(now.Creator)},
		{"is_run_type_cancellable", before.Cancellable, now.Cancellable},
		{"metadata", before.Metadata, now.Metadata},
	} {
		if f.a != nil && f.b != nil && !reflect.DeepEqual(f.a, f.b) {
			broke(f.name, Show(f.a)+seen(), f.b)
		}
	}
	// A listing may shorten a long prompt: only a prompt that is not the
	// start of the other one changed.
	if a, b := Str(before.Prompt), Str(now.Prompt); a != b {
		if a, b := strings.TrimRight(a, ".…"), strings.TrimRight(b, ".…"); a != "" && b != "" &&
			!strings.HasPrefix(a, b) && !strings.HasPrefix(b, a) {
			broke("prompt", Show(before.Prompt)+seen(), now.Prompt)
		}
	}
	if before.StartedAt != nil && now.StartedAt == nil {
		broke("started_at", "a started_at, since "+before.Request+" showed "+Show(before.StartedAt), nil)
	}
	if c := Str(before.Conversation); c != "" && Str(now.Conversation) != "" && Str(now.Conversation) != c {
		broke("conversation_id", Show(c)+seen(), now.Conversation)
	}
	if a, b := Str(before.RunTime), Str(now.RunTime); a != b {
		if a, ok := isoDuration(a); ok {
			if b, ok := isoDuration(b); ok && b < a {
				broke("run_time", "at least "+Str(before.RunTime)+seen(), now.RunTime)
			}
		}
	}
	// The same decoded answer again (a repeat the proxy took from memory)
	// holds the very same usage: nothing to compare.
	if !sameObject(before.Usage, now.Usage) {
		for _, name := range usageFigures(before.Usage) {
			a, _ := Lookup(asObject(before.Usage), name)
			b, _ := Lookup(asObject(now.Usage), name)
			if x, isNum := b.(float64); isNum && x < a.(float64) {
				broke("request_usage."+name, "at least "+Show(a)+seen(), b)
			}
		}
	}
	return out
}

// EndedRunStopped checks a later look at a run against one that showed it
// ended, with no follow-up between them: what the run accumulates
// (run_time, request_usage) stopped with it, and who executed it, its
// metadata and its kind stay as they were.
func EndedRunStopped(field, id string, before, now Look) []Violation {
	if !IsTerminal(before.State) {
		return nil
	}
	for _, f := range []struct {
		name string
		a, b any
	}{ // each held where both looks show it: a listing may show less
		{"run_time", before.RunTime, now.RunTime},
		{"request_usage", before.Usage, now.Usage},
		{"executor.uid", uidOf(before.Executor), uidOf(now.Executor)},
		{"metadata", before.Metadata, now.Metadata},
		{"is_run_type_cancellable", before.Cancellable, now.Cancellable},
	} {
		if f.a != nil && f.b != nil && !reflect.DeepEqual(f.a, f.b) {
			return []Violation{{Rule: EndedRunStopsCounting, Field: field + "." + f.name, RunID: id,
				Expected: Show(f.a) + " as when the run was seen " + before.State + " (" + before.Request + ")", Got: Show(f.b)}}
		}
	}
	return nil
}

// DerivedAlone checks the derived fields of one look at a run against
// their definitions:
//   - is_run_type_cancellable is false for LOCAL and GITHUB_ACTION runs
//     (and any run executed LOCAL), whatever the state;
//   - run_time is an ISO 8601 duration, and a run that has not started
//     (no started_at) has executed for no time;
//   - a run that ended after a single execution (restarted false: no
//     follow-up was accepted for it) cannot have executed longer than from
//     its started_at to its end (updated_at), within the units the
//     timestamps are shown in.
func DerivedAlone(field string, run map[string]any, restarted bool) []Violation {
	var out []Violation
	id := Str(run["run_id"])
	if c, ok := run["is_run_type_cancellable"].(bool); ok && c &&
		(slices.Contains(uncancellableSources, Str(run["source"])) || Str(run["execution_location"]) == "LOCAL") {
		out = append(out, Violation{Rule: DerivedFieldsAgree, Field: field + ".is_run_type_cancellable", RunID: id,
			Expected: "false for a " + Str(run["source"]) + " run (executed " + Str(run["execution_location"]) + "), which the service does not drive", Got: "true"})
	}
	raw, shown := run["run_time"]
	if !shown || raw == nil {
		return out
	}
	d, ok := isoDuration(Str(raw))
	switch {
	case !ok:
		out = append(out, Violation{Rule: DerivedFieldsAgree, Field: field + ".run_time", RunID: id,
			Expected: "an ISO 8601 duration such as PT2M30S", Got: Show(raw)})
	case d > 0 && run["started_at"] == nil:
		out = append(out, Violation{Rule: DerivedFieldsAgree, Field: field + ".run_time", RunID: id,
			Expected: "no time executed, since the run shows no started_at", Got: Show(raw)})
	case d > 0 && IsTerminal(Str(run["state"])) && !restarted:
		started, ok1 := timeOf(run, "started_at")
		ended, ok2 := timeOf(run, "updated_at")
		slack := ShownUnit(Str(run["started_at"])) + ShownUnit(Str(run["updated_at"])) + shownDurationUnit(Str(raw))
		if ok1 && ok2 && d > ended.Sub(started)+slack {
			out = append(out, Violation{Rule: DerivedFieldsAgree, Field: field + ".run_time", RunID: id,
				Expected: "at most " + ended.Sub(started).String() + ", from started_at " + Str(run["started_at"]) + " to its end at updated_at " + Str(run["updated_at"]),
				Got:      Show(raw)})
		}
	}
	return out
}

// OnBehalfOf checks a look at a run created with on_behalf_of=member: the
// member is its creator (by uid or email) and the caller, not the member,
// executed it. An executor left out is the creator, which contradicts the
// request.
func OnBehalfOf(field, member string, run map[string]any) []Violation {
	if member == "" {
		return nil
	}
	id := Str(run["run_id"])
	uid, _ := Lookup(run, "creator.uid")
	email, _ := Lookup(run, "creator.email")
	if _, shown := run["creator"]; shown && Str(uid) != member && Str(email) != member {
		return []Violation{{Rule: OnBehalfOfCreator, Field: field + ".creator", RunID: id,
			Expected: "the member named by on_behalf_of=" + member, Got: Show(run["creator"])}}
	}
	if executorOf(run) == Str(uid) {
		return []Violation{{Rule: OnBehalfOfCreator, Field: field + ".executor", RunID: id,
			Expected: "the caller that created the run on " + member + "'s behalf, not the member", Got: Show(run["executor"])}}
	}
	return nil
}

// executorOf is who executed a run: executor.uid, or, when the run shows
// no executor, its creator (a run without an executor is executed by whoever
// created it).
func executorOf(run map[string]any) string {
	if uid, ok := Lookup(run, "executor.uid"); ok && Str(uid) != "" {
		return Str(uid)
	}
	uid, _ := Lookup(run, "creator.uid")
	return Str(uid)
}

// AncestorListing checks a page listed with ancestor_run_id=P: it holds
// P's descendants, never P itself. parentOf tells the parent of a run when
// it is known ("" for a run known to have none); a run whose line of
// parents is known up to its root without meeting P is no descendant.
func AncestorListing(q map[string][]string, runs []map[string]any, parentOf func(id string) (string, bool)) []Violation {
	p := ""
	if v := q["ancestor_run_id"]; len(v) > 0 {
		p = v[0]
	}
	if p == "" {
		return nil
	}
	var out []Violation
	for i, run := range runs {
		id := Str(run["run_id"])
		if id == p {
			out = append(out, Violation{Rule: AncestorNotItsOwn, Field: at("body.runs", i) + ".run_id", RunID: id,
				Expected: "descendants of ancestor_run_id=" + p + ", not the run itself", Got: Show(id)})
			continue
		}
		line := []string{}
		cur, ok := Str(run["parent_run_id"]), true
		if _, shown := run["parent_run_id"]; !shown {
			cur, ok = parentOf(id)
		}
		for ok && cur != "" && cur != p && len(line) < maxAncestry {
			line = append(line, cur)
			cur, ok = parentOf(cur)
		}
		if ok && cur == "" {
			out = append(out, Violation{Rule: AncestorNotItsOwn, Field: at("body.runs", i) + ".parent_run_id", RunID: id,
				Expected: "a run descended from ancestor_run_id=" + p, Got: "a run whose line of parents " + Show(line) + " ends without it"})
		}
	}
	return out
}

// maxAncestry bounds how far up a line of parents is followed.
const maxAncestry = 100

// EmptyFilterAnswer judges a listing asked with an empty filter value on
// who executed or created a run (executor=, creator=: no one has an empty
// uid) against the same listing asked without it: an empty value is no
// filter, or the request is refused with a 400. (Metadata values may be
// empty, so metadata[k]= and automation_id= may match them.) status is the
// answer's status; listed and unfiltered are the run ids of the two answers
// (same other filters, same moment as far as the caller can tell).
func EmptyFilterAnswer(param string, status int, listed, unfiltered []string) []Violation {
	if status == 400 || status < 200 || status > 299 {
		return nil
	}
	a, b := slices.Clone(listed), slices.Clone(unfiltered)
	slices.Sort(a)
	slices.Sort(b)
	if slices.Equal(a, b) {
		return nil
	}
	return []Violation{{Rule: EmptyFilterIsNoFilter, Field: "body.runs",
		Expected: "with " + param + "= (empty) the runs listed without it, " + Show(b) + ", or a 400",
		Got:      Show(a)}}
}

// usageFigures are the numeric leaves of a request_usage object, as dotted
// paths, in a stable order.
func usageFigures(v any) []string {
	var out []string
	var walk func(prefix string, o map[string]any)
	walk = func(prefix string, o map[string]any) {
		for k, x := range o {
			switch x := x.(type) {
			case float64:
				out = append(out, prefix+k)
			case map[string]any:
				walk(prefix+k+".", x)
			}
		}
	}
	walk("", asObject(v))
	slices.Sort(out)
	return out
}

// sameObject reports whether a and b are the very same decoded JSON
// object (not merely equal ones).
func sameObject(a, b any) bool {
	x, ok := a.(map[string]any)
	y, ok2 := b.(map[string]any)
	return ok && ok2 && x != nil && reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer()
}

// uidOf is the uid of a creator or executor object, nil when none is shown:
// a listing may show less of a person than the run's details do.
func uidOf(v any) any {
	if uid, ok := asObject(v)["uid"]; ok {
		return uid
	}
	return nil
}

func asObject(v any) map[string]any { o, _ := v.(map[string]any); return o }

// shownDurationUnit is the unit of the last digit of an ISO 8601 duration
// ("PT2.345S": a millisecond; "PT2M": a minute).
func shownDurationUnit(s string) time.Duration {
	if len(s) == 0 {
		return time.Second
	}
	switch s[len(s)-1] {
	case 'M':
		return time.Minute
	case 'H':
		return time.Hour
	case 'D':
		return 24 * time.Hour
	}
	return ShownUnit("x" + s[:len(s)-1]) // the fraction of seconds, as for a timestamp
}
