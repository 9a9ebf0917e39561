package steps

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cucumber/godog"
	messages "github.com/cucumber/messages/go/v21"
)

// Runs shared between scenarios that only look at them. A scenario tagged
// @shares-runs declares that its Given steps (its arrangement) make runs it
// then only reads: lists, filters, fetches. Every scenario with the same
// arrangement, word for word and table for table (an outline's examples,
// or scenarios written alike), shares one set of runs: the first to start
// it makes the runs, under a config name of the set's own, and the others
// wait for it and take them as theirs. On a real server that is one set of
// runs billed instead of one per scenario. What the arrangement saw of its
// runs comes with them: every look its watch took (a run watched to its
// end, shared_watch.go), how the server took its cancel, the placeholders
// it resolved; so a sharer judges the same history as the maker. A
// scenario whose runs are sent as written (@runs-as-written, marker.go)
// shares only with others sent as written.
//
// Against the mock's control API nothing is shared: each scenario has a
// mock session of its own, and runs there cost nothing.
//
// Under a run budget (--max-runs) a set is made whole or not at all: its
// maker sets aside the runs its arrangement creates before it creates any
// (runBook.claim), and when the budget has not that many left, or refused
// a create of the arrangement all the same, every scenario sharing the set
// is NOT CHECKED (budget): none is judged on part of its runs.
//
// The set's runs outlive the scenario that made them: they are cancelled,
// if still going, when the suite's run ends (Suite.cancelSharedRuns).

// sharesRunsTag marks a scenario that only looks at the runs its Given
// steps make.
const sharesRunsTag = "@shares-runs"

// runShare is one set of shared runs.
type runShare struct {
	key   string
	label string // the config name its runs carry ({label})

	ready  chan struct{} // closed once the runs are made, or failed to be
	runs   []*trackedRun // id, nickname, request and every look of each, in order
	theirs *trackedRun   // the other team's run, when the arrangement makes one (tenancy.go)
	// progress is what the arrangement's watching and cancelling left: the
	// run as first seen ended, how the server took its cancel.
	progress progressRoom
	cache    map[string]string
	made     []creation // the runs, to cancel when the suite's run ends
	err      error      // why the set could not be made; its sharers make their own, but for errBudget
}

// shares is the suite's sets, by arrangement.
type shares struct {
	mu  sync.Mutex
	set map[string]*runShare
}

// join returns the set for key and whether the caller makes it.
func (sh *shares) join(key string) (*runShare, bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.set == nil {
		sh.set = map[string]*runShare{}
	}
	if s, ok := sh.set[key]; ok {
		return s, false
	}
	s := &runShare{key: key, label: "contract-" + randomHex(6), ready: make(chan struct{})}
	sh.set[key] = s
	return s, true
}

// all is every set, for the end of the run.
func (sh *shares) all() []*runShare {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	out := make([]*runShare, 0, len(sh.set))
	for _, s := range sh.set {
		out = append(out, s)
	}
	return out
}

