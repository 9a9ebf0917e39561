package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cucumber/godog"

	"github.com/agentruns/agentruns/report"
	"github.com/agentruns/agentruns/rules"
	"github.com/agentruns/agentruns/suiteconfig"
)

// On a real server a run is an agent's execution: minutes of it, billed to
// the team, and a team runs only a few at once. The run book is the suite's
// account of the runs it creates, kept where every request is sent
// (apiClient.do), so no create escapes it:
//
//   - the budget (Config.MaxRuns): a create that would pass it is not sent;
//     the scenario that asked is NOT CHECKED (budget), never passed;
//   - the team's capacity: the suite keeps no more of its own runs in flight
//     (created and not yet seen to end) than the server takes at once, as
//     Config.MaxRunsAtOnce says or, without it, as the create answer's
//     at_capacity showed. Until a create has said at_capacity, creates go
//     one at a time: each answer is in before the next create is sent, so
//     the first at_capacity comes with exactly the runs the team took, and
//     the suite puts at most one run in the team's queue to learn it;
//   - the bill: how many runs, by which scenarios, and what the server said
//     they cost (run_time, request_usage), for every report.

// errBudget is the error of a create the budget refused; the scenario that
// asked is then skipped as NOT CHECKED (budget).
// It is a godog.ErrSkip, so that a step returning it is reported skipped.
var errBudget = fmt.Errorf("%w: the run budget (--max-runs) is spent", godog.ErrSkip)

// runBook is the account of one suite run. It is safe for concurrent use.
type runBook struct {
	max    int // Config.MaxRuns; 0: no budget
	atOnce int // Config.MaxRunsAtOnce; 0: learned from at_capacity
	// look fetches the runs in flight while a create waits for a place, so
	// that runs which ended unwatched (their scenario waits too) free
	// theirs; every is how often, patience how long a create waits before
	// it goes ahead all the same (a run that never ends holds a place).
	look            func(ctx context.Context, runs map[string]string)
	every, patience time.Duration

	mu sync.Mutex
	// changed is closed, and replaced, whenever a slot may have freed.
	changed  chan struct{}
	learned  int // how many runs the server took at once when it first said at_capacity; 0: never said
	peak     int // the most runs in flight at once, for the reports
	created  int
	sending  int               // creates sent and not yet answered
	inFlight map[string]string // id -> scenario, of runs not yet seen to end
	authOf   map[string]string // id -> the Authorization header that created it
	runs     []bookedRun       // every run created, in order
	// refusedScenarios are the scenarios a create of which the budget refused.
	refused map[string]bool
	// held is the budget set aside for scenarios that make a shared set of
	// runs (claim), by scenario; heldTotal their sum. Their creates draw on
	// it, and no other create may.
	held      map[string]int
	heldTotal int
	// queuedBehindCapacity is the time runs were seen waiting in QUEUED
	// while the team was at capacity, summed over looks.
	queuedBehindCapacity time.Duration
}

// bookedRun is one run the suite created.
type bookedRun struct {
	id, session, scenario string
	authorization         string // whose run: a team's capacity is its own
	atCapacity            bool   // the create answer said at_capacity
}

func newRunBook(maxRuns, atOnce int) *runBook {
	return &runBook{max: maxRuns, atOnce: atOnce, changed: make(chan struct{}), every: suiteconfig.DefaultPollInterval, patience: suiteconfig.DefaultTimeout,
		inFlight: map[string]string{}, authOf: map[string]string{}, refused: map[string]bool{}, held: map[string]int{}}
}

// isRunCreate tells whether c asks the server to start a run.
func isRunCreate(c call) bool {
	return c.method == http.MethodPost && (c.path == "/agent/run" || c.path == "/agent/runs")
}

// restarts tells which run c may start again: a follow-up to a run that
// has ended starts another execution, which takes a place of the team's
// as a new run does. A follow-up to a run the book has in flight takes
// none.
func (b *runBook) restarts(c call) (id string, ok bool) {
	rest, found := strings.CutPrefix(c.path, "/agent/runs/")
	if c.method != http.MethodPost || !found {
		return "", false
	}
	id, found = strings.CutSuffix(rest, "/followups")
	if !found || id == "" || strings.Contains(id, "/") {
		return "", false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	_, going := b.inFlight[id]
	return id, !going
}

// settleRestart books the answer to a follow-up reserve let through: an
// accepted one puts the run back in flight.
func (b *runBook) settleRestart(scenario, id string, resp *response) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sending--
	defer b.signal()
	if resp == nil || resp.status/100 != 2 {
		return
	}
	b.inFlight[id] = scenario
	b.peak = max(b.peak, len(b.inFlight))
}

