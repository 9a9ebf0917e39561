package explore

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"pgregory.net/rapid"

	"github.com/agentruns/agentruns/openapi"
	"github.com/agentruns/agentruns/rules"
)

// Options say what to explore, and at what price.
type Options struct {
	// BaseURL is the API's base, e.g. http://127.0.0.1:4010 or
	// https://host/api/v1.
	BaseURL string
	// APIKey is sent as a bearer token; OtherAPIKey, of another team, for
	// the calls on the first team's resources that must be refused ("" to
	// leave them out).
	APIKey, OtherAPIKey string
	// HTTPClient sends the calls; nil for a client of its own.
	HTTPClient *http.Client
	// Steps is how many calls the exploration sends (shrinking a finding
	// sends more, see ShrinkCalls); Duration how long it explores. Either
	// ends it; neither set means 200 calls.
	Steps    int
	Duration time.Duration
	// Seed replays an exploration; 0 draws one (Result.Seed says which).
	Seed int64
	// ReadOnly sends only GET and HEAD.
	ReadOnly bool
	// MaxRuns is the most runs (creations and follow-ups) the exploration
	// starts; 0 for the default (none on a server with the mock's control
	// API, whose runs cost nothing; DefaultMaxRuns on any other, where a
	// run is an agent's execution billed to the team); below 0 for no
	// budget but the team's capacity.
	MaxRuns int
	// NewestClient judges the newest official client's surface whatever
	// the server answers about it; otherwise it is judged only when the
	// server serves it (it is asked first, as the suite asks).
	NewestClient bool
	// Trace, when set, hears of every call of the sequences as it is
	// answered (for a log, or a test).
	Trace func(Call)
	// MaxFindings ends the exploration once it has found so many; 0 for
	// no end but the budget.
	MaxFindings int
	// ReplayBaseURL is the base URL the replay line names (Result.Replay):
	// BaseURL when empty; "-" for none (a mock the command started
	// itself, which a replay starts again).
	ReplayBaseURL string
	// ReplayFlags are flags the replay line carries besides its own, as
	// written (the fixture keys given for a mock the command started).
	ReplayFlags []string
	// NoControl ignores the mock's control API: the mock is explored as
	// any server (no sessions of its own, no clock moved).
	NoControl bool
	// ShrinkCalls bounds the calls all the shrinking of one exploration
	// may send (past it, a finding comes back as short as it got); 0 for
	// twice Steps (at least 200), 10 times on the mock.
	ShrinkCalls int
	// CallsPerSequence is the average length of one sequence; 0 for 30.
	CallsPerSequence int
}

// DefaultMaxRuns is the run budget of an exploration of a server without
// the mock's control API, when Options.MaxRuns leaves it to the default.
const DefaultMaxRuns = 20

// explorer is one exploration under way.
type explorer struct {
	o          Options
	hc         *http.Client
	base       *url.URL
	controlURL *url.URL
	deadline   time.Time
	seed       int64

	model    *openapi.Model
	doc      *openapi.Validator
	newest   bool // the newest client's surface is judged
	ops      []*operation
	byName   map[string]*operation
	result   Result
	calls    int // every request sent
	explored int // calls sent while exploring (the budget of Steps)
	shrunk   int // calls sent while shrinking
	runs     int // runs started

	// known are the findings' keys found so far: a sequence that shows only
	// these passes, so each check finds something new.
	known map[string]bool
	// failing is the key of the finding the current check shrinks, ""
	// while it explores.
	failing string
	best    map[string]*Finding
	repro   map[string]int // how many sequences showed each finding
	cases   int
	// shared are the rules' memories of an exploration of a server without
	// sessions (sequence.go).
	shared map[string]*rules.Memory
	// reached are the operations called at least once.
	reached map[string]bool
}

// Run explores the server o names and returns what it found.
func Run(ctx context.Context, o Options) (Result, error) {
	e, err := newExplorer(ctx, o)
	if err != nil {
		return Result{}, err
	}
	return e.run(ctx)
}

