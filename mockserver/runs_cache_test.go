package mockserver

import (
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver/store"
)

// TestRunCacheIsFresh holds what the run cache gives to what the encoder
// writes fresh, byte for byte, while a mock session changes at random in
// every way a run can change once stored: creates of every fate, cancels,
// follow-ups (which restart a finished run), forced states and messages
// (the same state with a new message too), reported events, the clock
// moving on, runs dropped and a reset. The cache is small, so runs share
// slots and replace each other too; every run is shown through it after
// each change, so every entry is put to the test the moment it could go
// stale.
func TestRunCacheIsFresh(t *testing.T) {
	s := newVirtualServer(t)
	var err error
	s.runs = newRunCache(16)
	ms := openDefault(t, s)
	rng := rand.New(rand.NewSource(7))
	p := &s.fixtures.Principals[0]
	yes, no := true, false
	finals := []State{Succeeded, Failed, Errored, Cancelled}
	states := []State{Queued, Pending, Claimed, InProgress, Blocked, Succeeded, Failed, Errored, Cancelled}
	links := []string{s.sessionLinkBase, "https://x.example/<s>&"}
	pick := func() string {
		views := ms.Runs()
		return views[rng.Intn(len(views))].Run.ID
	}
	changes := map[string]int{}
	for step := range 1500 {
		var change string
		switch n := rng.Intn(100); {
		case n < 20:
			change = "create"
			f := store.Fate{Final: finals[rng.Intn(len(finals))]}
			for i := range f.Steps {
				f.Steps[i] = time.Duration(rng.Intn(4)) * time.Second
			}
			if rng.Intn(2) == 0 {
				f.Artifacts = []string{"PLAN", "FILE"}
			}
			if rng.Intn(3) == 0 {
				f.Message, f.Retryable = fmt.Sprintf("it ended (%d)", step), []*bool{nil, &yes, &no}[rng.Intn(3)]
			}
			_, err = ms.Create(p, store.NewRun{Title: fmt.Sprintf("run %d", step), Prompt: "do <it> & \"more\"", TeamScope: rng.Intn(2) == 0, Fate: f})
		case n < 30:
			change = "cancel"
			err = ms.Cancel(p, pick())
		case n < 45:
			change = "follow-up"
			_, err = ms.Followup(p, pick(), fmt.Sprintf("and then %d", step), "")
		case n < 60:
			change = "force"
			var msg *StatusMessage
			if rng.Intn(2) == 0 {
				msg = &StatusMessage{Message: fmt.Sprintf("forced %d", rng.Intn(3)), Retryable: []*bool{nil, &yes, &no}[rng.Intn(3)]}
			}
			_, err = ms.Force(pick(), states[rng.Intn(len(states))], msg)
		case n < 65:
			change = "report"
			_, err = ms.Report(p, pick(), store.ReportedEvent{Type: []store.EventType{store.EventInProgress, store.EventBlocked, store.EventSucceeded, store.EventFailed, store.EventErrored, store.EventCancelled}[rng.Intn(6)]})
		case n < 97:
			change = "advance"
			_, err = ms.Advance(time.Duration(rng.Intn(3000)) * time.Millisecond)
		case n < 99:
			change = "truncate"
			ms.Truncate(max(1, ms.Len()-rng.Intn(3)))
		default:
			change = "reset"
			ms.Reset()
		}
		if err == nil {
			changes[change]++
		}
		views := ms.Runs()
		for _, v := range views {
			link := links[rng.Intn(len(links))]
			want := runJSON{v, link}.appendJSON(nil)
			if got := s.runs.appendRun(nil, v, link); string(got) != string(want) {
				t.Fatalf("step %d, after a %s: run %s from the cache:\n got %s\nwant %s", step, change, v.Run.ID, got, want)
			}
		}
		// A page through the cache, as the listing writes it, against one
		// written without it.
		budget := 1 << 20
		if rng.Intn(4) == 0 {
			budget = rng.Intn(8000)
		}
		cached := runPage{runs: views, linkBase: links[0], cache: s.runs}
		fresh := runPage{runs: views, linkBase: links[0]}
		if a, b := cached.fitPage(budget), fresh.fitPage(budget); a != b {
			t.Fatalf("step %d: the page keeps %d runs through the cache, %d without", step, a, b)
		}
		if got, want := cached.finish(), fresh.appendJSON(nil); string(got) != string(want) {
			t.Fatalf("step %d, after a %s: page through the cache:\n got %s\nwant %s", step, change, got, want)
		}
	}
	for _, c := range []string{"create", "cancel", "follow-up", "force", "report", "advance", "truncate", "reset"} {
		if changes[c] == 0 {
			t.Errorf("no %s took effect; the test does not cover it", c)
		}
	}
	t.Logf("changes made: %v", changes)
}

