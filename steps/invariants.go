package steps

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentruns/agentruns/rules"
)

// Rules that hold for any run at any time. Every run the suite sees, listed
// or fetched, in every mode (read-only included), is held to them, so that a
// server full of real runs is checked on all of them, not only on the runs
// the scenarios create.
//
// What the published document promises, and so what is checked (the rules
// themselves are the rules package's, shared with the validating proxy):
//   - a FAILED or ERROR run carries a status_message with a message and an
//     error_code ("for terminal error states, includes structured error
//     code");
//   - started_at ("when the agent started working") is null or absent while
//     the run is QUEUED or PENDING, set while it is INPROGRESS or BLOCKED, and
//     never before created_at;
//   - created_at is not after updated_at;
//   - a run seen in a terminal state never changes afterwards;
//   - the states seen over time only move forward (BLOCKED and INPROGRESS
//     may alternate).
//
// The document does not promise session_link at any state ("URL to view
// the agent session", optional), so it is not checked here.

// sighting is one look at a run: what the server said, and when the suite
// asked and heard, so that two looks whose requests overlapped in time are
// not ordered.
type sighting struct {
	doc        map[string]any
	sent, recv time.Time
	op         string
}

// ledger remembers the last sighting of every run the suite has seen, for
// the whole run of the suite; scenarios share it, so it is safe for
// concurrent use. Runs are keyed by mock session too: each session of the
// mock is a world of its own.
type ledger struct {
	mu   sync.Mutex
	last map[string]sighting
}

func newLedger() *ledger { return &ledger{last: map[string]sighting{}} }

// forget drops what is known of a run, after the mock's control API has put
// it into a state by fiat.
func (l *ledger) forget(session, runID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.last, session+"/"+runID)
}

// terminalSince returns the sighting of a run in a terminal state, if the
// suite has seen it so.
func (l *ledger) terminalSighting(session, runID string) (sighting, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.last[session+"/"+runID]
	return s, ok && isTerminal(str(s.doc["state"]))
}

// see checks one run against the rules of a single look and against what
// was seen of it before, then remembers it.
func (l *ledger) see(session string, now sighting) error {
	id := str(now.doc["run_id"])
	errs := []error{runRules(id, now.doc)}
	if id == "" {
		return errors.Join(errs...)
	}
	key := session + "/" + id
	l.mu.Lock()
	defer l.mu.Unlock()
	before, ok := l.last[key]
	// Only a look answered before this one was asked is earlier for sure.
	if ok && before.recv.Before(now.sent) {
		errs = append(errs, movedOn(id, before, now))
	}
	if !ok || now.recv.After(before.recv) {
		l.last[key] = now
	}
	return errors.Join(errs...)
}

// runRules is what holds for a run in any single look (rules.RunAlone,
// which the validating proxy holds live traffic to as well).
func runRules(id string, run map[string]any) error {
	return violations("run "+id, rules.RunAlone("body", run))
}

// movedOn checks a later look at a run against an earlier one: forward
// only, and nothing changes once it has ended (rules.MovedOn).
func movedOn(id string, before, now sighting) error {
	return violations("run "+id, rules.MovedOn("body", id, before.look(), now.look()))
}

// look is the sighting as the rules package takes it.
func (s sighting) look() rules.Look { return rules.LookAt(s.doc, s.sent, s.recv, s.op) }

// runsIn picks the runs out of an API answer that carries any: a run's
// details, or a page of runs. Other answers carry none.
func runsIn(method, path string, resp *response) []map[string]any {
	if method != http.MethodGet || resp.status != http.StatusOK || !strings.HasPrefix(path, "/agent/runs") {
		return nil
	}
	rest := strings.TrimPrefix(path, "/agent/runs")
	switch {
	case rest == "" || rest == "/":
		var page struct {
			Runs []map[string]any `json:"runs"`
		}
		if resp.json(&page) != nil {
			return nil // the OpenAPI check says what is wrong
		}
		return page.Runs
	case strings.Count(rest, "/") == 1: // /agent/runs/{id}
		obj, err := resp.object()
		if err != nil {
			return nil
		}
		return []map[string]any{obj}
	}
	return nil
}
