package steps

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"
)

// What a scenario creates on a real server it undoes when it ends, whether
// it passed or failed at any step: the runs still going are cancelled, the
// schedules and agent identities deleted. The record is kept where the
// requests are sent (apiClient.do), from the server's answers, not by the
// steps: a step that creates something and fails before it could note it,
// or a request written in a feature, leaves nothing behind either. (Against
// the mock's control API each scenario has a session of its own, which is
// dropped instead.)

// creation is one thing a request of the scenario created on the server.
type creation struct {
	kind string // "run", "schedule" or "identity"
	id   string
	// authorization is the Authorization header that created it, and
	// undoes it: a run of the other team (@two-callers) is cancelled with
	// that team's key.
	authorization string
}

// creations is the record of one scenario, shared by its clients (its own
// key's and the other team's).
type creations struct {
	mu   sync.Mutex
	list []creation
}

// createdKinds are the operations that create something to undo, by the
// path they are posted to.
var createdKinds = map[string]struct{ kind, idField string }{
	"/agent/run":        {"run", "run_id"},
	"/agent/runs":       {"run", "run_id"},
	"/agent/schedules":  {"schedule", "id"},
	"/agent/identities": {"identity", "uid"},
}

// note records what the request c, sent with the Authorization header
// authorization, created as its answer says, and forgets what a DELETE
// removed.
func (cs *creations) note(authorization string, c call, resp *response) {
	if cs == nil || resp == nil || resp.status/100 != 2 {
		return
	}
	switch c.method {
	case http.MethodPost:
		k, ok := createdKinds[c.path]
		if !ok {
			return
		}
		var made map[string]any
		if json.Unmarshal(resp.body, &made) != nil {
			return
		}
		if id := str(made[k.idField]); id != "" {
			cs.mu.Lock()
			cs.list = append(cs.list, creation{kind: k.kind, id: id, authorization: authorization})
			cs.mu.Unlock()
		}
	case http.MethodDelete:
		cs.mu.Lock()
		defer cs.mu.Unlock()
		for i, made := range cs.list {
			if c.path == made.deletePath() {
				cs.list = append(cs.list[:i], cs.list[i+1:]...)
				return
			}
		}
	}
}

// deletePath is where a schedule or an identity is deleted; "" for a run,
// which is cancelled instead.
func (c creation) deletePath() string {
	switch c.kind {
	case "schedule":
		return "/agent/schedules/" + pathEscape(c.id)
	case "identity":
		return "/agent/identities/" + pathEscape(c.id)
	}
	return ""
}

// takeRuns removes the runs from the record and returns them: runs shared
// with other scenarios are not this scenario's to cancel.
func (cs *creations) takeRuns() []creation {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var runs []creation
	kept := cs.list[:0]
	for _, c := range cs.list {
		if c.kind == "run" {
			runs = append(runs, c)
		} else {
			kept = append(kept, c)
		}
	}
	cs.list = kept
	return runs
}

// taken empties the record and returns what it held, newest first: a run
// that acts as an identity is cancelled before the identity is deleted.
func (cs *creations) taken() []creation {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	out := make([]creation, 0, len(cs.list))
	for i := len(cs.list) - 1; i >= 0; i-- {
		out = append(out, cs.list[i])
	}
	cs.list = nil
	return out
}

// undoCreations cancels, best effort, the scenario's runs that were not seen
// to end, and deletes its schedules and identities, each with the key that
// made it. It runs in the after-scenario hook, whatever the outcome.
func (s *scenario) undoCreations(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, made := range s.api.made.taken() {
		c := call{method: http.MethodDelete, path: made.deletePath()}
		if made.kind == "run" {
			if s.seenEnded(made.id) {
				continue
			}
			c = call{method: http.MethodPost, path: "/agent/runs/" + pathEscape(made.id) + "/cancel"}
		}
		c.auth = auth{header: made.authorization, omit: made.authorization == ""}
		client := *s.api
		client.runs, client.made, client.cause = nil, nil, nil // the undoing is not judged, nor recorded
		_, _ = client.do(ctx, c)
	}
}

// seenEnded tells whether the scenario last saw the run in a terminal
// state, so that cancelling it would change nothing.
func (s *scenario) seenEnded(id string) bool {
	for _, r := range s.mine.runs {
		if r.id == id && r.details != nil {
			return isTerminal(str(r.details["state"]))
		}
	}
	if s.tenancy.theirs != nil && s.tenancy.theirs.id == id && s.tenancy.theirs.details != nil {
		return isTerminal(str(s.tenancy.theirs.details["state"]))
	}
	_, ended := s.suite.runs.terminalSighting(s.api.session, id)
	return ended
}
