package mockserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/google/uuid"
)

// Sentinel errors of the store, turned into problems by the handlers.
var (
	errRunNotFound   = errors.New("run not found")
	errOtherTeam     = errors.New("run belongs to another team")
	errStoreFull     = errors.New("the store holds the maximum number of runs")
	errTerminal      = errors.New("run is already finished")
	errPending       = errors.New("run is being handed to a worker")
	errNotCancelable = errors.New("run cannot be cancelled")
	errBackwards     = errors.New("a run's state only moves forward")
)

// world is one session's state: its runs and its clock. The default session
// and every isolated one each have their own.
type world struct {
	cfg   *config
	clock *clock
	// lastUsed (unix nanoseconds) picks the session to close when too many are open.
	lastUsed atomic.Int64
	faults   faultRules
	fates    fateRules
	journal  journal

	mu         sync.RWMutex
	runs       []*run // in creation order, which is also seq order
	byID       map[string]*run
	byName     map[string][]*run // runs by agent_config.name, in creation order
	generation int64             // bumped by reset, so old cursors are refused
	nextSeq    int64
}

func newWorld(cfg *config) *world {
	w := &world{cfg: cfg}
	w.reset()
	return w
}

// reset puts the fixtures back and the clock at its start, and forgets
// fault rules and the request journal.
func (w *world) reset() {
	w.faults.clear()
	w.fates.clear()
	w.journal.clear()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.clock = newClock(w.cfg.clockMode, w.cfg.clockStart, w.cfg.wall)
	w.runs = nil
	w.byID = map[string]*run{}
	w.byName = map[string][]*run{}
	w.generation++
	w.nextSeq = 0
	now := w.clock.Now()
	seeds := append([]fixtures.Run(nil), w.cfg.fixtures.Runs...)
	sort.SliceStable(seeds, func(i, j int) bool { return seeds[i].CreatedAgo > seeds[j].CreatedAgo })
	for _, f := range seeds {
		w.insertLocked(w.fixtureRun(f, now))
	}
	w.changed()
}

func (w *world) insertLocked(r *run) {
	w.nextSeq++
	r.seq = w.nextSeq
	r.session = uuid.NewSHA1(sessionNamespace, []byte(r.id))
	w.runs = append(w.runs, r)
	w.byID[r.id] = r
	if r.config != nil && r.config.Name != "" {
		w.byName[r.config.Name] = append(w.byName[r.config.Name], r)
	}
}

func (w *world) fixtureRun(f fixtures.Run, now time.Time) *run {
	creator := w.cfg.principalByUID(f.Creator)
	r := &run{
		id: f.ID, title: f.Title, prompt: f.Prompt, source: f.Source,
		creator: creator, team: creator.Team, teamScope: f.Team,
		createdAt:      now.Add(-time.Duration(f.CreatedAgo)),
		artifactTypes:  f.ArtifactTypes,
		notCancellable: f.NotCancellable,
	}
	if len(f.Config) > 0 {
		var c AgentConfig
		// New has checked that every fixture config decodes.
		_ = json.Unmarshal(f.Config, &c)
		r.config = &c
	}
	if f.ScheduleID != "" {
		r.schedule = &runSchedule{ID: f.ScheduleID, Name: f.ScheduleName, Cron: f.CronSchedule}
	}
	step := time.Duration(f.Step)
	if step == 0 {
		step = time.Hour
	}
	state := State(f.State)
	updated := now.Add(-time.Duration(f.UpdatedAgo))
	r.tl = timeline{anchor: updated, anchorState: state, final: Succeeded, steps: stepsOf{step, step, step, step}}
	if state.finalFate() {
		r.tl.final = state
	}
	if rank[state] >= rank[InProgress] && state != Cancelled {
		r.tl.startedAt = r.createdAt.Add(updated.Sub(r.createdAt) / 4)
	}
	r.tl.wasClaimed = rank[state] >= rank[Claimed] && state != Cancelled
	if m := f.StatusMessage; m != nil {
		r.forcedState = state
		r.forcedMsg = &StatusMessage{Message: m.Message, ErrorCode: m.ErrorCode, Retryable: m.Retryable}
		if m.Retryable == nil && m.ErrorCode != "" {
			r.forcedMsg.Retryable = boolPtr(errorCodes[errorCode(m.ErrorCode)].retryable)
		}
	}
	return r
}

