package steps

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/cucumber/godog"

	"github.com/agentruns/agentruns/report"
)

// scenario is the state of one running scenario. InitializeScenario makes a
// fresh one for every scenario, so scenarios can run concurrently.
type scenario struct {
	suite *Suite
	api   *apiClient

	// label is a config name unique to this scenario ("{label}" in features);
	// scenarios that list runs give it to their runs and filter by it.
	label string
	// unknownID is a run id no server has ("{unknown}" in features).
	unknownID  string
	skipReason string
	// need is what a scenario skipped mid-way lacked: the run budget.
	need  *report.Need
	name  string            // the scenario's name, as requests carry it (readonly.go)
	cache map[string]string // resolved placeholders and remembered values (values.go)

	// last is the answer the generic "the response …" steps judge: the
	// answer of the last step that sent a request for them (runs.go).
	last *response

	// The runs this scenario created, which every resource's steps look at.
	mine roster // the runs this scenario created
	// share is the set of runs this scenario shares with others alike
	// (shared_runs.go), nil when it has its own; shareMaker says it makes
	// them.
	share      *runShare
	shareMaker bool
	current    *trackedRun // "the run": the one created last
	fate       string      // X-Mock-Fate for the next create, "" for none

	// Each resource's own part of the state, declared in its steps file.
	progress      progressRoom      // progression.go: the run's end, the last cancel
	listings      listingRoom       // listing.go: the last page, the last walk
	tenancy       tenancyRoom       // tenancy.go: the other team's run and answers
	events        eventPolls        // run_events.go: every poll of GET /agent/events
	conversations conversationsRoom // conversations.go: every conversation fetched
	schedules     schedulesRoom     // schedules.go, schedule_ticks.go
	artifacts     artifactsRoom     // artifacts.go: the artifacts last fetched
	identities    identitiesRoom    // identities.go, identities_plan.go
	messages      messagesRoom      // messages.go: the message sent last
	offers        offersRoom        // offered.go: what the server offers, by kind
	followups     followupsRoom     // followups.go: the run just before the follow-up
	handoffs      handoffsRoom      // handoff_attachments.go, handoff_watch.go
	exchanges     exchangesRoom     // exchanges.go: the last request as written, the runs listings showed
}

// InitializeScenario registers the steps and hooks of one scenario on sc. It
// is the godog scenario initializer: godog calls it once per scenario.
func (su *Suite) InitializeScenario(godogContext *godog.ScenarioContext) {
	su.trackScenario(godogContext) // pass.go: first, so that an interrupted pass skips the scenario before anything else
	sc := stepContext{godogContext}
	s := &scenario{
		suite:     su,
		api:       su.newClient(),
		label:     "contract-" + randomHex(6),
		unknownID: newUUID(),
		cache:     map[string]string{},
	}
	sc.Before(s.before)
	sc.StepContext().After(s.leftOutByBudget)       // runbook.go
	sc.StepContext().Before(s.publishBeforeActions) // shared_runs.go
	sc.After(s.rereadEndedRuns)                     // before s.after, which records the outcome
	sc.After(s.after)
	s.registerRuns(sc)               // runs.go: creating runs, one run's details, the last response
	s.registerListing(sc)            // listing.go
	s.registerProgression(sc)        // progression.go: watching, cancelling, the mock's control API
	s.registerTenancy(sc)            // tenancy.go
	s.registerTenancyResources(sc)   // tenancy_resources.go: schedules, conversations, artifacts, environments
	s.registerRequests(sc)           // requests.go: requests as written, remembered values
	s.registerRunEvents(sc)          // run_events.go
	s.registerSchedules(sc)          // schedules.go
	s.registerScheduleTicks(sc)      // schedule_ticks.go: schedules firing as the server's clock runs
	s.registerAgents(sc)             // skills.go: the agents (skills) GET /agent lists
	s.registerEnvironments(sc)       // environments.go: environments and models
	s.registerIdentities(sc)         // identities.go: the team's agent identities
	s.registerMessages(sc)           // messages.go: run-to-run messages
	s.registerArtifacts(sc)          // artifacts.go
	s.registerConversations(sc)      // conversations.go: conversations, transcripts, session redirects
	s.registerFollowups(sc)          // followups.go
	s.registerHandoffAttachments(sc) // handoff_attachments.go
	s.registerNewestClientTag(sc)    // newest_tag.go: the note of a failed @newest-client scenario
	s.registerHandoffWatch(sc)       // handoff_watch.go: no handoff files before a run's end
	s.registerStateFilter(sc)        // state_filter.go: the state filter over runs seen ended
	s.registerWorkedOn(sc)           // worked_on.go: a run that succeeded was worked on
	s.registerSharedWatch(sc)        // shared_watch.go: a run watched once, shared by those that look at it
	s.registerExchanges(sc)          // exchanges.go: any request as written, checks of any answer
}

