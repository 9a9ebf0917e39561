// Package record turns the answers a validating proxy saw into a fixtures
// folder in the mock's own format (package fixtures), so that
// `agentruns-mock --fixtures DIR` serves the recorded world offline: the
// runs with their timelines as observed, schedules, environments, models
// and agent identities.
//
// What is written holds no credential and no secret: API keys are made up
// (wk-recorded-1, ...), download URLs are not kept, URLs lose their query,
// and in a run's configuration or an environment's every value under a
// name that says it is secret (token, key, password, authorization,
// headers, env, ...) is replaced. Ids are kept as seen (a run's session
// and conversation ids too, with its request_usage, its executor and
// is_run_type_cancellable, or that it showed neither, and its pull
// request's and plan's URLs), so runs, their creators, environments and
// models still name each other; whatever a run names that was not seen
// listed is added, so the folder loads. Every run's times are placed
// relative to one moment (timeOrigin), so they keep their distances.
//
// A Recorder keeps at most Limit runs (the first seen); it is fed from one
// goroutine (the proxy's checker) and written from another, so it locks.
package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/fixtures/undeclared"
	"github.com/agentruns/agentruns/internal/scrub"
	"github.com/agentruns/agentruns/openapi"
	"github.com/agentruns/agentruns/rules"
)

// RunBytes bounds the runs a Recorder keeps by their JSON, every run's
// latest look together: past it a new run is counted in Dropped, not
// kept, as one past the limit on their number is.
const RunBytes = 64 << 20

// Team is the one team every recorded principal belongs to: the recorded
// world is what the callers could see, so every key of it sees all of it.
const Team = "team-recorded"

// Recorder collects what passes through the proxy.
type Recorder struct {
	dir   string
	limit int
	now   func() time.Time

	mu            sync.Mutex
	runs          map[string]*seenRun
	order         []string
	dropped       tally          // runs seen past the limit or RunBytes
	runBytes      int            // the JSON of every run's latest look, together (RunBytes)
	held          map[string]int // what each schedule, environment, agent and the models hold of HeldBytes, by kind and id
	heldBytes     int
	left          leftOut
	creators      map[string]creator
	envs          map[string]json.RawMessage // uid -> the environment as answered
	envOrder      []string
	models        []fixtures.Model
	modelsSeen    map[string]map[string]any // id -> the model as answered
	defModel      string
	identities    map[string]fixtures.Identity
	identitySeen  map[string]json.RawMessage // uid -> the agent as answered
	identityOrder []string
	schedules     map[string]seenSchedule
	schedOrder    []string
	// deletedSchedules: a schedule deleted is gone for good, even when a
	// listing answered before the delete is observed after it (exchanges
	// end in any order).
	deletedSchedules map[string]bool
	unservable       tally // ids left out: the mock takes no such id in a path
}

// leftOut counts, by kind, what was seen past HeldBytes (or the limit on
// schedules), not kept.
type leftOut struct {
	schedules, environments, agents, models tally
}

// seenSchedule is the latest look at a schedule.
type seenSchedule struct {
	fixtures.Schedule
	created, updated time.Time
	seen             map[string]any // as answered
}

type creator struct {
	Type, DisplayName, Email, PhotoURL string
}

// seenRun is every look at one run, reduced to what a fixture needs.
type seenRun struct {
	size   int            // the JSON of latest, in bytes
	latest map[string]any // the latest look, whole
	seenAt time.Time      // when the latest look was answered
	looks  []look         // one per state change seen, in order
}

type look struct {
	state   string
	began   time.Time // the run's updated_at in that look: when the state began
	message any
	// atCreation: the look is a create's answer, which shows no time; began
	// is when the answer arrived until a later look shows the run's
	// created_at, the moment it entered that state.
	atCreation bool
}

// New returns a Recorder writing into dir; limit bounds the runs kept (0
// means 10 000).
func New(dir string, limit int) *Recorder {
	if limit <= 0 {
		limit = 10_000
	}
	return &Recorder{dir: dir, limit: limit, now: time.Now, runs: map[string]*seenRun{},
		creators: map[string]creator{}, envs: map[string]json.RawMessage{}, identities: map[string]fixtures.Identity{},
		schedules: map[string]seenSchedule{}, modelsSeen: map[string]map[string]any{},
		identitySeen: map[string]json.RawMessage{}, held: map[string]int{}}
}

