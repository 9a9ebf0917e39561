package steps_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Broken servers for the environments and models, identities and messages features: each
// feature must fail against at least two of them.
func init() { brokenServers = append(brokenServers, environmentIdentityMessageBrokenServers...) }

// editObject applies f to a 2xx JSON object answer of method on a path
// that match accepts.
func editObject(method string, match func(path string) bool, f func(r *http.Request, doc map[string]any)) func(http.Handler) http.Handler {
	return rewrite(func(r *http.Request, a *answer) {
		if r.Method != method || !match(r.URL.Path) || a.status/100 != 2 {
			return
		}
		var doc map[string]any
		if json.Unmarshal(a.body, &doc) != nil {
			return
		}
		f(r, doc)
		a.body, _ = json.Marshal(doc)
	})
}

func is(path string) func(string) bool { return func(p string) bool { return p == path } }

var environmentIdentityMessageBrokenServers = []brokenServer{
	{
		name:     "a default model that is not listed",
		features: []string{"environments_and_models.feature"},
		wrap: editObject("GET", is("/agent/models"), func(_ *http.Request, doc map[string]any) {
			doc["default_model_id"] = "a-model-nobody-has"
		}),
		mustFail: map[string]string{
			"The models listing names a default that is one of its models": "default_model_id",
			"A run that names no model gets the default model":             "agent_config.model_id",
		},
		mustPass: []string{"Environments can be listed by name"},
	},
	{
		name:     "environments that do not follow their runs",
		features: []string{"environments_and_models.feature"},
		wrap: editObject("GET", is("/agent/environments"), func(_ *http.Request, doc map[string]any) {
			envs, _ := doc["environments"].([]any)
			for _, e := range envs {
				m := e.(map[string]any)
				delete(m, "last_task_created")
				m["setup_failed"] = false
			}
		}),
		mustFail: map[string]string{
			"An environment follows its newest run as it moves":                                          "last_task_created.id",
			"An environment whose newest run failed with environment_setup_failed says its setup failed": "last_task_created.id",
		},
		mustPass: []string{"Environments are listed most recently updated first by default"},
	},
	{
		name:     "environments listed oldest first",
		features: []string{"environments_and_models.feature"},
		wrap: editObject("GET", is("/agent/environments"), func(r *http.Request, doc map[string]any) {
			if r.URL.Query().Get("sort_by") == "name" {
				return
			}
			envs, _ := doc["environments"].([]any)
			for i, j := 0, len(envs)-1; i < j; i, j = i+1, j-1 {
				envs[i], envs[j] = envs[j], envs[i]
			}
		}),
		mustFail: map[string]string{
			"Environments are listed most recently updated first by default": "not ordered by last update",
		},
	},
	{
		name:     "deleting an identity that leaves it and its keys in place",
		features: []string{"identities.feature"},
		wrap: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/agent/identities/") {
					w.WriteHeader(http.StatusNoContent)
					return
				}
				next.ServeHTTP(w, r)
			})
		},
		mustFail: map[string]string{
			"Deleting an identity revokes its API keys at once": "401",
			"An identity is created, renamed and deleted":       "no longer include",
			"The team's default identity cannot be deleted":     "400",
		},
		mustPass: []string{"An identity needs a name"},
	},
	{
		name:     "creating an identity answers 200 rather than 201",
		features: []string{"identities.feature"},
		wrap: rewrite(func(r *http.Request, a *answer) {
			if r.URL.Path == "/agent/identities" && r.Method == http.MethodPost && a.status == http.StatusCreated {
				a.status = http.StatusOK
			}
		}),
		mustFail: map[string]string{
			"An identity is created, renamed and deleted": "201",
		},
		mustPass: []string{"Identities need credentials"},
	},
	{
		name:     "read_at and delivered_at that move on every call",
		features: []string{"messages.feature"},
		wrap: func() func(http.Handler) http.Handler {
			var mu sync.Mutex
			calls := 0
			return editObject("POST", func(p string) bool { return strings.HasSuffix(p, "/read") }, func(_ *http.Request, doc map[string]any) {
				mu.Lock()
				defer mu.Unlock()
				calls++
				at := time.Date(2026, 1, 1, 0, 0, calls, 0, time.UTC).Format(time.RFC3339)
				doc["read_at"], doc["delivered_at"] = at, at
			})
		}(),
		mustFail: map[string]string{
			"Delivery and reading are recorded once": "read_at",
		},
		mustPass: []string{"A message reaches the recipient's inbox unread"},
	},
	{
		name:     "messages accepted for a finished run, and shown delivered at once",
		features: []string{"messages.feature"},
		wrap: rewrite(func(r *http.Request, a *answer) {
			switch {
			case r.Method == http.MethodPost && r.URL.Path == "/agent/messages" && a.status == http.StatusUnprocessableEntity:
				a.status, a.body = http.StatusOK, []byte(`{"message_ids":["msg-accepted"]}`)
				a.header.Set("Content-Type", "application/json")
			case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/agent/messages/") && a.status == http.StatusOK:
				var items []map[string]any
				if json.Unmarshal(a.body, &items) == nil {
					for _, m := range items {
						m["delivered_at"] = m["sent_at"]
					}
					a.body, _ = json.Marshal(items)
				}
			}
		}),
		mustFail: map[string]string{
			"A recipient that has finished refuses the message":                          "422",
			"A recipient that took messages while it ran refuses them once it has ended": "expected a 4xx refusal",
			"A message reaches the recipient's inbox unread":                             "delivered_at",
		},
		mustPass: []string{"Messages need credentials"},
	},
}
