package steps

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/cucumber/godog"
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

	fate string // X-Mock-Fate for the next create, "" for none
	// cancelled tells how the server took the last cancel of the run: ""
	// before any, cancelAccepted or cancelTooLate.
	cancelled string
	last      *response   // the last API response
	mine      roster      // the runs this scenario created
	current   *trackedRun // "the run": the one created last
	ended     map[string]any
	theirs    *trackedRun // a run another team created (@two-callers)
	listing   *listing
	walked    *walk
	events    eventPolls            // every poll of GET /agent/events (run_events.go)
	convs     []conversationDoc     // every conversation fetched (conversations.go)
	cache     map[string]string     // resolved placeholders
	schedules map[string]string     // nickname -> id of the schedules this scenario created
	fetched   []fetchedArtifact     // the artifacts last fetched (artifacts.go)
	handoffs  [][]handoffAttachment // every handoff listing (newest_client.go)
}

// InitializeScenario registers the steps and hooks of one scenario on sc. It
// is the godog scenario initializer: godog calls it once per scenario.
func (su *Suite) InitializeScenario(sc *godog.ScenarioContext) {
	s := &scenario{
		suite:     su,
		api:       su.newClient(),
		label:     "contract-" + randomHex(6),
		unknownID: newUUID(),
		cache:     map[string]string{},
	}
	sc.Before(s.before)
	sc.After(s.rereadEndedRuns) // before s.after, which records the outcome
	sc.After(s.after)
	s.registerCatalogue(sc)     // catalogue.go: environments, models, agents, messages
	s.registerArtifacts(sc)     // artifacts.go
	s.registerConversations(sc) // conversations.go: conversations, transcripts, session redirects
	s.registerNewestClient(sc)  // newest_client.go: follow-ups, handoff files, public redirects, newer filters

	// Creating runs.
	sc.Step(`^I create a run with the prompt "([^"]*)"$`, s.createRunWithPrompt)
	sc.Step(`^I create a run with the prompt "([^"]*)" and:$`, s.createRunWithPromptAnd)
	sc.Step(`^I create a run with:$`, s.createRunWith)
	sc.Step(`^I create a run with the failing prompt$`, s.createRunWithFailingPrompt)
	sc.Step(`^I create a run through "POST (/agent/runs?)" with the prompt "([^"]*)" and:$`, s.createRunThrough)
	sc.Step(`^I created (\d+) runs?$`, s.createdRuns)
	sc.Step(`^I created these runs:$`, s.createdTheseRuns)

	// The last response.
	sc.Step(`^the response status is (\d+)$`, s.responseStatusIs)
	sc.Step(`^the response has a non-empty "([^"]*)"$`, s.responseHasNonEmpty)
	sc.Step(`^the response field "([^"]*)" is "([^"]*)"$`, s.responseFieldIs)
	sc.Step(`^the response field "([^"]*)" equals the response field "([^"]*)"$`, s.responseFieldEqualsField)
	sc.Step(`^the response is the run's id as a JSON string$`, s.responseIsRunID)
	sc.Step(`^the response is a problem with status (\d+) and code "([^"]*)"$`, s.responseIsProblem)
	sc.Step(`^the problem says it is retryable$`, s.problemIsRetryable)

	// One run's details.
	sc.Step(`^I fetch the run$`, s.fetchTheRun)
	sc.Step(`^I fetch a run that does not exist$`, s.fetchUnknownRun)
	sc.Step(`^the run's "([^"]*)" is "([^"]*)"$`, s.runFieldIs)
	sc.Step(`^the run's "([^"]*)" equals its "([^"]*)"$`, s.runFieldEqualsField)
	sc.Step(`^the run has a non-empty "([^"]*)"$`, s.runHasNonEmpty)
	sc.Step(`^the run's "([^"]*)" is a UUID$`, s.runFieldIsUUID)
	sc.Step(`^the run's "([^"]*)" is an absolute URL$`, s.runFieldIsURL)
	sc.Step(`^the run's "([^"]*)" is a timestamp$`, s.runFieldIsTimestamp)
	sc.Step(`^the run's "([^"]*)" is a timestamp not before its "([^"]*)"$`, s.runFieldIsTimestampNotBefore)
	sc.Step(`^the run's agent configuration holds everything I sent$`, s.runConfigHoldsSent)
	sc.Step(`^the run is in state "([A-Z]+)"$`, s.runIsInState)
	sc.Step(`^the run has a status message with error code "([^"]*)"$`, s.runHasStatusCode)
	sc.Step(`^the run ended in FAILED or ERROR, with a status message carrying a message and an error code$`, s.endedFailedWithStatus)

	// Listing.
	sc.Step(`^I list runs with "([^"]*)"$`, s.listRuns)
	sc.Step(`^I walk every page of "([^"]*)"$`, s.walkPages)
	sc.Step(`^the listing holds exactly (.+)$`, s.listingHoldsExactly)
	sc.Step(`^the listing holds ([a-z-]+), and of ([a-z-]+(?: and [a-z-]+)*) only runs that moved since ([a-z-]+) was created$`, s.listingHoldsAndMaybe)
	sc.Step(`^the listing holds at most (\d+) runs?$`, s.listingHoldsAtMost)
	sc.Step(`^the listing holds (\d+) runs?$`, s.listingHoldsCount)
	sc.Step(`^the listing holds the runs I created, (newest|oldest) first$`, s.listingHoldsCreatedInOrder)
	sc.Step(`^the listed runs are ordered by "([^"]*)", (newest|oldest) first$`, s.listingOrderedBy)
	sc.Step(`^the listing has a list of runs and page information saying whether more follow$`, s.listingHasRunsAndPageInfo)
	sc.Step(`^the listing says there is a next page$`, s.listingHasNextPage)
	sc.Step(`^the listing says there is no next page$`, s.listingHasNoNextPage)
	sc.Step(`^every listed run carries a status message with a message and an error code$`, s.listedRunsSayWhy)
	sc.Step(`^the walk took (\d+) pages?$`, s.walkTookPages)
	sc.Step(`^every page of the walk held (\d+) runs?$`, s.walkPagesHeld)
	sc.Step(`^the walk saw each of the runs I created exactly once$`, s.walkSawEachOnce)

	// Progression.
	sc.Step(`^I watch the run until it reaches a terminal state$`, s.watchUntilTerminal)
	sc.Step(`^I wait until the run is "(PENDING|CLAIMED|INPROGRESS)" or later$`, s.waitUntilAtLeast)
	sc.Step(`^(\d+) poll intervals? pass(?:es)?$`, s.pollIntervalsPass)
	sc.Step(`^the run only moved forward along QUEUED, PENDING, CLAIMED, INPROGRESS to a terminal state$`, s.onlyMovedForward)
	sc.Step(`^the run was seen in ((?:[A-Z]+)(?:(?:, | and )[A-Z]+)*), in that order$`, s.seenInOrder)
	sc.Step(`^the run's "([^"]*)" never went back$`, s.neverWentBack)
	sc.Step(`^the run had a "([^"]*)" from the moment it was INPROGRESS, and none before it was CLAIMED$`, s.startedAtRule)
	sc.Step(`^the run had a "([^"]*)" from the moment it was CLAIMED$`, s.presentOnceClaimed)
	sc.Step(`^the run has not changed since it ended$`, s.unchangedSinceEnded)

	// Cancelling.
	sc.Step(`^I cancel the run, retrying while the server answers a retryable 409$`, s.cancelRun)
	sc.Step(`^I send a single cancel request for the run$`, s.cancelRunOnce)
	sc.Step(`^the cancel was accepted with the run's id, or refused with 400 because the run had ended or was BLOCKED$`, s.cancelAcceptedOrTooLate)
	sc.Step(`^the run is in state "CANCELLED" if the cancel was accepted$`, s.cancelledIfAccepted)
	sc.Step(`^a run still PENDING refused the cancel with a retryable 409, and one that had moved on took it as any other$`, s.pendingCancelJudged)
	sc.Step(`^I cancel a run that does not exist$`, s.cancelUnknownRun)
	sc.Step(`^a moment later I cancelled run "([^"]*)", unless it had already ended$`, s.cancelledRunLater)

	// Two callers of different teams.
	sc.Step(`^another team has created a run$`, s.anotherTeamCreatedARun)
	sc.Step(`^I fetch the other team's run$`, s.fetchTheirRun)
	sc.Step(`^I cancel the other team's run$`, s.cancelTheirRun)
	sc.Step(`^the walk never saw the other team's run$`, s.walkNeverSawTheirRun)

	// The mock's control API.
	sc.Step(`^the mock will end my next run in "(SUCCEEDED|FAILED|ERROR)", spending (\d+) seconds? in each state$`, s.mockWillEndNextRunPaced)
	sc.Step(`^the mock will end my next run in "(SUCCEEDED|FAILED|ERROR)" with error code "([^"]*)"$`, s.mockWillEndNextRunWithCode)
	sc.Step(`^the mock puts the run into "([A-Z]+)"$`, s.mockPutsRunInto)
	sc.Step(`^the mock puts the run into "([A-Z]+)" with error code "([^"]*)"$`, s.mockPutsRunIntoWithCode)
	sc.Step(`^the mock has put run "([^"]*)" into "([A-Z]+)"$`, s.mockHasPutRunInto)
	sc.Step(`^an hour passes on the mock's clock$`, s.anHourPassesOnTheMocksClock)

	// Authentication and bad requests.
	// Events (run_events.go).
	sc.Step(`^I poll the run's events$`, s.pollTheRunsEvents)
	sc.Step(`^I poll the run's events again$`, s.pollTheRunsEvents)
	sc.Step(`^I poll the run's events since the last one$`, s.pollSinceTheLast)
	sc.Step(`^the events are about the run, in increasing sequence order$`, s.eventsInOrderAboutTheRun)
	sc.Step(`^the last event reports the run's state$`, s.lastEventReportsTheEnd)
	sc.Step(`^every event occurred between the run's creation and its last update$`, s.eventsWithinTheRun)
	sc.Step(`^the events are the same as at the first poll$`, s.eventsSameAsFirstPoll)
	sc.Step(`^no events came back$`, s.noEventsCameBack)
	sc.Step(`^the run's events are (run_[a-z_]+(?:(?:, | and )run_[a-z_]+)*)$`, s.eventsAre)
	sc.Step(`^the "(run_[a-z_]+)" event occurred at the run's "([^"]*)"$`, s.eventOccurredAtRunField)
	sc.Step(`^I report the event "(run_[a-z_]+)" for the run with the execution id "([^"]*)"$`, s.reportEvent)
	sc.Step(`^I report the event "(run_[a-z_]+)" for the run$`, s.reportEventPlain)
	sc.Step(`^the last event carries the execution id "([^"]*)"$`, s.reportedEventCarries)

	sc.Step(`^I send "(GET|POST) ([^"]*)" with no Authorization header$`, s.sendWithoutAuth)
	sc.Step(`^I send "(GET|POST) ([^"]*)" with the Authorization header "([^"]*)"$`, s.sendWithAuthHeader)
	sc.Step(`^I post to "([^"]*)" the body (.*)$`, s.postRawBody)

	// Schedules and the agent catalogue (schedules.go).
	su.scheduleSteps(sc, s)
}