// before isolates the scenario in its own mock session, or skips it when it
// needs a control API the server does not have.
func (s *scenario) before(ctx context.Context, sc *godog.Scenario) (context.Context, error) {
	ctx = withScenario(ctx, sc.Name) // for the read-only client's refusals (readonly.go) and the run book
	s.name = sc.Name
	if hasTag(sc, asWrittenTag) {
		s.api.marking = nil // marker.go
	}
	if hasTag(sc, "@two-callers") && s.suite.cfg.OtherAPIKey == "" {
		s.skipReason = "needs a key of another team (@two-callers): pass --other-api-key (Config.OtherAPIKey)"
		fmt.Fprintf(s.suite.cfg.Log, "skipped %q: %s\n", sc.Name, s.skipReason)
		return ctx, godog.ErrSkip
	}
	if hasTag(sc, "@failing-prompt") && s.suite.cfg.FailingPrompt == "" {
		s.skipReason = "needs a prompt the server ends in FAILED or ERROR (@failing-prompt): pass --failing-prompt (Config.FailingPrompt)"
		fmt.Fprintf(s.suite.cfg.Log, "skipped %q: %s\n", sc.Name, s.skipReason)
		return ctx, godog.ErrSkip
	}
	if hasTag(sc, "@plan-edge") && s.suite.cfg.IdentityPlan <= 0 {
		s.skipReason = "needs the number of agent identities the team's plan allows (@plan-edge): pass --identity-plan (Config.IdentityPlan)"
		fmt.Fprintf(s.suite.cfg.Log, "skipped %q: %s\n", sc.Name, s.skipReason)
		return ctx, godog.ErrSkip
	}
	if hasTag(sc, "@schedule-ticks") && s.api.control == nil && !s.suite.cfg.WaitForTicks {
		s.skipReason = "waits minutes for schedules to fire on the server's clock (@schedule-ticks): pass --wait-for-ticks (Config.WaitForTicks)"
		fmt.Fprintf(s.suite.cfg.Log, "skipped %q: %s\n", sc.Name, s.skipReason)
		return ctx, godog.ErrSkip
	}
	if s.api.control == nil {
		switch {
		case s.suite.controlUnused && hasTag(sc, "@mock-control"):
			s.skipReason = "needs the mock control API (@mock-control), which a read-only run leaves alone: every use of it changes the mock"
		case s.suite.controlUnused && hasTag(sc, "@mock-only"):
			s.skipReason = "checks what only the mock promises (@mock-only), through its control API, which a read-only run leaves alone: every use of it changes the mock"
		case hasTag(sc, "@mock-control"):
			s.skipReason = "needs the mock control API (@mock-control), which " + s.suite.cfg.BaseURL + " does not offer"
		case hasTag(sc, "@mock-only"):
			s.skipReason = "checks what only the bundled mock promises beyond the published API document (@mock-only); " +
				s.suite.cfg.BaseURL + " does not offer the mock's control API, so it is not taken for the mock"
		case s.skipsNewestClient(sc):
		default:
			if hasTag(sc, "@plan-edge") {
				s.suite.identityWrites.Lock()
				s.identities.held = "alone"
			}
			s.shareRuns(sc) // shared_runs.go
			if hasTag(sc, "@creates-runs") && (s.share == nil || s.shareMaker) && s.suite.book.spent() {
				return ctx, s.leftOutBeforeItBegan(sc, "was spent before this scenario began") // runbook.go
			}
			if n := runsItMakes(sc); s.shareMaker && !s.suite.book.claim(sc.Name, n) {
				// A set made in part would be judged as if whole.
				return ctx, s.leftOutBeforeItBegan(sc, fmt.Sprintf("had not the %d runs left that the runs this scenario shares need: none was made", n))
			}
			return ctx, nil
		}
		fmt.Fprintf(s.suite.cfg.Log, "skipped %q: %s\n", sc.Name, s.skipReason)
		return ctx, godog.ErrSkip
	}
	if s.skipsNewestClient(sc) {
		fmt.Fprintf(s.suite.cfg.Log, "skipped %q: %s\n", sc.Name, s.skipReason)
		return ctx, godog.ErrSkip
	}
	s.api.session = newUUID()
	if err := s.api.freezeClock(ctx); err != nil {
		return ctx, fmt.Errorf("isolating the scenario in its own mock session: %w", err)
	}
	return ctx, nil
}

