package rules

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Every run a filtered listing shows must match every filter of the query
// (they combine with AND). Only the filters whose value a run shows are
// held, and only when the run shows it: state, name (agent_config.name),
// model_id, creator (creator.uid), executor (executor.uid, or creator.uid
// for a run that shows no executor: it executed its own run), source,
// environment_id, schedule_id (schedule.schedule_id), the metadata pairs
// (metadata[key]=value, and automation_id, which is the pair of the key
// automation_id) where the run shows its metadata, and the time bounds,
// which are strict: a run created at the very instant of created_after is
// not "created after" it. factory_uid keeps only runs executed by an agent
// of the factory: a run shown executed by a person (executor.type "user")
// matches none. skill_spec and q are left out: what a run shows of its
// skill and what a loose search matches are the server's to choose.
//
// No precision of timestamps is promised: a server may keep microseconds
// and show milliseconds, so a run shown at 30.910Z may have been created at
// 30.9105 and rightly be "after" created_after=30.910Z. A run is judged on
// the wrong side of a bound only when every instant its timestamp may stand
// for, within one unit of its last shown digit, is.

var exactFilters = []struct{ param, field string }{
	{"name", "agent_config.name"},
	{"model_id", "agent_config.model_id"},
	{"creator", "creator.uid"},
	{"source", "source"},
	{"environment_id", "agent_config.environment_id"},
	{"schedule_id", "schedule.schedule_id"},
}

var timeFilters = []struct {
	param, field string
	after        bool
}{
	{"created_after", "created_at", true},
	{"created_before", "created_at", false},
	{"updated_after", "updated_at", true},
}

// ListingMatchesQuery checks each run of a page against the filters of q.
func ListingMatchesQuery(q url.Values, runs []map[string]any) []Violation {
	var out []Violation
	for i, run := range runs {
		field, id := at("body.runs", i), Str(run["run_id"])
		if states := q["state"]; len(states) > 0 {
			st, in := Str(run["state"]), false
			for _, s := range states {
				in = in || s == st
			}
			if !in {
				out = append(out, Violation{Rule: ListingMatchesFilters, Field: field + ".state", RunID: id,
					Expected: "one of state=" + strings.Join(states, ","), Got: st})
			}
		}
		for _, f := range exactFilters {
			want := q.Get(f.param)
			if want == "" {
				continue
			}
			if got, ok := Lookup(run, f.field); ok && got != nil && Str(got) != want {
				out = append(out, Violation{Rule: ListingMatchesFilters, Field: field + "." + f.field, RunID: id,
					Expected: f.param + "=" + want, Got: Show(got)})
			}
		}
		// A run that shows no executor was executed by its creator.
		if want := q.Get("executor"); want != "" {
			if got := executorOf(run); got != "" && got != want {
				out = append(out, Violation{Rule: ListingMatchesFilters, Field: field + ".executor.uid", RunID: id,
					Expected: "executor=" + want + " (the run's executor, or its creator when it shows none)", Got: Show(got)})
			}
		}
		out = append(out, metadataMatches(q, field, id, run)...)
		if factory := q.Get("factory_uid"); factory != "" {
			if kind, _ := Lookup(run, "executor.type"); kind == "user" {
				out = append(out, Violation{Rule: ListingMatchesFilters, Field: field + ".executor.type", RunID: id,
					Expected: "a run executed by an agent of factory_uid=" + factory, Got: `"user", a run executed by a person`})
			}
		}
		for _, f := range timeFilters {
			raw := q.Get(f.param)
			if raw == "" {
				continue
			}
			bound, err := time.Parse(time.RFC3339Nano, raw)
			if err != nil {
				continue // the request check says so
			}
			t, ok := timeOf(run, f.field)
			if !ok {
				continue
			}
			unit := ShownUnit(Str(run[f.field]))
			if f.after && !t.Add(unit).After(bound) || !f.after && !t.Add(-unit).Before(bound) {
				side := map[bool]string{true: "after", false: "before"}[f.after]
				out = append(out, Violation{Rule: ListingMatchesFilters, Field: field + "." + f.field, RunID: id,
					Expected: "strictly " + side + " " + f.param + "=" + raw, Got: Str(run[f.field])})
			}
		}
	}
	return out
}