// Observe takes what one exchange shows. Only successful reads teach it
// anything.
func (r *Recorder) Observe(ex rules.Exchange) {
	if ex.Method == http.MethodDelete && ex.Status/100 == 2 && ex.Session == "" && strings.HasPrefix(ex.Path, "/agent/schedules/") {
		id := strings.TrimPrefix(ex.Path, "/agent/schedules/")
		r.mu.Lock()
		if _, ok := r.schedules[id]; ok || len(r.deletedSchedules) < r.limit {
			delete(r.schedules, id)
			r.schedOrder = slices.DeleteFunc(r.schedOrder, func(s string) bool { return s == id })
			r.release("schedule " + id)
			if r.deletedSchedules == nil {
				r.deletedSchedules = map[string]bool{}
			}
			r.deletedSchedules[id] = true
		}
		r.mu.Unlock()
		return
	}
	// A deleted identity is no longer the team's: left in, a recording of a
	// client that fills the team's plan and empties it again would replay a
	// team over its plan.
	if ex.Method == http.MethodDelete && ex.Status/100 == 2 && ex.Session == "" && strings.HasPrefix(ex.Path, "/agent/identities/") {
		uid := strings.TrimPrefix(ex.Path, "/agent/identities/")
		r.mu.Lock()
		delete(r.identities, uid)
		delete(r.identitySeen, uid)
		r.release("agent " + uid)
		r.identityOrder = slices.DeleteFunc(r.identityOrder, func(u string) bool { return u == uid })
		r.mu.Unlock()
		return
	}
	// A create's answer is a look at the run: the state it began in.
	if ex.Method == http.MethodPost && (ex.Path == "/agent/run" || ex.Path == "/agent/runs") && ex.Status/100 == 2 && ex.Session == "" {
		var answer struct {
			RunID string `json:"run_id"`
			State string `json:"state"`
		}
		if json.Unmarshal(ex.Body, &answer) == nil {
			r.mu.Lock()
			r.created(answer.RunID, answer.State, ex.Received)
			r.mu.Unlock()
		}
		return
	}
	if ex.Method != http.MethodGet || ex.Status != http.StatusOK || len(ex.Body) == 0 || ex.Session != "" {
		return // a mock session other than the default is a test's own world
	}
	// Everything kept passes the one list of what is secret first: a
	// secret-named member at any depth, a URL's query (a path's too), a
	// bearer token in text.
	whole, ok := asWritten(ex)
	if !ok {
		return
	}
	body, err := json.Marshal(scrub.Value(whole))
	if err != nil {
		return
	}
	ex.Body = body
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case ex.Path == "/agent/runs":
		var page struct {
			Runs []map[string]any `json:"runs"`
		}
		if json.Unmarshal(ex.Body, &page) == nil {
			for _, run := range page.Runs {
				r.run(run, ex.Received)
			}
		}
	case strings.HasPrefix(ex.Path, "/agent/runs/") && strings.Count(ex.Path, "/") == 3:
		var run map[string]any
		if json.Unmarshal(ex.Body, &run) == nil {
			r.run(run, ex.Received)
		}
	case ex.Path == "/agent/environments":
		var page struct {
			Environments []json.RawMessage `json:"environments"`
		}
		if json.Unmarshal(ex.Body, &page) == nil {
			for _, e := range page.Environments {
				var id struct {
					UID     string         `json:"uid"`
					Creator map[string]any `json:"creator"`
				}
				if json.Unmarshal(e, &id) == nil && id.UID != "" {
					_, known := r.envs[id.UID]
					if !r.hold("environment "+id.UID, len(e)) {
						if !known {
							r.left.environments.add(id.UID)
						}
						continue // a later look too large to keep: the one before stays
					}
					r.creator(id.Creator)
					if !known {
						r.envOrder = append(r.envOrder, id.UID)
					}
					r.envs[id.UID] = e
				}
			}
		}
	case ex.Path == "/agent/schedules":
		var page struct {
			Schedules []map[string]any `json:"schedules"`
		}
		if json.Unmarshal(ex.Body, &page) == nil {
			for _, sc := range page.Schedules {
				r.schedule(sc)
			}
		}
	case strings.HasPrefix(ex.Path, "/agent/schedules/") && strings.Count(ex.Path, "/") == 3:
		var sc map[string]any
		if json.Unmarshal(ex.Body, &sc) == nil {
			r.schedule(sc)
		}
	case ex.Path == "/agent/models":
		var page struct {
			Default string           `json:"default_model_id"`
			Models  []fixtures.Model `json:"models"`
		}
		var seen struct {
			Models []map[string]any `json:"models"`
		}
		if json.Unmarshal(ex.Body, &page) == nil && json.Unmarshal(ex.Body, &seen) == nil && len(page.Models) > 0 {
			// The models are one list, each answer's in place of the last.
			if !r.hold("models", len(ex.Body)) {
				for _, m := range page.Models {
					r.left.models.add(m.ID)
				}
				return
			}
			r.models, r.defModel = fixtureModels(page.Models), page.Default
			clear(r.modelsSeen)
			for _, m := range seen.Models {
				if id := str(m["id"]); id != "" && r.modelsSeen[id] == nil {
					r.modelsSeen[id] = m
				}
			}
		}
	case ex.Path == "/agent/identities":
		var page struct {
			Agents []struct {
				UID       string `json:"uid"`
				Name      string `json:"name"`
				Default   bool   `json:"default"`
				CreatedAt string `json:"created_at"`
			} `json:"agents"`
		}
		var seen struct {
			Agents []json.RawMessage `json:"agents"`
		}
		if json.Unmarshal(ex.Body, &page) == nil && json.Unmarshal(ex.Body, &seen) == nil {
			for i, a := range page.Agents {
				if !r.servable(a.UID) {
					continue
				}
				if !r.hold("agent "+a.UID, len(seen.Agents[i])) {
					if _, known := r.identities[a.UID]; !known {
						r.left.agents.add(a.UID)
					}
					continue // a later look too large to keep: the one before stays
				}
				if strings.TrimSpace(a.Name) == "" {
					a.Name = a.UID // the mock shows every agent by a name
				}
				created, _ := time.Parse(time.RFC3339Nano, a.CreatedAt)
				if _, ok := r.identities[a.UID]; !ok {
					r.identityOrder = append(r.identityOrder, a.UID)
				}
				r.identities[a.UID] = fixtures.Identity{UID: a.UID, Team: Team, Name: a.Name, Default: a.Default,
					CreatedAgo: fixtures.Duration(max(0, ex.Received.Sub(created)))}
				r.identitySeen[a.UID] = seen.Agents[i]
			}
		}
	}
}

