package store

import (
	"sort"
	"time"
)

// Listed is one open mock session, as Sessions lists it.
type Listed struct {
	Name     string // "" is the default mock session
	Session  *Session
	LastUsed time.Time
}

// Sessions lists the open mock sessions, the default one first, then the
// most recently used. Listing them does not count as using them.
func (s *Store) Sessions() []Listed {
	s.mu.Lock()
	out := make([]Listed, 0, len(s.sessions))
	for name, ms := range s.sessions {
		out = append(out, Listed{Name: name, Session: ms, LastUsed: time.Unix(0, ms.lastUsed.Load())})
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Name == "" || b.Name == "" {
			return a.Name == ""
		}
		if !a.LastUsed.Equal(b.LastUsed) {
			return a.LastUsed.After(b.LastUsed)
		}
		return a.Name < b.Name
	})
	return out
}
