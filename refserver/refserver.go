// Package refserver is a second, independent server of the Cloud Agent Runs
// API (runs, events, what runs may name, artifacts, schedules, conversations,
// identities and messages), written only from the service's published
// OpenAPI document, and from our document's additions marked as the newest
// client's (follow-ups, handoff files, the public redirects, run metadata
// and the newer filters and values), sharing no code with the bundled mock. The contract
// suite's tests run against it to prove that the suite never fails a server
// that follows the published document but behaves differently from the mock
// where the document allows it: runs that move in real time, fast or slow;
// all four artifact types; optional fields the mock never sends; task ids that
// differ from run ids on old runs; lists ordered by last update by default.
//
// It is a test double, not a product: two teams, every key accepted,
// everything in memory, no control API.
package refserver

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Options tune the server.
type Options struct {
	// Step is how long a created run stays in each state before its final
	// one. A few milliseconds makes a server whose runs finish before the
	// caller can look; 100 ms one whose runs move while the caller watches.
	// Default 100 ms.
	Step time.Duration
	// PendingFor, when set, is how long a created run stays PENDING (being
	// handed to a worker, when a cancel is answered with a retryable 409)
	// instead of one Step.
	PendingFor time.Duration
	// BlockedFor, when set, sends every third created run through BLOCKED
	// (waiting for a person) for this long while it is in progress.
	BlockedFor time.Duration
	// Capacity, when set, is how many runs a team runs at once, as a real
	// team's plan allows: a run created beyond it waits in QUEUED until
	// one of the team's runs ends, and the create answers at_capacity:
	// true. (Step sets the pace: a run takes about four Steps.)
	Capacity int
	// Clock, when set, tells the time instead of time.Now: a test moves
	// it to let the server's runs move without waiting.
	Clock func() time.Time
	// FailingPrompt, when set, is a prompt whose runs end in FAILED, for
	// the suite's --failing-prompt.
	FailingPrompt string
	// Prefix is the path the API is served under. Default "/api/v1", as the
	// real service.
	Prefix string

	// The switches below each take another choice the published document
	// leaves open; the contract suite must pass under every one.

	// Precision, when set, is the unit timestamps are shown in (a
	// millisecond, a second), while the server keeps and filters on
	// nanoseconds.
	Precision time.Duration
	// EventLag, when set, is how long after its state began an event
	// first shows in a poll (stamped with the moment the state began).
	EventLag time.Duration
	// CancelLag, when set, is how long after a cancel is accepted the run
	// turns CANCELLED (unless it ends first).
	CancelLag time.Duration
	// ForeignNotFound answers 404 rather than 403 for another team's run:
	// the server hides that it exists. (Keys that begin with
	// OtherTeamKeyPrefix are of a second team.)
	ForeignNotFound bool
	// StrictReferences refuses a model, an environment or a skill the
	// server does not offer (GET /agent/models, /agent/environments,
	// /agent): 400 for a model or a skill, 403 for an environment.
	StrictReferences bool
	// ForeignEnvironmentFailed accepts a run of the first team in the
	// second team's environment, rather than refusing it, and ends it
	// FAILED (resource_not_found) before any worker claims it: the
	// published document does not say a reference must be refused at
	// creation, and such a run never runs there.
	ForeignEnvironmentFailed bool
	// TerseErrors sends problems without "detail".
	TerseErrors bool
	// LateSessions shows a run's session only once it is in progress, not
	// from the moment it is claimed ("if available").
	LateSessions bool
	// PageCap, when set, holds a page of runs to at most this many, below
	// any limit the caller asks for.
	PageCap int
	// TransientErrors, when set, ends every n-th created run in ERROR on its
	// own, a platform error: every other one before any worker claims it,
	// the others while they work.
	TransientErrors int
	// MessagingOff refuses to send messages between runs (403): the
	// document keeps sending internal, behind a feature flag.
	MessagingOff bool
	// SystemFirst opens every conversation with the system's instructions,
	// before the user's prompt.
	SystemFirst bool
	// Published serves the published document (May 2026) alone: none of
	// the newest client's operations (404; GET of an identity 405), fields
	// (a run's executor and metadata, an identity's settings) or values
	// (its sources, artifact type and harnesses are refused), and the
	// session redirect asks for a key (published.go).
	Published bool

	// The switches below each take a choice the newest client
	// (oz-agent-sdk 1.4.0-alpha.6) leaves open.

	// LiveRunTime counts run_time up to the present while a run works,
	// rather than up to its latest change (derived.go). Either way it
	// stops when the run ends.
	LiveRunTime bool
	// ExecutorOnlyWhenDelegated leaves executor out of a run its creator
	// executed, which, on this server, is every run.
	ExecutorOnlyWhenDelegated bool
	// EmptyFilterRefused answers 400 to executor= or creator= with an
	// empty value, rather than reading it as no filter.
	EmptyFilterRefused bool

	// Extras answers as a service that has moved ahead of the document
	// (extras.go), for tests of what a proxy reports as drift: a member
	// the document does not declare ("rollout_ring": "canary") in every
	// object of every JSON answer, but in the maps keyed by names; every
	// run's source outside its enum ("SLACK_WORKFLOW"); 203, which the
	// document does not list, from GET /agent/models to a request with
	// `Prefer: status=203`; and an operation the document lacks, GET
	// /agent/runs/{runId}/usage (200 {"run_id", "credits_used"} for a run
	// the caller may see). The contract suite is not meant to pass it.
	Extras bool
}

