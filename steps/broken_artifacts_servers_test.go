package steps_test

import (
	"net/http"
	"strings"
)

// Broken servers for the artifacts feature: each breaks one promise of
// GET /agent/artifacts/{artifactUid} or of the downloads it hands out.
func init() { brokenServers = append(brokenServers, artifactsBrokenServers...) }

func isArtifactPath(p string) bool { return strings.HasPrefix(p, "/agent/artifacts/") }

var artifactsBrokenServers = []brokenServer{
	{
		name:     "plans without their content",
		features: []string{"artifacts.feature"},
		wrap: editObject("GET", isArtifactPath, func(_ *http.Request, doc map[string]any) {
			if data, ok := doc["data"].(map[string]any); ok && doc["artifact_type"] == "PLAN" {
				data["content"] = ""
			}
		}),
		mustFail: map[string]string{
			"The artifacts runs show can be fetched, each as its run shows it":                      "markdown in data.content",
			"A run that succeeds shows its artifacts, and each but the pull request can be fetched": "markdown in data.content",
		},
		mustPass: []string{"An artifact that does not exist is not found"},
	},
	{
		name:     "an artifact answered under another uid",
		features: []string{"artifacts.feature"},
		wrap: editObject("GET", isArtifactPath, func(_ *http.Request, doc map[string]any) {
			doc["artifact_uid"] = "00000000-0000-4000-8000-000000000000"
		}),
		mustFail: map[string]string{
			"The artifacts runs show can be fetched, each as its run shows it":                      "artifact_uid",
			"A run that succeeds shows its artifacts, and each but the pull request can be fetched": "artifact_uid",
		},
		mustPass: []string{"Artifacts need credentials"},
	},
	{
		name:     "downloads that never expire, and serve a truncated file",
		features: []string{"artifacts.feature"},
		wrap: rewrite(func(r *http.Request, a *answer) {
			if !strings.HasPrefix(r.URL.Path, "/downloads/") {
				return
			}
			if a.status == http.StatusForbidden {
				a.status, a.body = http.StatusOK, []byte("stale bytes")
				a.header.Set("Content-Type", "image/png")
			} else if len(a.body) > 10 {
				a.body = a.body[:len(a.body)-10]
			}
		}),
		mustFail: map[string]string{
			"A SCREENSHOT's download URL stops working when it expires, and the artifact gives a new one": "expected 403",
			"The artifacts runs show can be fetched, each as its run shows it":                            "bytes",
			"A run that succeeds shows its artifacts, and each but the pull request can be fetched":       "bytes",
		},
		mustPass: []string{"Artifacts need credentials"},
	},
	{
		name:     "another team's artifact handed out",
		features: []string{"artifacts.feature", "tenancy.feature"},
		wrap: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if isArtifactPath(r.URL.Path) && r.Header.Get("Authorization") == "Bearer wk-mock-carol" {
					r = r.Clone(r.Context())
					r.Header.Set("Authorization", "Bearer wk-mock-alice")
				}
				next.ServeHTTP(w, r)
			})
		},
		mustFail: map[string]string{
			"Another team's artifacts are refused": "403",
		},
		mustPass: []string{"The artifacts runs show can be fetched, each as its run shows it"},
	},
}
