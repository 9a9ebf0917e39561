package record

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/internal/scrub"
	"github.com/google/uuid"
)

var replayedArtifact = map[string]bool{"PLAN": true, "PULL_REQUEST": true, "SCREENSHOT": true, "FILE": true}

// progression is the order of the active states a run moves through.
var progression = []string{"QUEUED", "PENDING", "CLAIMED", "INPROGRESS"}

func indexOf(state string) int {
	for i, s := range progression {
		if s == state {
			return i
		}
	}
	return -1
}

// fixtureRun is the fixture of one recorded run, its times placed
// relative to origin (timeOrigin), the moment that is the mock's start: so
// every run's created_at, started_at and updated_at keep their distances
// to every other run's, whichever kind each is. A run seen moving forward
// through its states to SUCCEEDED, FAILED or ERROR (its create's answer
// counts as a look, in QUEUED) replays that timeline: it entered the first
// state it was seen in when it did, relative to origin, and spends in each
// state the time it was seen to (a state passed between two looks shares
// the gap with the one before). Any other run is kept as last seen.
func fixtureRun(s *seenRun, ids map[string]bool, origin time.Time) fixtures.Run {
	run := s.latest
	f := fixtures.Run{
		ID: str(run["run_id"]), Title: str(run["title"]), Prompt: str(run["prompt"]), State: str(run["state"]),
		Source: str(run["source"]), Creator: defaultUID, TriggerURL: scrub.URL(str(run["trigger_url"])),
	}
	if f.Source == "" {
		f.Source = "API"
	}
	if c, ok := run["creator"].(map[string]any); ok && str(c["uid"]) != "" {
		f.Creator = str(c["uid"])
	}
	if sc, ok := run["scope"].(map[string]any); ok {
		f.Team = str(sc["type"]) == "Team"
	}
	if cfg, ok := run["agent_config"].(map[string]any); ok {
		f.Config, _ = json.Marshal(scrub.Value(cfg))
	}
	if p := str(run["parent_run_id"]); ids[p] {
		f.ParentRunID = p
	}
	if sch, ok := run["schedule"].(map[string]any); ok {
		f.ScheduleID, f.ScheduleName, f.CronSchedule = str(sch["schedule_id"]), str(sch["schedule_name"]), str(sch["cron_schedule"])
	}
	seenType := map[string]bool{}
	if arts, ok := run["artifacts"].([]any); ok {
		for _, a := range arts {
			if m, ok := a.(map[string]any); ok {
				// The kinds the mock makes up artifacts of; another (an
				// external reference) is not replayed.
				if t := str(m["artifact_type"]); replayedArtifact[t] && !seenType[t] {
					seenType[t] = true
					f.ArtifactTypes = append(f.ArtifactTypes, t)
					artifactURLs(&f, t, m["data"])
				}
			}
		}
	}
	keepRecorded(&f, run)
	t := timesOf(s)
	if replay, first, ok := replayOf(withStart(s.looks, t.started, t.hasStart)); ok {
		f.State, f.Replay = first.state, replay
		f.UpdatedAgo = fixtures.Duration(max(0, origin.Sub(first.began)))
		f.CreatedAgo = fixtures.Duration(max(time.Duration(f.UpdatedAgo), origin.Sub(t.created)))
		if t.hasStart && indexOf(first.state) == len(progression)-1 {
			f.StartedAgo = startedAgo(origin.Sub(t.started), f)
		}
		return f
	}
	// As last seen. A run never seen to end has no timeline to replay: it
	// stays in the state it was last seen in for the longest step a
	// fixture takes (a year), rather than move on by the mock's default
	// step, which a run last updated more than an hour before would have
	// long passed.
	if !fixtures.Terminal(f.State) {
		f.Step = fixtures.Duration(fixtures.MaxStep)
	}
	f.CreatedAgo = fixtures.Duration(max(0, origin.Sub(t.created)))
	f.UpdatedAgo = fixtures.Duration(min(time.Duration(f.CreatedAgo), max(0, origin.Sub(t.updated))))
	if t.hasStart {
		f.StartedAgo = startedAgo(origin.Sub(t.started), f)
	}
	if m := statusMessage(run["status_message"]); m != nil {
		f.StatusMessage = m
	}
	return f
}

