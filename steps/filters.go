package steps

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Every run a filtered listing shows must match every filter of the query
// (they combine with AND). Like the rules of invariants.go, this is checked
// on every page the suite lists, in every mode, so that a server that drops
// a filter fails on its own runs too, not only on the runs a scenario made
// for the purpose.
//
// Only the document's filters whose value a run shows are checked, and only
// when the run shows it: state, name (agent_config.name), model_id
// (agent_config.model_id), creator (creator.uid), source, environment_id
// (agent_config.environment_id), and the time bounds, which are strict:
// a run created at the very instant of created_after is not "created
// after" it. skill_spec and q are left out: what a run shows of its skill
// and what a fuzzy search matches are the server's to choose.
//
// No precision of timestamps is promised: a server may keep microseconds
// and show milliseconds, so a run shown at 30.910Z may have been created at
// 30.9105 and rightly be "after" created_after=30.910Z. A run is judged on
// the wrong side of a bound only when every instant its timestamp may stand
// for, within one unit of its last shown digit, is. (The scenarios tagged
// @exact-timestamps test the bounds at the very instant; see
// list_rules.feature.)

// exactFilters maps a filter to the run field it matches exactly.
var exactFilters = []struct{ param, field string }{
	{"name", "agent_config.name"},
	{"model_id", "agent_config.model_id"},
	{"creator", "creator.uid"},
	{"source", "source"},
	{"environment_id", "agent_config.environment_id"},
}

// timeFilters are the strict bounds on a run's timestamps.
var timeFilters = []struct {
	param, field string
	after        bool
}{
	{"created_after", "created_at", true},
	{"created_before", "created_at", false},
	{"updated_after", "updated_at", true},
}

// matchesFilters checks one listed run against the filters of q.
func matchesFilters(q url.Values, run map[string]any) error {
	var errs []error
	what := "run " + str(run["run_id"])
	if states := q["state"]; len(states) > 0 {
		st, in := str(run["state"]), false
		for _, s := range states {
			in = in || s == st
		}
		if !in {
			errs = append(errs, fmt.Errorf("%s is %s, which is none of the states asked for (state=%v)", what, st, states))
		}
	}
	for _, f := range exactFilters {
		want := q.Get(f.param)
		if want == "" {
			continue
		}
		if got, ok := lookup(run, f.field); ok && got != nil && str(got) != want {
			errs = append(errs, fmt.Errorf("%s has %s %s, but the listing asked for %s=%s", what, f.field, show(got), f.param, want))
		}
	}
	for _, f := range timeFilters {
		raw := q.Get(f.param)
		if raw == "" {
			continue
		}
		bound, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil {
			continue // the suite sent it on purpose; the server's answer is judged elsewhere
		}
		t, err := timestamp(run, f.field)
		if err != nil {
			continue // the OpenAPI check says so
		}
		unit := shownUnit(str(mustLookup(run, f.field)))
		if f.after && !t.Add(unit).After(bound) || !f.after && !t.Add(-unit).Before(bound) {
			side := map[bool]string{true: "after", false: "before"}[f.after]
			errs = append(errs, fmt.Errorf("%s has %s %s, which is not strictly %s %s=%s", what, f.field, t.Format(time.RFC3339Nano), side, f.param, raw))
		}
	}
	return errors.Join(errs...)
}

// shownUnit is the unit of the last digit a timestamp shows: a millisecond
// for "2026-01-02T03:04:05.123Z", a second for "2026-01-02T03:04:05Z".
func shownUnit(raw string) time.Duration {
	_, frac, ok := strings.Cut(raw, ".")
	if !ok {
		return time.Second
	}
	digits := 0
	for _, c := range frac {
		if c < '0' || c > '9' {
			break
		}
		digits++
	}
	unit := time.Second
	for range min(digits, 9) {
		unit /= 10
	}
	return unit
}
