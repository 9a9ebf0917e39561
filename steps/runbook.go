package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/cucumber/godog"

	"github.com/agentruns/agentruns/report"
	"github.com/agentruns/agentruns/rules"
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
//     at_capacity showed;
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
	atCapacity            bool // the create answer said at_capacity
}

func newRunBook(maxRuns, atOnce int) *runBook {
	return &runBook{max: maxRuns, atOnce: atOnce, changed: make(chan struct{}), every: DefaultPollInterval, patience: DefaultTimeout,
		inFlight: map[string]string{}, authOf: map[string]string{}, refused: map[string]bool{}, held: map[string]int{}}
}

// isRunCreate tells whether c asks the server to start a run.
func isRunCreate(c call) bool {
	return c.method == http.MethodPost && (c.path == "/agent/run" || c.path == "/agent/runs")
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
// capacity is taken by the suite's own runs. A scenario whose own runs are
// all that fill the capacity is let through (the server queues its run):
// waiting would wait for itself. The caller must call settle once the
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
		if n == 0 || len(b.inFlight)+b.sending < n || b.onlyOwn(scenario) || time.Since(began) > b.patience {
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

// onlyOwn tells whether every run in flight is scenario's; b.mu held.
func (b *runBook) onlyOwn(scenario string) bool {
	for _, s := range b.inFlight {
		if s != scenario {
			return false
		}
	}
	return b.sending == 0
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
	b.authOf[made.RunID] = authorization
	b.runs = append(b.runs, bookedRun{id: made.RunID, session: session, scenario: scenario, atCapacity: made.AtCapacity})
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

// done frees the places of a scenario's runs once it has ended: its cleanup
// has cancelled those still going.
func (b *runBook) done(scenario string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, s := range b.inFlight {
		if s == scenario {
			delete(b.inFlight, id)
		}
	}
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
	out := report.Runs{Created: b.created, Budget: b.max, AtOnce: b.limit(), QueuedBehindCapacity: b.queuedBehindCapacity}
	count := map[string]int{}
	var order []string
	for _, r := range b.runs {
		if count[r.scenario] == 0 {
			order = append(order, r.scenario)
		}
		count[r.scenario]++
		doc, ok := lastSeen(r.session, r.id)
		if !ok {
			continue
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
// failed, whatever the step made of the refusal (the collector reports a
// scenario with this need as skipped).
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
