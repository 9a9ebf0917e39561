// Package mockserver is a stateful, in-memory implementation of the Cloud
// Agent Runs API for developing and testing clients offline. Runs it creates
// exist afterwards, move through their states as its clock runs, and can be
// steered by tests through the control API under /__mock/.
package mockserver

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/openapi"
)

// Options configure a Server. The zero value is a working mock on the
// embedded fixtures with a real clock.
type Options struct {
	// Fixtures to start from; nil means the embedded set.
	Fixtures *fixtures.Set
	// ClockMode is RealClock (the default) or VirtualClock.
	ClockMode ClockMode
	// ClockStart is the clock's first instant; zero means the wall time at start.
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
	// MaxRuns caps the runs of one session; 0 means no cap.
	MaxRuns int
	// MaxSessions caps how many isolated sessions may exist; 0 means 1000.
	MaxSessions int
	// SessionLinkBase prefixes session links; "" means the real service's.
	SessionLinkBase string
	// Logger receives one line per request; nil logs nothing.
	Logger *slog.Logger
	// Wall is the source of real time; nil means time.Now. For tests of the mock.
	Wall func() time.Time
}

// config is Options resolved, shared by every session.
type config struct {
	fixtures        *fixtures.Set
	clockMode       ClockMode
	clockStart      time.Time
	wall            func() time.Time
	steps           stepsOf
	strictAuth      bool
	controlToken    string
	disableControl  bool
	maxBodyBytes    int64
	maxRuns         int
	maxSessions     int
	sessionLinkBase string
	principals      map[string]*fixtures.Principal // by API key
	byUID           map[string]*fixtures.Principal
	defaultUser     *fixtures.Principal
	cursorSecret    []byte
	// changes counts changes to any session, so a saver knows when to write.
	changes atomic.Uint64
}

func (c *config) principalByUID(uid string) *fixtures.Principal {
	if p, ok := c.byUID[uid]; ok {
		return p
	}
	return c.defaultUser
}

// Server is the mock, an http.Handler.
type Server struct {
	cfg          *config
	validator    *openapi.Validator
	acceptedGETs verdictCache
	log          *slog.Logger

	mu       sync.Mutex
	sessions map[string]*world // "" is the default session
}

var _ http.Handler = (*Server)(nil)

// New builds a mock server from opts.
func New(opts Options) (*Server, error) {
	set := opts.Fixtures
	if set == nil {
		var err error
		if set, err = fixtures.Load(fixtures.Embedded()); err != nil {
			return nil, fmt.Errorf("embedded fixtures: %w", err)
		}
	}
	v, err := sharedValidator()
	if err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	cfg := &config{
		fixtures: set, clockMode: opts.ClockMode, clockStart: opts.ClockStart, wall: opts.Wall,
		strictAuth: opts.StrictAuth, controlToken: opts.ControlToken, disableControl: opts.DisableControl,
		maxBodyBytes: opts.MaxBodyBytes, maxRuns: opts.MaxRuns, maxSessions: opts.MaxSessions,
		sessionLinkBase: opts.SessionLinkBase,
		principals:      map[string]*fixtures.Principal{}, byUID: map[string]*fixtures.Principal{},
		cursorSecret: make([]byte, 32),
	}
	switch cfg.clockMode {
	case "":
		cfg.clockMode = RealClock
	case RealClock, VirtualClock:
	default:
		return nil, fmt.Errorf("clock mode %q: want real or virtual", opts.ClockMode)
	}
	if cfg.wall == nil {
		// Wall time read through the monotonic clock, so it never steps back.
		start := time.Now()
		cfg.wall = func() time.Time { return start.Add(time.Since(start)) }
	}
	if cfg.clockStart.IsZero() {
		cfg.clockStart = cfg.wall()
	}
	cfg.clockStart = cfg.clockStart.Truncate(time.Millisecond)
	step := opts.Step
	if step == 0 {
		step = 2 * time.Second
	}
	for i, d := range []time.Duration{opts.Queued, opts.Pending, opts.Claimed, opts.InProgress} {
		cfg.steps[i] = step
		if d > 0 {
			cfg.steps[i] = d
		}
	}
	if cfg.maxBodyBytes == 0 {
		cfg.maxBodyBytes = 1 << 20
	}
	if cfg.maxSessions == 0 {
		cfg.maxSessions = 1000
	}
	if cfg.sessionLinkBase == "" {
		cfg.sessionLinkBase = "https://app.warp.dev/session"
	}
	// Trimmed once here, so showing a run only appends "/" and the id.
	cfg.sessionLinkBase = strings.TrimSuffix(cfg.sessionLinkBase, "/")
	// A fixture config that does not fit AgentConfig is an error at start,
	// never a run that silently lost its configuration.
	for _, f := range set.Runs {
		if len(f.Config) > 0 {
			if err := json.Unmarshal(f.Config, new(AgentConfig)); err != nil {
				return nil, fmt.Errorf("fixtures: run %s: agent_config: %w", f.ID, err)
			}
		}
	}
	for i := range set.Principals {
		p := &set.Principals[i]
		cfg.principals[p.APIKey] = p
		cfg.byUID[p.UID] = p
	}
	cfg.defaultUser = &set.DefaultPrincipal
	cfg.byUID[cfg.defaultUser.UID] = cfg.defaultUser
	if _, err := rand.Read(cfg.cursorSecret); err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{cfg: cfg, validator: v, log: log, acceptedGETs: verdictCache{max: acceptedGETsMax},
		sessions: map[string]*world{"": newWorld(cfg)}}, nil
}