// before isolates the scenario in its own mock session, or skips it when it
// needs a control API the server does not have.
func (s *scenario) before(ctx context.Context, sc *godog.Scenario) (context.Context, error) {
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
	if s.api.control == nil {
		switch {
		case hasTag(sc, "@mock-control"):
			s.skipReason = "needs the mock control API (@mock-control), which " + s.suite.cfg.BaseURL + " does not offer"
		case hasTag(sc, "@mock-only"):
			s.skipReason = "checks what only the bundled mock promises beyond the published API document (@mock-only); " +
				s.suite.cfg.BaseURL + " does not offer the mock's control API, so it is not taken for the mock"
		default:
			return ctx, nil
		}
		fmt.Fprintf(s.suite.cfg.Log, "skipped %q: %s\n", sc.Name, s.skipReason)
		return ctx, godog.ErrSkip
	}
	s.api.session = newUUID()
	if err := s.api.freezeClock(ctx); err != nil {
		return ctx, fmt.Errorf("isolating the scenario in its own mock session: %w", err)
	}
	return ctx, nil
}

// after records the outcome and, on a real server, cancels the runs the
// scenario left running so that they stop costing money.
func (s *scenario) after(ctx context.Context, sc *godog.Scenario, err error) (context.Context, error) {
	s.suite.record(sc, err, s.skipReason)
	if s.api.control == nil {
		s.cancelLeftovers(context.WithoutCancel(ctx))
		s.deleteSchedules(context.WithoutCancel(ctx))
	} else if s.api.session != "" {
		_ = s.api.closeSession(context.WithoutCancel(ctx)) // best effort: the mock also evicts idle sessions
	}
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
	} else if err := sleep(ctx, min(wait, 10*time.Second)); err != nil {
		return ctx, err
	}
	for _, r := range ended {
		if _, err := s.fetch(ctx, r); err != nil {
			return ctx, fmt.Errorf("re-reading run %s after it ended: %w", s.mine.nameOf(r), err)
		}
	}
	return ctx, nil
}

// cancelLeftovers cancels, best effort, every run of the scenario that had not
// ended when it was last seen.
func (s *scenario) cancelLeftovers(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, r := range s.mine.runs {
		if r.details != nil && isTerminal(str(r.details["state"])) {
			continue
		}
		_, _ = s.api.do(ctx, call{method: http.MethodPost, path: "/agent/runs/" + pathEscape(r.id) + "/cancel"})
	}
	if s.theirs != nil {
		_, _ = s.other().do(ctx, call{method: http.MethodPost, path: "/agent/runs/" + pathEscape(s.theirs.id) + "/cancel"})
	}
}

func hasTag(sc *godog.Scenario, tag string) bool {
	for _, t := range sc.Tags {
		if t.Name == tag {
			return true
		}
	}
	return false
}
