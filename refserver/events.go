package refserver

import (
	"net/http"
	"sort"
	"strconv"
	"time"
)

// Run events, as the published document describes GET /agent/events: the
// events of the named runs after a sequence, oldest first. This server
// numbers an event the first time any poll could see it, from a counter
// that starts far from 1, and stamps it with nanoseconds: both differ from
// the bundled mock and both are allowed.

var eventOf = map[string]string{
	"INPROGRESS": "run_in_progress", "BLOCKED": "run_blocked", "SUCCEEDED": "run_succeeded",
	"FAILED": "run_failed", "ERROR": "run_errored", "CANCELLED": "run_cancelled",
}

type event struct {
	kind  string
	runID string
	at    time.Time
	seq   int64
}

// eventKey names an event before it has a sequence: a run's phase, or -1
// for its cancel.
type eventKey struct {
	runID string
	phase int
}

// recordEvents numbers every event that has happened by now and has no
// number yet, oldest first. Called with s.mu held.
func (s *Server) recordEvents(now time.Time) {
	if s.numbered == nil {
		s.numbered = map[eventKey]bool{}
		s.nextEvent = 7000
	}
	var fresh []event
	var keys []eventKey
	// With EventLag, an event shows only once that long has passed since
	// its state began.
	seen := now.Add(-s.opts.EventLag)
	for _, r := range s.all {
		cancelAt := r.cancelAt()
		for i, p := range r.phases {
			if p.at.After(seen) || !cancelAt.IsZero() && p.at.After(r.cancelAccepted) {
				break
			}
			k := eventKey{r.id, i}
			if kind, ok := eventOf[p.state]; ok && !s.numbered[k] {
				fresh, keys = append(fresh, event{kind: kind, runID: r.id, at: p.at}), append(keys, k)
			}
		}
		if k := (eventKey{r.id, -1}); !cancelAt.IsZero() && !cancelAt.After(seen) && !s.numbered[k] {
			fresh, keys = append(fresh, event{kind: "run_cancelled", runID: r.id, at: cancelAt}), append(keys, k)
		}
	}
	order := make([]int, len(fresh))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return fresh[order[a]].at.Before(fresh[order[b]].at) })
	for _, i := range order {
		s.nextEvent += 3 // sequences only grow; they need not be consecutive
		fresh[i].seq = s.nextEvent
		s.numbered[keys[i]] = true
		s.events = append(s.events, fresh[i])
	}
}

func (s *Server) pollEvents(w http.ResponseWriter, r *http.Request, c caller) {
	q := r.URL.Query()
	ids := q["run_ids"]
	if len(ids) == 0 {
		writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request", "run_ids is required")
		return
	}
	since, limit := int64(0), 100
	if v := q.Get("since"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request", "since must be an integer")
			return
		}
		since = n
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request", "limit must be from 1 to 500")
			return
		}
		limit = n
	}
	want := map[string]bool{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if _, ok := s.visible(w, r, c, id); !ok {
			return
		}
		want[id] = true
	}
	s.recordEvents(s.now())
	out := []any{}
	for _, e := range s.events {
		if e.seq > since && want[e.runID] && len(out) < limit {
			out = append(out, map[string]any{"event_type": e.kind, "run_id": e.runID, "ref_id": nil,
				"execution_id": nil, "occurred_at": stamp(e.at), "sequence": e.seq})
		}
	}
	writeJSON(w, http.StatusOK, out)
}
