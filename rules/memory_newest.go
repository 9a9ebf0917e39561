package rules

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// The rules across answers of what the newest client sends and reads
// beyond the published document: the metadata a run was created with, the
// history a run keeps when a follow-up starts it again, the follow-up that
// must start an ended run again, and the handoff files a run lists only
// once an execution has ended. Memory keeps what they need in each run's
// facts, bounded like the rest.
//
// A run moves back to QUEUED only when a follow-up starts it again. Like
// the other rules across answers, these take the follow-ups to a run to be
// among the traffic observed: one sent past the observer looks, to them, like
// a run that went back.

// newestFacts is what these rules remember of one run; nil until there is
// something to remember, so that runs without any cost nothing.
type newestFacts struct {
	created sighting // when the run's creation was answered
	// metadata is what the creation sent, in key order, as far as
	// keptMetadataBytes of it.
	metadata [][2]string

	started      sighting // the first look that showed a started_at
	runTime      time.Duration
	runTimeSeen  sighting // the look that showed the longest run_time
	conversation sighting // the first conversation_id shown

	// beforeFollowup is the last look answered before the latest accepted
	// follow-up was sent: every look asked after the follow-up's answer is
	// the same run (KeptAcrossExecutions). restartFrom is that look while
	// no look after the answer has shown what the follow-up did
	// (FollowupStartedEndedRun, FollowupKeptLiveRun).
	beforeFollowup *Look
	restartFrom    *Look
	restartBy      string
	restartAt      time.Time
	// sentBack is a look after a follow-up that showed a run seen live
	// before it in an earlier state, until a poll of the run's events says
	// whether it had ended and been started again between.
	sentBack *Look

	onBehalfOf string // the member the creation named, if any

	followedUp time.Time // when the first accepted follow-up was sent
	// handoff is a listing of handoff files (value: how many) answered
	// while no follow-up had been accepted, until a later look says
	// whether the run had ended.
	handoff sighting
}

// keptMetadataBytes bounds the metadata kept of one run (keys and values).
const keptMetadataBytes = 512

func (f *runFacts) newestFacts() *newestFacts {
	if f.newest == nil {
		f.newest = &newestFacts{}
	}
	return f.newest
}

