//go:build !race

package steps_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Mutants of the resources added after the runs: schedules, events,
// artifacts and transcripts, conversations, environments, identities,
// messages, and tenancy across them. Each is run, and must be killed, in
// both modes: a bug that shows only at a schedule's tick is run, when
// polling, on a mock whose clock runs faster than the wall (onFastClock);
// one that shows when a signed link expires, on a mock whose links live
// seconds (mutationModes); the plan's edge is given to the suite as an
// operator would give it (tuneForMutants).

var (
	schedulesArea     = area{"schedules", []string{"schedules.feature"}}
	eventsArea        = area{"events", []string{"events.feature", "tenancy.feature"}}
	conversationsArea = area{"conversations", []string{"conversations.feature", "tenancy.feature"}}
	environmentsArea  = area{"environments", []string{"environments_and_models.feature"}}
	identitiesArea    = area{"identities", []string{"identities.feature"}}
	messagesArea      = area{"messages", []string{"messages.feature"}}
	downloadsArea     = area{"artifacts", []string{"artifacts.feature", "conversations.feature"}}
)

// onFastClock has mutants run, when polling, against a mock whose clock
// runs speed times faster than the wall (speedUp).
func onFastClock(speed int, ms []mutant) []mutant {
	for i := range ms {
		ms[i].clockSpeed = speed
	}
	return ms
}

