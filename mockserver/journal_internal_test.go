package mockserver

import (
	"strconv"
	"testing"
	"time"
)

// TestJournalKeepsTheLatestInOrder pins what the journal promises, whatever
// its layout: the latest journalSize attempts, oldest first, and nothing
// after a clear.
func TestJournalKeepsTheLatestInOrder(t *testing.T) {
	var j journal
	for round := range 2 {
		for i := range journalSize*2 + 37 {
			j.add(Attempt{Path: strconv.Itoa(i)}, time.Time{})
			got := j.list()
			want := min(i+1, journalSize)
			if len(got) != want {
				t.Fatalf("round %d, after %d adds: %d attempts, want %d", round, i+1, len(got), want)
			}
			if first := i + 1 - want; got[0].Path != strconv.Itoa(first) || got[len(got)-1].Path != strconv.Itoa(i) {
				t.Fatalf("round %d, after %d adds: from %s to %s, want %d to %d", round, i+1, got[0].Path, got[len(got)-1].Path, first, i)
			}
		}
		j.clear()
		if n := len(j.list()); n != 0 {
			t.Fatalf("after clear: %d attempts", n)
		}
	}
}