// arrangement is the text of a scenario's Given steps, tables included:
// scenarios alike in it make the same runs the same way.
func arrangement(p *godog.Scenario) string {
	var b strings.Builder
	for _, st := range p.Steps {
		if st.Type != messages.PickleStepType_CONTEXT {
			break
		}
		b.WriteString(st.Text)
		if a := st.Argument; a != nil && a.DataTable != nil {
			for _, row := range a.DataTable.Rows {
				for _, c := range row.Cells {
					b.WriteString("|" + c.Value)
				}
				b.WriteString("\n")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// shareRuns, from the before-scenario hook, joins the scenario to the set
// of its arrangement when it is tagged @shares-runs and the suite polls.
func (s *scenario) shareRuns(p *godog.Scenario) {
	if s.api.control != nil || !hasTag(p, sharesRunsTag) {
		return
	}
	key := arrangement(p)
	if key == "" {
		return
	}
	if hasTag(p, asWrittenTag) {
		// Its runs are sent as written, the others' marked (marker.go):
		// not the same runs.
		key = asWrittenTag + "\n" + key
	}
	s.share, s.shareMaker = s.suite.shares.join(key)
	s.label = s.share.label
}

// follower tells whether the scenario takes its runs from a set another
// scenario made: then its arrangement's steps that make or change runs
// have been done once for every sharer.
func (s *scenario) follower(ctx context.Context) (bool, error) {
	if s.share == nil || s.shareMaker {
		return false, nil
	}
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case <-s.share.ready:
	}
	if errors.Is(s.share.err, errBudget) {
		// Runs of its own would be cut by the same budget.
		return false, s.share.err
	}
	if s.share.err != nil {
		// The maker failed: this scenario makes runs of its own, under
		// a name of its own.
		s.share, s.label = nil, "contract-"+randomHex(6)
		return false, nil
	}
	if len(s.mine.runs) == 0 {
		for _, r := range s.share.runs {
			s.mine.add(r.copy())
		}
		if n := len(s.mine.runs); n > 0 {
			s.current = s.mine.runs[n-1]
		}
		s.progress = s.share.progress
		for k, v := range s.share.cache {
			if _, ok := s.cache[k]; !ok {
				s.cache[k] = v
			}
		}
	}
	if s.tenancy.theirs == nil && s.share.theirs != nil {
		s.tenancy.theirs = &trackedRun{nick: s.share.theirs.nick, id: s.share.theirs.id}
	}
	return true, nil
}

// publishShare, from the before-step hook of the first step past the
// arrangement (or the scenario's end), hands the set's runs to the
// scenarios waiting on it. The runs are no longer the maker's to cancel
// when it ends: they are the suite's.
func (s *scenario) publishShare(err error) {
	if s.share == nil || !s.shareMaker {
		return
	}
	sh := s.share
	s.share = nil
	s.suite.book.unclaim(s.name)
	if err == nil && s.suite.book.wasRefused(s.name) {
		err = errBudget // some runs made, not all: the set is not whole
	}
	if err != nil || len(s.mine.runs) == 0 && s.tenancy.theirs == nil {
		sh.err = fmt.Errorf("the scenario making the shared runs did not make them: %w", err)
		close(sh.ready)
		return
	}
	for _, r := range s.mine.runs {
		sh.runs = append(sh.runs, r.copy())
	}
	sh.progress = s.progress
	sh.cache = maps.Clone(s.cache)
	if t := s.tenancy.theirs; t != nil {
		sh.theirs = &trackedRun{nick: t.nick, id: t.id}
	}
	sh.made = s.api.made.takeRuns()
	s.suite.book.share(sh.made)
	close(sh.ready)
}

// copy is the run as a sharer takes it: its id, nickname and request, and
// every look the watcher of the arrangement took at it, from its creation
// on, so that a scenario joining after the run ended still judges the
// whole of what was seen of it (history.go).
func (r *trackedRun) copy() *trackedRun {
	return &trackedRun{nick: r.nick, id: r.id, sent: r.sent, details: r.details, looks: slices.Clone(r.looks)}
}

// runsItMakes is how many runs a scenario's arrangement creates, as its
// Given steps say: "I created N runs", one a row of "I created these
// runs:", one for "another team has created a run". A create it does not
// count is still refused when the budget is spent, and the set is then
// not whole (publishShare).
func runsItMakes(p *godog.Scenario) int {
	n := 0
	for _, st := range p.Steps {
		if st.Type != messages.PickleStepType_CONTEXT {
			break
		}
		switch m := createdNRuns.FindStringSubmatch(st.Text); {
		case m != nil:
			k, _ := strconv.Atoi(m[1])
			n += k
		case st.Text == "I created these runs:" && st.Argument != nil && st.Argument.DataTable != nil:
			n += max(0, len(st.Argument.DataTable.Rows)-1)
		case st.Text == "another team has created a run" || createdOneRun.MatchString(st.Text):
			n++
		}
	}
	return n
}

// createdNRuns is the step that creates N runs (runs.go); createdOneRun,
// the steps that create one run as an arrangement (shared_watch.go).
var (
	createdNRuns  = regexp.MustCompile(`^I created (\d+) runs?$`)
	createdOneRun = regexp.MustCompile(`^I created a run with `)
)

// publishBeforeActions is the before-step hook that publishes the set once
// the arrangement is done.
func (s *scenario) publishBeforeActions(ctx context.Context, st *godog.Step) (context.Context, error) {
	if st.Type != messages.PickleStepType_CONTEXT {
		s.publishShare(nil)
	}
	return ctx, nil
}

// cancelSharedRuns cancels, best effort, the shared runs not seen to end,
// once no scenario looks at them any more.
func (su *Suite) cancelSharedRuns(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	client := su.newClient()
	client.runs, client.made, client.cause, client.book = nil, nil, nil, nil // the undoing is not judged
	for _, sh := range su.shares.all() {
		for _, made := range sh.made {
			if _, ended := su.runs.terminalSighting("", made.id); ended {
				continue
			}
			c := call{method: http.MethodPost, path: "/agent/runs/" + pathEscape(made.id) + "/cancel",
				auth: auth{header: made.authorization, omit: made.authorization == ""}}
			_, _ = client.do(ctx, c)
		}
	}
}
