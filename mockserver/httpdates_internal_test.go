package mockserver

import (
	"math/rand"
	"net/http"
	"testing"
	"time"
)

// TestHTTPDatesIsFormat holds the remembered Date header to Format's, for
// instants in the same second and in others, before 1970 too, and in zones
// other than UTC.
func TestHTTPDatesIsFormat(t *testing.T) {
	var d httpDates
	rng := rand.New(rand.NewSource(3))
	zones := []*time.Location{time.UTC, time.FixedZone("east", 5*3600+1800), time.FixedZone("west", -7*3600)}
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	for range 20000 {
		switch rng.Intn(4) {
		case 0:
			at = at.Add(time.Duration(rng.Intn(1000)) * time.Millisecond)
		case 1:
			at = at.Add(-time.Duration(rng.Intn(2000)) * time.Millisecond)
		case 2:
			at = time.Unix(rng.Int63n(1<<35)-1<<34, rng.Int63n(1e9))
		default:
			at = at.Add(time.Duration(rng.Intn(3)) * time.Nanosecond)
		}
		tz := at.In(zones[rng.Intn(len(zones))])
		if got, want := d.format(tz), tz.UTC().Format(http.TimeFormat); got != want {
			t.Fatalf("%v: got %q, want %q", tz, got, want)
		}
	}
}