// created notes a create's answer as the first look at the run, in the
// state it was created in (QUEUED): a run later seen at its end has then
// been seen moving, and replays its timeline. The answer shows the run and
// no more: a run seen only so is not written (nothing says what it was).
// r.mu is held.
func (r *Recorder) created(id, state string, at time.Time) {
	if state == "" || !r.servable(id) {
		return
	}
	s, ok := r.runs[id]
	if !ok {
		if len(r.runs) >= r.limit {
			r.dropped.add(id)
			return
		}
		s = &seenRun{}
		r.runs[id] = s
		r.order = append(r.order, id)
	}
	first := look{state: state, began: at, atCreation: true}
	if created, err := time.Parse(time.RFC3339Nano, str(s.latest["created_at"])); err == nil {
		first = look{state: state, began: created}
	}
	switch {
	case len(s.looks) == 0:
		s.looks = []look{first}
	case s.looks[0].state != state && !s.looks[0].began.Before(first.began):
		// A get answered before the create's answer was taken in.
		s.looks = append([]look{first}, s.looks...)
	}
}

func (r *Recorder) run(run map[string]any, at time.Time) {
	id, _ := run["run_id"].(string)
	state, _ := run["state"].(string)
	if state == "" || !r.servable(id) {
		return
	}
	b, err := json.Marshal(run)
	if err != nil {
		return
	}
	s, ok := r.runs[id]
	if !ok {
		if len(r.runs) >= r.limit || r.runBytes+len(b) > RunBytes {
			r.dropped.add(id)
			return
		}
		s = &seenRun{}
		r.runs[id] = s
		r.order = append(r.order, id)
	}
	if at.Before(s.seenAt) {
		return // an older look answered late
	}
	if s.latest != nil && carryOver(run, s.latest) {
		if b, err = json.Marshal(run); err != nil {
			return
		}
	}
	if r.runBytes-s.size+len(b) > RunBytes {
		return // a later look too large to keep: the one before stays
	}
	r.runBytes += len(b) - s.size
	s.latest, s.seenAt, s.size = run, at, len(b)
	c, _ := run["creator"].(map[string]any)
	r.creator(c)
	if len(s.looks) > 0 && s.looks[0].atCreation {
		if created, err := time.Parse(time.RFC3339Nano, str(run["created_at"])); err == nil {
			s.looks[0].began, s.looks[0].atCreation = created, false
		}
	}
	if n := len(s.looks); n == 0 || s.looks[n-1].state != state {
		began, err := time.Parse(time.RFC3339Nano, str(run["updated_at"]))
		if err != nil {
			began = at
		}
		s.looks = append(s.looks, look{state: state, began: began, message: run["status_message"]})
	}
}

