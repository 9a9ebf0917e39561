package openapi

import "sync"

// Accepted remembers the keys of requests the validator accepted, so the
// same request again (a client polling a run, a suite listing the same page,
// a retried create) skips a check that costs more than answering. Only
// acceptances are kept: a rejected request is checked every time, so its
// problem reads as before. It holds at most its max keys; when full it
// starts over. The key must name everything the verdict depends on.
type Accepted struct {
	max  int
	mu   sync.RWMutex
	keys map[string]struct{}
}

// NewAccepted returns an empty set that holds at most max keys.
func NewAccepted(max int) *Accepted { return &Accepted{max: max} }

// Has reports whether key was accepted before.
func (a *Accepted) Has(key []byte) bool {
	a.mu.RLock()
	defer a.mu.RUnlock()
	_, ok := a.keys[string(key)] // looked up without making a string
	return ok
}

// Add remembers key.
func (a *Accepted) Add(key []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.keys == nil || len(a.keys) >= a.max {
		a.keys = make(map[string]struct{}, 64)
	}
	a.keys[string(key)] = struct{}{}
}

// Forget drops every key.
func (a *Accepted) Forget() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.keys = nil
}