// createdWithLocked notes the metadata a run's creation sent.
func (m *Memory) createdWithLocked(f *runFacts, ex Exchange, metadata map[string]any) {
	n := f.newestFacts()
	n.created = sighting{by: ex.Request, at: ex.Received}
	keys := make([]string, 0, len(metadata))
	for k := range metadata {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	size := 0
	for _, k := range keys {
		v, isString := metadata[k].(string)
		if !isString || size+len(k)+len(v) > keptMetadataBytes {
			continue
		}
		size += len(k) + len(v)
		n.metadata = append(n.metadata, [2]string{k, v})
	}
}

// followedUpLocked notes an accepted follow-up: when the run was last seen
// ended before it was sent, a look asked after its answer must show the run
// started again.
func (m *Memory) followedUpLocked(f *runFacts, ex Exchange) {
	n := f.newestFacts()
	if n.followedUp.IsZero() || ex.Sent.Before(n.followedUp) {
		n.followedUp = ex.Sent
	}
	n.restartFrom, n.beforeFollowup, n.sentBack = nil, nil, nil
	if f.hasLast && f.look.Before(Look{Sent: ex.Sent}) {
		before := f.look
		n.restartFrom, n.beforeFollowup, n.restartBy, n.restartAt = &before, &before, ex.Request, ex.Received
	}
}

// handoffLocked notes a listing of a run's handoff files. The files of an
// ended execution stay listed, so a listing with files says nothing yet;
// it is judged by the next look at the run (newestLookLocked).
func (m *Memory) handoffLocked(scope string, ex Exchange, obj map[string]any) {
	files, _ := obj["attachments"].([]any)
	if len(files) == 0 {
		return
	}
	f, ok := m.runs.get(scope + "/" + runIDOf(ex.Path))
	if !ok || !f.created || f.hasLast && IsTerminal(f.look.State) {
		return // a run seen ended, or whose life before was not seen, may have files
	}
	if n := f.newestFacts(); n.followedUp.IsZero() && n.handoff.by == "" {
		n.handoff = sighting{value: strconv.Itoa(len(files)), by: ex.Request, at: ex.Received}
	}
}

// newestLookLocked checks one look at a run against what was seen of it
// before, and remembers what later looks are held to.
func (m *Memory) newestLookLocked(f *runFacts, ex Exchange, field string, run map[string]any) []Violation {
	n := f.newest
	if n == nil {
		n = &newestFacts{}
	}
	var out []Violation
	id := Str(run["run_id"])
	after := func(s sighting) bool { return s.by != "" && s.at.Before(ex.Sent) }

	// The metadata the creation sent, each pair as sent: a child run's
	// own keys win over those it inherits.
	if len(n.metadata) > 0 && after(n.created) {
		shown, _ := run["metadata"].(map[string]any)
		for _, p := range n.metadata {
			if got, has := shown[p[0]]; !has || got != p[1] {
				out = append(out, Violation{Rule: MetadataKept, Field: field + ".metadata." + p[0], RunID: id,
					Expected: Show(p[1]) + ", as the run's creation sent it (" + n.created.by + ")", Got: Show(got)})
				break
			}
		}
	}

	// started_at is "null or absent before" the agent began; once it has,
	// the run keeps one, through any execution a follow-up starts.
	if started := Str(run["started_at"]); started == "" && after(n.started) {
		out = append(out, Violation{Rule: RunKeepsItsHistory, Field: field + ".started_at", RunID: id,
			Expected: "a started_at, since the run was seen started (" + n.started.value + ", by " + n.started.by + ")", Got: "none"})
		n.started = sighting{}
	} else if started != "" && n.started.by == "" {
		n.started = sighting{value: started, by: ex.Request, at: ex.Received}
	}

	// run_time is summed over the run's executions: it never shrinks.
	if d, ok := isoDuration(Str(run["run_time"])); ok {
		if after(n.runTimeSeen) && d < n.runTime {
			out = append(out, Violation{Rule: RunKeepsItsHistory, Field: field + ".run_time", RunID: id,
				Expected: "at least " + n.runTimeSeen.value + ", as " + n.runTimeSeen.by + " showed it", Got: Str(run["run_time"])})
		}
		if n.runTimeSeen.by == "" || d > n.runTime {
			n.runTime, n.runTimeSeen = d, sighting{value: Str(run["run_time"]), by: ex.Request, at: ex.Received}
		}
	}

	// A run belongs to one conversation, which a follow-up continues.
	if conv := Str(run["conversation_id"]); conv != "" {
		if after(n.conversation) && conv != n.conversation.value {
			out = append(out, Violation{Rule: RunKeepsItsHistory, Field: field + ".conversation_id", RunID: id,
				Expected: Show(n.conversation.value) + ", as " + n.conversation.by + " showed it", Got: Show(conv)})
		} else if n.conversation.by == "" {
			n.conversation = sighting{value: conv, by: ex.Request, at: ex.Received}
		}
	}

	state := Str(run["state"])
	now := LookAt(run, ex.Sent, ex.Received, ex.Request)
	if n.beforeFollowup != nil && n.restartAt.Before(ex.Sent) {
		out = append(out, KeptAcrossExecutions(field, id, *n.beforeFollowup, now)...)
	}
	// What the follow-up did shows in the first look asked after its
	// answer: an ended run started again, a live one not sent back.
	if n.restartFrom != nil && n.restartAt.Before(ex.Sent) {
		// A restart shows only where updated_at is shown finely enough.
		if RestartShows(Str(run["updated_at"])) {
			out = append(out, FollowupStartedEndedRun(field, id, n.restartBy, *n.restartFrom, now)...)
		}
		if !IsTerminal(n.restartFrom.State) && Rank(state) >= 0 && Rank(state) < Rank(n.restartFrom.State) {
			sent := now
			n.sentBack = &sent
		} else {
			n.restartFrom = nil
		}
	}
	out = append(out, OnBehalfOf(field, n.onBehalfOf, run)...)

	// Handoff files are those of an ended execution. A run seen not ended
	// after a listing with files, and started again by no follow-up, had
	// not ended when the listing was served: states only move forward.
	if after(n.handoff) {
		if !IsTerminal(state) && Rank(state) >= 0 && (n.followedUp.IsZero() || !n.followedUp.Before(ex.Received)) {
			out = append(out, Violation{Rule: HandoffFilesAfterAnEnd, Field: field + ".state", RunID: id,
				Expected: "an ended run, since " + n.handoff.by + " listed " + n.handoff.value + " handoff file(s) for it", Got: state + ", never seen ended"})
		}
		n.handoff = sighting{}
	}

	if f.newest == nil && (n.started.by != "" || n.runTimeSeen.by != "" || n.conversation.by != "") {
		f.newest = n
	}
	return out
}

// ISODuration reads an ISO 8601 duration as run_time shows one, as
// isoDuration does: the suite sums the run_time of its runs.
func ISODuration(s string) (time.Duration, bool) { return isoDuration(s) }

// isoDuration reads an ISO 8601 duration of days, hours, minutes and
// seconds ("PT2M30.5S", "P1DT2H"); ok is false for anything else.
func isoDuration(s string) (time.Duration, bool) {
	rest, ok := strings.CutPrefix(s, "P")
	if !ok || rest == "" {
		return 0, false
	}
	var d time.Duration
	inTime := false
	for rest != "" {
		if rest[0] == 'T' {
			inTime, rest = true, rest[1:]
			continue
		}
		i := strings.IndexAny(rest, "DHMSWY")
		if i <= 0 {
			return 0, false
		}
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil || n < 0 {
			return 0, false
		}
		var unit time.Duration
		switch rest[i] {
		case 'D':
			unit = 24 * time.Hour
		case 'H':
			unit = time.Hour
		case 'M':
			unit = time.Minute
		case 'S':
			unit = time.Second
		}
		switch {
		case unit == 0, !inTime && rest[i] != 'D', inTime && rest[i] == 'D':
			return 0, false // weeks, months and years have no fixed length
		}
		d += time.Duration(n * float64(unit))
		rest = rest[i+1:]
	}
	return d, true
}

// RestartShowsWithin is the coarsest precision of updated_at at which a
// run started again and ended again shows a new one: no run goes through
// its states in less than a millisecond, but it may well within one
// second, and a server may show its instants to the second.
const RestartShowsWithin = time.Millisecond

// RestartShows tells whether an updated_at, as shown, is precise enough
// that a run started again since it was shown would show another.
func RestartShows(updatedAt string) bool { return ShownUnit(updatedAt) <= RestartShowsWithin }

// sentBackJudgedLocked judges a run sent back after a follow-up, once a
// poll of its events from the start (since 0, not cut by its limit) came
// after the look that showed it so: the run had ended and been started
// again only if an end event came by then.
func (m *Memory) sentBackJudgedLocked(f *runFacts, id string, events []map[string]any) []Violation {
	n := f.newest
	if n == nil || n.sentBack == nil || n.restartFrom == nil {
		return nil
	}
	var ends, occurred []time.Time
	for _, e := range events {
		if Str(e["run_id"]) != id {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, Str(e["occurred_at"]))
		if err != nil {
			continue
		}
		occurred = append(occurred, t)
		if EndOf(Str(e["event_type"])) != "" {
			ends = append(ends, t)
		}
	}
	out := FollowupKeptLiveRun("run "+id, id, n.restartBy, *n.restartFrom, *n.sentBack, ends)
	if len(out) > 0 && !EventsReachPast(*n.sentBack, occurred) {
		return nil // the events may not list the end yet: a later poll judges
	}
	n.sentBack, n.restartFrom = nil, nil
	return out
}