var resourceMutants = slices.Concat(
	inArea(schedulesArea, []breakage{
		{"a schedule create answers 200", stateless(rewrite(func(r *http.Request, a *answer) {
			if r.Method == http.MethodPost && r.URL.Path == "/agent/schedules" && a.status == http.StatusCreated {
				a.status = http.StatusOK
			}
		}))},
	}),
	// A schedule fires at most once a minute: when polling, these run on
	// a mock whose clock runs thirty times faster than the wall, so that
	// the suite's wait for a tick (three minutes of the server's clock)
	// takes six seconds.
	onFastClock(30, inArea(schedulesArea, []breakage{
		{"a replaced schedule keeps firing on its old cron", keepsOldCron},
		{"a paused schedule keeps firing", stateless(pauseIgnored)},
	})),
	inArea(eventsArea, []breakage{
		{"the events of another team's run can be polled", stateless(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rec := httptest.NewRecorder()
				next.ServeHTTP(rec, r)
				if r.URL.Path == "/agent/events" && r.Method == http.MethodGet && rec.Code == http.StatusForbidden {
					rec = asOtherTeam(next, r)
				}
				copyAnswer(w, rec)
			})
		})},
		{"a cancelled run never gets a run_cancelled event", stateless(rewrite(editEvents(func(evs []map[string]any) {
			for i := range evs {
				if evs[i]["event_type"] == "run_cancelled" {
					evs[i]["event_type"] = "run_status_changed" // a type clients skip
				}
			}
		})))},
		{"an event is stamped when the server noticed it, not when its state began", stateless(rewrite(editEvents(func(evs []map[string]any) {
			latest := map[string]string{}
			for _, e := range evs {
				if at, _ := e["occurred_at"].(string); at > latest[e["run_id"].(string)] {
					latest[e["run_id"].(string)] = at
				}
			}
			for _, e := range evs {
				e["occurred_at"] = latest[e["run_id"].(string)]
			}
		})))},
	}),
	inArea(conversationsArea, []breakage{
		{"another team's run's conversation can be read", stateless(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rec := httptest.NewRecorder()
				next.ServeHTTP(rec, r)
				if isConversation(r.URL.Path) && rec.Code == http.StatusForbidden {
					rec = asOtherTeam(next, r)
				}
				copyAnswer(w, rec)
			})
		})},
	}),
	inArea(conversationsArea, []breakage{
		{"the session redirect names the conversation while the run is still going", redirectsAtOnce},
	}),
	inArea(downloadsArea, []breakage{
		{"a transcript link never expires", stateless(rewrite(func(r *http.Request, a *answer) {
			if strings.HasPrefix(r.URL.Path, "/downloads/transcripts/") && a.status == http.StatusForbidden {
				a.status, a.body = http.StatusOK, []byte(`{"messages":[]}`)
				a.header.Set("Content-Type", "application/json")
			}
		}))},
		{"a file's download link never expires", stateless(rewrite(func(r *http.Request, a *answer) {
			if strings.HasPrefix(r.URL.Path, "/downloads/artifacts/") && a.status == http.StatusForbidden && a.header.Get("Content-Type") != "image/png" {
				a.status, a.body = http.StatusOK, []byte("stale bytes")
				a.header.Set("Content-Type", "application/octet-stream")
			}
		}))},
	}),
	inArea(environmentsArea, []breakage{
		{"setup_failed is true whenever the newest run failed", stateless(editEnvironments(func(_ http.Handler, _ *http.Request, env map[string]any) {
			if last, ok := env["last_task_created"].(map[string]any); ok {
				env["setup_failed"] = last["state"] == "FAILED" || last["state"] == "ERROR"
			}
		}))},
		{"last_task_created is the oldest run of the environment", stateless(editEnvironments(func(next http.Handler, r *http.Request, env map[string]any) {
			q := url.Values{"environment_id": {str(env["uid"])}, "sort_by": {"created_at"}, "sort_order": {"asc"}, "limit": {"1"}}
			var page struct {
				Runs []map[string]any `json:"runs"`
			}
			if json.Unmarshal(get(next, r, "/agent/runs?"+q.Encode()), &page) != nil || len(page.Runs) == 0 {
				return
			}
			old := page.Runs[0]
			env["last_task_created"] = map[string]any{"id": old["run_id"], "title": old["title"], "state": old["state"],
				"created_at": old["created_at"], "updated_at": old["updated_at"], "started_at": old["started_at"]}
		}))},
	}),
	inArea(identitiesArea, []breakage{
		{"the plan allows one identity fewer than it says", stateless(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost && r.URL.Path == "/agent/identities" {
					var doc struct {
						Agents []map[string]any `json:"agents"`
					}
					if json.Unmarshal(get(next, r, "/agent/identities"), &doc) == nil && len(doc.Agents) >= 2 {
						rewrite(func(_ *http.Request, a *answer) { problem(a, http.StatusForbidden, "not_authorized", "Not authorized") })(http.NotFoundHandler()).ServeHTTP(w, r)
						return
					}
				}
				next.ServeHTTP(w, r)
			})
		})},
	}),
	inArea(identitiesArea, []breakage{
		{"deleting an identity leaves it and its keys in place", stateless(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/agent/identities/") {
					w.WriteHeader(http.StatusNoContent)
					return
				}
				next.ServeHTTP(w, r)
			})
		})},
	}),
	inArea(messagesArea, []breakage{
		{"a message shows delivered as soon as it is sent", stateless(rewrite(func(r *http.Request, a *answer) {
			if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/agent/messages/") || a.status != http.StatusOK {
				return
			}
			var items []map[string]any
			if json.Unmarshal(a.body, &items) == nil {
				for _, m := range items {
					m["delivered_at"] = m["sent_at"]
				}
				a.body, _ = json.Marshal(items)
			}
		}))},
		{"reading a message again moves read_at", func() func(http.Handler) http.Handler {
			var mu sync.Mutex
			reads := 0
			return editObject(http.MethodPost, func(p string) bool { return strings.HasSuffix(p, "/read") }, func(_ *http.Request, doc map[string]any) {
				mu.Lock()
				defer mu.Unlock()
				reads++
				doc["read_at"] = time.Date(2026, 1, 1, 0, 0, reads, 0, time.UTC).Format(time.RFC3339)
			})
		}},
	}),
	inArea(listingArea, []breakage{
		{"a repeated state uses only its first value", onListQuery(func(q url.Values) {
			if st := q["state"]; len(st) > 1 {
				q["state"] = st[:1]
			}
		})},
	}),
)