// carried are the members of a run a later look keeps from an earlier one
// when it omits them (a listing may show less than a get): a run's
// session, conversation, executor and kind do not change, and its usage
// does not go away.
var carried = []string{"request_usage", "session_id", "session_link", "conversation_id", "executor", "is_run_type_cancellable"}

// carryOver puts into run each carried member that it lacks and before
// had, and says whether it put any.
func carryOver(run, before map[string]any) bool {
	put := false
	for _, k := range carried {
		if _, ok := run[k]; !ok {
			if v, ok := before[k]; ok {
				run[k], put = v, true
			}
		}
	}
	return put
}

// seenRuns counts the runs seen in more than a create's answer; r.mu is
// held.
func (r *Recorder) seenRuns() int {
	n := 0
	for _, s := range r.runs {
		if s.latest != nil {
			n++
		}
	}
	return n
}

// servable reports whether the mock can serve a resource by id; one it
// cannot (an id with a dot, say, which the document allows) is left out and
// counted, r.mu is held.
func (r *Recorder) servable(id string) bool {
	if id == "" {
		return false
	}
	if !fixtures.IsPathID(id) {
		r.unservable.add(id)
		return false
	}
	return true
}

// schedule notes a schedule as answered. One without a prompt (it runs a
// skill) is left out: a fixture schedule starts its runs from a prompt; so
// is one whose cron the mock does not read.
func (r *Recorder) schedule(sc map[string]any) {
	id, cron, prompt := str(sc["id"]), str(sc["cron_schedule"]), str(sc["prompt"])
	if !r.servable(id) || r.deletedSchedules[id] || strings.TrimSpace(prompt) == "" || strings.TrimSpace(str(sc["name"])) == "" {
		return
	}
	if _, err := fixtures.ParseCron(cron); err != nil {
		return // a cron the mock cannot tick (the document does not say the form)
	}
	var config json.RawMessage
	if cfg, ok := sc["agent_config"].(map[string]any); ok {
		config, _ = json.Marshal(scrub.Value(cfg)) // its secrets replaced, as a run's
	}
	seen, _ := json.Marshal(sc)
	_, known := r.schedules[id]
	if !known && len(r.schedules) >= r.limit || !r.hold("schedule "+id, len(seen)+len(config)) {
		if !known {
			r.left.schedules.add(id)
		}
		return // a later look too large to keep: the one before stays
	}
	if !known {
		r.schedOrder = append(r.schedOrder, id)
	}
	by, _ := sc["created_by"].(map[string]any)
	r.creator(by)
	owner := str(by["uid"])
	if owner == "" {
		owner = defaultUID
	}
	scope, _ := sc["scope"].(map[string]any)
	enabled, _ := sc["enabled"].(bool)
	created, _ := time.Parse(time.RFC3339Nano, str(sc["created_at"]))
	updated, _ := time.Parse(time.RFC3339Nano, str(sc["updated_at"]))
	r.schedules[id] = seenSchedule{
		Schedule: fixtures.Schedule{ID: id, Name: str(sc["name"]), Cron: cron, Prompt: prompt, Enabled: enabled,
			Owner: owner, Team: str(scope["type"]) == "Team", Config: config},
		created: created, updated: updated, seen: sc,
	}
}

