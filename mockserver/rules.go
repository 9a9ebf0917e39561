package mockserver

import (
	"strconv"
	"sync"
)

// ruleSet holds one session's rules of one kind (FaultRule, FateRule) in the
// order they were added, numbering each as it comes in.
type ruleSet[R any] struct {
	mu     sync.Mutex
	rules  []*R
	nextID int
}

// insert numbers r through setID and appends it.
func (s *ruleSet[R]) insert(r *R, setID func(id string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	setID(strconv.Itoa(s.nextID))
	s.rules = append(s.rules, r)
}

// first calls fn on each rule in order, under the lock, until fn returns true.
func (s *ruleSet[R]) first(fn func(r *R) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.rules {
		if fn(r) {
			return
		}
	}
}

// list copies the rules, counts included.
func (s *ruleSet[R]) list() []R {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]R, 0, len(s.rules))
	for _, r := range s.rules {
		out = append(out, *r)
	}
	return out
}

func (s *ruleSet[R]) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = nil
}

// remove drops the rule whose idOf is id; it reports whether there was one.
func (s *ruleSet[R]) remove(id string, idOf func(*R) string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range s.rules {
		if idOf(r) == id {
			s.rules = append(s.rules[:i:i], s.rules[i+1:]...)
			return true
		}
	}
	return false
}
