package store

import (
	"maps"
	"strings"

	"github.com/agentruns/agentruns/fixtures"
)

// MaxMetadataKeys is how many metadata keys a run may have.
const MaxMetadataKeys = 20

// ErrMetadataTooMany is the error of a run whose metadata, with what it
// inherits, would have more than MaxMetadataKeys keys.
var ErrMetadataTooMany = sentinel(Invalid, "metadata: too many keys")

// inheritMetadata is a child run's metadata: its parent's keys, with the
// child's own keys winning.
func inheritMetadata(parent, own map[string]string) map[string]string {
	if len(parent) == 0 {
		return own
	}
	out := maps.Clone(parent)
	maps.Copy(out, own)
	return out
}

// ExecutorUID is the uid of who executes the run: the agent that created
// it on a member's behalf, or else its creator.
func (r *Run) ExecutorUID() string {
	if r.Executor != nil && r.Executor.Principal != nil {
		return r.Executor.UID
	}
	return r.Creator.UID
}

// Member is the person of team's the name (a user id or an email address)
// names, and false when the team has no such person: whom an agent may
// create a run on behalf of.
func (s *Store) Member(team, name string) (*fixtures.Principal, bool) {
	for _, p := range s.byUID {
		if p.Team == team && p.Type == "user" && (p.UID == name || p.Email != "" && strings.EqualFold(p.Email, name)) {
			return p, true
		}
	}
	return nil, false
}
