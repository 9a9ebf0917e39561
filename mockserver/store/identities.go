package store

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/google/uuid"
)

// The agent identities resource: each team's agents, the default one that
// cannot be deleted, the plan's limit on how many may be used, and the API
// keys the mock hands out for them (the service issues those elsewhere; the
// mock's control API does here). Deleting an agent revokes its keys in the
// same step, so the very next request with one of them is refused.

// Errors of the identities resource.
var (
	ErrIdentityNotFound    = sentinel(NotFound, "no agent with this uid")
	ErrIdentityOtherTeam   = sentinel(Forbidden, "the agent belongs to another team")
	ErrDefaultIdentity     = sentinel(Invalid, "the team's default agent cannot be deleted")
	ErrPlanLimit           = sentinel(Forbidden, "the team's plan allows no more agents")
	ErrIdentityUnavailable = sentinel(Forbidden, "the agent is beyond the team's plan limit")
	ErrTooManyKeys         = sentinel(Invalid, "the agent has as many keys as the mock issues")
	ErrNotAPerson          = sentinel(Forbidden, "only people manage agents; this key belongs to a service account or an agent")
)

// identityTable is the agent identities resource's part of a mock session.
type identityTable struct {
	list  []*Identity
	byUID map[string]*Identity
	byKey map[string]*Identity // by the digest of an API key
}

// savedIdentities is the identities table's part of the save.
type savedIdentities struct {
	Agents []*Identity `json:"agents,omitempty"`
}

// reset seeds the fixtures' agents, created the fixtures' times before now.
func (t *identityTable) reset(ms *Session, now time.Time) {
	t.list, t.byUID, t.byKey = nil, map[string]*Identity{}, map[string]*Identity{}
	for _, f := range ms.st.opts.Fixtures.Identities {
		t.insert(&Identity{UID: f.UID, Team: f.Team, Name: f.Name, Default: f.Default, CreatedAt: now.Add(-time.Duration(f.CreatedAgo)),
			Extra: f.Extra})
	}
	slices.SortStableFunc(t.list, func(a, b *Identity) int { return a.CreatedAt.Compare(b.CreatedAt) })
}

func (t *identityTable) save(ss *savedSession) { ss.Agents = t.list }

// restore puts the agents back. A file written before they were saved
// (no catalogue_at) keeps the fixtures' agents, counted from the saved
// clock.
func (t *identityTable) restore(ms *Session, ss *savedSession, _ *restorer) error {
	if ss.SeededAt.IsZero() {
		t.reset(ms, ss.Clock.Now)
		return nil
	}
	t.list, t.byUID, t.byKey = nil, map[string]*Identity{}, map[string]*Identity{}
	for i, a := range ss.Agents {
		if a == nil || a.UID == "" || a.Team == "" || t.byUID[a.UID] != nil {
			return fmt.Errorf("agent %d is null, without uid or team, or repeated", i)
		}
		t.insert(a)
	}
	return nil
}

func (t *identityTable) insert(a *Identity) {
	a.build()
	t.list = append(t.list, a)
	t.byUID[a.UID] = a
	for _, h := range a.KeyHashes {
		t.byKey[h] = a
	}
}

// IdentityKeyPrefix starts every API key the mock issues for an agent, so the
// mock can tell a revoked agent key from a key it has never seen.
const IdentityKeyPrefix = "wk-agent-"

