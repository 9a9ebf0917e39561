package store

import (
	"errors"
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

var ErrClockBackwards = errors.New("the clock only moves forward")

// clock is a mock session's notion of now. Run states are derived from it, so it
// never goes backwards: that alone keeps every run's state moving forward.
type clock struct {
	mu sync.Mutex
	// wall is the source of real time, injectable for tests of the mock itself.
	wall func() time.Time
	mode ClockMode
	// In real mode now = wall() + offset; in virtual mode now = frozen.
	offset time.Duration
	frozen time.Time
}

func newClock(mode ClockMode, start time.Time, wall func() time.Time) *clock {
	c := &clock{wall: wall, mode: mode}
	if mode == VirtualClock {
		c.frozen = start
	} else {
		c.offset = start.Sub(wall())
	}
	return c
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
		return c.frozen
	}
	return c.wall().Add(c.offset).Truncate(time.Millisecond)
}

// Mode reports the clock's mode.
func (c *clock) Mode() ClockMode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mode
}

// Advance moves the clock forward by d.
func (c *clock) Advance(d time.Duration) (time.Time, error) {
	if d < 0 {
		return time.Time{}, ErrClockBackwards
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mode == VirtualClock {
		c.frozen = c.frozen.Add(d).Truncate(time.Millisecond)
	} else {
		c.offset += d
	}
	return c.nowLocked(), nil
}

// Set jumps to t, which must not be before now.
func (c *clock) Set(t time.Time) (time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.nowLocked()
	if t.Before(now) {
		return time.Time{}, ErrClockBackwards
	}
	if c.mode == VirtualClock {
		c.frozen = t.Truncate(time.Millisecond)
	} else {
		c.offset += t.Sub(now)
	}
	return c.nowLocked(), nil
}

// SetMode freezes the clock at the current instant or lets it run on from
// there; either way time does not jump.
func (c *clock) SetMode(m ClockMode) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.nowLocked()
	c.mode = m
	if m == VirtualClock {
		c.frozen = now
	} else {
		c.offset = now.Sub(c.wall())
	}
	return now
}
