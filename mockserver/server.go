// Package mockserver is a stateful, in-memory implementation of the Cloud
// Agent Runs API for developing and testing clients offline. Runs it creates
// exist afterwards, move through their states as its clock runs, and can be
// steered by tests through the control API under /__mock/.
//
// This package is the mock's HTTP side: the request pipeline (pipeline.go),
// the routing table (routes.go), one handlers file per resource, the JSON
// and problem encoding, faults and the request journal. What the mock
// remembers lives in mockserver/store.
package mockserver

import (
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/mockserver/store"
	"github.com/agentruns/agentruns/openapi"
)

// Options configure a Server. The zero value is a working mock on the
// embedded fixtures with a real clock.
type Options struct {
	// Fixtures to start from; nil means the embedded set.
	Fixtures *fixtures.Set
	// ClockMode is RealClock (the default) or VirtualClock.
	ClockMode ClockMode
	// ClockStart is every mock session's first instant, on opening and on
	// reset; zero means the wall time at that moment.
	ClockStart time.Time
	// Step is how long a new run stays in each of QUEUED, PENDING, CLAIMED
	// and INPROGRESS; 0 means 2s. The per-state fields override it.
	Step                                 time.Duration
	Queued, Pending, Claimed, InProgress time.Duration
	// StrictAuth refuses API keys that no fixture principal owns.
	StrictAuth bool
	// ControlToken, when set, must be sent as a bearer token to /__mock/.
	ControlToken string
	// DisableControl turns the control API off; its paths are then 404.
	DisableControl bool
	// MaxBodyBytes caps request bodies; 0 means 1 MiB.
	MaxBodyBytes int64
	// MaxPageBytes is the byte budget of one page of runs (a page over it
	// ends early, with a cursor to the rest); 0 means 2 MiB.
	MaxPageBytes int
	// BodyBudget bounds the bytes of request bodies held at once, those
	// still arriving included; 0 means 256 × MaxBodyBytes. A body past it
	// is refused with a retryable 429.
	BodyBudget int64
	// BodyTimeout is how long a request body may take to arrive once the
	// mock reads it; 0 means 10s.
	BodyTimeout time.Duration
	// MaxRuns caps the runs each team may create in one mock session (the
	// fixtures' runs do not count; a reset makes room); 0 means no cap.
	MaxRuns int
	// MaxSessions caps how many isolated mock sessions may exist; 0 means 1000.
	MaxSessions int
	// SessionLinkBase prefixes agent session links; "" means the real service's.
	SessionLinkBase string
	// LinkLifetime is how long, on the mock session's clock, every signed
	// link the mock hands out works: artifact, handoff file and transcript
	// downloads. 0 means DownloadTTL for downloads and ten minutes for
	// transcripts; at most MaxLinkLifetime. A short one lets a suite that
	// polls see links expire.
	LinkLifetime time.Duration
	// Logger receives one line per request; nil logs nothing.
	Logger *slog.Logger
	// Wall is the source of real time; nil means time.Now. For tests of the mock.
	Wall func() time.Time
	// State is a state Save wrote, for New to load (agentruns-mock
	// --state-file): as Load would, but while the rest of New is built.
	State io.Reader
}

// Server is the mock, an http.Handler.
type Server struct {
	store      *store.Store
	fixtures   *fixtures.Set
	principals map[string]*fixtures.Principal // by API key
	// keys are the principals' API keys as digests (sameSecret), made
	// once, so a request hashes only the key it presents.
	keys         []knownKey
	validator    *openapi.Validator
	acceptedGETs *openapi.Accepted
	runs         *runCache // the JSON of runs shown before (runs_cache.go)
	dates        httpDates // the Date header of the latest second
	log          *slog.Logger
	routes       []route

	strictAuth      bool
	controlToken    string
	disableControl  bool
	maxBodyBytes    int64
	bodyTimeout     time.Duration
	bodies          *byteBudget
	maxPageBytes    int
	sessionLinkBase string // without a trailing slash
	// downloadTTL and transcriptTTL are how long the signed links live.
	downloadTTL, transcriptTTL time.Duration
	// downloadKey signs the download links of artifacts and transcripts:
	// new each start, so a link does not outlive the process.
	downloadKey []byte
}

var _ http.Handler = (*Server)(nil)

// New builds a mock server from opts. With opts.State, it holds that state
// when it returns, or an error that is a *StateError.
func New(opts Options) (*Server, error) {
	set := opts.Fixtures
	if set == nil {
		var err error
		if set, err = fixtures.Load(fixtures.Embedded()); err != nil {
			return nil, fmt.Errorf("embedded fixtures: %w", err)
		}
	}
	storeOpts, err := storeOptions(&opts, set)
	if err != nil {
		return nil, err
	}
	// A large state takes about as long to load as the rest of New, most of
	// which is building the OpenAPI validator: the two go side by side,
	// the state into a store of its own, which takes the fresh store's
	// place once both are done. The fresh store is the one the fixtures
	// are checked in, as without a state.
	loaded := make(chan error, 1)
	var state *store.Store
	if opts.State == nil {
		loaded <- nil
	} else {
		if state, err = store.New(storeOpts); err != nil {
			return nil, err
		}
		go func() { loaded <- state.Load(opts.State) }()
	}
	s, err := newServer(opts, set, storeOpts)
	loadErr := <-loaded
	switch {
	case err != nil:
		return nil, err
	case loadErr != nil:
		return nil, &StateError{Err: loadErr}
	case state != nil:
		s.store = state
	}
	return s, nil
}

// StateError is New's error when Options.State cannot be loaded.
type StateError struct{ Err error }