// Created is how many runs callers have created so far, both teams'.
func (s *Server) Created() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.created
}

// OtherTeamKeyPrefix begins the API keys of a second team, for the
// scenarios about another team's runs.
const OtherTeamKeyPrefix = "other-team-"

// Server serves the API. Create it with New.
type Server struct {
	opts Options

	mu      sync.Mutex
	runs    map[string]*run
	all     []*run // every run, in creation order
	created int    // runs created through the API so far
	offer   offer  // what runs may name (offer.go)
	// The event log (events.go).
	events    []event
	numbered  map[eventKey]bool
	nextEvent int64
	// Schedules, by id (schedules.go).
	schedules map[string]*schedule
	// Every copy of every message, in the order sent (messages.go).
	messages []*message
	// Transcript links handed out, by their secret (conversations.go).
	transcripts map[string]transcriptLink
	// Artifact download links handed out, by their secret (artifacts.go).
	downloads map[string]downloadLink
	// Each team's agent identities (identities.go).
	identities map[string][]*identity
}

// New makes a server holding a handful of older runs from other sources.
func New(opts Options) *Server {
	if opts.Step <= 0 {
		opts.Step = 100 * time.Millisecond
	}
	if opts.Prefix == "" {
		opts.Prefix = "/api/v1"
	}
	s := &Server{opts: opts, runs: map[string]*run{}, offer: newOffer(), schedules: map[string]*schedule{}, transcripts: map[string]transcriptLink{}, downloads: map[string]downloadLink{}, identities: map[string][]*identity{}}
	for _, r := range seededRuns(s.now()) {
		s.add(r)
	}
	return s
}

// now is the server's time (Options.Clock).
func (s *Server) now() time.Time {
	if s.opts.Clock != nil {
		return s.opts.Clock()
	}
	return time.Now()
}

func (s *Server) add(r *run) {
	s.runs[r.id] = r
	s.all = append(s.all, r)
}

// ServeHTTP routes a request. Every path needs a bearer key, even one the
// server does not know, as the real service checks the key first.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.opts.Extras {
		s.serveWithExtras(w, r) // extras.go
		return
	}
	s.serveAsOptions(w, r)
}