// skipsNewestClient tells whether the scenario checks the newest client's
// surface, which this run does not judge (newest_surface.go), and if so
// says why it is skipped.
func (s *scenario) skipsNewestClient(sc *godog.Scenario) bool {
	if !hasTag(sc, newestClientTag) || s.suite.newest.Judged {
		return false
	}
	s.skipReason = s.suite.newest.skipReason(s.suite.cfg.BaseURL)
	return true
}

// after records the outcome and, on a real server, undoes what the scenario
// created (cleanup.go): runs left running stop costing money, and no
// schedule or identity is left behind.
func (s *scenario) after(ctx context.Context, sc *godog.Scenario, err error) (context.Context, error) {
	s.publishShare(err) // a scenario that ended in its arrangement
	s.suite.record(sc, err, s.skipReason, s.need, s.api.cause.get())
	if s.api.control == nil {
		s.undoCreations(context.WithoutCancel(ctx)) // cleanup.go
		s.releaseIdentities()
	} else if s.api.session != "" {
		_ = s.api.closeSession(context.WithoutCancel(ctx)) // best effort: the mock also evicts idle sessions
	}
	s.suite.book.done(sc.Name) // its runs keep their places until seen to end
	return ctx, nil
}

// rereadEndedRuns watches longer where it matters: once a scenario has
// passed, it lets the server's time pass again and re-reads every run the
// scenario created and saw end, so that the rules of invariants.go compare
// the new look with the terminal one (a cancelled run that later succeeds, a
// finished run whose fields still move). The wait is a minute of the
// mock's clock when the suite drives it, or, when
// polling, the server's own pace: the time a run took per state, as its
// timestamps tell, between one poll interval and ten seconds.
func (s *scenario) rereadEndedRuns(ctx context.Context, _ *godog.Scenario, err error) (context.Context, error) {
	if err != nil || s.skipReason != "" {
		return ctx, nil
	}
	var ended []*trackedRun
	wait := s.suite.cfg.PollInterval
	for _, r := range s.mine.runs {
		seen, ok := s.suite.runs.terminalSighting(s.api.session, r.id)
		if !ok {
			continue
		}
		ended = append(ended, r)
		created, err1 := timestamp(seen.doc, "created_at")
		updated, err2 := timestamp(seen.doc, "updated_at")
		if perState := updated.Sub(created) / 4; err1 == nil && err2 == nil && perState > wait {
			wait = perState
		}
	}
	if len(ended) == 0 {
		return ctx, nil
	}
	if s.api.control != nil {
		if err := s.api.advanceClock(ctx, time.Minute); err != nil {
			return ctx, err
		}
	} else if err := s.suite.pause(ctx, min(wait, 10*time.Second)); err != nil {
		return ctx, err
	}
	for _, r := range ended {
		if _, err := s.fetch(ctx, r); err != nil {
			return ctx, fmt.Errorf("re-reading run %s after it ended: %w", s.mine.nameOf(r), err)
		}
	}
	return ctx, nil
}

func hasTag(sc *godog.Scenario, tag string) bool {
	for _, t := range sc.Tags {
		if t.Name == tag {
			return true
		}
	}
	return false
}

// stepContext is godog's scenario context with step patterns compiled once
// per process: godog compiles a pattern given as a string at every
// registration, which is every step of every scenario, and compiling the
// suite's two hundred patterns was a fifth of a suite run's CPU time.
type stepContext struct{ *godog.ScenarioContext }

// Step registers fn for the step pattern expr, as godog's Step does.
func (sc stepContext) Step(expr string, fn any) {
	sc.ScenarioContext.Step(compiledPattern(expr), fn)
}

// stepPatterns holds each step pattern compiled (a *regexp.Regexp is safe
// for concurrent use), keyed by its source.
var stepPatterns sync.Map

func compiledPattern(expr string) *regexp.Regexp {
	if re, ok := stepPatterns.Load(expr); ok {
		return re.(*regexp.Regexp)
	}
	re, _ := stepPatterns.LoadOrStore(expr, regexp.MustCompile(expr))
	return re.(*regexp.Regexp)
}