func (e *StateError) Error() string { return e.Err.Error() }
func (e *StateError) Unwrap() error { return e.Err }

// storeOptions checks opts' clock and fills in its defaults, and returns
// the options of its store.
func storeOptions(opts *Options, set *fixtures.Set) (store.Options, error) {
	switch opts.ClockMode {
	case "":
		opts.ClockMode = RealClock
	case RealClock, VirtualClock:
	default:
		return store.Options{}, fmt.Errorf("clock mode %q: want real or virtual", opts.ClockMode)
	}
	step := opts.Step
	if step == 0 {
		step = 2 * time.Second
	}
	var steps store.Steps
	for i, d := range []time.Duration{opts.Queued, opts.Pending, opts.Claimed, opts.InProgress} {
		steps[i] = step
		if d > 0 {
			steps[i] = d
		}
	}
	if opts.MaxSessions == 0 {
		opts.MaxSessions = 1000
	}
	return store.Options{
		Fixtures: set, ClockMode: opts.ClockMode, ClockStart: opts.ClockStart, Wall: opts.Wall,
		Steps: steps, MaxRuns: opts.MaxRuns, MaxSessions: opts.MaxSessions,
		Attach: func() store.Attachment { return new(harness) },
	}, nil
}

// newServer is New without the state.
func newServer(opts Options, set *fixtures.Set, storeOpts store.Options) (*Server, error) {
	v, err := sharedValidator()
	if err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	st, err := store.New(storeOpts)
	if err != nil {
		return nil, err
	}
	s := &Server{
		store: st, fixtures: set, principals: map[string]*fixtures.Principal{}, validator: v,
		acceptedGETs: openapi.NewAccepted(acceptedGETsMax), runs: newRunCache(runCacheSlots), log: opts.Logger,
		strictAuth: opts.StrictAuth, controlToken: opts.ControlToken, disableControl: opts.DisableControl,
		maxBodyBytes: opts.MaxBodyBytes, sessionLinkBase: opts.SessionLinkBase,
		downloadKey: make([]byte, 32),
	}
	s.downloadTTL, s.transcriptTTL = DownloadTTL, transcriptLinkTTL
	if opts.LinkLifetime < 0 || opts.LinkLifetime > MaxLinkLifetime {
		return nil, fmt.Errorf("link lifetime %s: it must be from 0 (the defaults) to %s (a week)", opts.LinkLifetime, "168h")
	}
	if opts.LinkLifetime > 0 {
		s.downloadTTL, s.transcriptTTL = opts.LinkLifetime, opts.LinkLifetime
	}
	if s.maxPageBytes = opts.MaxPageBytes; s.maxPageBytes <= 0 {
		s.maxPageBytes = maxPageBytes
	}
	if s.bodyTimeout = opts.BodyTimeout; s.bodyTimeout == 0 {
		s.bodyTimeout = 10 * time.Second
	}
	if s.maxBodyBytes == 0 {
		s.maxBodyBytes = 1 << 20
	}
	budget := opts.BodyBudget
	if budget <= 0 {
		budget = bodiesAtOnce * s.maxBodyBytes
	}
	s.bodies = newByteBudget(budget)
	if s.sessionLinkBase == "" {
		s.sessionLinkBase = "https://app.warp.dev/session"
	}
	// Trimmed once here, so showing a run only appends "/" and the id.
	s.sessionLinkBase = strings.TrimSuffix(s.sessionLinkBase, "/")
	for i := range set.Principals {
		p := &set.Principals[i]
		s.principals[p.APIKey] = p
	}
	for key, p := range s.principals {
		s.keys = append(s.keys, knownKey{sha256.Sum256([]byte(key)), p})
	}
	if _, err := rand.Read(s.downloadKey); err != nil {
		return nil, err
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.routes = s.routingTable()
	if opts.Fixtures == nil {
		embeddedCheck.Do(func() { embeddedCheckErr = s.checkFixtureRuns(set) })
		err = embeddedCheckErr
	} else if err = checkExtras(set); err == nil {
		err = s.checkFixtureRuns(set)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// sharedValidator builds the validator of the embedded document once per
// process: it is most of New's cost, immutable, and safe for concurrent use,
// and test suites create many mocks.
var sharedValidator = sync.OnceValues(openapi.NewValidator)

// SessionHeader selects an isolated mock session: its own runs, clock and rules.
const SessionHeader = "X-Mock-Session"

// harness is what the HTTP side keeps per mock session: its fault rules and
// its request journal. It is test scaffolding, reset with the mock session
// and not saved.
type harness struct {
	faults  faultRules
	journal journal
}

// Reset forgets the fault rules and the journal.
func (h *harness) Reset() {
	h.faults.Clear()
	h.journal.clear()
}

func harnessOf(ms *store.Session) *harness { return ms.Attachment().(*harness) }

// Changes counts the changes made to the mock's sessions, through the HTTP
// API and the Go API alike: creates, cancels, forced states, resets, clock
// moves, mock sessions opened and closed. A saver compares it with the
// count at its last save to skip writing a file that would not change.
func (s *Server) Changes() uint64 { return s.store.Changes() }

// Save writes every mock session's runs and clock to w as JSON (the state
// file). Each is captured consistently; it is safe to call while serving.
func (s *Server) Save(w io.Writer) error { return s.store.Save(w) }

// Load replaces every mock session with those Save wrote to r. Nothing is
// replaced unless the whole document is valid: a truncated, corrupt or
// foreign document is an error wrapping ErrBadStateFile, never a partial or
// empty store. Call it before serving.
func (s *Server) Load(r io.Reader) error { return s.store.Load(r) }
