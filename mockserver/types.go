package mockserver

import "github.com/agentruns/agentruns/mockserver/store"

// The store's words, under the names the mock's Go API has always used.
type (
	// State is a run's RunState.
	State = store.State
	// ClockMode says whether a mock session's clock follows wall time or
	// only moves when told.
	ClockMode = store.ClockMode
	// AgentConfig is an AmbientAgentConfig.
	AgentConfig = store.AgentConfig
	// MCPServer is an MCPServerConfig.
	MCPServer = store.MCPServer
	// StatusMessage is a RunStatusMessage.
	StatusMessage = store.StatusMessage
	// FateRule decides the fate of a mock session's next runs whose prompt matches.
	FateRule = store.FateRule
)

// The run states.
const (
	Queued     = store.Queued
	Pending    = store.Pending
	Claimed    = store.Claimed
	InProgress = store.InProgress
	Blocked    = store.Blocked
	Succeeded  = store.Succeeded
	Failed     = store.Failed
	Errored    = store.Errored
	Cancelled  = store.Cancelled
)

// The clock modes.
const (
	// RealClock follows wall time, plus however far it has been advanced.
	RealClock = store.RealClock
	// VirtualClock stands still until it is advanced.
	VirtualClock = store.VirtualClock
)

// ErrBadStateFile wraps every reason Load refuses a state file, so a caller
// can tell a corrupt file from a failure to read it.
var ErrBadStateFile = store.ErrBadSave

// MaxStep is the longest time a run may be told to spend in one state
// (Options.Step and the per-state options, fates, fixtures): a year.
const MaxStep = store.MaxStep
