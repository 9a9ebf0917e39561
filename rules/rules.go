// Package rules holds what every server of the Cloud Agent Runs API must do,
// as seen from outside: the rules every run, listing, problem and event is
// held to, written as functions over the answers a client observes.
//
// The rules of a single answer (RunAlone, ListingMatchesQuery, ...) are pure
// functions. The rules across answers (a run only moves forward, a walk
// never repeats a run, a run refused to a caller is never listed to it) need
// a memory of what was seen before; Memory keeps that, bounded, and hands
// each exchange to the pure functions.
//
// Nothing here speaks HTTP or knows the mock: the proxy (package proxy)
// turns the traffic it forwards into Exchanges, and anything else that sees
// a server's answers could do the same.
package rules

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Rule is one thing a server must do, as the reports list it.
type Rule struct {
	ID    string `json:"id"`    // stable, kebab-case: what violations are counted by
	Title string `json:"title"` // one sentence a person reads
	// Area groups the rules in the reports: "document", "runs", "listings",
	// "errors", "cancels", "visibility", "events", "schedules", "catalogue",
	// "artifacts", "identities", "messages", "conversations", "follow-ups".
	Area string `json:"area"`
}

// The rules, by ID.
const (
	InvalidRequestRefused   = "invalid-request-refused"
	ResponseFollowsDocument = "response-follows-document"
	EndedRunSaysWhy         = "ended-run-says-why"
	StartedAtFitsState      = "started-at-fits-state"
	TimestampsOrdered       = "timestamps-ordered"
	StatesMoveForward       = "states-move-forward"
	TerminalRunNeverChanges = "terminal-run-never-changes"
	CreatedRunIsItsTask     = "created-run-is-its-task"
	ClaimedRunLinksSession  = "claimed-run-links-session"
	AnswerIsTheOneAsked     = "answer-is-the-one-asked"
	ListingMatchesFilters   = "listing-matches-filters"
	PageWithinLimit         = "page-within-limit"
	NextPageHasRuns         = "next-page-has-runs"
	ListingOrdered          = "listing-in-order"
	WalkNeverRepeats        = "walk-never-repeats"
	ProblemStatusMatches    = "problem-status-matches"
	AcceptedCancelCancels   = "accepted-cancel-cancels"
	CancelRefusedOnlyLate   = "cancel-refused-only-when-too-late"
	RefusedRunNeverListed   = "refused-run-never-listed"
	EventsOrdered           = "events-in-order"
	EventsNeverChange       = "events-never-change"
	EventsTellTheEnd        = "events-tell-the-end"
	FinishedRunTakesNoEvent = "finished-run-takes-no-event"

	DefaultModelListed        = "default-model-listed"
	EnvironmentsOrdered       = "environments-in-order"
	EnvironmentShowsNewestRun = "environment-shows-newest-run"
	SkillsOrdered             = "skills-in-name-order"
	PlanHasContent            = "plan-has-content"
	DeletedIdentityGone       = "deleted-identity-gone"
	MessageTimesSetOnce       = "message-times-set-once"
	FinishedRunTakesNoMessage = "finished-run-takes-no-message"
	ConversationInTimeOrder   = "conversation-in-time-order"
	ConversationKeepsItsRuns  = "conversation-keeps-its-runs"
	ScheduleOneRunPerTick     = "schedule-one-run-per-tick"

	MetadataKept           = "metadata-kept"
	RunKeepsItsHistory     = "run-keeps-its-history"
	FollowupStartsEndedRun = "followup-starts-ended-run"
	HandoffFilesAfterAnEnd = "handoff-files-only-after-an-end"
)

