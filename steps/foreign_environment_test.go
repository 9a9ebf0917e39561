package steps_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/refserver"
	"github.com/agentruns/agentruns/runner"
	"github.com/agentruns/agentruns/suiteconfig"
)

// theirEnvironmentScenario is the scenario of issue 47, point 1.
const theirEnvironmentScenario = "A run cannot be started in another team's environment"

// referenceServerWrapped serves the reference server behind wrap.
func referenceServerWrapped(t *testing.T, opts refserver.Options, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	var h http.Handler = refserver.New(opts)
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/api/v1"
}

// runsInAnyEnvironment takes the environment out of every create, so that
// a run named in another team's environment is run as any other: a server
// that lets one team use another's environment.
func runsInAnyEnvironment(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/agent/run") {
			data, _ := io.ReadAll(r.Body)
			var body map[string]any
			if json.Unmarshal(data, &body) == nil {
				if cfg, ok := body["config"].(map[string]any); ok {
					delete(cfg, "environment_id")
				}
				data, _ = json.Marshal(body)
			}
			r = r.Clone(r.Context())
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(data)), int64(len(data))
			r.Header.Set("Content-Length", strconv.Itoa(len(data)))
		}
		next.ServeHTTP(w, r)
	})
}

// Issue 47, point 1: the published document does not say that a run in
// another team's environment must be refused at creation. A server that
// refuses it (403, or 400 hiding the environment) or accepts it and fails
// it before any worker claims it passes; one that runs it, or that fails
// it but tells what the environment holds, fails.
func TestARunInAnotherTeamsEnvironmentIsJudgedByTheContract(t *testing.T) {
	step := 20 * time.Millisecond
	for _, tc := range []struct {
		name   string
		opts   refserver.Options
		wrap   func(http.Handler) http.Handler
		passes bool
		says   string
	}{
		{"refused as not the caller's (403)", refserver.Options{Step: step}, nil, true, ""},
		{"refused as unknown (400)", refserver.Options{Step: step, ForeignNotFound: true}, nil, true, ""},
		{"accepted, then failed before a worker claimed it", refserver.Options{Step: step, ForeignEnvironmentFailed: true}, nil, true, ""},
		{"accepted and run", refserver.Options{Step: step}, runsInAnyEnvironment, false, "was claimed there"},
		{"accepted, failed, and telling what the environment holds", refserver.Options{Step: step, ForeignEnvironmentFailed: true},
			rewrite(func(r *http.Request, a *answer) {
				editRuns(a, func(run map[string]any) {
					if sm, ok := run["status_message"].(map[string]any); ok {
						sm["message"] = "environment team pipelines (debian:stable) is not yours"
					}
				})
			}), false, `shows what that team's environment holds: "debian:stable", "team pipelines"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, out := runSuite(t, referenceServerWrapped(t, tc.opts, tc.wrap), func(c *suiteconfig.Config) {
				oneCaller(c)
				c.OtherAPIKey = refserver.OtherTeamKeyPrefix + "suite" // a key of its second team
				c.Features = someFeatures(t, "tenancy.feature")
			})
			sc, ok := res.Find(theirEnvironmentScenario)
			require.True(t, ok, out)
			if tc.passes {
				assert.Equal(t, runner.Passed, sc.Status, "%s\n%s", sc.Message, out)
				return
			}
			assert.Equal(t, runner.Failed, sc.Status, out)
			assert.Contains(t, sc.Message, tc.says)
		})
	}
}
