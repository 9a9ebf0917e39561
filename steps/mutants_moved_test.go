//go:build !race

package steps_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Mutants of the rules a polling suite judges on any server, from what two
// keys of different teams can see, a prompt the server fails, and the
// runs' events, where they were once judged only by driving the mock:
// another team's schedules, conversations, artifacts and environments; a
// message to a run that has ended; handoff files before a run's end; the
// events of a failed run; the state filter; a successful run that worked.
// Each is written as a server team would get the rule wrong, two or more
// per rule, and must be killed in polling mode as in control mode.

var (
	scheduleTenancyArea    = area{"schedules", []string{"schedules.feature", "tenancy.feature"}}
	artifactTenancyArea    = area{"artifacts", []string{"artifacts.feature", "tenancy.feature"}}
	environmentTenancyArea = area{"environments", []string{"environments_and_models.feature", "tenancy.feature"}}
	handoffArea            = area{"handoff", []string{"handoff_attachments.feature"}}
)

var movedMutants = slices.Concat(
	inArea(scheduleTenancyArea, []breakage{
		{"lists schedules of every team", stateless(listsEveryTeamsSchedules)},
		{"reads another team's schedule by its id", stateless(answeredAsOtherTeam(func(r *http.Request) bool {
			return r.Method == http.MethodGet && schedulePath.MatchString(r.URL.Path)
		}))},
		{"pauses another team's schedule", stateless(answeredAsOtherTeam(func(r *http.Request) bool {
			return r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/agent/schedules/") && strings.HasSuffix(r.URL.Path, "/pause")
		}))},
	}),
	inArea(conversationsArea, []breakage{
		{"another team's conversation readable by its id", stateless(answeredAsOtherTeam(isConversationByID))},
		// A server that keeps only the caller's team's steps of a
		// conversation, and answers what is left rather than refusing.
		{"another team's conversation answered empty rather than refused", stateless(rewrite(func(r *http.Request, a *answer) {
			if isConversationByID(r) && a.status == http.StatusForbidden {
				id := strings.TrimPrefix(r.URL.Path, "/agent/conversations/")
				a.status, a.body = http.StatusOK, []byte(`{"conversation_id":"`+id+`","steps":[]}`)
				a.header.Set("Content-Type", "application/json")
			}
		}))},
	}),
	inArea(artifactTenancyArea, []breakage{
		{"another team's artifact fetchable", stateless(answeredAsOtherTeam(func(r *http.Request) bool {
			return r.Method == http.MethodGet && isArtifactPath(r.URL.Path)
		}))},
		// A server that checks the team only when it signs a download
		// link: a plan's content, a file's name and size go out.
		{"another team's artifact shown, only its download link withheld", stateless(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rec := httptest.NewRecorder()
				next.ServeHTTP(rec, r)
				if r.Method == http.MethodGet && isArtifactPath(r.URL.Path) && rec.Code == http.StatusForbidden {
					rec = asOtherTeam(next, r)
					var doc map[string]any
					if json.Unmarshal(rec.Body.Bytes(), &doc) == nil {
						if data, ok := doc["data"].(map[string]any); ok {
							delete(data, "download_url")
						}
						body, _ := json.Marshal(doc)
						rec.Body = bytes.NewBuffer(body)
					}
				}
				copyAnswer(w, rec)
			})
		})},
	}),
	inArea(environmentTenancyArea, []breakage{
		// Both start the run elsewhere rather than refuse it: one in the
		// team's default environment, one saying it runs in the
		// environment asked for.
		{"a run in another team's environment starts in the default one", stateless(startsDespiteEnvironment(false))},
		{"a run in another team's environment is accepted as asked", stateless(startsDespiteEnvironment(true))},
	}),
	inArea(messagesArea, []breakage{
		{"accepts a message to a finished run", stateless(acceptsLateMessages(func(string) bool { return true }))},
		{"refuses a message to a finished run only when it SUCCEEDED", stateless(acceptsLateMessages(func(state string) bool { return state != "SUCCEEDED" }))},
	}),
	inArea(handoffArea, []breakage{
		{"lists handoff files as soon as the run exists", stateless(listsHandoffWhile(func(state string) bool { return !terminal(state) }))},
		{"lists the workspace snapshot while the run works", stateless(listsHandoffWhile(func(state string) bool { return state == "INPROGRESS" }))},
	}),
	inArea(eventsArea, []breakage{
		{"a FAILED run's last event is run_errored", stateless(rewrite(editEvents(func(evs []map[string]any) {
			for _, e := range evs {
				if e["event_type"] == "run_failed" {
					e["event_type"] = "run_errored"
				}
			}
		})))},
		{"a FAILED run has no end event", stateless(rewrite(dropEvents("run_failed")))},
	}),
	inArea(listingArea, []breakage{
		// The filter reads the state the run was stored with at its
		// creation, never updated: QUEUED matches every run, any other
		// state none.
		{"the state filter matches the state a run was created in", stateless(rewrite(func(r *http.Request, a *answer) {
			states := r.URL.Query()["state"]
			if r.Method != http.MethodGet || r.URL.Path != "/agent/runs" || len(states) == 0 || a.status != http.StatusOK {
				return
			}
			var doc map[string]any
			if json.Unmarshal(a.body, &doc) != nil {
				return
			}
			if !slices.Contains(states, "QUEUED") {
				doc["runs"] = []any{}
			}
			a.body, _ = json.Marshal(doc)
		}))},
		// A server that records a cancel as a flag beside the state, and
		// whose state filter never finds a cancelled run.
		{"the state filter never finds a cancelled run", stateless(rewrite(func(r *http.Request, a *answer) {
			if r.Method != http.MethodGet || r.URL.Path != "/agent/runs" || !slices.Contains(r.URL.Query()["state"], "CANCELLED") || a.status != http.StatusOK {
				return
			}
			var doc map[string]any
			if json.Unmarshal(a.body, &doc) != nil {
				return
			}
			runs, _ := doc["runs"].([]any)
			doc["runs"] = slices.DeleteFunc(runs, func(run any) bool { m, _ := run.(map[string]any); return m["state"] == "CANCELLED" })
			a.body, _ = json.Marshal(doc)
		}))},
		// A server that files every ended run under one "finished" state.
		{"a terminal state filter lists runs ended in any terminal state", onListQuery(func(q url.Values) {
			if slices.ContainsFunc(q["state"], terminal) {
				for _, st := range []string{"SUCCEEDED", "FAILED", "ERROR", "CANCELLED"} {
					if !slices.Contains(q["state"], st) {
						q.Add("state", st)
					}
				}
			}
		})},
	}),
	inArea(runsArea, []breakage{
		// A server that never records the work: runs wait in PENDING
		// until they end, show no started_at, and report no
		// run_in_progress event.
		{"a run goes from PENDING to SUCCEEDED without working", stateless(rewrite(func(r *http.Request, a *answer) {
			editRuns(a, func(run map[string]any) {
				if run["state"] == "CLAIMED" || run["state"] == "INPROGRESS" {
					run["state"] = "PENDING"
				}
				delete(run, "started_at")
			})
			dropEvents("run_in_progress")(r, a)
		}))},
		{"sends no run_in_progress event", stateless(rewrite(dropEvents("run_in_progress")))},
		// A server that builds a run's events from its state when they
		// are polled: once the run has ended, the work it did is gone.
		{"a run's run_in_progress event is gone once it has ended", stateless(rewrite(editEventList(func(evs []map[string]any) []map[string]any {
			ended := map[any]bool{}
			for _, e := range evs {
				if st := str(e["event_type"]); st != "run_in_progress" && st != "run_blocked" {
					ended[e["run_id"]] = true
				}
			}
			return slices.DeleteFunc(evs, func(e map[string]any) bool { return e["event_type"] == "run_in_progress" && ended[e["run_id"]] })
		})))},
	}),
)

