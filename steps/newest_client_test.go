package steps_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/steps"
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
	res, out := runSuite(t, srv.URL, func(c *steps.Config) {
		c.Features = someFeatures(t, "followups.feature", "handoff_attachments.feature")
		c.Tags = "@newest-client and not @mock-only"
	})
	failed := res.Failed()
	assert.NotEmpty(t, failed, out)
	for _, f := range failed {
		assert.Contains(t, f.Message, "--tags '~@newest-client'", f.Name)
	}
}