// metadataMatches checks a run that shows its metadata against the
// metadata[key]=value pairs of q and its automation_id, in key order.
func metadataMatches(q url.Values, field, id string, run map[string]any) []Violation {
	shown, ok := run["metadata"].(map[string]any)
	if !ok {
		return nil // no metadata shown: nothing to hold it to
	}
	type pair struct{ param, key, want string }
	var pairs []pair
	for param, values := range q {
		key, isPair := strings.CutPrefix(param, "metadata[")
		key, closed := strings.CutSuffix(key, "]")
		if isPair && closed && len(values) > 0 {
			pairs = append(pairs, pair{param, key, values[0]})
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int { return strings.Compare(a.param, b.param) })
	if want := q.Get("automation_id"); want != "" {
		pairs = append(pairs, pair{"automation_id", "automation_id", want})
	}
	var out []Violation
	for _, p := range pairs {
		if got, has := shown[p.key]; !has || Str(got) != p.want {
			out = append(out, Violation{Rule: ListingMatchesFilters, Field: field + ".metadata." + p.key, RunID: id,
				Expected: p.param + "=" + p.want, Got: Show(got)})
		}
	}
	return out
}

// ShownUnit is the unit of the last digit a timestamp shows: a millisecond
// for "2026-01-02T03:04:05.123Z", a second for "2026-01-02T03:04:05Z".
func ShownUnit(raw string) time.Duration {
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

// SortedBy says how a listing query asks its runs to be ordered: the field
// (updated_at unless sort_by says otherwise) and whether newest first (desc
// unless sort_order=asc).
func SortedBy(q url.Values) (field string, newestFirst bool) {
	field = q.Get("sort_by")
	if field == "" {
		field = "updated_at"
	}
	return field, q.Get("sort_order") != "asc"
}

// ListingInOrder checks a page sorted by created_at: each run no newer
// (newest first) or no older (oldest first) than the one before. Pages
// sorted by updated_at are not held to it: a run may change while the
// server builds the page, and the document does not say which instant a
// page shows. Titles and agents sort by a collation that is the server's.
func ListingInOrder(q url.Values, runs []map[string]any) []Violation {
	field, newestFirst := SortedBy(q)
	if field != "created_at" {
		return nil
	}
	var prev time.Time
	var prevID string
	for i, run := range runs {
		t, ok := timeOf(run, field)
		if !ok {
			return nil
		}
		if i > 0 && (newestFirst && t.After(prev) || !newestFirst && t.Before(prev)) {
			order, than := "newest first", "newer"
			if !newestFirst {
				order, than = "oldest first", "older"
			}
			return []Violation{{Rule: ListingOrdered, Field: at("body.runs", i) + "." + field, RunID: Str(run["run_id"]),
				Expected: "runs " + order + " by " + field + ": not " + than + " than run " + prevID + " above it (" + prev.Format(time.RFC3339Nano) + ")",
				Got:      Str(run[field])}}
		}
		prev, prevID = t, Str(run["run_id"])
	}
	return nil
}

// ProblemStatus checks that a problem document's status, when it has one,
// is the HTTP status it came with.
func ProblemStatus(status int, problem map[string]any) []Violation {
	v, ok := problem["status"]
	if !ok || v == nil {
		return nil
	}
	if n, isNum := v.(float64); isNum && int(n) == status {
		return nil
	}
	return []Violation{{Rule: ProblemStatusMatches, Field: "body.status",
		Expected: Show(status) + " (the HTTP status)", Got: Show(v)}}
}

// Refused checks the answer to a request the document does not allow
// (issues say why): the server must refuse it with a 4xx. A request off the
// document is the client's to fix; answering it as if it were fine is the
// server's fault. (A 5xx is a failure of another kind, not an acceptance.)
func Refused(status int, issues []string) []Violation {
	if status >= 400 || len(issues) == 0 {
		return nil
	}
	return []Violation{{Rule: InvalidRequestRefused, Field: "status",
		Expected: "a 4xx refusing a request the document does not allow (" + issues[0] + ")", Got: strconv.Itoa(status)}}
}

// DefaultPageSize is the document's default limit of a page of runs.
const DefaultPageSize = 20

// PageWithin checks that a page holds no more runs than its limit.
func PageWithin(q url.Values, runs []map[string]any) []Violation {
	limit := DefaultPageSize
	if raw := q.Get("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n <= 0 {
			return nil // the request check says what is wrong
		}
		limit = n
	}
	if len(runs) <= limit {
		return nil
	}
	what := "limit=" + strconv.Itoa(limit)
	if q.Get("limit") == "" {
		what = "the default limit of " + strconv.Itoa(DefaultPageSize) + " (no limit given)"
	}
	return []Violation{{Rule: PageWithinLimit, Field: "body.runs",
		Expected: "at most " + strconv.Itoa(limit) + " runs, " + what, Got: strconv.Itoa(len(runs)) + " runs"}}
}

// IsTheOneAsked checks that an object fetched by id carries that id in
// its field idField.
func IsTheOneAsked(idField, asked string, obj map[string]any) []Violation {
	got, ok := obj[idField]
	if !ok || Str(got) == asked {
		return nil // a missing id is the document check's to report
	}
	return []Violation{{Rule: AnswerIsTheOneAsked, Field: "body." + idField, RunID: runIfRun(idField, asked),
		Expected: Show(asked) + ", the id in the path", Got: Show(got)}}
}

func runIfRun(field, id string) string {
	if field == "run_id" {
		return id
	}
	return ""
}
