package store

import (
	"sync"
	"time"
)

// ClockMode says whether a clock follows wall time or only moves when told.
type ClockMode string

const (
	// RealClock follows wall time, plus however far it has been advanced.
	RealClock ClockMode = "real"
	// VirtualClock stands still until it is advanced.
	VirtualClock ClockMode = "virtual"
)

// ErrClockBackwards is a clock move back in time.
var ErrClockBackwards = sentinel(Final, "the clock only moves forward")

// The instants a clock may show: what RFC 3339 can write (years 0000 to
// 9999), with room left at the start for fixture runs created before the
// clock's first instant. A move past MaxInstant is ErrClockRange; a real
// clock that runs into it stands still there.
var (
	MinInstant = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxInstant = time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC)
)

// ErrClockRange is a clock move or instant outside MinInstant to MaxInstant.
var ErrClockRange = sentinel(Invalid, "the clock must stay between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z")

// InRange reports whether t is an instant a clock may show.
func InRange(t time.Time) bool { return !t.Before(MinInstant) && !t.After(MaxInstant) }

// clock is a mock session's notion of now. Run states are derived from it, so it
// never goes backwards: that alone keeps every run's state moving forward.
type clock struct {
	mu sync.Mutex
	// wall is the source of real time, injectable for tests of the mock itself.
	wall func() time.Time
	mode ClockMode
	// In real mode now = base + (wall() - wallAt), in virtual mode now =
	// base. Keeping instants rather than an offset from wall time means no
	// move, however large, can overflow a Duration and wrap the clock back.
	base, wallAt time.Time
}

func newClock(mode ClockMode, start time.Time, wall func() time.Time) *clock {
	return &clock{wall: wall, mode: mode, base: clamp(start), wallAt: wall()}
}

func clamp(t time.Time) time.Time {
	switch {
	case t.Before(MinInstant):
		return MinInstant
	case t.After(MaxInstant):
		return MaxInstant
	}
	return t
}

// Now is the current instant, truncated to milliseconds so timestamps shown
// to clients round-trip exactly.
func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nowLocked()
}

func (c *clock) nowLocked() time.Time {
	if c.mode == VirtualClock {
		return c.base
	}
	elapsed := c.wall().Sub(c.wallAt)
	if elapsed < 0 { // wall time stepped back: stand still rather than go back
		elapsed = 0
	}
	return clamp(c.base.Add(elapsed).Truncate(time.Millisecond))
}

// moveLocked makes t the current instant; t is not before now.
func (c *clock) moveLocked(t time.Time) {
	c.base, c.wallAt = t.Truncate(time.Millisecond), c.wall()
}

// Mode reports the clock's mode.
func (c *clock) Mode() ClockMode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mode
}

// Advance moves the clock forward by d, to MaxInstant at most.
func (c *clock) Advance(d time.Duration) (time.Time, error) {
	if d < 0 {
		return time.Time{}, ErrClockBackwards
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// A Time holds any now plus any Duration without overflowing.
	to := c.nowLocked().Add(d)
	if to.After(MaxInstant) {
		return time.Time{}, ErrClockRange
	}
	c.moveLocked(to)
	return c.nowLocked(), nil
}

// Set jumps to t, which must not be before now nor after MaxInstant.
func (c *clock) Set(t time.Time) (time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !InRange(t) {
		return time.Time{}, ErrClockRange
	}
	if t.Before(c.nowLocked()) {
		return time.Time{}, ErrClockBackwards
	}
	c.moveLocked(t)
	return c.nowLocked(), nil
}

// SetMode freezes the clock at the current instant or lets it run on from
// there; either way time does not jump.
func (c *clock) SetMode(m ClockMode) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.nowLocked()
	c.mode = m
	c.moveLocked(now)
	return now
}
