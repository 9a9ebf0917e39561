package mockserver

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The request journal: what GET /__mock/requests lists, so a test can see
// how its client retried.

// Attempt is one request the mock saw, as GET /__mock/requests lists it.
type Attempt struct {
	At     string `json:"at"`
	Method string `json:"method"`
	Path   string `json:"path"`
	Status int    `json:"status"`
	// RetryCount is the official clients' X-Stainless-Retry-Count header:
	// 0 for a first attempt, 1 for the first retry, and so on.
	RetryCount *int `json:"retry_count,omitempty"`
	Injected   bool `json:"injected,omitempty"`
}

// journalSize bounds the journal, so a long-running mock keeps constant
// memory; journalPathMax bounds each entry's path (longer ones end in "…"),
// so a journal holds at most about journalSize × 400 bytes. Only
// authenticated API requests are journaled: a request that fails
// authentication records nothing.
const (
	journalSize    = 500
	journalPathMax = 256
)

// journal keeps the latest requests of a mock session in a ring, so recording
// one costs the same however full it is.
type journal struct {
	mu       sync.Mutex
	attempts []journalEntry // up to journalSize; once full, attempts[next] is the oldest
	next     int
}

// journalEntry is an attempt with its time not yet written out: every API
// request is journaled, and few journals are ever read.
type journalEntry struct {
	Attempt
	at time.Time
}

// add records a, which happened at at (a zero at leaves a.At as it is).
func (j *journal) add(a Attempt, at time.Time) {
	j.mu.Lock()
	defer j.mu.Unlock()
	e := journalEntry{a, at}
	if len(j.attempts) < journalSize {
		j.attempts = append(j.attempts, e)
		return
	}
	j.attempts[j.next] = e
	j.next = (j.next + 1) % journalSize
}

// list returns the attempts oldest first.
func (j *journal) list() []Attempt {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]Attempt, 0, len(j.attempts))
	for _, part := range [][]journalEntry{j.attempts[j.next:], j.attempts[:j.next]} {
		for _, e := range part {
			if !e.at.IsZero() {
				e.Attempt.At = formatTime(e.at)
			}
			out = append(out, e.Attempt)
		}
	}
	return out
}

func (j *journal) clear() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.attempts, j.next = nil, 0
}

// attempt is the journal entry for a request answered through w, without
// its time.
func attempt(r *http.Request, path string, w *statusWriter, injected bool) Attempt {
	// Copies, not substrings: net/http's method and path are slices of the
	// whole request line, which an entry would otherwise keep alive.
	a := Attempt{Method: methodName(r.Method), Path: strings.Clone(truncate(path, journalPathMax)), Injected: injected, Status: w.status}
	if v := r.Header.Get("X-Stainless-Retry-Count"); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			a.RetryCount = &n
		}
	}
	return a
}

// methodName is method as a string of its own: the methods of the API as
// constants, any other copied.
func methodName(method string) string {
	switch method {
	case http.MethodGet:
		return http.MethodGet
	case http.MethodPost:
		return http.MethodPost
	case http.MethodPut:
		return http.MethodPut
	case http.MethodDelete:
		return http.MethodDelete
	case http.MethodHead:
		return http.MethodHead
	}
	return strings.Clone(truncate(method, 16))
}