// creator notes a creator object of an answer.
func (r *Recorder) creator(c map[string]any) {
	if uid := str(c["uid"]); uid != "" {
		r.creators[uid] = creator{Type: str(c["type"]), DisplayName: str(c["display_name"]), Email: str(c["email"]),
			PhotoURL: scrub.URL(str(c["photo_url"]))}
	}
}

// Summary is what Write wrote.
type Summary struct {
	Dir          string `json:"dir"`
	Runs         int    `json:"runs"`
	Replayed     int    `json:"replayed"` // runs that replay a timeline
	Principals   int    `json:"principals"`
	Environments int    `json:"environments"`
	Models       int    `json:"models"`
	Identities   int    `json:"agents"` // agent identities, named as the API names its list
	Schedules    int    `json:"schedules"`
	// Dropped counts the runs seen past the limit (or past RunBytes), not
	// recorded; each run once.
	Dropped int `json:"dropped"`
	// DroppedSchedules, DroppedEnvironments, DroppedAgents and
	// DroppedModels count those seen past HeldBytes (schedules also past
	// the limit on their number), not recorded; each once.
	DroppedSchedules    int `json:"dropped_schedules"`
	DroppedEnvironments int `json:"dropped_environments"`
	DroppedAgents       int `json:"dropped_agents"`
	DroppedModels       int `json:"dropped_models"`
	// LeftOut says, in a sentence, what the counts above left out, or is
	// empty: a recording that kept less than it saw says so where it is
	// read, not only in a count.
	LeftOut string `json:"left_out,omitempty"`
	// Unservable counts the runs, schedules and identities left out because
	// the mock takes no such id in a path (1 to 128 letters, digits, '-' or
	// '_'): it could list them but never serve one by id.
	Unservable int `json:"unservable"`
	// Extras counts the members beyond the document kept (each object's
	// extra), ExtrasLeftOut those the mock could not put back.
	Extras        int `json:"extras"`
	ExtrasLeftOut int `json:"extras_left_out"`
}

