package steps_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/refserver"
	"github.com/agentruns/agentruns/steps"
	"github.com/agentruns/agentruns/suiteconfig"
)

// TestNewestClientScenariosNameTheirTag: against a server without the
// newest client's operations (404), the failure says which tag leaves the
// scenarios out.
func TestNewestClientScenariosNameTheirTag(t *testing.T) {
	srv := newMock(t, mockserver.Options{}, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/followups") || strings.HasSuffix(r.URL.Path, "/handoff/attachments") {
				rec := httptest.NewRecorder()
				next.ServeHTTP(rec, r) // authentication first, as the mock does
				if rec.Code != http.StatusUnauthorized {
					a := &answer{status: rec.Code, header: rec.Header().Clone()}
					problem(a, http.StatusNotFound, "resource_not_found", "Not found")
					w.Header().Set("Content-Type", "application/problem+json")
					w.WriteHeader(a.status)
					_, _ = w.Write(a.body)
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	})
	res, out := runSuite(t, srv.URL, func(c *suiteconfig.Config) {
		c.Features = someFeatures(t, "followups.feature", "handoff_attachments.feature")
		c.Tags = "@newest-client and not @mock-only"
	})
	failed := res.Failed()
	assert.NotEmpty(t, failed, out)
	for _, f := range failed {
		assert.Contains(t, f.Message, steps.NewestClientNote, f.Name)
	}
}

// TestEveryFailureOfTheNewestClientSurfaceSaysSo: a server of the
// published document alone fails the newest client's scenarios in many
// ways (an operation not found, a value refused, a field not kept nor
// filtered on); each failure carries the one note, once, and no failure of
// another scenario does.
func TestEveryFailureOfTheNewestClientSurfaceSaysSo(t *testing.T) {
	srv := newReferenceServer(t, refserver.Options{Step: 20 * time.Millisecond, Published: true})
	res, out := runSuite(t, srv, func(c *suiteconfig.Config) {
		oneCaller(c)
		runFeaturesOnly(c)
		c.Tags = "@newest-client or @creates-runs"
		c.NewestClient = true // judged though not served, as a team that promises the newest client
	})
	failed := map[string]bool{}
	for _, f := range res.Failed() {
		failed[f.Name] = true
		if hasAnyTag(f.Tags, "@newest-client") {
			assert.Equal(t, 1, strings.Count(f.Message, steps.NewestClientNote), "%s:\n%s", f.Name, f.Message)
		} else {
			t.Errorf("%s, not of the newest client's surface, failed against a server of the published document:\n%s", f.Name, f.Message)
		}
	}
	for _, name := range []string{"Metadata is kept, given back and filtered on", "The executor and factory filters match what they name, and nothing else",
		"The newest values are accepted", "A finished run's handoff files each have an id, a name and a download link", "An agent identity is fetched by its uid with every field the client needs"} {
		assert.True(t, failed[name], "%q should fail against a server of the published document\n%s", name, out)
	}
}
