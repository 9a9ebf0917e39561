package mockserver

// SessionInfo is one open mock session, as GET /__mock/sessions lists it.
type SessionInfo struct {
	// Name is the X-Mock-Session value; "" is the default session.
	Name     string    `json:"name"`
	Runs     int       `json:"runs"`
	Clock    ClockInfo `json:"clock"`
	LastUsed string    `json:"last_used"`
}

// listSessions answers GET /__mock/sessions: the open mock sessions, the
// default one first, then the most recently used.
func (s *Server) listSessions(*call) response {
	listed := s.store.Sessions()
	out := make([]SessionInfo, 0, len(listed))
	for _, l := range listed {
		out = append(out, SessionInfo{Name: l.Name, Runs: l.Session.Len(), Clock: clockInfo(l.Session), LastUsed: formatTime(l.LastUsed)})
	}
	return ok(out)
}
