package proxy

import (
	"container/list"
	"encoding/json"
	"hash/maphash"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentruns/agentruns/internal/scrub"
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
	// from is the answer the look came from (a digest of its bytes) and
	// at its place in it: the same answer again shows the same look, kept
	// already, so it is not taken out of its secrets and encoded again (a
	// client polling a run, or a page, that has not changed).
	from uint64
	at   int
}

func newSeenRuns() *seenRuns {
	return &seenRuns{byID: map[string]*list.Element{}, order: list.New()}
}

// digestSeed makes the digests of answers (seenRun.from).
var digestSeed = maphash.MakeSeed()

// observe keeps the runs a successful read of runs shows, from the
// exchange's decoded answer.
func (s *seenRuns) observe(e *exchange) {
	ex := e.ex
	if ex.Method != http.MethodGet || ex.Status != http.StatusOK || !strings.HasPrefix(ex.Path, "/agent/runs") || !e.answerOK {
		return
	}
	var runs []map[string]any
	switch rest := strings.TrimPrefix(ex.Path, "/agent/runs"); {
	case rest == "":
		var ok bool
		if runs, ok = runsOfPage(e.answer); !ok {
			return
		}
	case strings.Count(rest, "/") == 1:
		switch run := e.answer.(type) {
		case nil:
			return // null: no run
		case map[string]any:
			runs = []map[string]any{run}
		default:
			return
		}
	default:
		return
	}
	from := maphash.Bytes(digestSeed, e.body)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, run := range runs {
		id, _ := run["run_id"].(string)
		if id == "" {
			continue
		}
		if el, ok := s.byID[id]; ok {
			if kept := el.Value.(*seenRun); kept.from == from && kept.at == i {
				s.order.MoveToFront(el)
				continue
			}
		}
		created, _ := run["created_at"].(string)
		at, _ := time.Parse(time.RFC3339Nano, created)
		clean := scrub.Value(run).(map[string]any)
		b, _ := json.Marshal(clean)
		if len(b) > seenRunBytes {
			s.tooLong++
			continue
		}
		seen := &seenRun{id: id, created: at, run: b, from: from, at: i}
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

// runsOfPage reads a page of runs as encoding/json reads it into a struct
// with a runs []map[string]any: ok is false where Unmarshal failed.
func runsOfPage(answer any) (runs []map[string]any, ok bool) {
	page, isObject := answer.(map[string]any)
	if !isObject {
		return nil, answer == nil
	}
	list, found := page["runs"]
	if !found {
		for k, v := range page {
			if strings.EqualFold(k, "runs") {
				list = v
				break
			}
		}
	}
	switch list := list.(type) {
	case nil:
		return nil, true
	case []any:
		runs = make([]map[string]any, len(list))
		for i, r := range list {
			switch r := r.(type) {
			case nil:
			case map[string]any:
				runs[i] = r
			default:
				return nil, false
			}
		}
		return runs, true
	}
	return nil, false
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
