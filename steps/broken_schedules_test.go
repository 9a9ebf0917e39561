package steps_test

import (
	"encoding/json"
	"net/http"
	"regexp"
)

// Schedules broken on purpose: a scheduler that never fires, one that fires
// twice at every tick, and one that answers a pause but goes on firing. The
// first two rewrite what the listing of a schedule's runs shows; the third
// turns a pause into a read of the schedule and dresses the answer up as
// paused.

var pausePath = regexp.MustCompile(`^(/agent/schedules/[^/]+)/pause$`)

// editScheduledRuns applies f to the runs listed by GET /agent/runs?schedule_id=...
func editScheduledRuns(f func(runs []any) []any) func(http.Handler) http.Handler {
	return rewrite(func(r *http.Request, a *answer) {
		if r.Method != http.MethodGet || r.URL.Path != "/agent/runs" || r.URL.Query().Get("schedule_id") == "" || a.status != http.StatusOK {
			return
		}
		var doc map[string]any
		if json.Unmarshal(a.body, &doc) != nil {
			return
		}
		runs, _ := doc["runs"].([]any)
		doc["runs"] = f(runs)
		a.body, _ = json.Marshal(doc)
	})
}

var brokenScheduleServers = []brokenServer{
	{
		name:     "a schedule that never fires",
		features: []string{"schedules.feature"},
		wrap:     editScheduledRuns(func([]any) []any { return []any{} }),
		mustFail: map[string]string{
			"A daily schedule starts one run per day, listed under its schedule_id": "expected 3 runs, got 0",
			"A paused schedule starts nothing until resumed":                        "expected 1 runs, got 0",
		},
		mustPass: []string{"Creating a schedule answers 201 with the schedule", "Pausing and resuming flip enabled"},
	},
	{
		name:     "a schedule that fires twice per tick",
		features: []string{"schedules.feature"},
		wrap: editScheduledRuns(func(runs []any) []any {
			out := []any{}
			for _, r := range runs {
				twin := map[string]any{}
				for k, v := range r.(map[string]any) {
					twin[k] = v
				}
				twin["run_id"] = "twin-" + twin["run_id"].(string)
				twin["task_id"] = twin["run_id"]
				out = append(out, r, twin)
			}
			return out
		}),
		mustFail: map[string]string{
			"A daily schedule starts one run per day, listed under its schedule_id": "expected 3 runs, got 6",
			"A paused schedule starts nothing until resumed":                        "expected 1 runs, got 2",
		},
		mustPass: []string{"Schedules are listed in alphabetical order of name"},
	},
	{
		name:     "a schedule that ignores pause",
		features: []string{"schedules.feature"},
		wrap: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				m := pausePath.FindStringSubmatch(r.URL.Path)
				if r.Method != http.MethodPost || m == nil {
					next.ServeHTTP(w, r)
					return
				}
				r.Method, r.URL.Path = http.MethodGet, m[1]
				rewrite(func(_ *http.Request, a *answer) {
					var doc map[string]any
					if a.status == http.StatusOK && json.Unmarshal(a.body, &doc) == nil {
						doc["enabled"] = false
						if h, ok := doc["history"].(map[string]any); ok {
							h["next_run"] = nil
						}
						a.body, _ = json.Marshal(doc)
					}
				})(next).ServeHTTP(w, r)
			})
		},
		mustFail: map[string]string{
			"A paused schedule starts nothing until resumed": "expected 0 runs, got 2",
		},
		mustPass: []string{"Pausing and resuming flip enabled", "A daily schedule starts one run per day, listed under its schedule_id"},
	},
}

// editAgents applies f to the agents of a GET /agent answer.
func editAgents(f func(agents []any) []any) func(http.Handler) http.Handler {
	return rewrite(func(r *http.Request, a *answer) {
		if r.Method != http.MethodGet || r.URL.Path != "/agent" || a.status != http.StatusOK {
			return
		}
		var doc map[string]any
		if json.Unmarshal(a.body, &doc) != nil {
			return
		}
		agents, _ := doc["agents"].([]any)
		doc["agents"] = f(agents)
		a.body, _ = json.Marshal(doc)
	})
}

func init() {
	brokenScheduleServers = append(brokenScheduleServers,
		brokenServer{
			name:     "a schedule create answering 200",
			features: []string{"schedules.feature"},
			wrap: rewrite(func(r *http.Request, a *answer) {
				if r.Method == http.MethodPost && r.URL.Path == "/agent/schedules" && a.status == http.StatusCreated {
					a.status = http.StatusOK
				}
			}),
			mustFail: map[string]string{"Creating a schedule answers 201 with the schedule": "200 is not documented"},
			mustPass: []string{"An unknown schedule is not found"},
		},
		brokenServer{
			name:     "agents out of name order",
			features: []string{"agents.feature"},
			wrap: editAgents(func(agents []any) []any {
				for i, j := 0, len(agents)-1; i < j; i, j = i+1, j-1 {
					agents[i], agents[j] = agents[j], agents[i]
				}
				return agents
			}),
			mustFail: map[string]string{"The agents are ordered by name and every variant says where it lives": "not ordered by name"},
			mustPass: []string{"An unknown sort order is a 400"},
		},
		brokenServer{
			name:     "an agent variant without its source",
			features: []string{"agents.feature"},
			wrap: editAgents(func(agents []any) []any {
				for _, a := range agents {
					for _, v := range a.(map[string]any)["variants"].([]any) {
						delete(v.(map[string]any), "source")
					}
				}
				return agents
			}),
			mustFail: map[string]string{
				"The agents are ordered by name and every variant says where it lives":       "source",
				"The agents can be ordered by last run and read again from the repositories": "source",
			},
			mustPass: []string{"Listing the agents needs a key"},
		},
	)
	// TestSuiteCatchesBrokenServers runs them with the others.
	brokenServers = append(brokenServers, brokenScheduleServers...)
}
