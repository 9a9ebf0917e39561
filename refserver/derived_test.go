package refserver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// run_time sums the time each execution worked, waits for its user
// included, up to the run's latest change, or up to now while it works
// when counted live; it stops when the run ends.
func TestRunTimeSumsTheExecutions(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	r := &run{phases: []phase{
		{"QUEUED", at(0)}, {"INPROGRESS", at(2)}, {"BLOCKED", at(5)}, {"INPROGRESS", at(7)}, {"SUCCEEDED", at(9)},
		{"QUEUED", at(20)}, {"INPROGRESS", at(21)}, {"FAILED", at(24)}, // started again by a follow-up
	}}
	assert.Equal(t, time.Duration(0), r.runTime(at(1), false), "queued")
	assert.Equal(t, time.Duration(0), r.runTime(at(3), false), "working: counted up to its latest change")
	assert.Equal(t, time.Second, r.runTime(at(3), true), "working, counted live")
	assert.Equal(t, 7*time.Second, r.runTime(at(10), true), "ended: stopped")
	assert.Equal(t, 7*time.Second, r.runTime(at(22), false), "started again: the first execution's time kept")
	assert.Equal(t, 8*time.Second, r.runTime(at(22), true), "started again, counted live")
	assert.Equal(t, 10*time.Second, r.runTime(at(30), false), "both executions")
	assert.Equal(t, "PT7.000S", isoDuration(r.runTime(at(10), false)))
}