// sharedValidator builds the validator of the embedded document once per
// process: it is most of New's cost, immutable, and safe for concurrent use,
// and test suites create many mocks.
var sharedValidator = sync.OnceValues(openapi.NewValidator)

// SessionHeader selects an isolated session: its own runs, clock and rules.
const SessionHeader = "X-Mock-Session"

var errTooManySessions = errors.New("too many sessions")

func (s *Server) world(r *http.Request) (*world, error) {
	return s.session(r.Header.Get(SessionHeader))
}

// session finds or opens a session. When MaxSessions are open, the one
// unused for longest makes room: test jobs that never close their sessions
// must not lock a long-running mock up.
func (s *Server) session(name string) (*world, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.sessions[name]
	if !ok {
		if len(s.sessions)-1 >= s.cfg.maxSessions && !s.evictLocked() {
			return nil, errTooManySessions
		}
		w = newWorld(s.cfg)
		s.sessions[name] = w
		w.changed()
	}
	w.lastUsed.Store(time.Now().UnixNano())
	return w, nil
}

// evictLocked closes the least recently used isolated session.
func (s *Server) evictLocked() bool {
	oldest, at := "", int64(0)
	for name, w := range s.sessions {
		if t := w.lastUsed.Load(); name != "" && (oldest == "" || t < at) {
			oldest, at = name, t
		}
	}
	if oldest == "" {
		return false
	}
	s.sessions[oldest].changed()
	delete(s.sessions, oldest)
	return true
}

// closeSession forgets an isolated session; the default one is reset instead.
func (s *Server) closeSession(name string) {
	s.mu.Lock()
	w, ok := s.sessions[name]
	if ok && name != "" {
		delete(s.sessions, name)
		w.changed()
	}
	s.mu.Unlock()
	if ok && name == "" {
		w.reset()
	}
}

// authenticate finds who is calling from the Authorization header.
func (c *config) authenticate(r *http.Request) (*fixtures.Principal, *apiError) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if h == "" {
		return nil, errorf(codeAuthRequired, "send an Authorization header with a bearer token: Authorization: Bearer <api key>")
	}
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return nil, errorf(codeAuthRequired, "the Authorization header must be \"Bearer <api key>\"")
	}
	if p := c.lookupKey(token); p != nil {
		return p, nil
	}
	if c.strictAuth {
		return nil, errorf(codeAuthRequired, "the API key is not known to this server")
	}
	return c.defaultUser, nil
}

// lookupKey compares the token with every known key in constant time, so
// timing tells nothing about how much of a key was right.
//
// Digests are compared rather than the keys themselves, because
// ConstantTimeCompare returns at once on a length mismatch and would tell
// a key's length.
func (c *config) lookupKey(token string) *fixtures.Principal {
	var found *fixtures.Principal
	got := sha256.Sum256([]byte(token))
	for key, p := range c.principals {
		want := sha256.Sum256([]byte(key))
		if subtle.ConstantTimeCompare(want[:], got[:]) == 1 {
			found = p
		}
	}
	return found
}