func boolPtr(b bool) *bool { return &b }

// newRun is what a create request asks for, already validated.
type newRun struct {
	title, prompt  string
	config         *AgentConfig
	fromSkill      bool
	teamScope      bool
	conversationID string
	fate           fate
}

// create stores a new run and returns it as it is now.
func (w *world) create(p *fixtures.Principal, n newRun) (runView, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cfg.maxRuns > 0 && len(w.runs) >= w.cfg.maxRuns {
		return runView{}, errStoreFull
	}
	now := w.clock.Now()
	r := &run{
		id:    uuid.NewString(),
		title: n.title, prompt: n.prompt, source: "API",
		creator: p, team: p.Team, teamScope: n.teamScope,
		createdAt: now, config: n.config, fromSkill: n.fromSkill,
		conversationID: n.conversationID,
		tl:             timeline{anchor: now, anchorState: Queued, steps: n.fate.steps, final: n.fate.final},
	}
	if n.fate.final != Succeeded {
		r.fateMsg = n.fate.statusMessage()
	}
	r.packStrings()
	w.insertLocked(r)
	w.changed()
	return r.view(now, w.cfg.sessionLinkBase), nil
}

// visible finds a run the principal's team may see.
func (w *world) visibleLocked(p *fixtures.Principal, id string) (*run, error) {
	r, ok := w.byID[id]
	if !ok {
		return nil, errRunNotFound
	}
	if r.team != p.Team {
		return nil, errOtherTeam
	}
	return r, nil
}

func (w *world) get(p *fixtures.Principal, id string) (runView, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	r, err := w.visibleLocked(p, id)
	if err != nil {
		return runView{}, err
	}
	return r.view(w.clock.Now(), w.cfg.sessionLinkBase), nil
}

// cancel follows the real service: active runs are cancelled, finished ones
// are a client error, and a run being handed to a worker asks for a retry.
func (w *world) cancel(p *fixtures.Principal, id string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, err := w.visibleLocked(p, id)
	if err != nil {
		return err
	}
	now := w.clock.Now()
	switch s := r.tl.at(now).state; {
	case s.terminal():
		return fmt.Errorf("%w: it is %s", errTerminal, s)
	case s == Pending:
		return errPending
	case r.notCancellable:
		return errNotCancelable
	}
	r.tl.reanchor(now, Cancelled)
	r.forcedState = Cancelled
	r.forcedMsg = &StatusMessage{Message: "Cancelled by " + p.DisplayName + "."}
	w.changed()
	return nil
}

// force puts a run into state now, for the control API. Like every change
// it only moves forward, and a finished run stays finished.
func (w *world) force(id string, state State, msg *StatusMessage) (RunItem, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.byID[id]
	if !ok {
		return RunItem{}, errRunNotFound
	}
	now := w.clock.Now()
	cur := r.tl.at(now).state
	if cur.terminal() && cur != state || rank[state] < rank[cur] {
		return RunItem{}, fmt.Errorf("%w: it is %s, %s would go back", errBackwards, cur, state)
	}
	if cur == state && msg == nil {
		return r.item(now, w.cfg.sessionLinkBase), nil // already there; keep its message
	}
	if cur != state {
		r.tl.reanchor(now, state)
	}
	if msg == nil && (state == Failed || state == Errored) {
		msg = fate{final: state}.statusMessage()
	}
	r.forcedState, r.forcedMsg = state, msg
	w.changed()
	return r.item(now, w.cfg.sessionLinkBase), nil
}

// run returns a run whatever its team, for the Go controls.
func (w *world) run(id string) (RunItem, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	r, ok := w.byID[id]
	if !ok {
		return RunItem{}, errRunNotFound
	}
	return r.item(w.clock.Now(), w.cfg.sessionLinkBase), nil
}
