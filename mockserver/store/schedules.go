package store

import (
	"container/heap"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/google/uuid"
	"github.com/robfig/cron/v3"
)

// The schedules resource: scheduled agents, each a cron expression that
// starts a run at every tick. No goroutine or timer runs per schedule: the
// ticks due by the mock session's now are turned into runs whenever the
// mock session is next used (catchUp: any request, a clock move, a save),
// in tick order, as if a scheduler had started each run on time.

// Errors of the schedules resource.
var (
	ErrScheduleNotFound = sentinel(NotFound, "no schedule with this id")
	ErrScheduleOther    = sentinel(Forbidden, "the schedule belongs to another team")
	ErrBadCron          = sentinel(Invalid, "not a 5-field cron expression")
	ErrCronNeverFires   = sentinel(Invalid, "the cron expression has no tick ahead")
	ErrScheduleTooLarge = sentinel(Invalid, "the schedule is larger than the mock keeps")
	// ErrTooManySchedules: the team has MaxSchedulesPerTeam; deleting one
	// or a reset makes room.
	ErrTooManySchedules = sentinel(Exhausted, "the team has the most schedules the mock keeps for one team")
)

// The bounds on schedules, so one team's cost the mock at most about
// MaxSchedulesPerTeam × (name + prompt + config) ≈ 3.3 MiB a session, and
// a listing, which the API does not page, answers at most that.
const (
	MaxSchedulesPerTeam  = 100
	MaxScheduleName      = 256
	MaxSchedulePrompt    = 16 << 10
	MaxScheduleConfigLen = 16 << 10 // agent_config as JSON
)

// checkSize refuses a schedule past the bounds above, naming the field.
func (spec ScheduleSpec) checkSize() error {
	switch {
	case len(spec.Name) > MaxScheduleName:
		return ErrScheduleTooLarge.because("name: %d bytes, over the %d a schedule's name may have", len(spec.Name), MaxScheduleName)
	case len(spec.Prompt) > MaxSchedulePrompt:
		return ErrScheduleTooLarge.because("prompt: %d bytes, over the %d (16 KiB) a schedule's prompt may have", len(spec.Prompt), MaxSchedulePrompt)
	}
	if spec.Config != nil {
		b, _ := json.Marshal(spec.Config) // plain strings, maps and numbers: never fails
		if len(b) > MaxScheduleConfigLen {
			return ErrScheduleTooLarge.because("agent_config: %d bytes of JSON, over the %d (16 KiB) a schedule's configuration may have", len(b), MaxScheduleConfigLen)
		}
	}
	return nil
}

// scheduleTable is the schedules resource's part of a mock session.
type scheduleTable struct {
	byID    map[string]*ScheduleRecord
	nextSeq int64 // numbers the next schedule created
	// due holds the enabled schedules with a next tick, earliest first, so
	// a catch-up touches only the schedules that are due.
	due dueHeap
	// dueAt is the earliest next tick of an enabled schedule (unix
	// microseconds, which reach year 9999 where nanoseconds stop in 2262;
	// MaxInt64: none), so catchUp costs one load when none is due.
	dueAt atomic.Int64
}

// savedSchedules is the schedules table's part of the save.
type savedSchedules struct {
	// Schedules are in creation order; NextScheduleSeq numbers the next.
	Schedules       []*ScheduleRecord `json:"schedules,omitempty"`
	NextScheduleSeq int64             `json:"next_schedule_seq,omitempty"`
}