// serveAsOptions serves a request as the switches other than Extras say.
func (s *Server) serveAsOptions(w http.ResponseWriter, r *http.Request) {
	if s.opts.Precision > 0 || s.opts.TerseErrors {
		pw := &presenter{header: http.Header{}}
		s.serve(pw, r)
		pw.present(w, s.opts)
		return
	}
	s.serve(w, r)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if token, ok := strings.CutPrefix(r.URL.Path, "/downloads/transcripts/"); ok && r.Method == http.MethodGet {
		s.downloadTranscript(w, r, token) // the link is its own credential
		return
	}
	if token, ok := strings.CutPrefix(r.URL.Path, "/downloads/artifacts/"); ok && r.Method == http.MethodGet {
		s.download(w, r, token)
		return
	}
	if s.publishedGate(w, r) {
		return
	}
	// The redirects need no key (the newest client sends none): a shared
	// link resolves before anyone signs in.
	if rest, ok := strings.CutPrefix(r.URL.Path, s.opts.Prefix+"/agent/"); ok && r.Method == http.MethodGet {
		if parts := strings.Split(strings.Trim(rest, "/"), "/"); len(parts) == 3 && parts[2] == "redirect" {
			switch parts[0] {
			case "sessions":
				s.sessionRedirect(w, parts[1])
				return
			case "conversations":
				s.conversationRedirect(w, parts[1])
				return
			}
		}
	}
	caller, ok := authenticate(r.Header.Get("Authorization"))
	if !ok {
		writeProblem(w, r, http.StatusUnauthorized, "authentication_required", "Authentication required", "send Authorization: Bearer <API key>")
		return
	}
	path, found := strings.CutPrefix(r.URL.Path, s.opts.Prefix)
	if !found {
		notFound(w, r, "no such operation")
		return
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) == 2 && parts[0] == "agent" && parts[1] == "run",
		len(parts) == 2 && parts[0] == "agent" && parts[1] == "runs" && r.Method == http.MethodPost:
		if r.Method != http.MethodPost {
			methodNotAllowed(w, r)
			return
		}
		s.create(w, r, caller)
	case len(parts) == 2 && parts[0] == "agent" && parts[1] == "runs":
		if r.Method != http.MethodGet {
			methodNotAllowed(w, r)
			return
		}
		s.list(w, r, caller)
	case len(parts) == 3 && parts[0] == "agent" && parts[1] == "runs":
		if r.Method != http.MethodGet {
			methodNotAllowed(w, r)
			return
		}
		s.get(w, r, caller, parts[2])
	case len(parts) == 4 && parts[0] == "agent" && parts[1] == "runs" && parts[3] == "cancel":
		if r.Method != http.MethodPost {
			methodNotAllowed(w, r)
			return
		}
		s.cancel(w, r, caller, parts[2])
	case len(parts) == 2 && parts[0] == "agent" && parts[1] == "events":
		if r.Method != http.MethodGet {
			methodNotAllowed(w, r)
			return
		}
		s.pollEvents(w, r, caller)
	case len(parts) == 1 && parts[0] == "agent",
		len(parts) == 2 && parts[0] == "agent" && (parts[1] == "models" || parts[1] == "environments"):
		if r.Method != http.MethodGet {
			methodNotAllowed(w, r)
			return
		}
		s.listOffered(w, caller, parts[len(parts)-1])
	case len(parts) == 4 && parts[0] == "agent" && parts[1] == "runs" && (parts[3] == "conversation" || parts[3] == "transcript"):
		if r.Method != http.MethodGet {
			methodNotAllowed(w, r)
			return
		}
		s.runConversation(w, r, caller, parts[2], parts[3])
	case len(parts) == 3 && parts[0] == "agent" && parts[1] == "conversations":
		if r.Method != http.MethodGet {
			methodNotAllowed(w, r)
			return
		}
		s.conversationByID(w, r, caller, parts[2])
	case len(parts) == 4 && parts[0] == "agent" && parts[1] == "runs" && parts[3] == "followups":
		if r.Method != http.MethodPost {
			methodNotAllowed(w, r)
			return
		}
		s.followUp(w, r, caller, parts[2])
	case len(parts) == 5 && parts[0] == "agent" && parts[1] == "runs" && parts[3] == "handoff" && parts[4] == "attachments":
		if r.Method != http.MethodGet {
			methodNotAllowed(w, r)
			return
		}
		s.handoffAttachments(w, r, caller, parts[2])
	case len(parts) == 3 && parts[0] == "agent" && parts[1] == "artifacts":
		if r.Method != http.MethodGet {
			methodNotAllowed(w, r)
			return
		}
		s.artifact(w, r, caller, parts[2])
	case len(parts) >= 2 && parts[0] == "agent" && parts[1] == "identities":
		s.serveIdentities(w, r, caller, parts[2:])
	case len(parts) >= 2 && parts[0] == "agent" && parts[1] == "messages":
		s.serveMessages(w, r, caller, parts[2:])
	case len(parts) >= 2 && parts[0] == "agent" && parts[1] == "schedules":
		s.serveSchedules(w, r, caller, parts[2:])
	default:
		notFound(w, r, "no such operation")
	}
}

