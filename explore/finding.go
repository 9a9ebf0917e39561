// Package explore generates sequences of calls over every operation a
// server serves, from the API document's schemas and the ids and values the
// server gave back, judges every answer (the document, the rules across
// answers of package rules, the listing invariants, tenancy), shrinks a
// sequence that shows a finding to a shortest one, and prints it as a
// scenario written with the suite's own steps, with the curl lines of its
// exchanges. Command agentruns-contract runs it with --explore.
package explore

import (
	"net/url"
	"time"
)

// Team names whose key a call was sent with.
const (
	MainTeam  = ""      // the key the suite is given (--api-key)
	OtherTeam = "other" // the second team's key (--other-api-key)
)

// Call is one request the exploration sent and what came back.
type Call struct {
	Team   string     // MainTeam or OtherTeam
	Method string     // GET, POST, PUT, PATCH, DELETE
	Path   string     // the path below the base URL with ids filled in, e.g. /agent/runs/3f2a...
	Query  url.Values // the query as sent (repeated or unknown parameters included)
	Body   []byte     // the JSON request body as sent; nil when none
	// Invalid says what is wrong with the request on purpose, e.g.
	// "query parameter limit above its maximum 100"; "" for a valid request.
	Invalid string
	Status  int    // the answer's status code
	Answer  []byte // the answer's body
	// Clock, when set, makes the call no request of the API: the
	// exploration moved the mock's clock by Clock (Method and Path are
	// empty), so that a sequence replayed, or its scenario, moves it too.
	Clock time.Duration
}

// Finding is one thing the exploration saw break.
type Finding struct {
	// Cause is the kind of break the reports group by, e.g.
	// "server error on a valid request", "answer breaks the document",
	// "invalid request accepted", "listing shows a run outside its filter",
	// or the name of a rule of package rules.
	Cause string
	// Detail says what was seen, in one or a few sentences.
	Detail string
	// Calls is the shortest sequence found that still shows the finding;
	// the finding shows at its last call.
	Calls []Call
	// Seed replays the exploration that found it.
	Seed int64
	// Replay is the command line that replays it: agentruns-contract and
	// the flags of the exploration (budget, seed, read-only, run budget).
	Replay string
}

// Result is what one exploration did and found.
type Result struct {
	Seed     int64     // replays the exploration (--seed)
	Calls    int       // requests sent
	Findings []Finding // each shrunk; one per rule across answers broken, or per other cause and operation
	// Created counts what the exploration created on the server, by kind
	// ("runs", "schedules", "agent identities", ...), so that a report can
	// say what it cost.
	Created map[string]int
	// ReadOnly tells whether only reads were sent.
	ReadOnly bool
	// RunBudget is the most runs the exploration would start (creations
	// and follow-ups); 0 for no budget but the team's capacity.
	// RunBudgetDefault says it is the default of a server without the
	// mock's control API, not one given.
	RunBudget        int
	RunBudgetDefault bool
	// OtherTeam says a key of another team was given; OtherTeamCalls
	// counts the calls sent with it (tenancy was explored only if some
	// were).
	OtherTeam      bool
	OtherTeamCalls int
	// Unreached names the operations the exploration never called, and
	// why (read-only, budget, nothing to call them on).
	Unreached map[string]string
	// Replay is the command line that replays the exploration.
	Replay string
}