// limit is how many of the suite's runs may be in flight at once; 0: no
// limit known. b.mu held.
func (b *runBook) limit() int {
	if b.atOnce > 0 {
		return b.atOnce
	}
	return b.learned
}

// reserve holds a place for one create of scenario: it refuses with
// errBudget when the budget would be passed, and waits while the team's
// capacity is taken by the suite's own runs. A scenario with one run in
// flight and nothing else of the suite's is let through for a second (the
// server queues it at a capacity of one): a scenario that needs two runs
// at once, as messages between runs do, would wait for itself. A scenario
// that makes more runs than the team takes at once (a set for listings)
// waits for its first ones to end. The caller must call settle once the
// answer is in.
func (b *runBook) reserve(ctx context.Context, scenario string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	began := time.Now()
	for {
		if b.held[scenario] == 0 && b.max > 0 && b.created+b.sending+b.heldTotal >= b.max {
			b.refused[scenario] = true
			return fmt.Errorf("%w: %d runs created or being created, %d set aside, of --max-runs %d",
				errBudget, b.created+b.sending, b.heldTotal, b.max)
		}
		n := b.limit()
		unknown := n == 0 && b.sending == 0 // one create at a time until the capacity is known
		if unknown || (n > 0 && len(b.inFlight)+b.sending < n) || b.needsASecond(scenario) || time.Since(began) > b.patience {
			if b.held[scenario] > 0 {
				b.held[scenario]--
				b.heldTotal--
			}
			b.sending++
			return nil
		}
		changed := b.changed
		ids := make(map[string]string, len(b.inFlight))
		for id := range b.inFlight {
			ids[id] = b.authOf[id]
		}
		b.mu.Unlock()
		tick := time.NewTimer(b.every)
		select {
		case <-ctx.Done():
			tick.Stop()
			b.mu.Lock()
			return ctx.Err()
		case <-changed:
			tick.Stop()
		case <-tick.C:
			if b.look != nil {
				b.look(ctx, ids)
			}
		}
		b.mu.Lock()
	}
}

// claim sets n runs of the budget aside for scenario before it creates
// any: the whole of a shared set of runs, so that the set is made whole or
// not at all. It refuses, setting nothing aside, when the budget has not n
// runs left; the scenario is then refused as a create would be. Without a
// budget it sets nothing aside.
func (b *runBook) claim(scenario string, n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.max == 0 || n <= 0 {
		return true
	}
	if b.created+b.sending+b.heldTotal+n > b.max {
		b.refused[scenario] = true
		return false
	}
	b.held[scenario] += n
	b.heldTotal += n
	return true
}

// unclaim gives back what claim set aside for scenario and it did not
// create.
func (b *runBook) unclaim(scenario string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.heldTotal -= b.held[scenario]
	delete(b.held, scenario)
	b.signal()
}

// needsASecond tells whether the only run of the suite's in flight is
// scenario's, and nothing is being created; b.mu held.
func (b *runBook) needsASecond(scenario string) bool {
	if len(b.inFlight) != 1 || b.sending > 0 {
		return false
	}
	for _, s := range b.inFlight {
		return s == scenario
	}
	return false
}

// settle books the answer to a create reserve let through: a run created,
// or nothing when the create failed.
func (b *runBook) settle(scenario, session, authorization string, resp *response) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sending--
	defer b.signal()
	if resp == nil || resp.status/100 != 2 {
		return
	}
	var made struct {
		RunID      string `json:"run_id"`
		AtCapacity bool   `json:"at_capacity"`
	}
	if json.Unmarshal(resp.body, &made) != nil || made.RunID == "" {
		return
	}
	switch n := len(b.inFlight); {
	case made.AtCapacity && (b.learned == 0 || n < b.learned):
		// The runs already in flight were all the team takes at once.
		b.learned = max(1, n)
	case !made.AtCapacity && b.learned > 0 && n+1 > b.learned:
		// The team took one more than thought: some of those counted
		// had ended unseen, or a place had freed.
		b.learned = n + 1
	}
	b.created++
	b.inFlight[made.RunID] = scenario
	b.peak = max(b.peak, len(b.inFlight))
	b.authOf[made.RunID] = authorization
	b.runs = append(b.runs, bookedRun{id: made.RunID, session: session, scenario: scenario, authorization: authorization, atCapacity: made.AtCapacity})
}