// TestRunCacheKeyParts changes, one at a time, the parts of the key that the
// random changes above rarely change alone: the message's retryable flag
// (its text the same), and the count of earlier executions, which decides
// whether run_time shows.
func TestRunCacheKeyParts(t *testing.T) {
	s := newVirtualServer(t)
	ms := openDefault(t, s)
	now := ms.Now()
	run := &store.Run{ID: "key-parts", Creator: ms.Runs()[0].Run.Creator, Details: &store.Details{Source: "API"}, CreatedAt: now,
		Timeline: store.Timeline{Anchor: now, AnchorState: Queued, Final: Succeeded, Steps: store.Steps{time.Hour, time.Hour, time.Hour, time.Hour}}}
	ms.Adopt(run)
	show := func(what string) {
		t.Helper()
		v, err := ms.Run(run.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := runJSON{v, s.sessionLinkBase}.appendJSON(nil)
		if got := s.runs.appendRun(nil, v, s.sessionLinkBase); string(got) != string(want) {
			t.Fatalf("%s: from the cache:\n got %s\nwant %s", what, got, want)
		}
	}
	show("queued")
	run.Timeline.Execution = 1 // a follow-up's restart, as the test makes it by hand
	show("a second execution")
	yes, no := true, false
	for i, r := range []*bool{&yes, &no, nil, &no} {
		if _, err := ms.Force(run.ID, Queued, &StatusMessage{Message: "same", Retryable: r}); err != nil {
			t.Fatal(err)
		}
		show(fmt.Sprintf("retryable, change %d", i))
	}
}

// TestRunCacheKeepsNoRunAfterAReset: a reset, over the control API or in
// process, and a closed mock session empty the cache, so it keeps alive no
// run they dropped.
func TestRunCacheKeepsNoRunAfterAReset(t *testing.T) {
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	held := func() int {
		n := 0
		for i := range s.runs.slots {
			if s.runs.slots[i].Load() != nil {
				n++
			}
		}
		return n
	}
	list := func(session string) {
		r := authorized(httptest.NewRequest(http.MethodGet, "/agent/runs?limit=20", nil))
		if session != "" {
			r.Header.Set(SessionHeader, session)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		if rec.Code != http.StatusOK || held() == 0 {
			t.Fatalf("listing runs: %d, %d runs cached\n%s", rec.Code, held(), rec.Body)
		}
	}
	control := func(method, session string) {
		r := httptest.NewRequest(method, "/__mock/"+map[string]string{http.MethodPost: "reset", http.MethodDelete: "session"}[method], nil)
		if session != "" {
			r.Header.Set(SessionHeader, session)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s %s: %d\n%s", method, r.URL.Path, rec.Code, rec.Body)
		}
		if n := held(); n != 0 {
			t.Fatalf("%s %s left %d runs in the cache", method, r.URL.Path, n)
		}
	}

	list("")
	control(http.MethodPost, "")
	list("cache-test")
	control(http.MethodDelete, "cache-test")
	list("")
	s.DefaultSession().Reset() // the default mock session, in process
	if n := held(); n != 0 {
		t.Fatalf("Session.Reset left %d runs in the cache", n)
	}
}