// get answers a GET of path as the mock answers it to r's caller, in r's
// mock session.
func get(next http.Handler, r *http.Request, path string) []byte {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for _, h := range []string{"Authorization", "X-Mock-Session"} {
		req.Header.Set(h, r.Header.Get(h))
	}
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, req)
	return rec.Body.Bytes()
}

func str(v any) string { s, _ := v.(string); return s }

// editEnvironments applies f to every environment GET /agent/environments lists.
func editEnvironments(f func(next http.Handler, r *http.Request, env map[string]any)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return editObject(http.MethodGet, is("/agent/environments"), func(r *http.Request, doc map[string]any) {
			envs, _ := doc["environments"].([]any)
			for _, e := range envs {
				if m, ok := e.(map[string]any); ok {
					f(next, r, m)
				}
			}
		})(next)
	}
}

// keepsOldCron answers a schedule's replacement with the new cron while the
// mock keeps the old one: the schedule shows what was asked, and fires as
// before.
func keepsOldCron() func(http.Handler) http.Handler {
	var mu sync.Mutex
	shown := map[string]string{} // schedule id -> the cron it shows
	return func(next http.Handler) http.Handler {
		show := editObject(http.MethodGet, func(p string) bool { return strings.HasPrefix(p, "/agent/schedules/") }, func(_ *http.Request, doc map[string]any) {
			mu.Lock()
			defer mu.Unlock()
			if c, ok := shown[str(doc["id"])]; ok {
				doc["cron_schedule"] = c
			}
		})(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPut || !strings.HasPrefix(r.URL.Path, "/agent/schedules/") {
				show.ServeHTTP(w, r)
				return
			}
			var old map[string]any
			_ = json.Unmarshal(get(next, r, r.URL.Path), &old)
			body, _ := io.ReadAll(r.Body)
			var doc map[string]any
			if json.Unmarshal(body, &doc) != nil || old["cron_schedule"] == nil {
				r.Body = io.NopCloser(bytes.NewReader(body))
				next.ServeHTTP(w, r)
				return
			}
			asked := doc["cron_schedule"]
			doc["cron_schedule"] = old["cron_schedule"]
			body, _ = json.Marshal(doc)
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
			mu.Lock()
			shown[strings.TrimPrefix(r.URL.Path, "/agent/schedules/")] = str(asked)
			mu.Unlock()
			editObject(http.MethodPut, func(string) bool { return true }, func(_ *http.Request, d map[string]any) {
				d["cron_schedule"] = asked
			})(next).ServeHTTP(w, r)
		})
	}
}

// pauseIgnored answers a pause with the schedule shown paused, and leaves it
// running.
func pauseIgnored(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/pause") {
			next.ServeHTTP(w, r)
			return
		}
		var doc map[string]any
		_ = json.Unmarshal(get(next, r, strings.TrimSuffix(r.URL.Path, "/pause")), &doc)
		doc["enabled"] = false
		data, _ := json.Marshal(doc)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(data)
	})
}

// redirectsAtOnce learns each run's session and conversation from the runs
// it answers, and has the session redirect name the conversation at once,
// while the run still works.
func redirectsAtOnce() func(http.Handler) http.Handler {
	var mu sync.Mutex
	convOf := map[string]string{} // session id -> conversation id
	return rewrite(func(r *http.Request, a *answer) {
		mu.Lock()
		defer mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/agent/sessions/") && strings.HasSuffix(r.URL.Path, "/redirect") && a.status == http.StatusOK {
			session := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/agent/sessions/"), "/redirect")
			if c, ok := convOf[session]; ok {
				a.body, _ = json.Marshal(map[string]any{"conversation_id": c})
			}
			return
		}
		editRuns(a, func(run map[string]any) {
			if s, c := str(run["session_id"]), str(run["conversation_id"]); s != "" && c != "" {
				convOf[s] = c
			}
		})
	})
}