// keepRecorded keeps what the run was seen with that the mock would
// otherwise make up: its request_usage as answered, its session_id and its
// conversation_id, each when the mock can show it (a session id that is a
// UUID, a conversation id it takes in a path; another is left to the
// mock), its executor and is_run_type_cancellable, or that it showed
// neither.
func keepRecorded(f *fixtures.Run, run map[string]any) {
	if u, ok := run["request_usage"].(map[string]any); ok {
		f.RequestUsage, _ = json.Marshal(u)
	}
	if id := str(run["session_id"]); len(id) == 36 {
		if _, err := uuid.Parse(id); err == nil {
			f.SessionID = id
		}
	}
	if c := str(run["conversation_id"]); fixtures.IsPathID(c) {
		f.ConversationID = c
	}
	// Members only the newest client's document declares: as seen, or
	// shown without when the server never showed them.
	if e, ok := run["executor"].(map[string]any); ok {
		f.Executor, _ = json.Marshal(e)
	} else {
		f.Without = append(f.Without, "executor")
	}
	if c, ok := run["is_run_type_cancellable"].(bool); ok {
		f.RunTypeCancellable = &c
	} else {
		f.Without = append(f.Without, "is_run_type_cancellable")
	}
}

// artifactURLs keeps the URLs of a run's first artifact of a kind: a pull
// request's url and branch, a plan's url (without its query, as every URL
// recorded).
func artifactURLs(f *fixtures.Run, kind string, data any) {
	d, _ := data.(map[string]any)
	u := scrub.URL(str(d["url"]))
	if !absoluteURL(u) {
		return
	}
	switch kind {
	case "PULL_REQUEST":
		if b := str(d["branch"]); strings.TrimSpace(b) != "" {
			f.PullRequest = &fixtures.PullRequest{URL: u, Branch: b}
		}
	case "PLAN":
		f.PlanURL = u
	}
}

func absoluteURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// startedAgo is a run's started_at as the fixture keeps it, within its
// creation and its last update (as the fixtures require).
func startedAgo(ago time.Duration, f fixtures.Run) *fixtures.Duration {
	d := fixtures.Duration(min(max(ago, time.Duration(f.UpdatedAgo)), time.Duration(f.CreatedAgo)))
	return &d
}

// runTimes are a run's times as its latest look shows them.
type runTimes struct {
	created, updated, started time.Time
	hasStart                  bool
}

// timesOf reads a run's times: created_at (when the look was answered if
// it shows none), updated_at (never before creation), started_at if shown.
func timesOf(s *seenRun) runTimes {
	var t runTimes
	var err error
	if t.created, err = time.Parse(time.RFC3339Nano, str(s.latest["created_at"])); err != nil {
		t.created = s.seenAt
	}
	if t.updated, err = time.Parse(time.RFC3339Nano, str(s.latest["updated_at"])); err != nil || t.updated.Before(t.created) {
		t.updated = t.created
	}
	t.started, err = time.Parse(time.RFC3339Nano, str(s.latest["started_at"]))
	t.hasStart = err == nil
	return t
}

// timeOrigin is the one moment every recorded run's times are placed
// relative to, the mock's start: the latest moment a run was seen in the
// state it starts in on the mock, that is the first state a replayed run
// was seen in and the last update of a run held as last seen. So no time
// lies after the mock's start, the run that was last to begin a replay
// enters its first state as the mock starts, and every other is as far on
// as it was at that moment.
func timeOrigin(runs map[string]*seenRun) time.Time {
	var origin time.Time
	for _, s := range runs {
		if s.latest == nil {
			continue
		}
		t := timesOf(s)
		at := t.updated
		if _, first, ok := replayOf(withStart(s.looks, t.started, t.hasStart)); ok {
			at = first.began
		}
		if at.After(origin) {
			origin = at
		}
	}
	return origin
}

