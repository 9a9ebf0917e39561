package steps

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentruns/agentruns/report"
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
	// cause is the contract violation of the answer it was read from, nil
	// for an answer that follows the document.
	cause *report.Cause
}

// ledger remembers the last sighting of every run the suite has seen, for
// the whole run of the suite; scenarios share it, so it is safe for
// concurrent use. Runs are keyed by mock session too: each session of the
// mock is a world of its own.
type ledger struct {
	mu   sync.Mutex
	last map[string]sighting
	// followedUp are the runs the suite sent a follow-up to: one that had
	// ended may start again (a new execution of the same run), QUEUED once
	// more with the started_at of its first execution. The time is when
	// the latest follow-up was answered, zero while it is in flight: a
	// look asked before then may show the run before or after it started
	// again, so it binds no later look.
	followedUp map[string]time.Time
	// beforeFollowUp is the last look at a run before the latest
	// follow-up the suite sent it: every look after the follow-up's answer
	// is held to be the same run (rules.KeptAcrossExecutions), and the
	// first one to show what the follow-up did to an ended run
	// (rules.FollowupStartedEndedRun). judged says that first look came.
	beforeFollowUp map[string]sighting
	judged         map[string]bool
}

// lastLook is the last look at run id in session, for the bill of the
// suite's runs (runbook.go).
func (l *ledger) lastLook(session, id string) (map[string]any, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.last[session+"/"+id]
	return s.doc, ok
}

func newLedger() *ledger {
	return &ledger{last: map[string]sighting{}, followedUp: map[string]time.Time{},
		beforeFollowUp: map[string]sighting{}, judged: map[string]bool{}}
}

// followUp notes that the suite is sending a run a follow-up: what was
// seen of it before no longer binds what is seen next. The returned
// answered must be called once the answer is in, with its status (0 when
// none came).
func (l *ledger) followUp(session, runID string) (answered func(status int, at time.Time)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := session + "/" + runID
	// What the ledger held before, for a follow-up the server refuses.
	last, hadLast := l.last[key]
	prior, hadPrior := l.beforeFollowUp[key]
	followedAt, hadFollowed := l.followedUp[key]
	judged := l.judged[key]

	if hadLast {
		l.beforeFollowUp[key] = last
	} else {
		delete(l.beforeFollowUp, key)
	}
	delete(l.last, key)
	delete(l.judged, key)
	l.followedUp[key] = time.Time{}
	return func(status int, at time.Time) {
		l.mu.Lock()
		defer l.mu.Unlock()
		switch {
		case status/100 == 2:
			// Looks asked from now on bind the looks after them again.
			l.followedUp[key] = at
		case status == 0:
			// No answer: the follow-up may have been taken or not. The
			// run may have started again, so nothing seen before binds
			// what comes next, and nothing says it must have started.
			l.followedUp[key] = at
			delete(l.beforeFollowUp, key)
		default:
			// Refused: the follow-up did nothing, and the run is held
			// to what was seen of it before, as if it had never been
			// sent.
			restore(l.beforeFollowUp, key, prior, hadPrior)
			restore(l.followedUp, key, followedAt, hadFollowed)
			if judged {
				l.judged[key] = true
			}
			if _, seenSince := l.last[key]; !seenSince && hadLast {
				l.last[key] = last
			}
		}
	}
}

// restore puts back m[key] as it was: v when it was there, nothing when not.
func restore[V any](m map[string]V, key string, v V, was bool) {
	if was {
		m[key] = v
	} else {
		delete(m, key)
	}
}

// forget drops what is known of a run, after the mock's control API has put
// it into a state by fiat.
func (l *ledger) forget(session, runID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.last, session+"/"+runID)
	delete(l.beforeFollowUp, session+"/"+runID)
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
// was seen of it before, then remembers it. When this look contradicts an
// earlier one read from an answer that broke the document, knockOn is that
// answer's cause (causes.go).
func (l *ledger) see(session string, now sighting) (knockOn *report.Cause, err error) {
	id := str(now.doc["run_id"])
	key := session + "/" + id
	l.mu.Lock()
	defer l.mu.Unlock()
	followedAt, followed := l.followedUp[key]
	errs := []error{runRules(id, now.doc, followed)}
	if id == "" {
		return nil, errors.Join(errs...)
	}
	before, ok := l.last[key]
	// Only a look answered before this one was asked is earlier for sure;
	// one asked while a follow-up was in flight may predate its restart.
	straddles := followed && (followedAt.IsZero() || before.sent.Before(followedAt))
	if ok && before.recv.Before(now.sent) && !straddles {
		if err := movedOn(id, before, now); err != nil {
			errs = append(errs, err)
			knockOn = before.cause
		}
	}
	if prior, was := l.beforeFollowUp[key]; was && followed && !followedAt.IsZero() && followedAt.Before(now.sent) {
		vs := rules.KeptAcrossExecutions("body", id, prior.look(), now.look())
		// A restart shows only where updated_at is shown finely enough.
		if !l.judged[key] && rules.RestartShows(str(now.doc["updated_at"])) {
			l.judged[key] = true
			vs = append(vs, rules.FollowupStartedEndedRun("body", id, "the follow-up the suite sent", prior.look(), now.look())...)
		}
		errs = append(errs, violations("run "+id, vs))
	}
	if !ok || now.recv.After(before.recv) {
		l.last[key] = now
	}
	return knockOn, errors.Join(errs...)
}

// runRules is what holds for a run in any single look (rules.RunAlone,
// which the validating proxy holds live traffic to as well); restarted says
// a follow-up was accepted for the run, which may start it again, QUEUED or
// PENDING with the started_at of its first execution.
func runRules(id string, run map[string]any, restarted bool) error {
	vs := append(rules.RunAlone("body", run), rules.DerivedAlone("body", run, restarted)...)
	kept := vs[:0]
	for _, v := range vs {
		if restarted && v.Rule == rules.StartedAtFitsState && v.Got != "none" {
			continue
		}
		kept = append(kept, v)
	}
	return violations("run "+id, kept)
}

// movedOn checks a later look at a run against an earlier one: forward
// only, and nothing changes once it has ended (rules.MovedOn), what it
// accumulates included (rules.EndedRunStopped); it stays the same run
// (rules.KeptAcrossExecutions).
func movedOn(id string, before, now sighting) error {
	b, n := before.look(), now.look()
	vs := rules.MovedOn("body", id, b, n)
	vs = append(vs, rules.EndedRunStopped("body", id, b, n)...)
	vs = append(vs, rules.KeptAcrossExecutions("body", id, b, n)...)
	return violations("run "+id, vs)
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
