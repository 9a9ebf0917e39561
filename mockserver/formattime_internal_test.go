package mockserver

import (
	"math/rand"
	"testing"
	"time"
)

// TestFormatTimeIsFormat holds the hand-written formatTime to
// time.Format(timeFormat) in UTC.
func TestFormatTimeIsFormat(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	east := time.FixedZone("east", 5*3600+30*60)
	times := []time.Time{{}, time.Unix(0, 0), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 1, 23, 59, 59, 999_999_999, east), time.Now()}
	for range 100000 {
		times = append(times, time.Unix(rng.Int63n(400*365*86400)-100*365*86400, rng.Int63n(1e9)).In(east))
	}
	for _, tm := range times {
		if got, want := formatTime(tm), tm.UTC().Format(timeFormat); got != want {
			t.Fatalf("formatTime(%v) = %q, want %q", tm, got, want)
		}
	}
}
