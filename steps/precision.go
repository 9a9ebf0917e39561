package steps

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/agentruns/agentruns/rules"
)

// The document promises no precision of timestamps: a server may keep an
// instant to the nanosecond and show it to the millisecond or the second.
// A run shown created at 10:00:01 may then have been created at any moment
// of that second, and whether created_after=10:00:01 keeps it is not
// decided by what the suite can see. The suite judges an instant only
// where the digits shown make it unambiguous, and calls the rest
// inconclusive: neither failed nor passed.
//
// A server is known to keep what it shows when its operator says so
// (Config.ExactTimestamps) or when it is the bundled mock, found by its
// control API, which keeps and shows milliseconds.

// timestampsAsShown tells whether the server keeps its instants exactly as
// it shows them.
func (s *scenario) timestampsAsShown() bool {
	return s.suite.cfg.ExactTimestamps || s.api.control != nil
}

// uncertainty is how far the instant a server keeps may lie from a
// timestamp as shown, either way (it may cut the digits off or round
// them): nothing when it keeps what it shows, the unit of the last digit
// shown otherwise.
func (s *scenario) uncertainty(shown string) time.Duration {
	if s.timestampsAsShown() {
		return 0
	}
	return rules.ShownUnit(shown)
}

// instantBetween is an instant surely after the creation of run a and
// before that of run b, whatever the server keeps beyond the digits it
// shows; inconclusive when the shown digits leave no such instant.
func (s *scenario) instantBetween(ctx context.Context, a, b string) (string, error) {
	docA, err := s.detailsOf(ctx, a)
	if err != nil {
		return "", err
	}
	docB, err := s.detailsOf(ctx, b)
	if err != nil {
		return "", err
	}
	ta, err := timestamp(docA, "created_at")
	if err != nil {
		return "", err
	}
	tb, err := timestamp(docB, "created_at")
	if err != nil {
		return "", err
	}
	if s.timestampsAsShown() && !ta.Before(tb) {
		return "", fmt.Errorf("run %s was created at %s, not before run %s at %s", a, ta.Format(time.RFC3339Nano), b, tb.Format(time.RFC3339Nano))
	}
	// A server that drops trailing zeros (RFC 3339 allows it) shows 41.4
	// for 41.400: the finer of the two shows its precision.
	unit := min(s.uncertainty(str(docA["created_at"])), s.uncertainty(str(docB["created_at"])))
	earliest := ta.Add(unit)
	latest := tb.Add(-unit)
	if latest.Before(earliest) {
		return "", s.inconclusive(fmt.Sprintf("runs %s and %s show created_at %s and %s: at the precision shown, no instant lies surely between their creations, "+
			"as the server may keep more digits than it shows (--exact-timestamps says it does not)", a, b, str(docA["created_at"]), str(docB["created_at"])))
	}
	return earliest.Add(latest.Sub(earliest) / 2).UTC().Format(time.RFC3339Nano), nil
}

// timeBounds are the list filters that bound an instant of a run.
var timeBounds = []struct{ param, field string }{
	{"created_after", "created_at"}, {"created_before", "created_at"}, {"updated_after", "updated_at"},
}

// ambiguousListing says why a listing that does not hold the runs wanted
// may still be right: every run missing or too many shows, for some time
// bound of the query, a timestamp whose hidden digits could put it on
// either side of the bound. It returns "" when some run is out of place
// for certain, or nothing was out of place.
func (s *scenario) ambiguousListing(ctx context.Context, l *listing, want []*trackedRun) string {
	if s.timestampsAsShown() || l.err != nil {
		return ""
	}
	q, err := url.ParseQuery(l.query)
	if err != nil {
		return ""
	}
	listed := map[string]map[string]any{}
	for _, run := range l.runs {
		listed[str(run["run_id"])] = run
	}
	var out []map[string]any // the runs out of place, as last seen
	wanted := map[string]bool{}
	for _, r := range want {
		wanted[r.id] = true
		if listed[r.id] != nil {
			continue
		}
		doc := r.details
		if doc == nil {
			if doc, err = s.fetch(ctx, r); err != nil {
				return ""
			}
		}
		out = append(out, doc)
	}
	for id, run := range listed {
		if !wanted[id] {
			out = append(out, run)
		}
	}
	if len(out) == 0 {
		return ""
	}
	var why []string
	for _, run := range out {
		reason := s.ambiguousRun(q, run)
		if reason == "" {
			return ""
		}
		why = append(why, reason)
	}
	return strings.Join(why, "; ") + ": the server may keep more digits than it shows (--exact-timestamps says it does not)"
}

// ambiguousRun says which time bound of q a run's shown timestamp leaves
// undecided, "" when none does.
func (s *scenario) ambiguousRun(q url.Values, run map[string]any) string {
	for _, b := range timeBounds {
		raw := q.Get(b.param)
		bound, err := time.Parse(time.RFC3339Nano, raw)
		if raw == "" || err != nil {
			continue
		}
		t, err := timestamp(run, b.field)
		if err != nil {
			continue
		}
		u := s.uncertainty(str(run[b.field]))
		if d := t.Sub(bound); d > -u && d < u {
			return fmt.Sprintf("run %s shows %s %s, which at that precision may lie on either side of %s=%s",
				s.mine.nick(str(run["run_id"])), b.field, str(run[b.field]), b.param, raw)
		}
	}
	return ""
}