// Identity is one agent identity, the same record in memory and in the save.
// Its keys are kept as SHA-256 digests: the save holds no usable credential.
type Identity struct {
	UID       string    `json:"uid"`
	Team      string    `json:"team"`
	Name      string    `json:"name"`
	Default   bool      `json:"default,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is when the agent last changed; zero in files saved before
	// it was kept (the creation time stands for it).
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	// Settings are the agent's settings beyond its name (agent_type,
	// prompt, harness, memory, secrets, skills, ...), as last sent: the API
	// gives them back as they were set.
	Settings  map[string]any `json:"settings,omitempty"`
	KeyHashes []string       `json:"key_hashes,omitempty"`
	// Extra are members the API's document does not declare that a
	// recorded fixture's agent was seen with (fixtures.Extra).
	Extra fixtures.Extra `json:"extra,omitempty"`
	// principal is who the agent acts as on runs; rebuilt from the fields
	// above when they change, never changed in place (views share it).
	principal *fixtures.Principal
}

// IdentityView is an agent as the API shows it.
type IdentityView struct {
	UID, Name            string
	Available            bool
	CreatedAt, UpdatedAt time.Time
	Settings             map[string]any // never changed in place: read only
	Extra                fixtures.Extra // read only
}

func (a *Identity) build() {
	a.principal = &fixtures.Principal{Type: "service_account", UID: a.UID, DisplayName: a.Name, Team: a.Team}
}

func keyHash(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

// teamIdentitiesLocked is the team's agents in the order the plan counts them:
// the default agent first, then by creation.
func (ms *Session) teamIdentitiesLocked(team string) []*Identity {
	var out []*Identity
	for _, a := range ms.identities.list {
		if a.Team == team {
			out = append(out, a)
		}
	}
	slices.SortStableFunc(out, func(a, b *Identity) int {
		switch {
		case a.Default == b.Default:
			return 0
		case a.Default:
			return -1
		}
		return 1
	})
	return out
}

func (ms *Session) identityViewsLocked(team string) []IdentityView {
	limit := ms.st.opts.Fixtures.PlanLimit(team)
	agents := ms.teamIdentitiesLocked(team)
	out := make([]IdentityView, len(agents))
	for i, a := range agents {
		updated := a.UpdatedAt
		if updated.IsZero() {
			updated = a.CreatedAt
		}
		out[i] = IdentityView{UID: a.UID, Name: a.Name, Available: i < limit, CreatedAt: a.CreatedAt, UpdatedAt: updated, Settings: a.Settings, Extra: a.Extra}
	}
	return out
}

func (ms *Session) identityViewLocked(a *Identity) IdentityView {
	for _, v := range ms.identityViewsLocked(a.Team) {
		if v.UID == a.UID {
			return v
		}
	}
	return IdentityView{}
}

func mayManageIdentities(p *fixtures.Principal) error {
	if p.Type != "user" {
		return ErrNotAPerson
	}
	return nil
}

// Identities lists p's team's agents.
func (ms *Session) Identities(p *fixtures.Principal) ([]IdentityView, error) {
	if err := mayManageIdentities(p); err != nil {
		return nil, err
	}
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	return ms.identityViewsLocked(p.Team), nil
}

// CreateIdentity adds an agent named name to p's team, within the plan's
// limit, with settings (nil for none; a null setting is left out).
func (ms *Session) CreateIdentity(p *fixtures.Principal, name string, settings ...map[string]any) (IdentityView, error) {
	if err := mayManageIdentities(p); err != nil {
		return IdentityView{}, err
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if limit := ms.st.opts.Fixtures.PlanLimit(p.Team); len(ms.teamIdentitiesLocked(p.Team)) >= limit {
		return IdentityView{}, ErrPlanLimit.because("the team's plan allows no more agents (%d): delete an agent or upgrade the plan", limit)
	}
	now := ms.clock.Now()
	a := &Identity{UID: "agent-" + uuid.NewString(), Team: p.Team, Name: name, CreatedAt: now, UpdatedAt: now}
	for _, set := range settings {
		a.Settings = mergeSettings(a.Settings, set)
	}
	ms.identities.insert(a)
	ms.changed()
	return ms.identityViewLocked(a), nil
}

func (ms *Session) teamIdentityLocked(p *fixtures.Principal, uid string) (*Identity, error) {
	a, ok := ms.identities.byUID[uid]
	switch {
	case !ok:
		return nil, ErrIdentityNotFound
	case a.Team != p.Team:
		return nil, ErrIdentityOtherTeam
	}
	return a, nil
}

// mergeSettings is old with each setting of set replacing its own; a
// null setting clears it. It returns a new map: views share the old one.
func mergeSettings(old, set map[string]any) map[string]any {
	out := make(map[string]any, len(old)+len(set))
	for k, v := range old {
		out[k] = v
	}
	for k, v := range set {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// UpdateIdentity changes one of p's team's agents: its name when name is not
// empty, and the settings set names (a null one is cleared).
func (ms *Session) UpdateIdentity(p *fixtures.Principal, uid, name string, set map[string]any) (IdentityView, error) {
	if err := mayManageIdentities(p); err != nil {
		return IdentityView{}, err
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	a, err := ms.teamIdentityLocked(p, uid)
	if err != nil {
		return IdentityView{}, err
	}
	if name != "" && a.Name != name {
		a.Name = name
		a.build()
	}
	if len(set) > 0 {
		a.Settings = mergeSettings(a.Settings, set)
	}
	a.UpdatedAt = ms.clock.Now()
	ms.changed()
	return ms.identityViewLocked(a), nil
}

// DeleteIdentity deletes one of p's team's agents and revokes its keys.
func (ms *Session) DeleteIdentity(p *fixtures.Principal, uid string) error {
	if err := mayManageIdentities(p); err != nil {
		return err
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	a, err := ms.teamIdentityLocked(p, uid)
	if err != nil {
		return err
	}
	if a.Default {
		return ErrDefaultIdentity
	}
	for _, h := range a.KeyHashes {
		delete(ms.identities.byKey, h)
	}
	delete(ms.identities.byUID, uid)
	ms.identities.list = slices.DeleteFunc(ms.identities.list, func(x *Identity) bool { return x == a })
	ms.changed()
	return nil
}

// ActAs is the principal a team-owned run of p's acts as when its
// agent_identity_uid names the agent uid: the agent, if it is p's team's
// and within the plan's limit.
func (ms *Session) ActAs(p *fixtures.Principal, uid string) (*fixtures.Principal, error) {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	a, err := ms.teamIdentityLocked(p, uid)
	switch {
	case errors.Is(err, ErrIdentityNotFound):
		return nil, ErrIdentityNotFound.as(Invalid, "agent_identity_uid: no agent %q in your team; GET /agent/identities lists them", uid)
	case errors.Is(err, ErrIdentityOtherTeam):
		return nil, ErrIdentityOtherTeam.because("agent_identity_uid: the agent %q belongs to another team", uid)
	case err != nil:
		return nil, err
	}
	if !ms.identityViewLocked(a).Available {
		return nil, ErrIdentityUnavailable.because("agent_identity_uid: the agent %q is beyond the team's plan limit (available: false)", uid)
	}
	return a.principal, nil
}

// mayStartRunsLocked refuses a run whose creator is one of this mock
// session's agents beyond its team's plan limit: an agent that is not
// available starts no run, whether a person names it in
// agent_identity_uid (ActAs) or it calls with its own key.
func (ms *Session) mayStartRunsLocked(p *fixtures.Principal) error {
	a, ok := ms.identities.byUID[p.UID]
	if !ok || a.Team != p.Team || ms.identityViewLocked(a).Available {
		return nil
	}
	return ErrIdentityUnavailable.because("the agent %q is beyond the team's plan limit (available: false): it cannot start runs", p.UID)
}

// MaxIdentityKeys bounds the keys issued for one agent, as rules are bounded
// per session: a key costs about 400 bytes, kept until a reset.
const MaxIdentityKeys = 100

// IssueIdentityKey makes a new API key for the agent uid, whatever its team,
// for the control API. The key itself is returned once and never kept.
func (ms *Session) IssueIdentityKey(uid string) (string, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	a, ok := ms.identities.byUID[uid]
	if !ok {
		return "", ErrIdentityNotFound.because("no agent %q in this mock session", uid)
	}
	if len(a.KeyHashes) >= MaxIdentityKeys {
		return "", ErrTooManyKeys.because("agent %q has %d keys, as many as the mock issues for one agent; a reset of the mock session, or deleting the agent, makes room", uid, MaxIdentityKeys)
	}
	key := IdentityKeyPrefix + rand.Text()
	h := keyHash(key)
	a.KeyHashes = append(a.KeyHashes, h)
	ms.identities.byKey[h] = a
	ms.changed()
	return key, nil
}

// IdentityByKey is the principal an agent API key acts as; nil when the key
// was never issued in this mock session or its agent has been deleted.
func (ms *Session) IdentityByKey(key string) *fixtures.Principal {
	if !strings.HasPrefix(key, IdentityKeyPrefix) {
		return nil
	}
	h := keyHash(key) // a digest looked up, so timing tells nothing of the key
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	if a, ok := ms.identities.byKey[h]; ok {
		return a.principal
	}
	return nil
}

// Existing is the mock session name if it is open, without opening it:
// an agent key is looked up before the caller is known, and must not open
// a mock session for a stranger.
func (s *Store) Existing(name string) *Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[name]
}

// Identity returns one of p's team's agents.
func (ms *Session) Identity(p *fixtures.Principal, uid string) (IdentityView, error) {
	if err := mayManageIdentities(p); err != nil {
		return IdentityView{}, err
	}
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	a, err := ms.teamIdentityLocked(p, uid)
	if err != nil {
		return IdentityView{}, err
	}
	return ms.identityViewLocked(a), nil
}