// withStart adds to the looks at a run the moment it was seen to start
// (its started_at) as the INPROGRESS state it then entered, when no look
// caught it in that state: the replay then starts it when it started, not
// at a share of the time between two looks.
func withStart(looks []look, started time.Time, known bool) []look {
	if !known || len(looks) < 2 {
		return looks
	}
	for _, l := range looks {
		if l.state == "INPROGRESS" {
			return looks
		}
	}
	for i := 1; i < len(looks); i++ {
		before, after := looks[i-1], looks[i]
		if i == len(looks)-1 && indexOf(before.state) >= 0 && indexOf(before.state) < len(progression)-1 &&
			started.After(before.began) && started.Before(after.began) {
			out := append(slices.Clone(looks[:i]), look{state: "INPROGRESS", began: started})
			return append(out, looks[i:]...)
		}
	}
	return looks
}

// replayOf is the replay of a run seen moving forward to an end.
func replayOf(looks []look) (*fixtures.Replay, look, bool) {
	if len(looks) < 2 {
		return nil, look{}, false
	}
	last := looks[len(looks)-1]
	switch last.state {
	case "SUCCEEDED", "FAILED", "ERROR":
	default:
		return nil, look{}, false
	}
	steps := map[string]fixtures.Duration{}
	for i := 0; i < len(looks)-1; i++ {
		a, b := looks[i], looks[i+1]
		from, to := indexOf(a.state), indexOf(b.state)
		if i+1 == len(looks)-1 {
			to = len(progression)
		}
		if from < 0 || to <= from {
			return nil, look{}, false // BLOCKED, a step back, or a state no run replays
		}
		share := max(time.Millisecond, b.began.Sub(a.began)/time.Duration(to-from))
		for _, s := range progression[from:to] {
			steps[s] = fixtures.Duration(share)
		}
	}
	r := &fixtures.Replay{Steps: steps, Final: last.state}
	if last.state != "SUCCEEDED" {
		m := statusMessage(last.message)
		if m == nil || m.ErrorCode == "" {
			return nil, look{}, false // a run that broke the rules is kept as seen
		}
		r.FinalMessage = m
	}
	return r, looks[0], true
}

func statusMessage(v any) *fixtures.StatusMessage {
	m, ok := v.(map[string]any)
	if !ok || str(m["message"]) == "" {
		return nil
	}
	sm := &fixtures.StatusMessage{Message: str(m["message"]), ErrorCode: str(m["error_code"])}
	if b, ok := m["retryable"].(bool); ok {
		sm.Retryable = &b
	}
	return sm
}

// environment is the fixture of one recorded environment.
func environment(raw json.RawMessage, uids map[string]bool, now time.Time) fixtures.Environment {
	var e struct {
		UID         string         `json:"uid"`
		Config      map[string]any `json:"config"`
		LastUpdated string         `json:"last_updated"`
		Creator     struct {
			UID string `json:"uid"`
		} `json:"creator"`
	}
	_ = json.Unmarshal(raw, &e)
	out := fixtures.Environment{UID: e.UID, Team: Team, Creator: defaultUID}
	if uids[e.Creator.UID] {
		out.Creator = e.Creator.UID
	}
	if t, err := time.Parse(time.RFC3339Nano, e.LastUpdated); err == nil {
		out.LastUpdatedAgo = fixtures.Duration(max(0, now.Sub(t)))
	}
	if e.Config == nil {
		e.Config = map[string]any{"name": e.UID}
	}
	out.Config, _ = json.Marshal(scrub.Value(e.Config))
	return out
}
