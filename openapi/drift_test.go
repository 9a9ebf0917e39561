package openapi

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/openapi/facts"
)

// publishedFactsFile holds the structural facts (names and values, no prose)
// of the service's published OpenAPI document, written by
// `go run ./openapi/facts/gen`. docs/openapi.md says how to refresh it.
const publishedFactsFile = "testdata/published-facts.json"

// PublishedDocumentEnv names a file holding the service's published OpenAPI
// document. When set, the drift test also checks that publishedFactsFile is
// up to date with it.
const publishedDocumentEnv = "AGENTRUNS_PUBLISHED_OPENAPI"

// TestDocumentFollowsThePublishedDocument fails on any fact of openapi.yaml
// that differs from the published document's, unless allowedDifferences
// explains it.
func TestDocumentFollowsThePublishedDocument(t *testing.T) {
	published := loadPublishedFacts(t)
	ours, err := facts.Extract(Document)
	require.NoError(t, err)
	diffs, err := facts.Diff(published, ours)
	require.NoError(t, err)
	unexplained, unused := facts.Filter(diffs, allowedDifferences)
	for _, d := range unexplained {
		t.Errorf("differs from the published document: %s", d)
	}
	for _, a := range unused {
		t.Errorf("allowedDifferences entry %q covers no difference any more; remove it (it said: %s)", a.Pattern, a.Why)
	}
	t.Logf("%d facts differ from the published document; %d of them are explained by %d allow-list entries",
		len(diffs), len(diffs)-len(unexplained), len(allowedDifferences))
}

func loadPublishedFacts(t *testing.T) *facts.Facts {
	t.Helper()
	committed, err := os.ReadFile(publishedFactsFile)
	require.NoError(t, err)
	if path := os.Getenv(publishedDocumentEnv); path != "" {
		doc, err := os.ReadFile(path)
		require.NoError(t, err, "%s names a file that cannot be read", publishedDocumentEnv)
		f, err := facts.Extract(doc)
		require.NoError(t, err)
		fresh, err := facts.Marshal(f)
		require.NoError(t, err)
		if !bytes.Equal(committed, fresh) {
			t.Errorf("%s is stale: the published document at %s has other facts; refresh it with\n"+
				"  go run ./openapi/facts/gen -o openapi/%s %s\nthen re-run this test", publishedFactsFile, path, publishedFactsFile, path)
		}
	}
	f, err := facts.Unmarshal(committed)
	require.NoError(t, err)
	return f
}

func TestAllowedDifferencesSayWhy(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range allowedDifferences {
		assert.NotEmpty(t, strings.TrimSpace(a.Why), "%s", a.Pattern)
		assert.False(t, seen[a.Pattern], "%s is listed twice", a.Pattern)
		seen[a.Pattern] = true
	}
}

// allowedDifferences lists where openapi.yaml knowingly differs from the
// published document, each with the reason. Patterns name fact paths as
// TestDocumentFollowsThePublishedDocument prints them; "*" matches any run
// of characters, and an entry covers everything under the path it matches.
var allowedDifferences = []facts.Allowance{
	// Mended defects of the published document.
	{Pattern: `operations["GET /agent/identities"].operation_id`,
		Why: "mended: the published document gives GET /agent and GET /agent/identities the same id, listAgents; GET /agent keeps it (the official client's agent.list uses it)"},
	{Pattern: `operations["GET /agent"].responses["401"]`, Added: true,
		Why: "mended: every operation needs a key, so a request without one is a 401; the published document forgot it here"},
	{Pattern: `operations["GET /agent/sessions/{sessionUuid}/redirect"].responses["401"]`, Added: true,
		Why: "mended: every operation needs a key, so a request without one is a 401; the published document forgot it here"},
	{Pattern: `operations["* /agent/messages*"].responses`, Added: true,
		Why: "mended: the published document declares no errors for the internal message operations (only a bodiless 422 on send), yet they need a key (401), name runs and messages that may be missing or hidden (403, 404) and take input (400); errors are problem documents everywhere"},
	{Pattern: `operations["* /agent/events*"].responses`, Added: true,
		Why: "mended: the published document declares no errors for the internal event operations, yet they need a key (401), name runs that may be missing or hidden (403, 404) and take input (400); errors are problem documents everywhere"},
	{Pattern: `operations[*].responses[*].content["application/problem+json"]`, Added: true, Why: "mended: the published document declares errors application/json while its prose says application/problem+json; the service may send either, so both are documented"},

	// The mock's additions, marked x-agentruns-mock in openapi.yaml.
	{Pattern: `operations[*].responses["413"]`, Added: true, Why: "the mock's: it caps the size of request bodies"},
	{Pattern: `operations[*].responses["415"]`, Added: true, Why: "the mock's: it refuses bodies that are not JSON"},
	{Pattern: `operations[*].responses["429"]`, Added: true, Why: "the mock's: rate limits and fault rules (resource_unavailable)"},
	{Pattern: `operations[*].responses["503"]`, Added: true, Why: "the mock's: too many isolated sessions, fault rules"},
	{Pattern: `operations[*].responses["500"]`, Added: true,
		Why: "the mock's (MockInternalError): its own failures and fault rules, where the published document lists no 500"},
	{Pattern: `operations[*].responses["400"]`, Added: true,
		Why: "the mock's (MockBadRequest): it checks every request against this document and answers 400 for what breaks it, where the published document lists no 400"},
	{Pattern: `operations["GET /agent/runs"].parameters["query config_name"]`, Added: true, Why: "the mock's: the name the project's first specification used for the name filter"},
	{Pattern: `schemas.RunAgentRequest.properties.images`, Added: true, Why: "the mock's: official TypeScript client 1.0.0-alpha.8 sends images; the published document now has attachments; both are accepted"},
	{Pattern: `schemas.ImageInput`, Added: true, Why: "the mock's: the items of images (above)"},

	// Rules the published document states in words, written as schema so
	// that validation enforces them.
	{Pattern: `schemas.RunAgentRequest.properties.attachments.max_items`, Added: true, Why: `prose: "max 5" attachments`},
	{Pattern: `schemas.MCPServerConfig.one_of`, Added: true, Why: `prose: "Must have exactly one of: warp_id, command, or url"`},
	{Pattern: `schemas.MCPServerConfig.properties.warp_id.format`, Added: true, Why: `prose: a shared server "by UUID"`},
	{Pattern: `schemas.RunItem.properties.session_id.format`, Added: true, Why: `prose: "UUID of the shared session"`},
}