func newExplorer(ctx context.Context, o Options) (*explorer, error) {
	if o.Steps <= 0 && o.Duration <= 0 {
		o.Steps = 200
	}
	if o.CallsPerSequence <= 0 {
		o.CallsPerSequence = 30
	}
	base, err := url.Parse(strings.TrimSuffix(o.BaseURL, "/"))
	if err != nil || base.Scheme == "" || base.Host == "" {
		return nil, fmt.Errorf("explore: base URL %q is no absolute URL", o.BaseURL)
	}
	e := &explorer{o: o, base: base, hc: o.HTTPClient, known: map[string]bool{}, best: map[string]*Finding{}, repro: map[string]int{}, reached: map[string]bool{}}
	if e.hc == nil {
		e.hc = &http.Client{Timeout: time.Minute}
	}
	// A redirect is an answer to judge (the transcript's 302), not to follow.
	hc := *e.hc
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	e.hc = &hc
	e.seed = o.Seed
	if e.seed == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		e.seed = int64(binary.LittleEndian.Uint64(b[:]) >> 1)
	}
	if o.Duration > 0 {
		e.deadline = time.Now().Add(o.Duration)
	}
	if !o.NoControl {
		e.controlURL = detectControl(ctx, e.hc, base)
	}
	switch {
	case o.MaxRuns < 0:
		e.o.MaxRuns = 0
	case o.MaxRuns == 0 && e.controlURL == nil:
		e.o.MaxRuns = DefaultMaxRuns
		e.result.RunBudgetDefault = true
	}
	if o.ShrinkCalls <= 0 {
		// On the mock a call costs a millisecond or two and each sequence
		// replays in a session of its own: shrinking may spend freely.
		// Elsewhere calls cost, and a replay meets what the calls before
		// left.
		o.ShrinkCalls = 2 * max(o.Steps, 100)
		if e.controlURL != nil {
			o.ShrinkCalls = 10 * max(o.Steps, 100)
		}
		e.o.ShrinkCalls = o.ShrinkCalls
	}
	whole, err := openapi.Embedded()
	if err != nil {
		return nil, err
	}
	all, err := operationsOf(whole)
	if err != nil {
		return nil, err
	}
	e.result.Seed, e.result.ReadOnly, e.result.Replay = e.seed, o.ReadOnly, replayLine(o, e.seed)
	e.result.Created, e.result.Unreached = map[string]int{}, map[string]string{}
	e.result.RunBudget, e.result.OtherTeam = e.o.MaxRuns, o.OtherAPIKey != ""
	e.newest = o.NewestClient || e.servesNewest(ctx, all)
	e.model = whole
	if !e.newest {
		if e.model, err = whole.Published(); err != nil {
			return nil, err
		}
	}
	e.doc = validatorFor(e.model, e.newest)
	e.byName = map[string]*operation{}
	for _, op := range all {
		switch {
		case op.Newest && !e.newest:
			e.result.Unreached[op.Name()] = "the newest client's, which the server does not serve"
		case o.ReadOnly && !op.reads():
			e.result.Unreached[op.Name()] = "it writes, and the exploration is read-only"
		default:
			e.ops = append(e.ops, op)
			e.byName[op.Name()] = op
		}
	}
	return e, nil
}

// validators are built once per document: compiling the schemas is slow.
var validators = struct {
	whole, published func() *openapi.Validator
}{
	whole: onceValidator(func() (*openapi.Model, error) { return openapi.Embedded() }),
	published: onceValidator(func() (*openapi.Model, error) {
		m, err := openapi.Embedded()
		if err != nil {
			return nil, err
		}
		return m.Published()
	}),
}

func validatorFor(_ *openapi.Model, newest bool) *openapi.Validator {
	if newest {
		return validators.whole()
	}
	return validators.published()
}

// servesNewest asks the server, as the suite does (steps/newest_surface.go),
// whether it serves any GET operation only the newest client calls, with
// ids of the key's own runs and identities: anything but 404, 405 or 501
// says it does.
func (e *explorer) servesNewest(ctx context.Context, all []*operation) bool {
	ids := seen{}
	session := ""
	if e.controlURL != nil {
		session = fmt.Sprintf("explore-%d-surface", e.seed)
		defer e.control(ctx, http.MethodDelete, "/session", session, nil)
	}
	for _, p := range []string{"/agent/runs", "/agent/identities"} {
		s := e.send(ctx, Call{Method: http.MethodGet, Path: p, Query: url.Values{"limit": {"5"}}}, session)
		if s.decodedOK {
			ids.harvest(areaOf(p), s.decoded)
		}
	}
	for _, op := range all {
		if !op.Newest || op.Method != http.MethodGet {
			continue
		}
		path, ok := op.Template, true
		for _, name := range op.PathParams {
			var v string
			for _, src := range idSources[name] {
				if len(ids[src]) > 0 {
					v = ids[src][0]
					break
				}
			}
			if v == "" {
				ok = false
				break
			}
			path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(v))
		}
		if !ok {
			continue
		}
		s := e.send(ctx, Call{Method: http.MethodGet, Path: path}, session)
		switch s.call.Status {
		case 0, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotImplemented:
		default:
			return true
		}
	}
	return false
}