// seen notes a look at one of the suite's runs: a run seen in a terminal
// state frees its place.
func (b *runBook) seen(id, state string) {
	if b == nil || !isTerminal(state) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.inFlight[id]; ok {
		delete(b.inFlight, id)
		b.signal()
	}
}

// done is told when a scenario has ended. Its runs keep their places
// until they are seen to end: its cleanup cancels those still going, but a
// cancel may be refused (a run being handed to a worker) or take a while,
// and the team's place is free only once the run has stopped. A create
// waiting for a place looks at the runs in flight (look) and so learns of
// their ends.
func (b *runBook) done(string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.signal()
}

// share hands runs over to the suite: they are shared between scenarios,
// and stay in flight when the scenario that made them ends.
func (b *runBook) share(runs []creation) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range runs {
		if _, ok := b.inFlight[r.id]; ok {
			b.inFlight[r.id] = sharedOwner
		}
	}
}

// sharedOwner owns the shared runs in flight (shared_runs.go).
const sharedOwner = "(runs shared between scenarios)"

// signal wakes every waiter; b.mu held.
func (b *runBook) signal() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// behindCapacity tells whether run id waits because the team is at
// capacity: its create said so, or more of the suite's runs than the team
// takes at once are in flight.
func (b *runBook) behindCapacity(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range b.runs {
		if r.id == id && r.atCapacity {
			return true
		}
	}
	n := b.limit()
	return n > 0 && len(b.inFlight) > n
}

// queued adds d to the time runs waited behind the team's capacity.
func (b *runBook) queued(d time.Duration) {
	b.mu.Lock()
	b.queuedBehindCapacity += d
	b.mu.Unlock()
}

// spent tells whether the budget allows no further run.
func (b *runBook) spent() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.max > 0 && b.created+b.sending+b.heldTotal >= b.max
}

// wasRefused tells whether the budget refused a create of scenario.
func (b *runBook) wasRefused(scenario string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.refused[scenario]
}

// bill is what the runs cost, as the reports say it: lastSeen gives the
// last look at a run (ledger), for its run_time and request_usage.
func (b *runBook) bill(lastSeen func(session, id string) (map[string]any, bool)) report.Runs {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := report.Runs{Created: b.created, Budget: b.max, AtOnce: b.peak, Capacity: b.limit(), CapacityGiven: b.atOnce > 0, QueuedBehindCapacity: b.queuedBehindCapacity}
	count := map[string]int{}
	var order []string
	// What the server shows of the runs it queued behind the team's
	// capacity, from their created_at to their started_at, is a truer
	// figure than the suite's looks, which see the wait only between polls.
	var shownQueued time.Duration
	spans := map[string][]span{} // by team, as the Authorization says
	for _, r := range b.runs {
		if count[r.scenario] == 0 {
			order = append(order, r.scenario)
		}
		count[r.scenario]++
		doc, ok := lastSeen(r.session, r.id)
		if !ok {
			continue
		}
		if sp, ok := spanOf(doc); ok {
			spans[r.authorization] = append(spans[r.authorization], sp)
		}
		if r.atCapacity {
			created, err1 := time.Parse(time.RFC3339Nano, str(doc["created_at"]))
			started, err2 := time.Parse(time.RFC3339Nano, str(doc["started_at"]))
			if err1 == nil && err2 == nil && started.After(created) {
				shownQueued += started.Sub(created)
			}
		}
		if d, ok := rules.ISODuration(str(doc["run_time"])); ok && d > 0 {
			out.RunTime += d
			out.WithRunTime++
		}
		if u, ok := doc["request_usage"].(map[string]any); ok {
			out.WithUsage++
			for k, v := range u {
				if f, ok := v.(float64); ok {
					if out.Usage == nil {
						out.Usage = map[string]float64{}
					}
					out.Usage[k] += f
				}
			}
		}
	}
	if shownQueued > 0 {
		out.QueuedBehindCapacity = shownQueued
	}
	if len(spans) > 0 {
		out.AtOnce = 0
		for _, team := range spans {
			out.AtOnce = max(out.AtOnce, mostAtOnce(team))
		}
	}
	for _, s := range order {
		out.ByScenario = append(out.ByScenario, report.ScenarioRuns{Scenario: s, Runs: count[s]})
	}
	sort.SliceStable(out.ByScenario, func(i, j int) bool { return out.ByScenario[i].Runs > out.ByScenario[j].Runs })
	for s := range b.refused {
		out.Refused = append(out.Refused, s)
	}
	slices.Sort(out.Refused)
	return out
}

