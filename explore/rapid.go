package explore

import (
	"flag"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// Package rapid generates, runs and shrinks the sequences. It is made for
// go test and reads its settings (the seed, how many cases, how long a
// sequence is on average, how long to shrink) from its command-line flags,
// registered on flag.CommandLine, which it reads while it checks. A command
// fixes them by setting those flags: settingsMu lets several explorations
// run at once when they want the same settings and makes the others wait.
var settingsMu sync.RWMutex

// rapidSettings are the flags of package rapid one exploration needs.
type rapidSettings struct {
	seed       uint64
	checks     int
	steps      int
	shrinkTime time.Duration
}

func (s rapidSettings) flags() map[string]string {
	return map[string]string{
		"rapid.seed":       strconv.FormatUint(s.seed, 10),
		"rapid.checks":     strconv.Itoa(s.checks),
		"rapid.steps":      strconv.Itoa(s.steps),
		"rapid.shrinktime": s.shrinkTime.String(),
		"rapid.nofailfile": "true", // no files written where the command runs
		"rapid.v":          "false",
		"rapid.log":        "false",
		"rapid.debug":      "false",
		"rapid.failfile":   "",
	}
}

// testingFlags registers package testing's flags outside a test binary,
// and marks the flags of flag.CommandLine parsed (from no argument: a
// command reads its own): rapid asks testing.Short, which panics until
// both are done.
var testingFlags sync.Once

func initTesting() {
	testing.Init()
	if !flag.Parsed() {
		_ = flag.CommandLine.Parse(nil)
	}
}

// withRapid runs f while package rapid's flags hold s.
func withRapid(s rapidSettings, f func()) error {
	if !testing.Testing() {
		testingFlags.Do(initTesting)
	}
	want := s.flags()
	for {
		settingsMu.RLock()
		if holds(want) {
			defer settingsMu.RUnlock()
			f()
			return nil
		}
		settingsMu.RUnlock()
		settingsMu.Lock()
		for name, value := range want {
			if err := flag.CommandLine.Set(name, value); err != nil {
				settingsMu.Unlock()
				return fmt.Errorf("explore: setting %s: %w", name, err)
			}
		}
		settingsMu.Unlock()
	}
}

func holds(want map[string]string) bool {
	for name, value := range want {
		f := flag.CommandLine.Lookup(name)
		if f == nil || f.Value.String() != value {
			return false
		}
	}
	return true
}

// checker is the rapid.TB an exploration hands rapid.Check: it keeps what
// rapid says instead of failing a test, and stops the check by panicking
// with stopCheck, which check recovers.
type checker struct {
	failed bool
	said   []string
}

type stopCheck struct{}

func (c *checker) Helper()                          {}
func (c *checker) Name() string                     { return "agentruns-explore" }
func (c *checker) Logf(format string, args ...any)  {}
func (c *checker) Log(args ...any)                  {}
func (c *checker) Skipf(format string, args ...any) { panic(stopCheck{}) }
func (c *checker) Skip(args ...any)                 { panic(stopCheck{}) }
func (c *checker) SkipNow()                         { panic(stopCheck{}) }
func (c *checker) Errorf(format string, args ...any) {
	c.Fail()
	c.said = append(c.said, fmt.Sprintf(format, args...))
}
func (c *checker) Error(args ...any)                 { c.Fail(); c.said = append(c.said, fmt.Sprint(args...)) }
func (c *checker) Fatalf(format string, args ...any) { c.Errorf(format, args...); c.FailNow() }
func (c *checker) Fatal(args ...any)                 { c.Error(args...); c.FailNow() }
func (c *checker) FailNow()                          { c.failed = true; panic(stopCheck{}) }
func (c *checker) Fail()                             { c.failed = true }
func (c *checker) Failed() bool                      { return c.failed }

// check runs rapid.Check with prop and tells whether it failed.
func check(prop func(*rapid.T)) (failed bool, said []string) {
	c := &checker{}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(stopCheck); !ok {
					panic(r)
				}
			}
		}()
		rapid.Check(c, prop)
	}()
	return c.failed, c.said
}
