package steps

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentruns/agentruns/clientcheck"
	"github.com/agentruns/agentruns/openapi"
	"github.com/agentruns/agentruns/suiteconfig"
)

// Suite is one configured run of the contract suite. Its InitializeScenario
// can be handed to godog directly; package runner's Run does that with the
// usual options, between Begin and End (pass.go).
type Suite struct {
	cfg     suiteconfig.Config
	base    *url.URL
	control *url.URL // the mock's control API, nil when not used
	// controlUnused tells that the server offers the mock's control API and
	// the suite leaves it alone, as a read-only run does.
	controlUnused bool

	// runCtx is the context of the current pass: once it is done, scenarios
	// that had not finished are reported as interrupted.
	runCtx context.Context

	// runs is every run seen during the suite, held to the rules that hold
	// for any run at any time.
	runs *ledger

	// looks counts the looks at runs while watching them (progression.go).
	looks atomic.Int64

	// book is the account of the runs the suite creates (runbook.go).
	book *runBook
	// shares are the sets of runs scenarios share (shared_runs.go).
	shares *shares
	// marking marks every run the suite creates (marker.go).
	marking *runMarking

	mu       sync.Mutex
	observer Observer // the current pass's, nil outside a pass (pass.go)
	// clients judges every success answer of the current pass as each
	// released client version reads it; nil outside a pass.
	clients *clientcheck.Tally

	// newest is what NewSuite found of the newest client's surface.
	newest NewestSurface

	// identityWrites holds the team's identities still for a scenario that
	// checks the plan's edge (@plan-edge): it holds the lock, and any other
	// scenario that creates, changes or deletes an identity holds it shared
	// from then until it ends. Only when polling: with the mock's control
	// API each scenario has its own mock session.
	identityWrites sync.RWMutex
}

// defaultValidator is the project's document compiled once per process:
// compiling its schemas is the slowest part of starting a suite, and a
// validator is immutable and safe for concurrent use.
var defaultValidator = sync.OnceValues(openapi.NewValidator)

// defaultPublishedValidator is the published view of the document
// (openapi.PublishedView), for runs that select no scenario of the newest
// client's surface.
var defaultPublishedValidator = sync.OnceValues(openapi.NewPublishedValidator)

// NewSuite checks cfg, asks the server whether it serves the newest
// client's surface (newest_surface.go), loads the OpenAPI validator and
// looks for the mock's control API on the server. Whether the server is
// one the suite can test at all is package runner's pre-flight, asked
// before it builds the suite.
func NewSuite(ctx context.Context, cfg suiteconfig.Config) (*Suite, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	selects, err := cfg.SelectsNewestClient()
	if err != nil {
		return nil, err
	}
	base, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	if cfg.ReadOnly {
		cfg.HTTPClient = readOnlyClient(cfg.HTTPClient) // readonly.go
	}
	// Whether the newest client's surface is judged (newest_surface.go).
	newest := NewestSurface{Judged: true, Promised: true}
	switch {
	case !selects:
		newest = NewestSurface{LeftOut: true}
	case !cfg.NewestClient:
		if newest, err = surveyNewestSurface(ctx, cfg.HTTPClient, cfg.BaseURL, cfg.APIKey, cfg.ReadOnly); err != nil {
			if errors.Is(err, ErrInterrupted) {
				return nil, err
			}
			return nil, fmt.Errorf("asking whether the server serves the newest client's operations: %w", err)
		}
	}
	if cfg.Validator == nil {
		// A run that does not judge the newest client's surface judges
		// the server as one built to the published document: the newest
		// client's fields are not required of its answers.
		load := defaultValidator
		if !newest.Judged {
			load = defaultPublishedValidator
		}
		v, err := load()
		if err != nil {
			return nil, fmt.Errorf("loading the OpenAPI validator: %w", err)
		}
		cfg.Validator = v
	}
	su := &Suite{cfg: cfg, base: base, runCtx: context.Background(), runs: newLedger(), newest: newest, book: newRunBook(cfg.MaxRuns, cfg.MaxRunsAtOnce), shares: &shares{}}
	if !cfg.NoControl {
		su.control = detectControl(ctx, cfg.HTTPClient, base)
	}
	su.marking = &runMarking{prompt: cfg.Prompt, failingPrompt: cfg.FailingPrompt, metadata: newest.Judged, suiteRun: "contract-run-" + randomHex(4)}
	if cfg.ReadOnly && su.control != nil {
		// Every use of the control API changes the mock (a session, its
		// clock): a read-only run polls, as against any server.
		su.control, su.controlUnused = nil, true
	}
	return su, nil
}

// Control tells whether the suite drives the server through the mock's
// control API.
func (su *Suite) Control() bool { return su.control != nil }

// Config is the suite's configuration, its defaults filled in.
func (su *Suite) Config() suiteconfig.Config { return su.cfg }

// pause lets d pass, or less if ctx ends first: by the configuration's
// LetTimePass when it has one, by sleeping otherwise.
func (su *Suite) pause(ctx context.Context, d time.Duration) error {
	if wait := su.cfg.LetTimePass; wait != nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		return wait(ctx, d)
	}
	return sleep(ctx, d)
}

// NewestClient is what NewSuite found of the newest client's surface, and
// whether the suite judges it.
func (su *Suite) NewestClient() NewestSurface { return su.newest }

// Mode says how the suite drives the server, for people: polling, how
// often it looked at a run, and how many looks that made.
func (su *Suite) Mode() string {
	if su.Control() {
		return "driving the mock's control API"
	}
	return fmt.Sprintf("polling the server, a look at a run every %s (--poll-interval): %s", su.cfg.PollInterval, looksCount(su.looks.Load()))
}

// looksCount is "1 look", "12 looks".
func looksCount(n int64) string {
	if n == 1 {
		return "1 look"
	}
	return fmt.Sprintf("%d looks", n)
}

// newClient makes the HTTP client of one scenario.
func (su *Suite) newClient() *apiClient {
	su.mu.Lock()
	clients := su.clients
	su.mu.Unlock()
	return &apiClient{
		clients:   clients,
		http:      su.cfg.HTTPClient,
		base:      su.base,
		control:   su.control,
		key:       su.cfg.APIKey,
		validator: su.cfg.Validator,
		runs:      su.runs,
		book:      su.book,
		marking:   su.marking,
		made:      &creations{},
		cause:     &firstCause{},
	}
}

// createTimeout bounds a create request that an interrupt no longer stops.
const createTimeout = 30 * time.Second

// seeCreatesThrough keeps an interrupt (Ctrl-C) from cutting a create
// request short: the server may have created the run already, and only the
// answer names it, for the scenario to cancel. A create not yet sent when
// the interrupt comes is not sent.
func seeCreatesThrough(ctx context.Context, c call) (context.Context, context.CancelFunc) {
	if c.method != http.MethodPost || (c.path != "/agent/run" && c.path != "/agent/runs") || ctx.Err() != nil {
		return ctx, func() {}
	}
	return context.WithTimeout(context.WithoutCancel(ctx), createTimeout)
}
