package mockserver

import (
	"github.com/agentruns/agentruns/mockserver/numbered"
	"github.com/agentruns/agentruns/mockserver/store"
)

// The errors the mock's Go API returns, for callers to match with
// errors.Is: each is the store's own sentinel, under the same name, so a
// caller outside this module (which cannot import mockserver/store) can
// tell a run that is not there from a clock moved backwards. Every
// sentinel the store exports is here (TestEveryStoreErrorIsExported).
var (
	// artifacts
	ErrArtifactNotFound       = store.ErrArtifactNotFound
	ErrArtifactNotRetrievable = store.ErrArtifactNotRetrievable
	// clock
	ErrClockBackwards = store.ErrClockBackwards
	ErrClockRange     = store.ErrClockRange
	// conversations
	ErrNoConversation        = store.ErrNoConversation
	ErrConversationNotFound  = store.ErrConversationNotFound
	ErrConversationOtherTeam = store.ErrConversationOtherTeam
	ErrOtherHarness          = store.ErrOtherHarness
	// environments
	ErrEnvironmentNotFound = store.ErrEnvironmentNotFound
	ErrEnvironmentHidden   = store.ErrEnvironmentHidden
	// events
	ErrUnknownEvent   = store.ErrUnknownEvent
	ErrEventBackwards = store.ErrEventBackwards
	ErrRunEventsFull  = store.ErrRunEventsFull
	// followups
	ErrFollowupEmpty    = store.ErrFollowupEmpty
	ErrFollowupNotTaken = store.ErrFollowupNotTaken
	ErrTooManyFollowups = store.ErrTooManyFollowups
	// handoff
	ErrHandoffNotFound = store.ErrHandoffNotFound
	// identities
	ErrIdentityNotFound    = store.ErrIdentityNotFound
	ErrIdentityOtherTeam   = store.ErrIdentityOtherTeam
	ErrDefaultIdentity     = store.ErrDefaultIdentity
	ErrPlanLimit           = store.ErrPlanLimit
	ErrIdentityUnavailable = store.ErrIdentityUnavailable
	ErrTooManyKeys         = store.ErrTooManyKeys
	ErrNotAPerson          = store.ErrNotAPerson
	// messages
	ErrMessageNotFound   = store.ErrMessageNotFound
	ErrMessageOtherTeam  = store.ErrMessageOtherTeam
	ErrRecipientFinished = store.ErrRecipientFinished
	ErrMessageTooLarge   = store.ErrMessageTooLarge
	ErrInboxFull         = store.ErrInboxFull
	ErrTeamMailFull      = store.ErrTeamMailFull
	// metadata
	ErrMetadataTooMany = store.ErrMetadataTooMany
	// names
	ErrBadSessionName = store.ErrBadSessionName
	// runs
	ErrRunNotFound   = store.ErrRunNotFound
	ErrOtherTeam     = store.ErrOtherTeam
	ErrStoreFull     = store.ErrStoreFull
	ErrTerminal      = store.ErrTerminal
	ErrPending       = store.ErrPending
	ErrBlocked       = store.ErrBlocked
	ErrNotCancelable = store.ErrNotCancelable
	ErrNoParent      = store.ErrNoParent
	ErrBackwards     = store.ErrBackwards
	ErrUnknownState  = store.ErrUnknownState
	// runs_list
	ErrStalePosition = store.ErrStalePosition
	ErrNoAncestor    = store.ErrNoAncestor
	// schedules
	ErrScheduleNotFound = store.ErrScheduleNotFound
	ErrScheduleOther    = store.ErrScheduleOther
	ErrBadCron          = store.ErrBadCron
	ErrCronNeverFires   = store.ErrCronNeverFires
	ErrScheduleTooLarge = store.ErrScheduleTooLarge
	ErrTooManySchedules = store.ErrTooManySchedules
	// store
	ErrTooManySessions = store.ErrTooManySessions
)

// ErrTooManyRules is AddFate's and AddFault's answer when the session
// already holds the most rules of that kind (100). A rule that does not
// parse is refused with an error that names what is wrong in it, matched
// by no sentinel: there is nothing to do about it but fix the rule.
var ErrTooManyRules = numbered.ErrFull
