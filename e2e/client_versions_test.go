package e2e_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/refserver"
	"github.com/agentruns/agentruns/suiteconfig"
)

// The suite judges every success answer as each released client version
// reads it (package clientcheck) and reports a table of versions: the
// servers built to a client's surface break none of it. (The servers that
// each break one version are steps/client_versions_test.go's, beside the
// broken servers.)

// newest is the newest released client version.
const newest = "typescript-1.4.0-alpha.6"

// TestServersBuiltToAClientsSurfaceBreakNoneOfIt: the bundled mock and the
// reference server serve the newest client's surface, and break no answer
// of typescript-1.4.0-alpha.6. The reference server built to the
// published document alone breaks it only where the newest client
// requires more than that document: the identities' fields it added.
func TestServersBuiltToAClientsSurfaceBreakNoneOfIt(t *testing.T) {
	judgesServers(t)
	t.Run("the bundled mock", func(t *testing.T) {
		t.Parallel()
		res, out := runSuite(t, newMock(t, mockserver.Options{}).URL, nil)
		assertAllPassed(t, res, out)
		assert.NotContains(t, broken(t, res), newest, clientTable(t, res))
		t.Logf("the bundled mock:\n%s", clientTable(t, res))
	})
	t.Run("the reference server", func(t *testing.T) {
		t.Parallel()
		res, out := runSuite(t, newReferenceServer(t, refserver.Options{Step: 20 * time.Millisecond}), func(c *suiteconfig.Config) { oneCaller(c); runFeaturesOnly(c) })
		assertAllPassed(t, res, out)
		assert.NotContains(t, broken(t, res), newest, clientTable(t, res))
		t.Logf("the reference server:\n%s", clientTable(t, res))
	})
	t.Run("the reference server, published document alone", func(t *testing.T) {
		t.Parallel()
		res, out := runSuite(t, newReferenceServer(t, refserver.Options{Step: 20 * time.Millisecond, Published: true}),
			func(c *suiteconfig.Config) { oneCaller(c); runFeaturesOnly(c); c.Tags = "not @newest-client" })
		assertAllPassed(t, res, out)
		for _, c := range res.Report.Clients {
			if c.Name != newest {
				continue
			}
			for _, b := range c.First {
				assert.True(t, b.Got == "missing" && slices.Contains([]string{"GET /agent/identities", "GET /agent/identities/{uid}", "POST /agent/identities", "PUT /agent/identities/{uid}"}, b.Operation),
					"the newest client is broken by more than the identities' added fields: %v", b)
			}
		}
		t.Logf("the reference server, published document alone:\n%s", clientTable(t, res))
	})
}