// budgetNeed is what a scenario the budget left out needed.
var budgetNeed = report.Need{Flag: "--max-runs", What: "what the run budget left out (budget)"}

// leftOutByBudget is an after-step hook: a step whose create the budget
// refused leaves the scenario NOT CHECKED (budget), skipped rather than
// failed, whatever the step made of the refusal (its Ending says Budget, and
// the runner's collector reports it skipped).
func (s *scenario) leftOutByBudget(ctx context.Context, _ *godog.Step, _ godog.StepResultStatus, err error) (context.Context, error) {
	if err == nil || s.need != nil || (!errors.Is(err, errBudget) && !s.suite.book.wasRefused(s.name)) {
		return ctx, nil
	}
	need := budgetNeed
	s.need = &need
	s.skipReason = fmt.Sprintf("NOT CHECKED (budget): the run budget --max-runs %d was spent before this scenario could create the runs it needs", s.suite.cfg.MaxRuns)
	fmt.Fprintf(s.suite.cfg.Log, "skipped %q: %s\n", s.name, s.skipReason)
	return ctx, nil
}

// leftOutBeforeItBegan skips a scenario that creates runs once the budget
// is spent, before it sends anything: it is NOT CHECKED (budget). A
// scenario that makes shared runs hands its sharers the refusal, and they
// are left out too (shared_runs.go).
func (s *scenario) leftOutBeforeItBegan(sc *godog.Scenario, why string) error {
	need := budgetNeed
	s.need = &need
	s.skipReason = fmt.Sprintf("NOT CHECKED (budget): the run budget --max-runs %d %s", s.suite.cfg.MaxRuns, why)
	fmt.Fprintf(s.suite.cfg.Log, "skipped %q: %s\n", sc.Name, s.skipReason)
	s.publishShare(errBudget)
	return godog.ErrSkip
}

// lookAtRunsInFlight fetches the runs in flight, for a create waiting for
// a place: the book learns of those that ended. The looks are judged by
// the rules that hold for any run (the ledger), not by any scenario.
func (su *Suite) lookAtRunsInFlight(ctx context.Context, runs map[string]string) {
	client := su.newClient()
	client.made, client.cause = nil, nil
	for id, authorization := range runs {
		if ctx.Err() != nil {
			return
		}
		c := call{method: http.MethodGet, path: "/agent/runs/" + pathEscape(id), auth: auth{header: authorization}}
		if authorization != "Bearer "+su.cfg.APIKey {
			client.runs = nil // another team's run: not this caller's view to judge
		}
		_, _ = client.do(ctx, c)
	}
}

// span is a run's life as the server shows it: from its created_at to the
// updated_at of the terminal state it was last seen in; a run not seen to
// end has no end.
type span struct {
	from, to time.Time
	ended    bool
}

func spanOf(doc map[string]any) (span, bool) {
	from, err := time.Parse(time.RFC3339Nano, str(doc["created_at"]))
	if err != nil {
		return span{}, false
	}
	sp := span{from: from}
	if isTerminal(str(doc["state"])) {
		if to, err := time.Parse(time.RFC3339Nano, str(doc["updated_at"])); err == nil && !to.Before(from) {
			sp.to, sp.ended = to, true
		}
	}
	return sp, true
}

// mostAtOnce is the most spans that overlap at one instant: how many of
// its runs the suite had going at once, by the server's own timestamps
// (the book's count of runs not yet seen to end is higher whenever runs
// end between two looks). A span that ends at an instant another begins
// does not overlap it.
func mostAtOnce(spans []span) int {
	type edge struct {
		at    time.Time
		delta int
	}
	edges := make([]edge, 0, 2*len(spans))
	for _, sp := range spans {
		edges = append(edges, edge{sp.from, +1})
		if sp.ended {
			edges = append(edges, edge{sp.to, -1})
		}
	}
	sort.Slice(edges, func(i, j int) bool {
		if !edges[i].at.Equal(edges[j].at) {
			return edges[i].at.Before(edges[j].at)
		}
		return edges[i].delta < edges[j].delta // ends first
	})
	n, most := 0, 0
	for _, e := range edges {
		n += e.delta
		most = max(most, n)
	}
	return most
}
