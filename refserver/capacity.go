package refserver

import (
	"slices"
	"time"
)

// A team runs at most Options.Capacity runs at once. A run holds one of its
// team's places from the moment it leaves QUEUED until it ends (or its
// cancel takes effect); a run created while every place is held waits in
// QUEUED until the first moment one is free, its other states moved on by
// as long. The places are worked out from the runs' laid-out phases, so no
// background work moves a run out of the queue.

// waitForCapacity delays r, created at now, until its team has a place for
// it, and tells whether it had to wait (the create's at_capacity). s.mu held.
func (s *Server) waitForCapacity(r *run, now time.Time) bool {
	if s.opts.Capacity <= 0 || len(r.phases) < 2 {
		return false // no limit, or a run that never leaves QUEUED
	}
	start := r.phases[1].at
	var held [][2]time.Time // [from, until) of each place the team's runs hold
	for _, o := range s.all {
		if o.team() != r.team() || len(o.phases) < 2 {
			continue
		}
		from, until := o.phases[1].at, o.phases[len(o.phases)-1].at
		if c := o.cancelAt(); !c.IsZero() && c.Before(until) {
			until = c
		}
		if until.After(start) && from.Before(until) {
			held = append(held, [2]time.Time{from, until})
		}
	}
	free := earliestFree(held, start, r.phases[len(r.phases)-1].at.Sub(start), s.opts.Capacity)
	if !free.After(start) {
		return false
	}
	shift := free.Sub(start)
	for i := 1; i < len(r.phases); i++ {
		r.phases[i].at = r.phases[i].at.Add(shift)
	}
	return true
}

// earliestFree is the first moment from start on at which a run lasting
// d finds fewer than capacity of the intervals held over all its course:
// start itself, or the end of one of them.
func earliestFree(held [][2]time.Time, start time.Time, d time.Duration, capacity int) time.Time {
	candidates := []time.Time{start}
	for _, h := range held {
		if h[1].After(start) {
			candidates = append(candidates, h[1])
		}
	}
	slices.SortFunc(candidates, func(a, b time.Time) int { return a.Compare(b) })
	covering := func(at time.Time) int {
		n := 0
		for _, h := range held {
			if !h[0].After(at) && h[1].After(at) {
				n++
			}
		}
		return n
	}
next:
	for _, t := range candidates {
		if covering(t) >= capacity {
			continue
		}
		for _, h := range held { // a place taken later in the run's course
			if h[0].After(t) && h[0].Before(t.Add(d)) && covering(h[0]) >= capacity {
				continue next
			}
		}
		return t
	}
	return candidates[len(candidates)-1]
}
