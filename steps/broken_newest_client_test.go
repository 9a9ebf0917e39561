package steps_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
)

// Broken servers for what the newest client calls beyond the published
// document (follow-ups, handoff files, an identity by uid, the public
// redirects, metadata and the newer filters): each scenario must fail
// against a server that gets it wrong.
func init() { brokenServers = append(brokenServers, newestClientBrokenServers...) }

// dropQuery forwards GET /agent/runs without the query parameters drop
// says to leave out: a server that ignores those filters.
func dropQuery(drop func(name string) bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && r.URL.Path == "/agent/runs" {
				q := r.URL.Query()
				for name := range q {
					if drop(name) {
						q.Del(name)
					}
				}
				r = r.Clone(r.Context())
				r.URL.RawQuery = q.Encode()
			}
			next.ServeHTTP(w, r)
		})
	}
}

// ignoreFollowups answers 200 to every follow-up the mock would accept, and
// does nothing with it: the mock sees the follow-up without its message,
// so it still answers 401, 403 and 404 as it should.
func ignoreFollowups(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/followups") {
			next.ServeHTTP(w, r)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		r = r.Clone(r.Context())
		body := []byte(`{"message": ""}`)
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		r.Header.Set("Content-Length", strconv.Itoa(len(body)))
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		if rec.Code == http.StatusBadRequest { // only for the empty message
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{}`))
			return
		}
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

func isHandoff(p string) bool { return strings.HasSuffix(p, "/handoff/attachments") }

func isIdentity(p string) bool {
	return strings.HasPrefix(p, "/agent/identities/") && strings.Count(p, "/") == 3
}

var newestClientBrokenServers = []brokenServer{
	{
		name:     "follow-ups accepted and dropped",
		features: []string{"followups.feature"},
		wrap:     ignoreFollowups,
		mustFail: map[string]string{
			"A follow-up to a running run joins its conversation":            "expected the prompts",
			"A follow-up to an ended run starts it again":                    "followup-starts-ended-run",
			"A follow-up to a cancelled run starts it again":                 "followup-starts-ended-run",
			"On the mock, a follow-up answers a run that waits for its user": "INPROGRESS",
			"A follow-up needs a message":                                    "expected status 400",
		},
		mustPass: []string{"A follow-up to a run that does not exist is a 404", "Follow-ups need credentials"},
	},
	{
		name:     "a follow-up that restarts a run from nothing",
		features: []string{"followups.feature"},
		// Once a run is QUEUED again, it shows neither its first start nor
		// the time it ran.
		wrap: rewrite(func(r *http.Request, a *answer) {
			editRuns(a, func(run map[string]any) {
				if run["state"] == "QUEUED" {
					delete(run, "started_at")
					delete(run, "run_time")
				}
			})
		}),
		mustFail: map[string]string{
			// The suite holds every run it sees to keeping its history
			// (rules.KeptAcrossExecutions): the first look after the
			// follow-up fails on the lost started_at, before run_time.
			"On the mock, a follow-up to a finished run queues it again and keeps its history": "run-keeps-its-history",
			"A follow-up to an ended run starts it again":                                      "run-keeps-its-history",
		},
		mustPass: []string{"On the mock, a follow-up answers a run that waits for its user"},
	},
	{
		name:     "handoff files that never come",
		features: []string{"handoff_attachments.feature"},
		wrap: editObject("GET", isHandoff, func(_ *http.Request, doc map[string]any) {
			doc["attachments"] = []any{}
		}),
		mustFail: map[string]string{
			"On the mock, a run's handoff files come from its fate": "expected the handoff attachments",
		},
		mustPass: []string{"A run that has not ended has no handoff files", "Handoff files of a run that does not exist are a 404"},
	},
	{
		name:     "handoff files before the run has ended",
		features: []string{"handoff_attachments.feature"},
		wrap: editObject("GET", isHandoff, func(r *http.Request, doc map[string]any) {
			doc["attachments"] = []any{map[string]any{"attachment_id": "snap-1", "filename": "workspace.tar.gz", "download_url": "http://" + r.Host + "/downloads/handoff/snap-1"}}
		}),
		mustFail: map[string]string{
			"A run that has not ended has no handoff files": "expected no handoff attachments",
		},
		mustPass: []string{"Handoff files need credentials"},
	},
	{
		name:     "handoff links that need the API key",
		features: []string{"handoff_attachments.feature"},
		wrap: editObject("GET", isHandoff, func(r *http.Request, doc map[string]any) {
			list, _ := doc["attachments"].([]any)
			for _, a := range list {
				a.(map[string]any)["download_url"] = "http://" + r.Host + strings.TrimSuffix(r.URL.Path, "/handoff/attachments")
			}
		}),
		mustFail: map[string]string{
			"On the mock, a run's handoff files come from its fate": "without the API key answered 401",
		},
		mustPass: []string{"A run that has not ended has no handoff files"},
	},
	{
		name:     "an identity without the skills the newest client reads",
		features: []string{"identities.feature"},
		wrap: editObject("GET", isIdentity, func(_ *http.Request, doc map[string]any) {
			delete(doc, "skills")
		}),
		mustFail: map[string]string{
			"An agent identity is fetched by its uid with every field the client needs": "skills",
		},
		mustPass: []string{"An agent identity that does not exist is a 404"},
	},
	{
		name:     "redirects that need an API key",
		features: []string{"conversations.feature", "identities.feature"},
		wrap: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/redirect") && r.Header.Get("Authorization") == "" {
					w.Header().Set("Content-Type", "application/problem+json")
					w.WriteHeader(http.StatusUnauthorized)
					_ = json.NewEncoder(w).Encode(map[string]any{"type": "about:blank", "title": "Authentication required", "status": 401,
						"detail": "no key", "error": "authentication_required", "retryable": false})
					return
				}
				next.ServeHTTP(w, r)
			})
		},
		mustFail: map[string]string{
			"The session and conversation redirects answer without an API key": "401",
		},
		mustPass: []string{"An agent identity that does not exist is a 404"},
	},
	{
		name:     "metadata accepted and dropped",
		features: []string{"list_runs.feature", "create_run.feature"},
		wrap: rewrite(func(_ *http.Request, a *answer) {
			editRuns(a, func(run map[string]any) { delete(run, "metadata") })
		}),
		mustFail: map[string]string{
			"Metadata is kept, given back and filtered on": "metadata.ticket_id",
		},
		mustPass: []string{"The newest values are accepted"},
	},
	{
		name:     "metadata and automation filters ignored",
		features: []string{"list_runs.feature"},
		wrap:     dropQuery(func(n string) bool { return strings.HasPrefix(n, "metadata[") || n == "automation_id" }),
		mustFail: map[string]string{
			"Metadata is kept, given back and filtered on": "but the listing asked for metadata[ticket_id]=",
		},
		mustPass: []string{"The executor and factory filters match what they name, and nothing else"},
	},
	{
		name:     "executor and factory filters ignored",
		features: []string{"list_runs.feature"},
		wrap:     dropQuery(func(n string) bool { return n == "executor" || n == "factory_uid" }),
		mustFail: map[string]string{
			"The executor and factory filters match what they name, and nothing else": "but the listing asked for executor=",
		},
		mustPass: []string{"Metadata is kept, given back and filtered on"},
	},
}
