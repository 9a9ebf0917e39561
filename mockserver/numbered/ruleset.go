// Package numbered keeps one mock session's rules of one kind (fault rules,
// fate rules) in the order they were added, numbering each as it comes in.
package numbered

import (
	"errors"
	"strconv"
	"sync"
)

// Max is how many rules of one kind a mock session may hold: every request
// is matched against them in order, so they must stay few.
const Max = 100

// ErrFull is Insert's answer when the set holds Max rules.
var ErrFull = errors.New("this mock session already holds the maximum of 100 rules of this kind; remove some first")

// Set holds rules of one kind in the order they were added.
type Set[R any] struct {
	mu     sync.Mutex
	rules  []*R
	nextID int
}

// Insert numbers r through setID and appends it, unless the set is full.
func (s *Set[R]) Insert(r *R, setID func(id string)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.rules) >= Max {
		return ErrFull
	}
	s.nextID++
	setID(strconv.Itoa(s.nextID))
	s.rules = append(s.rules, r)
	return nil
}

// First calls fn on each rule in order, under the lock, until fn returns true.
func (s *Set[R]) First(fn func(r *R) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.rules {
		if fn(r) {
			return
		}
	}
}

// List copies the rules, counts included.
func (s *Set[R]) List() []R {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]R, 0, len(s.rules))
	for _, r := range s.rules {
		out = append(out, *r)
	}
	return out
}

// Clear drops every rule.
func (s *Set[R]) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = nil
}

// Remove drops the rule whose idOf is id; it reports whether there was one.
func (s *Set[R]) Remove(id string, idOf func(*R) string) bool {
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