// All is every rule, in the order the reports show them.
var All = []Rule{
	{InvalidRequestRefused, "A request the OpenAPI document does not allow is refused with a 4xx", "document"},
	{ResponseFollowsDocument, "Every response follows the OpenAPI document", "document"},
	{EndedRunSaysWhy, "A FAILED or ERROR run carries a status_message with a message and an error_code", "runs"},
	{StartedAtFitsState, "started_at is unset while a run is QUEUED or PENDING, and set while it is INPROGRESS or BLOCKED", "runs"},
	{TimestampsOrdered, "A run's updated_at and started_at are never before its created_at", "runs"},
	{StatesMoveForward, "A run's state only moves forward (BLOCKED and INPROGRESS may alternate)", "runs"},
	{TerminalRunNeverChanges, "A run seen in a terminal state never changes afterwards", "runs"},
	{CreatedRunIsItsTask, "A run created through the API has its run_id as its task_id", "runs"},
	{MetadataKept, "A run shows the metadata its creation sent, unchanged", "runs"},
	{RunKeepsItsHistory, "A run stays itself through every execution: its created_at, creator, prompt, kind and metadata never change, a started_at stays, its conversation_id never changes, and its run_time and request_usage never shrink", "runs"},
	{DerivedFieldsAgree, "A run's derived fields follow their definitions: LOCAL and GITHUB_ACTION runs are not of a cancellable kind, run_time is an ISO 8601 duration, none before the run started and no longer than its one execution lasted", "runs"},
	{EndedRunStopsCounting, "A run seen ended keeps its run_time, request_usage, executor, metadata and kind until a follow-up starts it again", "runs"},
	{OnBehalfOfCreator, "A run created on_behalf_of a member has that member as its creator and the caller, not the member, as its executor", "runs"},
	{ClaimedRunLinksSession, "A run created through the API that shows its session, claimed or later, links to it and keeps the link", "runs"},
	{AnswerIsTheOneAsked, "A run, schedule or artifact fetched by its id is the one asked for", "runs"},
	{ListingMatchesFilters, "Every run a listing shows matches every filter of the query (executor: the run's executor, or its creator when it shows none)", "listings"},
	{AncestorNotItsOwn, "A listing by ancestor_run_id holds the run's descendants, never the run itself nor a run whose line of parents ends without it", "listings"},
	{EmptyFilterIsNoFilter, "A filter on who executed or created a run given an empty value (executor=, creator=) is no filter, or the listing is refused with a 400", "listings"},
	{ListingOrdered, "A listing sorted by a timestamp is in the order asked for", "listings"},
	{PageWithinLimit, "A page holds no more runs than its limit (20 when none is given)", "listings"},
	{NextPageHasRuns, "A page that says there is a next page, in creation order, is followed by runs", "listings"},
	{WalkNeverRepeats, "Walking the pages of a listing in creation order shows each run once", "listings"},
	{ProblemStatusMatches, "A problem document's status is the HTTP status it came with", "errors"},
	{AcceptedCancelCancels, "A run whose cancel was accepted ends in CANCELLED", "cancels"},
	{CancelRefusedOnlyLate, "A cancel is refused with 400 only once the run has ended or is BLOCKED", "cancels"},
	{RefusedRunNeverListed, "A run refused to a caller is never listed to that caller, nor fetched by it", "visibility"},
	{EventsOrdered, "A poll's events come in increasing sequence order", "events"},
	{EventsNeverChange, "An event polled again is the same, under the same sequence, and none is lost", "events"},
	{EventsTellTheEnd, "A run's terminal event names the state the run ended in", "events"},
	{FinishedRunTakesNoEvent, "A reported event that would move a finished run is refused", "events"},
	{ScheduleOneRunPerTick, "A schedule starts one run per tick of its cron", "schedules"},
	{DefaultModelListed, "The default model is one of the models listed", "catalogue"},
	{EnvironmentsOrdered, "Environments are listed most recently updated first, or by name when asked", "catalogue"},
	{EnvironmentShowsNewestRun, "An environment shows its newest run as its last task", "catalogue"},
	{SkillsOrdered, "The agents (skills) are listed in alphabetical order of name unless asked otherwise", "catalogue"},
	{PlanHasContent, "A PLAN artifact carries its markdown", "artifacts"},
	{DeletedIdentityGone, "A deleted agent identity is neither listed nor fetched afterwards", "identities"},
	{MessageTimesSetOnce, "A message's delivered_at and read_at never change once set", "messages"},
	{FinishedRunTakesNoMessage, "A message to a run that has finished is refused", "messages"},
	{ConversationInTimeOrder, "A conversation's messages come in time order", "conversations"},
	{ConversationKeepsItsRuns, "A conversation holds the prompt of every run that ended in it", "conversations"},
	{FollowupStartsEndedRun, "A follow-up accepted for a run that had ended, in any end state, starts it again", "follow-ups"},
	{FollowupKeepsLiveRun, "A follow-up to a run that has not ended is taken by the execution under way: the run is not sent back to an earlier state", "follow-ups"},
	{HandoffFilesAfterAnEnd, "A run lists no handoff files before one of its executions has ended", "follow-ups"},
}

