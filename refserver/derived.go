package refserver

import (
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// The newest client's derived fields of a run (is_run_type_cancellable,
// run_time, executor), and the choices the client leaves open about them,
// each a switch of Options.

// runItem is the run as the API shows it, with its derived fields.
func (s *Server) runItem(r *run, now time.Time) map[string]any {
	m := r.item(now)
	m["is_run_type_cancellable"] = r.source != "LOCAL" && r.source != "GITHUB_ACTION" && r.location != "LOCAL"
	m["run_time"] = isoDuration(r.runTime(now, s.opts.LiveRunTime))
	if s.opts.ExecutorOnlyWhenDelegated {
		delete(m, "executor") // this server never delegates: the creator executed every run
	}
	return m
}

// runTime is how long the run has executed, summed over its executions:
// the time each spent working (INPROGRESS, or BLOCKED waiting for its
// user) up to its next change. The state the run is in now counts up to
// its start, so that run_time changes only when the run does, or, live,
// up to now while the run works.
func (r *run) runTime(now time.Time, live bool) time.Duration {
	seen := r.seen(now)
	var d time.Duration
	for i, p := range seen {
		if p.state != "INPROGRESS" && p.state != "BLOCKED" {
			continue
		}
		switch {
		case i+1 < len(seen):
			d += seen[i+1].at.Sub(p.at)
		case live:
			d += now.Sub(p.at)
		}
	}
	return d
}

// isoDuration shows d as an ISO 8601 duration in seconds, to the
// millisecond: "PT2.345S".
func isoDuration(d time.Duration) string {
	return fmt.Sprintf("PT%.3fS", d.Seconds())
}

// refuseEmptyFilter answers 400 to a filter on who executed or created a
// run given an empty value, under Options.EmptyFilterRefused; it tells
// whether it did.
func (s *Server) refuseEmptyFilter(w http.ResponseWriter, r *http.Request, vals url.Values) bool {
	if !s.opts.EmptyFilterRefused {
		return false
	}
	for _, param := range []string{"executor", "creator"} {
		if vals.Has(param) && vals.Get(param) == "" {
			writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request", param+" must name a user or agent uid; leave it out to list every run")
			return true
		}
	}
	return false
}