var schedulePath = regexp.MustCompile(`^/agent/schedules/[^/]+$`)

func isConversationByID(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/agent/conversations/")
}

func terminal(state string) bool {
	switch state {
	case "SUCCEEDED", "FAILED", "ERROR", "CANCELLED":
		return true
	}
	return false
}

// answeredAsOtherTeam answers the requests matched, when the mock refuses
// them as another team's, as the mock answers that team: a server that
// forgot the team on that one operation.
func answeredAsOtherTeam(match func(*http.Request) bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			if match(r) && rec.Code == http.StatusForbidden {
				rec = asOtherTeam(next, r)
			}
			copyAnswer(w, rec)
		})
	}
}

// listsEveryTeamsSchedules adds to the caller's listing of schedules those
// another team lists: a listing that forgot the team in its query.
func listsEveryTeamsSchedules(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/agent/schedules" {
			next.ServeHTTP(w, r)
			return
		}
		theirs := asOtherTeam(next, r)
		rewrite(func(_ *http.Request, a *answer) {
			var doc, their map[string]any
			if a.status != http.StatusOK || json.Unmarshal(a.body, &doc) != nil || json.Unmarshal(theirs.Body.Bytes(), &their) != nil {
				return
			}
			mine, _ := doc["schedules"].([]any)
			more, _ := their["schedules"].([]any)
			doc["schedules"] = append(mine, more...)
			a.body, _ = json.Marshal(doc)
		})(next).ServeHTTP(w, r)
	})
}

