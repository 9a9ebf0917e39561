// Package steps is the contract suite's step definitions: it runs the Gherkin
// features of package features against any server of the Cloud Agent Runs
// API, real or mock, given only a base URL, an API key and an *http.Client.
//
// Every response the suite receives is checked against the OpenAPI document;
// against a server that offers the mock's control API the suite drives the
// server's clock, elsewhere it polls.
package steps

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cucumber/godog"

	"github.com/agentruns/agentruns/openapi"
)

// Status is the outcome of one scenario.
type Status string

// The outcomes of a scenario.
const (
	Passed  Status = "passed"
	Failed  Status = "failed"
	Skipped Status = "skipped"
)

// ScenarioResult is the outcome of one scenario (one row, for an outline).
type ScenarioResult struct {
	Feature string // the feature file, e.g. "list_runs.feature"
	Name    string // the scenario's name, outline parameters filled in
	Tags    []string
	Status  Status
	// Message says why the scenario failed or was skipped.
	Message string

	pickleID string // godog's id of the scenario's run, for the HTML report
}

// Result is the outcome of a whole run of the suite.
type Result struct {
	Scenarios []ScenarioResult // sorted by feature, then name
	// Seed reproduces the order of the scenarios (Config.Seed).
	Seed int64
	// Control tells whether the server offered the mock's control API.
	Control  bool
	Duration time.Duration
}

// Passed reports whether at least one scenario ran and none failed.
func (r Result) Passed() bool {
	return len(r.Scenarios) > 0 && len(r.Failed()) == 0
}

// Failed lists the scenarios that failed.
func (r Result) Failed() []ScenarioResult { return r.with(Failed) }

// Skipped lists the scenarios that were skipped.
func (r Result) Skipped() []ScenarioResult { return r.with(Skipped) }

func (r Result) with(st Status) []ScenarioResult {
	var out []ScenarioResult
	for _, s := range r.Scenarios {
		if s.Status == st {
			out = append(out, s)
		}
	}
	return out
}

// Find returns the scenario with this name.
func (r Result) Find(name string) (ScenarioResult, bool) {
	for _, s := range r.Scenarios {
		if s.Name == name {
			return s, true
		}
	}
	return ScenarioResult{}, false
}

// Count returns how many scenarios passed, failed and were skipped.
func (r Result) Count() (passed, failed, skipped int) {
	return len(r.with(Passed)), len(r.with(Failed)), len(r.with(Skipped))
}

// Suite is one configured run of the contract suite. Its InitializeScenario
// can be handed to godog directly; Run does that with the usual options.
type Suite struct {
	cfg     Config
	base    *url.URL
	control *url.URL

	mu      sync.Mutex
	results []ScenarioResult
}

// NewSuite checks cfg, loads the OpenAPI validator and looks for the mock's
// control API on the server.
func NewSuite(ctx context.Context, cfg Config) (*Suite, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.Validator == nil {
		v, err := openapi.NewValidator()
		if err != nil {
			return nil, fmt.Errorf("loading the OpenAPI validator: %w", err)
		}
		cfg.Validator = v
	}
	base, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	su := &Suite{cfg: cfg, base: base}
	if !cfg.NoControl {
		su.control = detectControl(ctx, cfg.HTTPClient, base)
	}
	return su, nil
}

// Control tells whether the suite drives the server through the mock's
// control API.
func (su *Suite) Control() bool { return su.control != nil }

// Run runs the selected scenarios against cfg.BaseURL and reports each
// scenario's outcome. The error is for a suite that could not run at all;
// failing scenarios are in the Result.
func Run(ctx context.Context, cfg Config) (Result, error) {
	su, err := NewSuite(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	return su.Run(ctx)
}

// Run runs the suite once.
func (su *Suite) Run(ctx context.Context) (Result, error) {
	start := time.Now()
	cfg := su.cfg
	seed := cfg.Seed
	if seed == 0 {
		seed = mrand.Int64N(1<<62) + 1
	}
	opts := godog.Options{
		Format:         cfg.Format,
		Output:         cfg.Output,
		NoColors:       cfg.NoColors,
		Concurrency:    cfg.Concurrency,
		Tags:           cfg.tagExpression(),
		Randomize:      seed,
		Strict:         true,
		FS:             cfg.Features,
		Paths:          []string{"."},
		DefaultContext: ctx,
	}
	name, done := su.godogName(seed)
	defer done()
	status := godog.TestSuite{
		Name:                name,
		ScenarioInitializer: su.InitializeScenario,
		Options:             &opts,
	}.Run()

	su.mu.Lock()
	res := Result{Scenarios: append([]ScenarioResult(nil), su.results...), Seed: seed, Control: su.Control(), Duration: time.Since(start)}
	su.results = nil
	su.mu.Unlock()
	sort.SliceStable(res.Scenarios, func(i, j int) bool {
		a, b := res.Scenarios[i], res.Scenarios[j]
		if a.Feature != b.Feature {
			return a.Feature < b.Feature
		}
		return a.Name < b.Name
	})
	switch {
	case status == 2:
		return res, errors.New("godog could not run the features (see its output)")
	case len(res.Scenarios) == 0:
		return res, fmt.Errorf("no scenario matches the tags %q", opts.Tags)
	case status != 0 && res.Passed():
		return res, errors.New("godog reported a failure outside the scenarios (see its output)")
	}
	return res, ctx.Err()
}

// record keeps one scenario's outcome.
func (su *Suite) record(sc *godog.Scenario, err error, skipReason string) {
	r := ScenarioResult{Feature: strings.TrimPrefix(sc.Uri, "./"), Name: sc.Name, Status: Passed, pickleID: sc.Id}
	for _, t := range sc.Tags {
		r.Tags = append(r.Tags, t.Name)
	}
	switch {
	case skipReason != "":
		r.Status, r.Message = Skipped, skipReason
	case err != nil && !errors.Is(err, godog.ErrSkip):
		r.Status, r.Message = Failed, err.Error()
	}
	su.mu.Lock()
	su.results = append(su.results, r)
	su.mu.Unlock()
}

// newClient makes the HTTP client of one scenario.
func (su *Suite) newClient() *apiClient {
	return &apiClient{
		http:      su.cfg.HTTPClient,
		base:      su.base,
		control:   su.control,
		key:       su.cfg.APIKey,
		validator: su.cfg.Validator,
	}
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