// caller is who sent a request: one user of one of the server's two teams.
type caller struct {
	uid  string
	name string
	team string
}

// The server's teams: every key is of the first, but those that begin with
// OtherTeamKeyPrefix.
const (
	team      = "team-reference"
	otherTeam = "team-other"
)

// authenticate accepts any non-empty bearer key, each key its own user.
func authenticate(header string) (caller, bool) {
	scheme, key, ok := strings.Cut(header, " ")
	key = strings.TrimSpace(key)
	if !ok || !strings.EqualFold(scheme, "Bearer") || key == "" {
		return caller{}, false
	}
	sum := sha256.Sum256([]byte(key))
	uid := "user-" + hex.EncodeToString(sum[:6])
	c := caller{uid: uid, name: "API user " + uid[5:9], team: team}
	if strings.HasPrefix(key, OtherTeamKeyPrefix) {
		c.team = otherTeam
	}
	return c, true
}

// visible finds a run the caller's team may see, or answers why not: 404
// for no such run, 403 (or 404, with ForeignNotFound) for another team's.
// Called with s.mu held.
func (s *Server) visible(w http.ResponseWriter, r *http.Request, c caller, id string) (*run, bool) {
	run, ok := s.runs[id]
	switch {
	case !ok:
		notFound(w, r, "no run has the id "+id)
	case run.team() != c.team && s.opts.ForeignNotFound:
		notFound(w, r, "no run has the id "+id)
	case run.team() != c.team:
		writeProblem(w, r, http.StatusForbidden, "not_authorized", "Not authorized", "the run belongs to another team")
	default:
		return run, true
	}
	return nil, false
}

func (s *Server) get(w http.ResponseWriter, r *http.Request, c caller, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run, ok := s.visible(w, r, c, id)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, s.show(run, s.now()))
}

// cancel follows the published document's rules: a finished or BLOCKED run
// is a 400, a PENDING one a retryable 409, and a run the platform does not
// run itself (local, GitHub Action, self-hosted worker) a 422.
func (s *Server) cancel(w http.ResponseWriter, r *http.Request, c caller, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run, ok := s.visible(w, r, c, id)
	if !ok {
		return
	}
	now := s.now()
	state := run.at(now).state
	switch {
	case isTerminal(state) || state == "BLOCKED":
		writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request", "the run is "+state+" and cannot be cancelled")
	case !run.cancelledAt.IsZero():
		writeJSON(w, http.StatusOK, run.id) // accepted before, taking effect (CancelLag)
	case state == "PENDING":
		writeProblem(w, r, http.StatusConflict, "conflict", "Conflict", "the run is being handed to a worker; try again in a moment")
	case run.source == "LOCAL" || run.source == "GITHUB_ACTION" || run.selfHosted():
		writeProblem(w, r, http.StatusUnprocessableEntity, "operation_not_supported", "Operation not supported", "runs from "+run.source+" or on a self-hosted worker cannot be cancelled here")
	default:
		run.cancelAccepted, run.cancelledAt = now, now.Add(s.opts.CancelLag)
		writeJSON(w, http.StatusOK, run.id)
	}
}

// show is a run as the API shows it now: the document's RunItem, less the
// newest client's fields when the server serves the published document
// alone.
func (s *Server) show(r *run, now time.Time) map[string]any {
	if s.opts.Published {
		return publishedRun(s.runItem(r, now))
	}
	return s.runItem(r, now)
}