// suiteOnly are the rules that only the contract suite applies: judging one
// takes two answers the suite asks for side by side (the same listing with
// and without an empty filter), which traffic does not pair. Memory never
// reports them, so the proxy does not list them.
var suiteOnly = map[string]bool{EmptyFilterIsNoFilter: true}

// SeenInTraffic reports whether Memory can find rule id broken in traffic
// it observes: false for the rules only the suite applies.
func SeenInTraffic(id string) bool { return !suiteOnly[id] }

// RuleByID finds a rule of All.
func RuleByID(id string) (Rule, bool) {
	for _, r := range All {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

// Violation is one rule broken by one answer (or a request).
type Violation struct {
	Rule string `json:"rule"`
	// Field names where: "body.runs[2].state", "query.limit", "status".
	Field    string `json:"field"`
	Expected string `json:"expected"`
	Got      string `json:"got"`
	// RunID is the run the violation is about, if any.
	RunID string `json:"run_id,omitempty"`
}

func (v Violation) String() string {
	s := v.Rule + ": " + v.Field + ": expected " + v.Expected + ", got " + v.Got
	if v.RunID != "" {
		s += " (run " + v.RunID + ")"
	}
	return s
}

// The run states, ranked so that "only forward" can be checked. BLOCKED sits
// beside INPROGRESS: a run goes from one to the other and back.
var rank = map[string]int{
	"QUEUED": 0, "PENDING": 1, "CLAIMED": 2, "INPROGRESS": 3, "BLOCKED": 3,
	"SUCCEEDED": 4, "FAILED": 4, "ERROR": 4, "CANCELLED": 4,
}

// IsTerminal tells whether a run in state has ended.
func IsTerminal(state string) bool { r, ok := rank[state]; return ok && r == 4 }

// Rank orders the states: 0 for QUEUED up to 4 for the terminal ones, -1
// for a name that is no state.
func Rank(state string) int {
	if r, ok := rank[state]; ok {
		return r
	}
	return -1
}

// Helpers over decoded JSON.

// Lookup follows a dotted path ("agent_config.model_id") into a JSON
// object; a number steps into an array ("message_ids.0").
func Lookup(doc map[string]any, path string) (any, bool) {
	var cur any = doc
	for _, key := range strings.Split(path, ".") {
		if arr, isArr := cur.([]any); isArr {
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(arr) {
				return nil, false
			}
			cur = arr[i]
			continue
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[key]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// Str is a JSON value as a string: strings as they are, null and absent
// as "", anything else in JSON.
func Str(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	return Show(v)
}

// Show is a JSON value for messages: absent values say so.
func Show(v any) string {
	if v == nil {
		return "nothing"
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

// timeOf reads an RFC 3339 timestamp; ok is false when the field is absent,
// null or not a timestamp (the OpenAPI check says so).
func timeOf(doc map[string]any, field string) (time.Time, bool) {
	s, _ := doc[field].(string)
	if s == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// at names element i of a list field: "body.runs[3]".
func at(field string, i int) string { return field + "[" + strconv.Itoa(i) + "]" }