// extraOf are the members of seen, an object as last answered, that the
// document's component schema does not declare (openapi.Model.Undeclared), by
// JSON Pointer, their secrets replaced as the path to each names them (as
// in a run's configuration). One the mock would refuse is left out and
// counted.
func extraOf(doc *openapi.Model, component string, seen any, sum *Summary) fixtures.Extra {
	found := doc.Undeclared(component, seen)
	if len(found) == 0 {
		return nil
	}
	out := fixtures.Extra{}
	for ptr, raw := range found {
		if undeclared.Check(ptr) != nil || fixtures.CheckExtra(doc, component, ptr, raw) != nil {
			sum.ExtrasLeftOut++
			continue
		}
		value, err := json.Marshal(undeclared.At(scrub.Value(undeclared.Skeleton(ptr, raw)), ptr))
		if err != nil {
			sum.ExtrasLeftOut++
			continue
		}
		out[ptr] = value
		sum.Extras++
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// withoutExtras is cfg, the JSON of the object at ptr in a run, without
// the members among found (by pointer from the run) that lie inside it:
// the mock reads a configuration into its own types, which refuse a
// member they do not know; the run's extra gives such members back.
func withoutExtras(cfg json.RawMessage, ptr string, found map[string]json.RawMessage) json.RawMessage {
	var v map[string]any
	if len(cfg) == 0 || json.Unmarshal(cfg, &v) != nil {
		return cfg
	}
	cut := false
	for p := range found {
		rest, ok := strings.CutPrefix(p, ptr+"/")
		if !ok {
			continue
		}
		tokens := undeclared.Tokens("/" + rest)
		at := v
		for _, t := range tokens[:len(tokens)-1] {
			at, _ = at[t].(map[string]any)
		}
		if at != nil {
			delete(at, tokens[len(tokens)-1])
			cut = true
		}
	}
	if !cut {
		return cfg
	}
	out, err := json.Marshal(v)
	if err != nil {
		return cfg
	}
	return out
}

// Write writes the fixtures folder, then loads it back and checks it as
// the mock checks a --fixtures folder (fixtures.Load, fixtures.Check): a
// folder the mock would refuse is an error, never left half written in
// place of a good one. The files are written
// in a folder of their own inside the recording's folder, so that moving
// them into place is a rename on one file system wherever the folder
// lies (a folder that is a mount point, or a link to another disk), and
// the files of an earlier recording this one did not write are removed:
// left beside the new ones they would describe another world, one the
// mock may refuse to start on.
func (r *Recorder) Write() (any, error) {
	r.mu.Lock()
	files, sum, err := r.files()
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(r.dir, ".record-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	for name, v := range files {
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(tmp, name), append(data, '\n'), 0o644); err != nil {
			return nil, err
		}
	}
	set, err := fixtures.Load(os.DirFS(tmp))
	if err == nil {
		// What the mock checks as it starts, beyond the files' own form:
		// every run's agent_config fits its types, every cron parses.
		var doc *openapi.Model
		if doc, err = openapi.Embedded(); err == nil {
			err = fixtures.Check(set, doc)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("the recorded fixtures do not load: %w", err)
	}
	for name := range files {
		if err := os.Rename(filepath.Join(tmp, name), filepath.Join(r.dir, name)); err != nil {
			return nil, err
		}
	}
	for _, name := range recordedFiles {
		if _, ok := files[name]; !ok {
			if err := os.Remove(filepath.Join(r.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
		}
	}
	sum.Dir = r.dir
	return sum, nil
}

// recordedFiles are the files a recording may write (files).
var recordedFiles = []string{"principals.json", "runs.json", "fates.json", "environments.json", "models.json", "identities.json", "schedules.json"}

// files builds every file's content; r.mu is held.
func (r *Recorder) files() (map[string]any, Summary, error) {
	now := r.now()
	if r.seenRuns() == 0 && len(r.envs) == 0 && len(r.identities) == 0 && len(r.models) == 0 && len(r.schedules) == 0 {
		if n := r.unservable.n; n > 0 {
			// Something passed through, and saying "nothing yet" would
			// send the operator looking for traffic that did arrive.
			return nil, Summary{}, fmt.Errorf("nothing the mock can serve was recorded: %d run(s), schedule(s) or agent(s) seen were left out, their ids being none the mock takes in a path (1 to 128 letters, digits, '-' or '_')", n)
		}
		return nil, Summary{}, errors.New("nothing recorded yet: no run, schedule, environment, model or identity has passed through")
	}
	sum := Summary{Dropped: r.dropped.n, Unservable: r.unservable.n, DroppedSchedules: r.left.schedules.n,
		DroppedEnvironments: r.left.environments.n, DroppedAgents: r.left.agents.n, DroppedModels: r.left.models.n}
	sum.LeftOut = leftOutSays(sum, r.limit)
	doc, err := openapi.Embedded()
	if err != nil {
		return nil, Summary{}, err
	}
	extra := func(component string, seen any) fixtures.Extra { return extraOf(doc, component, seen, &sum) }
	principals := r.principals()
	sum.Principals = len(principals)
	uids := map[string]bool{}
	for _, p := range principals {
		uids[p.UID] = true
	}
	models := append([]fixtures.Model(nil), r.models...)
	known := map[string]bool{}
	for i, m := range models {
		known[m.ID] = true
		models[i].Extra = extra("ModelInfo", r.modelsSeen[m.ID])
	}
	envIDs := map[string]bool{}
	var envs []fixtures.Environment
	for _, uid := range r.envOrder {
		e := environment(r.envs[uid], uids, now)
		var seen any
		_ = json.Unmarshal(r.envs[uid], &seen)
		e.Extra = extra("CloudEnvironment", seen)
		envs = append(envs, e)
		envIDs[uid] = true
	}
	var runs []fixtures.Run
	ids := map[string]bool{}
	for _, id := range r.order {
		ids[id] = r.runs[id].latest != nil
	}
	origin := timeOrigin(r.runs)
	for _, id := range r.order {
		s := r.runs[id]
		if s.latest == nil {
			continue // seen only in its create's answer
		}
		f := fixtureRun(s, ids, origin)
		f.Extra = extra("RunItem", s.latest)
		f.Config = withoutExtras(f.Config, "/agent_config", doc.Undeclared("RunItem", s.latest))
		// The run's extra gives back what the document does not declare.
		f.RequestUsage = withoutExtras(f.RequestUsage, "/request_usage", doc.Undeclared("RunItem", s.latest))
		var cfg struct {
			ModelID       string `json:"model_id"`
			EnvironmentID string `json:"environment_id"`
		}
		_ = json.Unmarshal(f.Config, &cfg)
		// Added whether or not models or environments were listed: the
		// mock serves only what the folder holds, and a recording that saw
		// no list would otherwise replay runs naming models it lists not.
		if cfg.ModelID != "" && !known[cfg.ModelID] {
			models = append(models, fixtures.Model{ID: cfg.ModelID, DisplayName: cfg.ModelID, Provider: "UNKNOWN"})
			known[cfg.ModelID] = true
		}
		if cfg.EnvironmentID != "" && !envIDs[cfg.EnvironmentID] {
			envs = append(envs, fixtures.Environment{UID: cfg.EnvironmentID, Team: Team, Creator: defaultUID,
				Config: json.RawMessage(`{"name":` + quote(cfg.EnvironmentID) + `}`)})
			envIDs[cfg.EnvironmentID] = true
		}
		if f.Replay != nil {
			sum.Replayed++
		}
		runs = append(runs, f)
	}
	// A parent is listed before its children; one that is not (created
	// after its child, or not recorded) is left out.
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].CreatedAgo > runs[j].CreatedAgo })
	before := map[string]bool{}
	for i := range runs {
		if !before[runs[i].ParentRunID] {
			runs[i].ParentRunID = ""
		}
		before[runs[i].ID] = true
	}
	sum.Runs, sum.Environments, sum.Models = len(runs), len(envs), len(models)
	files := map[string]any{
		"principals.json": map[string]any{"default_principal": defaultPrincipal, "principals": principals},
		"runs.json":       map[string]any{"runs": runs},
		"fates.json":      map[string]any{"rules": []any{}},
	}
	if len(envs) > 0 {
		files["environments.json"] = map[string]any{"environments": envs}
	}
	if len(models) > 0 {
		def := r.defModel
		if !known[def] {
			def = models[0].ID
		}
		files["models.json"] = map[string]any{"default_model_id": def, "models": models}
	}
	if len(r.identities) > 0 {
		var identities []fixtures.Identity
		hasDefault := false
		for _, uid := range r.identityOrder {
			if a := r.identities[uid]; !uids[a.UID] {
				// A team has one default agent: the first seen so.
				a.Default = a.Default && !hasDefault
				hasDefault = hasDefault || a.Default
				var seen any
				_ = json.Unmarshal(r.identitySeen[uid], &seen)
				a.Extra = extra("AgentResponse", seen)
				identities = append(identities, a)
			}
		}
		sum.Identities = len(identities)
		files["identities.json"] = map[string]any{"agents": identities}
	}
	var schedules []fixtures.Schedule
	for _, id := range r.schedOrder {
		sc, ok := r.schedules[id]
		if !ok {
			continue // deleted since
		}
		if !uids[sc.Owner] {
			sc.Owner = defaultUID
		}
		sc.CreatedAgo = fixtures.Duration(max(0, now.Sub(sc.created)))
		sc.UpdatedAgo = min(fixtures.Duration(max(0, now.Sub(sc.updated))), sc.CreatedAgo)
		sc.Extra = extra("ScheduledAgentItem", sc.seen)
		sc.Config = withoutExtras(sc.Config, "/agent_config", doc.Undeclared("ScheduledAgentItem", sc.seen))
		schedules = append(schedules, sc.Schedule)
	}
	if len(schedules) > 0 {
		sum.Schedules = len(schedules)
		files["schedules.json"] = map[string]any{"schedules": schedules}
	}
	return files, sum, nil
}

// leftOutSays is the sentence of Summary.LeftOut.
func leftOutSays(s Summary, limit int) string {
	var parts []string
	if s.Dropped > 0 {
		parts = append(parts, fmt.Sprintf("%d run(s) past %d runs or %d MiB of their JSON", s.Dropped, limit, RunBytes>>20))
	}
	var held []string
	for _, c := range []struct {
		n    int
		kind string
	}{{s.DroppedSchedules, "schedule(s)"}, {s.DroppedEnvironments, "environment(s)"}, {s.DroppedAgents, "agent(s)"}, {s.DroppedModels, "model(s)"}} {
		if c.n > 0 {
			held = append(held, fmt.Sprintf("%d %s", c.n, c.kind))
		}
	}
	if len(held) > 0 {
		bound := fmt.Sprintf("%d MiB of their JSON together", HeldBytes>>20)
		if s.DroppedSchedules > 0 {
			bound += fmt.Sprintf(" (or %d schedules)", limit)
		}
		parts = append(parts, strings.Join(held, ", ")+" past "+bound)
	}
	if len(parts) == 0 {
		return ""
	}
	return "seen but not recorded, the recorder's memory being bounded: " + strings.Join(parts, "; ")
}

const defaultUID = "user-recorded"

// defaultPrincipal is who an API key that no recorded principal owns acts
// as: a user of the recorded team, so any key sees the recorded runs.
var defaultPrincipal = map[string]any{"type": "user", "uid": defaultUID, "display_name": "Recorded user", "team": Team}

// principals are the creators seen, with made-up keys.
func (r *Recorder) principals() []fixtures.Principal {
	uids := make([]string, 0, len(r.creators))
	for uid := range r.creators {
		if uid != defaultUID {
			uids = append(uids, uid)
		}
	}
	sort.Strings(uids)
	out := []fixtures.Principal{}
	for i, uid := range uids {
		c := r.creators[uid]
		typ := c.Type
		if typ != "service_account" {
			typ = "user"
		}
		out = append(out, fixtures.Principal{APIKey: fmt.Sprintf("wk-recorded-%d", i+1), Type: typ, UID: uid,
			DisplayName: c.DisplayName, Email: c.Email, PhotoURL: c.PhotoURL, Team: Team})
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// fixtureModels are the models of a page the mock can serve: each once,
// by a non-empty id, with a name to show (the id when it had none).
func fixtureModels(in []fixtures.Model) []fixtures.Model {
	seen := map[string]bool{}
	var out []fixtures.Model
	for _, m := range in {
		if m.ID == "" || seen[m.ID] {
			continue
		}
		seen[m.ID] = true
		if strings.TrimSpace(m.DisplayName) == "" {
			m.DisplayName = m.ID
		}
		out = append(out, m)
	}
	return out
}

// asWritten is the answer's body decoded with its numbers as written: the
// proxy's decoding (ex.Decoded), or, for an exchange handed over without
// it, decoded here. ok is false for a body that is no JSON.
func asWritten(ex rules.Exchange) (any, bool) {
	if ex.Decoded != nil && ex.Decoded.AnswerAsWritten != nil {
		return ex.Decoded.AnswerAsWritten, true
	}
	if ex.Decoded != nil && !ex.Decoded.AnswerOK {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(ex.Body))
	dec.UseNumber() // numbers kept as written
	var whole any
	if dec.Decode(&whole) != nil {
		return nil, false
	}
	return whole, true
}