// startsDespiteEnvironment creates, when the mock refuses a run for its
// environment, the same run without one; asAsked has the answer say it
// runs in the environment asked for.
func startsDespiteEnvironment(asAsked bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost || (r.URL.Path != "/agent/run" && r.URL.Path != "/agent/runs") {
				next.ServeHTTP(w, r)
				return
			}
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			var doc map[string]any
			config, _ := func() (map[string]any, bool) {
				if json.Unmarshal(body, &doc) != nil {
					return nil, false
				}
				c, ok := doc["config"].(map[string]any)
				return c, ok
			}()
			env := str(config["environment_id"])
			if rec.Code != http.StatusForbidden || env == "" {
				copyAnswer(w, rec)
				return
			}
			delete(config, "environment_id")
			again, _ := json.Marshal(doc)
			r2 := r.Clone(r.Context())
			r2.Body, r2.ContentLength = io.NopCloser(bytes.NewReader(again)), int64(len(again))
			if !asAsked {
				next.ServeHTTP(w, r2)
				return
			}
			rewrite(func(_ *http.Request, a *answer) {
				editRuns(a, func(run map[string]any) {
					if c, ok := run["agent_config"].(map[string]any); ok {
						c["environment_id"] = env
					}
				})
			})(next).ServeHTTP(w, r2)
		})
	}
}

// acceptsLateMessages answers 200, with a made-up id, a message the mock
// refuses because its recipient has ended, when the recipient's state is
// one accepted says yes to.
func acceptsLateMessages(accepted func(state string) bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost || r.URL.Path != "/agent/messages" {
				next.ServeHTTP(w, r)
				return
			}
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			rewrite(func(_ *http.Request, a *answer) {
				var msg struct {
					To []string `json:"to"`
				}
				if a.status != http.StatusUnprocessableEntity || json.Unmarshal(body, &msg) != nil || len(msg.To) == 0 {
					return
				}
				var run map[string]any
				_ = json.Unmarshal(get(next, r, "/agent/runs/"+url.PathEscape(msg.To[0])), &run)
				if !accepted(str(run["state"])) {
					return
				}
				a.status, a.body = http.StatusOK, []byte(`{"message_ids":["msg-`+rand.Text()+`"]}`)
				a.header = http.Header{"Content-Type": {"application/json"}}
			})(next).ServeHTTP(w, r)
		})
	}
}

// listsHandoffWhile lists a snapshot of the workspace among a run's
// handoff files while the run is in a state when is true of.
func listsHandoffWhile(when func(state string) bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return editObject(http.MethodGet, isHandoff, func(r *http.Request, doc map[string]any) {
			var run map[string]any
			_ = json.Unmarshal(get(next, r, strings.TrimSuffix(r.URL.Path, "/handoff/attachments")), &run)
			if !when(str(run["state"])) {
				return
			}
			list, _ := doc["attachments"].([]any)
			doc["attachments"] = append(list, map[string]any{"attachment_id": "snap-live", "filename": "workspace.tar.gz",
				"download_url": "http://" + r.Host + "/downloads/handoff/snap-live"})
		})(next)
	}
}

// dropEvents leaves the events of this type out of every poll.
func dropEvents(eventType string) func(r *http.Request, a *answer) {
	return editEventList(func(evs []map[string]any) []map[string]any {
		return slices.DeleteFunc(evs, func(e map[string]any) bool { return e["event_type"] == eventType })
	})
}

// editEventList replaces the events of every successful poll by what f
// makes of them.
func editEventList(f func(evs []map[string]any) []map[string]any) func(r *http.Request, a *answer) {
	return func(r *http.Request, a *answer) {
		if r.Method != http.MethodGet || r.URL.Path != "/agent/events" || a.status != http.StatusOK {
			return
		}
		var evs []map[string]any
		if json.Unmarshal(a.body, &evs) == nil {
			a.body, _ = json.Marshal(f(evs))
		}
	}
}