// reset seeds the fixtures' schedules (schedules.json; store.New has
// parsed their crons), created and updated the fixtures' times before now;
// an enabled one fires at its first tick after now.
func (t *scheduleTable) reset(ms *Session, now time.Time) {
	t.byID, t.nextSeq = map[string]*ScheduleRecord{}, 0
	for _, f := range ms.st.opts.Fixtures.Schedules {
		c, err := ParseCron(f.Cron)
		if err != nil {
			continue // refused by store.New already
		}
		p := ms.st.Principal(f.Owner)
		t.nextSeq++
		sc := &ScheduleRecord{
			ID: f.ID, Seq: t.nextSeq, Name: f.Name, Cron: c.Expr, sched: c.sched, Prompt: f.Prompt, Enabled: f.Enabled,
			Owner: Creator{p}, UpdatedBy: Creator{p}, Team: p.Team, TeamScope: f.Team,
			CreatedAt: now.Add(-time.Duration(f.CreatedAgo)), UpdatedAt: now.Add(-time.Duration(f.UpdatedAgo)),
			Extra: f.Extra,
		}
		if len(f.Config) > 0 {
			var cfg AgentConfig
			_ = json.Unmarshal(f.Config, &cfg) // store.New has checked that it decodes
			sc.Config = &cfg
		}
		if f.Enabled {
			sc.NextTick = nextTick(c.sched, now)
		}
		t.byID[sc.ID] = sc
	}
	t.rebuild()
}

func (t *scheduleTable) save(ss *savedSession) {
	list := make([]*ScheduleRecord, 0, len(t.byID))
	for _, sc := range t.byID {
		list = append(list, sc)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Seq < list[j].Seq })
	ss.savedSchedules = savedSchedules{Schedules: list, NextScheduleSeq: t.nextSeq}
}

// restore brings schedules back with their next tick: ticks that fell
// while the mock was down (a real clock moves on across a restart) are
// started on the next use, like those of any clock move.
func (t *scheduleTable) restore(ms *Session, ss *savedSession, rs *restorer) error {
	t.byID, t.nextSeq = map[string]*ScheduleRecord{}, 0
	perTeam := map[string]int{}
	for i, sc := range ss.Schedules {
		if sc == nil {
			return fmt.Errorf("schedule %d is null", i)
		}
		if err := sc.check(); err != nil {
			return fmt.Errorf("schedule %d (%q): %v", i, sc.ID, err)
		}
		if err := sc.checkNextTick(ms.clock.Now()); err != nil {
			return fmt.Errorf("schedule %q: %v", sc.ID, err)
		}
		// The limits of a request hold for a file too (a file edited by
		// hand, or written by a mock without them).
		if err := (ScheduleSpec{Name: sc.Name, Prompt: sc.Prompt, Config: sc.Config}).checkSize(); err != nil {
			return fmt.Errorf("schedule %q: %v", sc.ID, err)
		}
		if len(sc.Metadata) > MaxMetadataKeys {
			return fmt.Errorf("schedule %q: %d metadata keys; a schedule may have at most %d", sc.ID, len(sc.Metadata), MaxMetadataKeys)
		}
		if perTeam[sc.Team]++; perTeam[sc.Team] > MaxSchedulesPerTeam {
			return fmt.Errorf("team %s has more than %d schedules, the most the mock keeps for one team", sc.Team, MaxSchedulesPerTeam)
		}
		if _, dup := t.byID[sc.ID]; dup {
			return fmt.Errorf("schedule %q appears twice", sc.ID)
		}
		sc.Owner.Principal = rs.principal(sc.Owner.Principal)
		sc.UpdatedBy.Principal = rs.principal(sc.UpdatedBy.Principal)
		t.byID[sc.ID] = sc
		t.nextSeq = max(t.nextSeq, sc.Seq)
	}
	t.nextSeq = max(t.nextSeq, ss.NextScheduleSeq)
	t.rebuild()
	return nil
}

// MaxTicksPerCatchUp bounds the runs one schedule starts in one catch-up
// (a clock moved by a month on a schedule that fires every minute). The
// newest ticks are kept: the oldest beyond the bound are skipped, and the
// schedule's last_spawn_error says which.
const MaxTicksPerCatchUp = 1000