// budgetLeft tells whether the phase under way may send one call more.
func (e *explorer) budgetLeft(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	if e.failing != "" {
		return e.shrunk < e.o.ShrinkCalls
	}
	if e.o.Steps > 0 && e.explored >= e.o.Steps {
		return false
	}
	return e.deadline.IsZero() || time.Now().Before(e.deadline)
}

// spend counts one call against the phase under way.
func (e *explorer) spend() {
	if e.failing != "" {
		e.shrunk++
	} else {
		e.explored++
	}
}

// checksPerRound is how many sequences one rapid check may try: more than
// any budget allows, so that a check ends when the budget does (the
// sequences past it send nothing).
const checksPerRound = 5000

func (e *explorer) run(ctx context.Context) (Result, error) {
	for round := 0; e.budgetLeft(ctx); round++ {
		e.failing = "" // e.shrunk is not reset: ShrinkCalls bounds all shrinking
		settings := rapidSettings{
			seed:       uint64(e.seed) + uint64(round)*1_000_003,
			checks:     checksPerRound,
			steps:      e.o.CallsPerSequence,
			shrinkTime: 5 * time.Minute,
		}
		var failed bool
		err := withRapid(settings, func() { failed, _ = check(e.sequence(ctx)) })
		if err != nil {
			return e.result, err
		}
		if !failed || e.failing == "" {
			break // the budget ran out with nothing new found
		}
		e.known[e.failing] = true
		if f := e.best[e.failing]; f != nil {
			if e.repro[e.failing] < 2 {
				f.Detail += " (seen once: the replay did not show it again)"
			}
			e.result.Findings = append(e.result.Findings, *f)
		}
		if e.o.MaxFindings > 0 && len(e.result.Findings) >= e.o.MaxFindings {
			break
		}
	}
	e.result.Calls = e.calls
	for _, op := range e.ops {
		if !e.reached[op.Name()] {
			if _, ok := e.result.Unreached[op.Name()]; !ok {
				e.result.Unreached[op.Name()] = "not called within the budget, or nothing to call it on"
			}
		}
	}
	slices.SortStableFunc(e.result.Findings, func(a, b Finding) int { return strings.Compare(a.Cause, b.Cause) })
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return e.result, ctx.Err()
	}
	return e.result, nil
}

// sequence is rapid's property: one sequence of calls, failing at the
// first finding not known before.
func (e *explorer) sequence(ctx context.Context) func(*rapid.T) {
	return func(t *rapid.T) {
		if !e.budgetLeft(ctx) {
			return
		}
		q := e.newSequence(ctx)
		defer q.close()
		t.Repeat(q.actions())
		// Cross-request findings held until a follow-up could explain them.
		q.settle()
		q.failIfFound(t)
	}
}

var validatorMu sync.Mutex

func onceValidator(model func() (*openapi.Model, error)) func() *openapi.Validator {
	var v *openapi.Validator
	var done bool
	return func() *openapi.Validator {
		validatorMu.Lock()
		defer validatorMu.Unlock()
		if !done {
			if m, err := model(); err == nil {
				v = openapi.NewValidatorFor(m)
			}
			done = true
		}
		return v
	}
}

// replayLine is the command line that replays an exploration of o with
// seed: the same budget (a number of calls replays exactly; a duration
// sends as many as fit), seed and limits.
func replayLine(o Options, seed int64) string {
	budget := strconv.Itoa(o.Steps)
	if o.Duration > 0 {
		budget = o.Duration.String()
	}
	line := "agentruns-contract --explore " + budget + " --seed " + strconv.FormatInt(seed, 10)
	if base := cmp.Or(o.ReplayBaseURL, o.BaseURL); base != "-" {
		// The keys are named, never written out.
		line += " --base-url " + base + ` --api-key "$WARP_API_KEY"`
		if o.OtherAPIKey != "" {
			line += ` --other-api-key "$OTHER_API_KEY"`
		}
	}
	for _, f := range o.ReplayFlags {
		line += " " + shellWord(f)
	}
	if o.ReadOnly {
		line += " --read-only"
	}
	if o.MaxRuns > 0 {
		line += " --max-runs " + strconv.Itoa(o.MaxRuns)
	}
	if o.NewestClient {
		line += " --newest-client"
	}
	if o.NoControl {
		line += " --no-control"
	}
	return line
}

// shellWord is s as one word of a shell's command line.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
