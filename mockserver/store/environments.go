package store

import (
	"time"

	"github.com/agentruns/agentruns/fixtures"
)

// The environments resource. Environments themselves are fixtures and never
// change; what the API shows about their use (the newest run, when a run
// last started, whether setup failed) is derived from the mock session's
// runs at the moment of asking, so it follows every run as the clock moves.

// Errors of the environments resource.
var (
	ErrEnvironmentNotFound = sentinel(NotFound, "no environment with this id")
	ErrEnvironmentHidden   = sentinel(Forbidden, "the environment belongs to a team that has not shared it")
)

// environmentTable is the environments resource's part of a mock session:
// only the instant the fixtures' times (an environment's last_updated, an
// agent's created_at) count back from. The environments are fixtures.
type environmentTable struct {
	seededAt time.Time
}

// savedEnvironments is the environments table's part of the save.
type savedEnvironments struct {
	// SeededAt is the table's seededAt (named, in the file, after what
	// environments, models and identities were once called together);
	// absent in files written before environments and identities were saved.
	SeededAt time.Time `json:"catalogue_at,omitzero"`
}

func (t *environmentTable) reset(_ *Session, now time.Time) { t.seededAt = now }

func (t *environmentTable) save(ss *savedSession) { ss.SeededAt = t.seededAt }

// restore: an older file without the instant counts from its clock.
func (t *environmentTable) restore(_ *Session, ss *savedSession, _ *restorer) error {
	t.seededAt = ss.SeededAt
	if t.seededAt.IsZero() {
		t.seededAt = ss.Clock.Now
	}
	return nil
}

// SetupFailedCode is the error code of a run that failed while its
// environment was being set up.
const SetupFailedCode = "environment_setup_failed"

// EnvironmentView is an environment as one team sees it at one instant.
type EnvironmentView struct {
	Env         *fixtures.Environment
	LastUpdated time.Time
	// LastTask is the team's newest run in the environment; nil if none.
	LastTask *View
	// LastRunAt is when the team's latest run there started; zero if none has.
	LastRunAt   time.Time
	SetupFailed bool
}

// CheckEnvironment tells whether p's team may use the environment id.
func (s *Store) CheckEnvironment(p *fixtures.Principal, id string) error {
	for i := range s.opts.Fixtures.Environments {
		if e := &s.opts.Fixtures.Environments[i]; e.UID == id {
			if !e.VisibleTo(p.Team) {
				return ErrEnvironmentHidden.because("the environment %q belongs to a team that has not shared it with yours", id)
			}
			return nil
		}
	}
	return ErrEnvironmentNotFound
}

// Environments returns the environments p's team may see, in the fixtures'
// order, each with what the team's runs say about it now.
func (ms *Session) Environments(p *fixtures.Principal) []EnvironmentView {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	now := ms.clock.Now()
	var out []EnvironmentView
	index := map[string]int{}
	for i := range ms.st.opts.Fixtures.Environments {
		e := &ms.st.opts.Fixtures.Environments[i]
		if !e.VisibleTo(p.Team) {
			continue
		}
		index[e.UID] = len(out)
		out = append(out, EnvironmentView{Env: e, LastUpdated: ms.environments.seededAt.Add(-time.Duration(e.LastUpdatedAgo))})
	}
	// Runs are kept in creation order: walking back, the first run met in
	// an environment is its newest.
	for i := len(ms.runs.list) - 1; i >= 0; i-- {
		r := ms.runs.list[i]
		if r.Team != p.Team || r.Config == nil || r.Config.EnvironmentID == "" {
			continue
		}
		k, ok := index[r.Config.EnvironmentID]
		if !ok {
			continue
		}
		ev := &out[k]
		v := r.view(now)
		if ev.LastTask == nil {
			ev.LastTask = &v
			ev.SetupFailed = (v.Snap.State == Failed || v.Snap.State == Errored) && v.Msg != nil && v.Msg.ErrorCode == SetupFailedCode
		}
		if v.Snap.StartedAt.After(ev.LastRunAt) {
			ev.LastRunAt = v.Snap.StartedAt
		}
	}
	return out
}