// ScheduleRecord is one stored schedule, the same record in memory and in
// the save.
type ScheduleRecord struct {
	ID        string       `json:"id"`
	Seq       int64        `json:"seq"` // creation order: ties between equal ticks
	Name      string       `json:"name"`
	Cron      string       `json:"cron_schedule"`
	Prompt    string       `json:"prompt"`
	Enabled   bool         `json:"enabled"`
	Config    *AgentConfig `json:"config,omitempty"`
	FromSkill bool         `json:"from_skill,omitempty"`
	Owner     Creator      `json:"owner"`
	UpdatedBy Creator      `json:"updated_by"`
	Team      string       `json:"team"` // the team that may see the schedule
	TeamScope bool         `json:"team_scope,omitempty"`
	CreatedAt time.Time    `json:"created_at"`
	UpdatedAt time.Time    `json:"updated_at"`
	// LastRan is the latest tick that started a run; zero before the first.
	LastRan time.Time `json:"last_ran,omitempty"`
	// NextTick is the first tick not yet turned into a run; zero while paused.
	NextTick       time.Time `json:"next_tick,omitempty"`
	LastSpawnError string    `json:"last_spawn_error,omitempty"`
	// What the schedule's runs are started with, newer than the published
	// document: the team agent they act as, their metadata and mode.
	AgentUID string            `json:"agent_uid,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
	Mode     string            `json:"mode,omitempty"`
	// Extra are members the API's document does not declare that a
	// recorded fixture's schedule was seen with (fixtures.Extra).
	Extra fixtures.Extra `json:"extra,omitempty"`

	sched cron.Schedule // parsed from Cron when stored or loaded
	// heapAt is the schedule's place in the heap of due ticks; -1 when out.
	heapAt int
}

// ScheduleSpec is what a create or an update asks for, already validated
// and resolved.
type ScheduleSpec struct {
	Name      string
	Cron      Cron // from ParseCron
	Prompt    string
	Enabled   bool
	Config    *AgentConfig
	FromSkill bool
	TeamScope bool
	AgentUID  string
	Metadata  map[string]string
	Mode      string
}

// Cron is a cron expression, parsed once.
type Cron struct {
	// Expr is the expression with its fields single-spaced, as a schedule
	// shows it.
	Expr  string
	sched cron.Schedule
}

// ParseCron reads a 5-field cron expression, in UTC, as the fixtures read
// it (fixtures.ParseCron): a time-zone prefix (TZ=, CRON_TZ=) is refused.
func ParseCron(expr string) (Cron, error) {
	c, err := fixtures.ParseCron(expr)
	if err != nil {
		return Cron{}, ErrBadCron.because("%s", err)
	}
	return Cron{Expr: c.Expr, sched: c.Schedule}, nil
}

// check refuses a Cron that ParseCron did not make.
func (c Cron) check() error {
	if c.sched == nil {
		return ErrBadCron.because("cron_schedule: %q was not parsed (store.ParseCron)", c.Expr)
	}
	return nil
}

// next is the first tick strictly after t, in UTC; zero when there is none
// (a date that never comes, such as 30 February, or none before the last
// instant a mock clock reaches: every time the mock shows stays in range).
func (sc *ScheduleRecord) next(t time.Time) time.Time { return nextTick(sc.sched, t) }

func nextTick(s cron.Schedule, t time.Time) time.Time {
	n := s.Next(t.UTC())
	if n.IsZero() || n.After(MaxInstant) {
		return time.Time{}
	}
	return n.UTC()
}

// CreateSchedule stores a new schedule owned by p.
func (ms *Session) CreateSchedule(p *fixtures.Principal, spec ScheduleSpec) (ScheduleRecord, error) {
	if err := spec.Cron.check(); err != nil {
		return ScheduleRecord{}, err
	}
	if err := spec.checkSize(); err != nil {
		return ScheduleRecord{}, err
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	now := ms.clock.Now()
	ms.catchUpLocked(now)
	n := 0
	for _, sc := range ms.schedules.byID {
		if sc.Team == p.Team {
			n++
		}
	}
	if n >= MaxSchedulesPerTeam {
		return ScheduleRecord{}, ErrTooManySchedules.because("team %s has %d schedules, the most the mock keeps for one team; delete one (DELETE /agent/schedules/{id}) or reset the session", p.Team, n)
	}
	ms.schedules.nextSeq++
	sc := &ScheduleRecord{
		ID: "sch_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16], Seq: ms.schedules.nextSeq,
		Owner: Creator{p}, UpdatedBy: Creator{p}, Team: p.Team, TeamScope: spec.TeamScope,
		CreatedAt: now, heapAt: -1,
	}
	if err := sc.apply(spec, now); err != nil {
		ms.schedules.nextSeq--
		return ScheduleRecord{}, err
	}
	ms.schedules.byID[sc.ID] = sc
	ms.schedules.refile(sc)
	ms.changed()
	return *sc, nil
}

// apply sets what a create or an update chooses, and the next tick. An
// enabled schedule whose cron has no tick ahead (30 February, or none
// before the end of the mock's clocks) is refused, changing nothing: it
// would be a schedule that silently never runs.
func (sc *ScheduleRecord) apply(spec ScheduleSpec, now time.Time) error {
	var next time.Time
	if spec.Enabled {
		if next = nextTick(spec.Cron.sched, now); next.IsZero() {
			return ErrCronNeverFires.because("cron_schedule: %q has no tick after %s (a date that never comes, such as 30 February, or none before %s)",
				spec.Cron.Expr, now.Format(time.RFC3339), MaxInstant.Format(time.RFC3339))
		}
	}
	sc.Name, sc.Cron, sc.sched, sc.Prompt, sc.Enabled = spec.Name, spec.Cron.Expr, spec.Cron.sched, spec.Prompt, spec.Enabled
	sc.Config, sc.FromSkill = spec.Config, spec.FromSkill
	sc.AgentUID, sc.Metadata, sc.Mode = spec.AgentUID, spec.Metadata, spec.Mode
	sc.UpdatedAt = now
	sc.NextTick = next
	return nil
}

// visibleScheduleLocked finds a schedule p's team may see.
func (ms *Session) visibleScheduleLocked(p *fixtures.Principal, id string) (*ScheduleRecord, error) {
	sc, ok := ms.schedules.byID[id]
	if !ok {
		return nil, ErrScheduleNotFound
	}
	if p != nil && sc.Team != p.Team {
		return nil, ErrScheduleOther
	}
	return sc, nil
}

// GetSchedule returns a schedule p's team may see; a nil p is the control
// API, which sees every team's.
func (ms *Session) GetSchedule(p *fixtures.Principal, id string) (ScheduleRecord, error) {
	ms.catchUp()
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	sc, err := ms.visibleScheduleLocked(p, id)
	if err != nil {
		return ScheduleRecord{}, err
	}
	return *sc, nil
}

// ListSchedules returns the schedules p's team may see, by name (then id).
func (ms *Session) ListSchedules(p *fixtures.Principal) []ScheduleRecord {
	ms.catchUp()
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	out := []ScheduleRecord{}
	for _, sc := range ms.schedules.byID {
		if sc.Team == p.Team {
			out = append(out, *sc)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// UpdateSchedule replaces a schedule's settings; its owner, scope and
// history stay. A changed cron or enabled flag counts from now.
func (ms *Session) UpdateSchedule(p *fixtures.Principal, id string, spec ScheduleSpec) (ScheduleRecord, error) {
	if err := spec.Cron.check(); err != nil {
		return ScheduleRecord{}, err
	}
	if err := spec.checkSize(); err != nil {
		return ScheduleRecord{}, err
	}
	return ms.changeSchedule(p, id, func(sc *ScheduleRecord, now time.Time) error {
		spec.TeamScope = sc.TeamScope
		return sc.apply(spec, now)
	})
}

// SetScheduleEnabled pauses (false) or resumes (true) a schedule. A resumed
// schedule starts runs from its next tick on: ticks missed while it was
// paused are not made up.
func (ms *Session) SetScheduleEnabled(p *fixtures.Principal, id string, enabled bool) (ScheduleRecord, error) {
	return ms.changeSchedule(p, id, func(sc *ScheduleRecord, now time.Time) error {
		if sc.Enabled == enabled {
			return nil
		}
		spec := ScheduleSpec{Name: sc.Name, Cron: Cron{sc.Cron, sc.sched}, Prompt: sc.Prompt, Enabled: enabled, Config: sc.Config, FromSkill: sc.FromSkill,
			AgentUID: sc.AgentUID, Metadata: sc.Metadata, Mode: sc.Mode}
		return sc.apply(spec, now)
	})
}

func (ms *Session) changeSchedule(p *fixtures.Principal, id string, change func(sc *ScheduleRecord, now time.Time) error) (ScheduleRecord, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	now := ms.clock.Now()
	ms.catchUpLocked(now)
	sc, err := ms.visibleScheduleLocked(p, id)
	if err != nil {
		return ScheduleRecord{}, err
	}
	if err := change(sc, now); err != nil {
		return ScheduleRecord{}, err
	}
	sc.UpdatedBy = Creator{p}
	ms.schedules.refile(sc)
	ms.changed()
	return *sc, nil
}

// DeleteSchedule forgets a schedule; the runs it started stay.
func (ms *Session) DeleteSchedule(p *fixtures.Principal, id string) error {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.catchUpLocked(ms.clock.Now())
	sc, err := ms.visibleScheduleLocked(p, id)
	if err != nil {
		return err
	}
	delete(ms.schedules.byID, id)
	sc.NextTick = time.Time{} // out of the heap
	ms.schedules.refile(sc)
	ms.changed()
	return nil
}

// FireSchedule starts one run of a schedule now, whatever its team and
// whether or not it is paused, for tests that do not want to reason about
// cron. It does not move the schedule's next tick.
func (ms *Session) FireSchedule(id string) (View, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	now := ms.clock.Now()
	ms.catchUpLocked(now)
	sc, ok := ms.schedules.byID[id]
	if !ok {
		return View{}, ErrScheduleNotFound
	}
	r, err := ms.spawnLocked(sc, now)
	if err != nil {
		return View{}, err
	}
	ms.changed()
	return r.view(now), nil
}

// ScheduleRuns returns the runs a schedule started, oldest first, whatever
// their team. A schedule that was deleted still has its runs.
func (ms *Session) ScheduleRuns(id string) ([]View, error) {
	ms.catchUp()
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	now := ms.clock.Now()
	out := []View{}
	for _, r := range ms.runs.list {
		if r.Schedule != nil && r.Schedule.ID == id {
			out = append(out, r.view(now))
		}
	}
	if _, ok := ms.schedules.byID[id]; !ok && len(out) == 0 {
		return nil, ErrScheduleNotFound
	}
	return out, nil
}

// spawnLocked stores the run a schedule starts at tick: the schedule's
// prompt, configuration and scope, its owner as creator, source
// SCHEDULED_AGENT, created at the tick; the fate rules decide its end.
func (ms *Session) spawnLocked(sc *ScheduleRecord, tick time.Time) (*Run, error) {
	err := ms.roomForLocked(sc.Team)
	if err == nil {
		err = ms.mayStartRunsLocked(sc.Owner.Principal)
	}
	if err != nil {
		sc.LastSpawnError = fmt.Sprintf("the run due at %s was not started: %v", tick.Format(time.RFC3339), err)
		return nil, err
	}
	var cfg *AgentConfig
	if sc.Config != nil {
		c := *sc.Config
		cfg = &c
	}
	title := TitleFrom(sc.Prompt)
	if strings.TrimSpace(sc.Prompt) == "" && cfg != nil {
		title = "Run skill " + cfg.Name
	}
	fate := ms.FateFor(sc.Prompt)
	r := &Run{
		ID:    uuid.NewString(),
		Title: title, Prompt: sc.Prompt,
		Creator: sc.Owner, Team: sc.Team, TeamScope: sc.TeamScope,
		CreatedAt: tick, Config: cfg, FromSkill: sc.FromSkill,
		Details: newDetails(Details{
			Source:           "SCHEDULED_AGENT",
			Schedule:         &Schedule{ID: sc.ID, Name: sc.Name, Cron: sc.Cron},
			AgentIdentityUID: sc.AgentUID, Metadata: sc.Metadata, Mode: sc.Mode,
			ArtifactTypes: fate.Artifacts, Handoff: fate.Handoff,
		}),
		Timeline: Timeline{Anchor: tick, AnchorState: Queued, Steps: fate.Steps, Final: fate.Final},
	}
	if fate.Final != Succeeded {
		r.FateMsg = fate.StatusMessage()
	}
	r.packStrings()
	ms.insertLocked(r)
	if tick.After(sc.LastRan) {
		sc.LastRan = tick
	}
	return r, nil
}

// catchUp turns the ticks due by now into runs. It costs one atomic load
// when nothing is due, so every use of the mock session can afford it.
func (ms *Session) catchUp() {
	due := ms.schedules.dueAt.Load()
	if due == math.MaxInt64 || ms.Now().UnixMicro() < due {
		return
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.catchUpLocked(ms.clock.Now())
}

type dueTick struct {
	at time.Time
	sc *ScheduleRecord
}

// catchUpLocked starts, in tick order (ties in the schedules' creation
// order), a run for every tick of an enabled schedule up to now.
func (ms *Session) catchUpLocked(now time.Time) {
	if ms.schedules.dueAt.Load() > now.UnixMicro() {
		return
	}
	var due []dueTick
	var moved []*ScheduleRecord
	for h := &ms.schedules.due; len(*h) > 0 && !(*h)[0].NextTick.After(now); {
		sc := heap.Pop(h).(*ScheduleRecord)
		moved = append(moved, sc)
		ticks, skipped := sc.ticksUpTo(now)
		sc.LastSpawnError = ""
		if skipped != "" {
			sc.LastSpawnError = skipped
		}
		for _, t := range ticks {
			due = append(due, dueTick{t, sc})
		}
		sc.NextTick = sc.next(now)
	}
	sort.Slice(due, func(i, j int) bool {
		if !due[i].at.Equal(due[j].at) {
			return due[i].at.Before(due[j].at)
		}
		return due[i].sc.Seq < due[j].sc.Seq
	})
	for _, d := range due {
		_, _ = ms.spawnLocked(d.sc, d.at) // a refusal is kept in last_spawn_error
	}
	for _, sc := range moved {
		ms.schedules.refile(sc)
	}
	if len(due) > 0 {
		ms.changed()
	}
}

// ticksUpTo lists the schedule's ticks from NextTick up to now, at most
// MaxTicksPerCatchUp of them, the newest. When older ones had to be
// skipped, skipped says which.
func (sc *ScheduleRecord) ticksUpTo(now time.Time) (ticks []time.Time, skipped string) {
	// count counts the ticks from start up to now, stopping past the bound.
	count := func(start time.Time) (n int) {
		for t := start; !t.IsZero() && !t.After(now) && n <= MaxTicksPerCatchUp; t = sc.next(t) {
			n++
		}
		return n
	}
	start := sc.NextTick
	if count(start) > MaxTicksPerCatchUp {
		// Too many. Rather than walk them all (a month of a schedule that
		// fires every minute), find the shortest window ending now, from an
		// hour and doubling, that holds more than the bound, and walk that.
		// (span stops doubling before it overflows: over centuries of a
		// sparse cron, the walk from start is short anyway.)
		for span := time.Hour; span > 0 && now.Add(-span).After(start); span *= 2 {
			if first := sc.next(now.Add(-span).Add(-time.Nanosecond)); count(first) > MaxTicksPerCatchUp {
				start = first
				break
			}
		}
	}
	ring := make([]time.Time, 0, MaxTicksPerCatchUp)
	n := 0
	for t := start; !t.IsZero() && !t.After(now); t = sc.next(t) {
		if len(ring) < MaxTicksPerCatchUp {
			ring = append(ring, t)
		} else {
			ring[n%MaxTicksPerCatchUp] = t
		}
		n++
	}
	if n <= MaxTicksPerCatchUp && start.Equal(sc.NextTick) {
		return ring, ""
	}
	k := n % MaxTicksPerCatchUp
	ring = append(ring[k:len(ring):len(ring)], ring[:k]...)
	return ring, fmt.Sprintf("the clock moved past more than %d ticks at once: the ticks from %s to before %s were skipped (one clock move starts at most %d runs per schedule)",
		MaxTicksPerCatchUp, sc.NextTick.Format(time.RFC3339), ring[0].Format(time.RFC3339), MaxTicksPerCatchUp)
}

// inHeap reports whether a schedule belongs in the heap of due ticks.
func (sc *ScheduleRecord) inHeap() bool { return sc.Enabled && !sc.NextTick.IsZero() }

// refile puts a changed schedule where it belongs in the heap (or out of
// it), and records the earliest next tick, which catchUp compares now with.
func (t *scheduleTable) refile(sc *ScheduleRecord) {
	switch {
	case sc.heapAt >= 0 && sc.inHeap():
		heap.Fix(&t.due, sc.heapAt)
	case sc.heapAt >= 0:
		heap.Remove(&t.due, sc.heapAt)
	case sc.inHeap():
		heap.Push(&t.due, sc)
	}
	t.storeDue()
}

// rebuild files every schedule anew (reset, load).
func (t *scheduleTable) rebuild() {
	t.due = t.due[:0]
	for _, sc := range t.byID {
		sc.heapAt = -1
		if sc.inHeap() {
			sc.heapAt = len(t.due)
			t.due = append(t.due, sc)
		}
	}
	heap.Init(&t.due)
	t.storeDue()
}

func (t *scheduleTable) storeDue() {
	due := int64(math.MaxInt64)
	if len(t.due) > 0 {
		due = t.due[0].NextTick.UnixMicro()
	}
	t.dueAt.Store(due)
}

// dueHeap orders schedules by next tick, then creation (container/heap).
type dueHeap []*ScheduleRecord

func (h dueHeap) Len() int { return len(h) }
func (h dueHeap) Less(i, j int) bool {
	if !h[i].NextTick.Equal(h[j].NextTick) {
		return h[i].NextTick.Before(h[j].NextTick)
	}
	return h[i].Seq < h[j].Seq
}
func (h dueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapAt, h[j].heapAt = i, j
}
func (h *dueHeap) Push(x any) {
	sc := x.(*ScheduleRecord)
	sc.heapAt = len(*h)
	*h = append(*h, sc)
}
func (h *dueHeap) Pop() any {
	old := *h
	sc := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	sc.heapAt = -1
	return sc
}

// check refuses a saved schedule that would misbehave later, and parses
// its cron expression.
// checkNextTick refuses a next tick no mock could have written for an
// enabled schedule: one outside the instants a clock may show (the year
// 1), one not after the schedule's creation, one its cron does not make,
// or none at all while its cron still ticks after now. Loaded, such a
// schedule would fire at once, for ever, or never.
func (sc *ScheduleRecord) checkNextTick(now time.Time) error {
	if !sc.Enabled {
		return nil
	}
	t := sc.NextTick
	if t.IsZero() {
		if next := nextTick(sc.sched, now); !next.IsZero() {
			return fmt.Errorf("enabled with no next_tick, though %q ticks next at %s", sc.Cron, next.Format(time.RFC3339))
		}
		return nil
	}
	switch {
	case !InRange(t):
		return fmt.Errorf("next_tick %s is outside the instants a mock clock shows (%s to %s)",
			t.Format(time.RFC3339Nano), MinInstant.Format(time.RFC3339), MaxInstant.Format(time.RFC3339))
	case !t.After(sc.CreatedAt):
		return fmt.Errorf("next_tick %s is not after the schedule's created_at %s", t.Format(time.RFC3339Nano), sc.CreatedAt.Format(time.RFC3339Nano))
	case !nextTick(sc.sched, t.Add(-time.Nanosecond)).Equal(t):
		return fmt.Errorf("next_tick %s is not a tick of %q", t.Format(time.RFC3339Nano), sc.Cron)
	}
	return nil
}

func (sc *ScheduleRecord) check() error {
	switch {
	case sc.ID == "":
		return errors.New("no id")
	case sc.Owner.Principal == nil || sc.Owner.UID == "" || sc.Team == "":
		return errors.New("no owner or team")
	case sc.CreatedAt.IsZero():
		return errors.New("no creation time")
	}
	// An enabled schedule without a next tick is one whose cron has no tick
	// left before the end of the mock's clocks (the clock moved there): it
	// is kept, and never fires again, as it would have if the mock had not
	// stopped.
	c, err := ParseCron(sc.Cron)
	if err != nil {
		return err
	}
	sc.sched = c.sched
	if sc.UpdatedBy.Principal == nil {
		sc.UpdatedBy = sc.Owner
	}
	return nil
}
