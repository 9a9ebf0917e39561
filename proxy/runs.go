package proxy

import (
	"container/list"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentruns/agentruns/internal/scrub"
	"github.com/agentruns/agentruns/rules"
)

// The runs the proxy saw: the latest look at each run an answer showed (a
// page of runs, a run's details), without its secrets (package scrub), at
// most seenRunsLimit of them, the least recently seen forgotten first. The
// dashboard reads them from here (GET /__mock/proxy/runs): behind the
// proxy the page shows the traffic that passed, and sends the upstream
// nothing of its own, neither a request nor a key.

// seenRunsLimit is the most runs kept: the dashboard shows a page of 100.
// They are held to seenRunsBytes of JSON too, the least recently seen
// forgotten first, and a run over seenRunBytes is not kept at all (it is
// counted): 500 runs of a 4 MiB answer each would be 2 GiB.
const (
	seenRunsLimit = 500
	seenRunsBytes = 16 << 20
	seenRunBytes  = 256 << 10
)

type seenRuns struct {
	mu      sync.Mutex
	byID    map[string]*list.Element // of *seenRun
	order   *list.List               // most recently seen first
	bytes   int
	tooLong int // runs not kept, each over seenRunBytes
}

type seenRun struct {
	id      string
	created time.Time
	run     json.RawMessage // kept as JSON: a decoded run costs several times its text
}

func newSeenRuns() *seenRuns {
	return &seenRuns{byID: map[string]*list.Element{}, order: list.New()}
}

// observe keeps the runs a successful read of runs shows.
func (s *seenRuns) observe(ex rules.Exchange) {
	if ex.Method != http.MethodGet || ex.Status != http.StatusOK || !strings.HasPrefix(ex.Path, "/agent/runs") {
		return
	}
	var runs []map[string]any
	switch rest := strings.TrimPrefix(ex.Path, "/agent/runs"); {
	case rest == "":
		var page struct {
			Runs []map[string]any `json:"runs"`
		}
		if json.Unmarshal(ex.Body, &page) != nil {
			return
		}
		runs = page.Runs
	case strings.Count(rest, "/") == 1:
		var run map[string]any
		if json.Unmarshal(ex.Body, &run) != nil {
			return
		}
		runs = []map[string]any{run}
	default:
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, run := range runs {
		id, _ := run["run_id"].(string)
		if id == "" {
			continue
		}
		created, _ := run["created_at"].(string)
		at, _ := time.Parse(time.RFC3339Nano, created)
		clean := scrub.Value(run).(map[string]any)
		b, _ := json.Marshal(clean)
		if len(b) > seenRunBytes {
			s.tooLong++
			continue
		}
		seen := &seenRun{id: id, created: at, run: b}
		if e, ok := s.byID[id]; ok {
			s.bytes -= e.Value.(*seenRun).size()
			e.Value = seen
			s.order.MoveToFront(e)
		} else {
			s.byID[id] = s.order.PushFront(seen)
		}
		s.bytes += seen.size()
		for s.order.Len() > seenRunsLimit || s.bytes > seenRunsBytes {
			last := s.order.Back()
			s.order.Remove(last)
			s.bytes -= last.Value.(*seenRun).size()
			delete(s.byID, last.Value.(*seenRun).id)
		}
	}
}

// size is about what r costs kept.
func (r *seenRun) size() int { return len(r.run) + len(r.id) + 128 }

// page is the newest n runs seen, newest first as the API lists them,
// shaped as GET /agent/runs answers.
func (s *seenRuns) page(n int) map[string]any {
	s.mu.Lock()
	all := make([]*seenRun, 0, s.order.Len())
	for e := s.order.Front(); e != nil; e = e.Next() {
		all = append(all, e.Value.(*seenRun))
	}
	s.mu.Unlock()
	sort.SliceStable(all, func(i, j int) bool { return all[i].created.After(all[j].created) })
	runs := make([]json.RawMessage, 0, min(n, len(all)))
	for _, r := range all[:min(n, len(all))] {
		runs = append(runs, r.run)
	}
	return map[string]any{"runs": runs, "page_info": map[string]any{"has_next_page": len(all) > n}}
}

// get is the latest look at run id.
func (s *seenRuns) get(id string) (json.RawMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byID[id]
	if !ok {
		return nil, false
	}
	return e.Value.(*seenRun).run, true
}
