package mockserver

import (
	"sort"
	"time"
)

// SessionInfo is one open session, as GET /__mock/sessions lists it.
type SessionInfo struct {
	// Name is the X-Mock-Session value; "" is the default session.
	Name     string    `json:"name"`
	Runs     int       `json:"runs"`
	Clock    ClockInfo `json:"clock"`
	LastUsed string    `json:"last_used"`
}

// sessionList lists the open sessions, the default one first, then the
// most recently used. Listing them does not count as using them.
func (s *Server) sessionList() []SessionInfo {
	s.mu.Lock()
	worlds := make(map[string]*world, len(s.sessions))
	for name, w := range s.sessions {
		worlds[name] = w
	}
	s.mu.Unlock()
	out := make([]SessionInfo, 0, len(worlds))
	used := make(map[string]int64, len(worlds))
	for name, w := range worlds {
		w.mu.RLock()
		n := len(w.runs)
		w.mu.RUnlock()
		used[name] = w.lastUsed.Load()
		out = append(out, SessionInfo{Name: name, Runs: n, Clock: w.clockInfo(),
			LastUsed: formatTime(time.Unix(0, used[name]))})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Name, out[j].Name
		if a == "" || b == "" {
			return a == ""
		}
		if used[a] != used[b] {
			return used[a] > used[b]
		}
		return a < b
	})
	return out
}
