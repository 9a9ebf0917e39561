package steps_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/suiteconfig"
)

// Broken servers for the conversations feature: it must fail against each.
func init() { brokenServers = append(brokenServers, conversationBrokenServers...) }

// isConversation tells whether a path answers a conversation.
func isConversation(p string) bool {
	return strings.HasPrefix(p, "/agent/conversations/") ||
		strings.HasPrefix(p, "/agent/runs/") && strings.HasSuffix(p, "/conversation")
}

// editSteps applies f to the steps of every conversation answered.
func editSteps(f func(steps []any) []any) func(http.Handler) http.Handler {
	return editObject("GET", isConversation, func(_ *http.Request, doc map[string]any) {
		steps, _ := doc["steps"].([]any)
		doc["steps"] = f(steps)
	})
}

var conversationBrokenServers = []brokenServer{
	{
		name:     "conversations with their messages newest first",
		features: []string{"conversations.feature"},
		wrap: editSteps(func(steps []any) []any {
			for _, st := range steps {
				msgs := st.(map[string]any)["messages"].([]any)
				for i, j := 0, len(msgs)-1; i < j; i, j = i+1, j-1 {
					msgs[i], msgs[j] = msgs[j], msgs[i]
				}
			}
			return steps
		}),
		mustFail: map[string]string{
			"A finished run's conversation begins with its prompt and stays the same":                           "expected the user's prompt",
			"A conversation begins when a worker claims the run, grows while it works, and ends with a summary": "expected the user's prompt",
			"A failed run's conversation ends with its failure":                                                 "expected the conversation to end with the event run_failed",
		},
		mustPass: []string{"A finished run's transcript is a link that needs no API key", "An unknown conversation is not found"},
	},
	{
		name:     "a continued run that starts a conversation of its own",
		features: []string{"conversations.feature"},
		// Each conversation shows only its newest run's step.
		wrap: editSteps(func(steps []any) []any {
			if len(steps) > 1 {
				return steps[len(steps)-1:]
			}
			return steps
		}),
		mustFail: map[string]string{
			"A run created with conversation_id continues that conversation": "in that order",
		},
		mustPass: []string{"A finished run's conversation begins with its prompt and stays the same"},
	},
	{
		name:     "a summary before the run has ended",
		features: []string{"conversations.feature"},
		wrap: editSteps(func(steps []any) []any {
			for _, st := range steps {
				st.(map[string]any)["summary"] = "All done."
			}
			return steps
		}),
		mustFail: map[string]string{
			"A conversation begins when a worker claims the run, grows while it works, and ends with a summary": "a summary before the run has ended",
		},
		mustPass: []string{"A finished run's conversation begins with its prompt and stays the same"},
	},
	{
		name:     "a transcript served in place of a redirect",
		features: []string{"conversations.feature"},
		wrap: rewrite(func(r *http.Request, a *answer) {
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/transcript") && a.status == http.StatusFound {
				a.status, a.body = http.StatusOK, []byte(`{"messages":[]}`)
				a.header.Del("Location")
				a.header.Set("Content-Type", "application/json")
			}
		}),
		mustFail: map[string]string{
			"A finished run's transcript is a link that needs no API key": "transcript",
		},
		mustPass: []string{"A run created with conversation_id continues that conversation"},
	},
	{
		name:     "a transcript link that still wants the API key",
		features: []string{"conversations.feature"},
		wrap: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/downloads/") && r.Header.Get("Authorization") == "" {
					w.Header().Set("Content-Type", "application/problem+json")
					w.WriteHeader(http.StatusUnauthorized)
					_ = json.NewEncoder(w).Encode(map[string]any{"type": "about:blank", "title": "Unauthorized", "status": 401, "error": "Unauthorized"})
					return
				}
				next.ServeHTTP(w, r)
			})
		},
		mustFail: map[string]string{
			"A finished run's transcript is a link that needs no API key": "answered 401",
		},
	},
	{
		name:     "a conversation shown to another team, and a session that never redirects",
		features: []string{"conversations.feature", "tenancy.feature"},
		wrap: rewrite(func(r *http.Request, a *answer) {
			switch {
			case strings.HasPrefix(r.URL.Path, "/agent/conversations/") && a.status == http.StatusForbidden:
				a.status, a.body = http.StatusOK, []byte(`{"conversation_id":"x","steps":[]}`)
				a.header.Set("Content-Type", "application/json")
			case strings.HasPrefix(r.URL.Path, "/agent/sessions/") && a.status == http.StatusOK:
				a.body = []byte(`{}`)
			}
		}),
		mustFail: map[string]string{
			"Another team's conversation is refused by its id":                                                  "403",
			"A conversation begins when a worker claims the run, grows while it works, and ends with a summary": "redirects nowhere",
		},
		mustPass: []string{"An unknown agent session needs no redirect"},
	},
}

// A server that ends runs before any worker claims them is correct: such a
// run has no conversation (404, which the document allows). The scenarios
// that need a conversation are then skipped, saying why, never failed.
func TestRunsEndedBeforeAClaimSkipTheConversationScenarios(t *testing.T) {
	judgesServers(t)
	neverClaimed := rewrite(func(r *http.Request, a *answer) {
		switch {
		case a.status != http.StatusOK && a.status != http.StatusFound:
		case r.Method == http.MethodGet && isConversation(r.URL.Path),
			r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/transcript"):
			a.status = http.StatusNotFound
			a.header.Set("Content-Type", "application/problem+json")
			a.body = []byte(`{"type":"https://docs.warp.dev/reference/api-and-sdk/troubleshooting/errors/resource_not_found","title":"Resource not found","status":404,"detail":"the run has no conversation","error":"Resource not found (the run has no conversation)","retryable":false}`)
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/agent/runs/"):
			var run map[string]any
			if json.Unmarshal(a.body, &run) == nil {
				delete(run, "session_id")
				delete(run, "session_link")
				delete(run, "conversation_id")
				a.body, _ = json.Marshal(run)
			}
		}
	})
	srv := newMock(t, mockserver.Options{}, neverClaimed)
	res, out := runSuite(t, srv.URL, func(c *suiteconfig.Config) {
		c.Features = someFeatures(t, "conversations.feature")
		c.Tags = "not @mock-only"
	})
	assert.Empty(t, res.Failed(), "a correct server fails no scenario\n%s", out)
	for _, name := range []string{
		"A finished run's conversation begins with its prompt and stays the same",
		"A run created with conversation_id continues that conversation",
		"A finished run's transcript is a link that needs no API key",
	} {
		got, ok := res.Find(name)
		if assert.True(t, ok, "no scenario named %q\n%s", name, out) {
			assert.Equal(t, "skipped", string(got.Status), "scenario %q: %s", name, got.Message)
			assert.Contains(t, got.Message, "before a worker claimed it", name)
		}
	}
}
