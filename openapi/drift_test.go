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
	t.Logf("%d differences, all explained by %d allow-list entries", len(diffs), len(allowedDifferences))
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
	{Pattern: `operations[*].responses[*].content["application/problem+json"]`, Why: "mended: the published document declares errors application/json while its prose says application/problem+json; the service may send either, so both are documented"},

	// The mock's additions, marked x-agentruns-mock in openapi.yaml.
	{Pattern: `operations[*].responses["413"]`, Why: "the mock's: it caps the size of request bodies"},
	{Pattern: `operations[*].responses["415"]`, Why: "the mock's: it refuses bodies that are not JSON"},
	{Pattern: `operations[*].responses["429"]`, Why: "the mock's: rate limits and fault rules (resource_unavailable)"},
	{Pattern: `operations[*].responses["503"]`, Why: "the mock's: too many isolated sessions, fault rules"},
	{Pattern: `operations["* /agent/run*"].responses["500"]`, Why: "the mock's: its own failures and fault rules; the published run operations list no 500"},
	{Pattern: `operations["GET /agent/runs"].parameters["query config_name"]`, Why: "the mock's: the name the project's first specification used for the name filter"},
	{Pattern: `schemas.RunAgentRequest.properties.images`, Why: "the mock's: official TypeScript client 1.0.0-alpha.8 sends images; the published document now has attachments; both are accepted"},
	{Pattern: `schemas.ImageInput`, Why: "the mock's: the items of images (above)"},
	{Pattern: `schemas.RunAgentRequest.properties.prompt.max_length`, Why: "the mock's limit, which the published document does not state; the mock engineer decides whether it stays (issue 11)"},
	{Pattern: `schemas.AmbientAgentConfig.properties.mcp_servers.max_properties`, Why: "the mock's limit, which the published document does not state; the mock engineer decides whether it stays (issue 11)"},

	// Rules the published document states in words, written as schema so
	// that validation enforces them.
	{Pattern: `schemas.RunAgentRequest.properties.attachments.max_items`, Why: `prose: "max 5" attachments`},
	{Pattern: `schemas.MCPServerConfig.one_of`, Why: `prose: "Must have exactly one of: warp_id, command, or url"`},
	{Pattern: `schemas.MCPServerConfig.properties.warp_id.format`, Why: `prose: a shared server "by UUID"`},
	{Pattern: `schemas.RunItem.properties.session_id.format`, Why: `prose: "UUID of the shared session"`},

	// Temporary, until the next commit.
	{Pattern: `operations["DELETE /agent/identities/{uid}"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["DELETE /agent/schedules/{scheduleId}"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["GET /agent"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["GET /agent/artifacts/{artifactUid}"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["GET /agent/conversations/{conversation_id}"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["GET /agent/environments"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["GET /agent/events"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["GET /agent/identities"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["GET /agent/messages/{runId}"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["GET /agent/models"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["GET /agent/runs/{runId}/conversation"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["GET /agent/runs/{runId}/transcript"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["GET /agent/schedules"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["GET /agent/schedules/{scheduleId}"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["GET /agent/sessions/{sessionUuid}/redirect"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["POST /agent/events/{runId}"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["POST /agent/identities"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["POST /agent/messages"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["POST /agent/messages/{messageId}/delivered"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["POST /agent/messages/{messageId}/read"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["POST /agent/schedules"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["POST /agent/schedules/{scheduleId}/pause"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["POST /agent/schedules/{scheduleId}/resume"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["PUT /agent/identities/{uid}"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `operations["PUT /agent/schedules/{scheduleId}"]`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.ActionCategory`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.ActionContentBlock`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.ActionResultContentBlock`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.ActionState`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.AgentListEnvironment`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.AgentListItem`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.AgentListSource`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.AgentListVariant`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.AgentResponse`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.ArtifactResponse`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.AwsProviderConfig`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.CloudEnvironment`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.CloudEnvironmentConfig`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.ConversationContentBlock`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.ConversationMessage`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.ConversationMessageRole`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.ConversationResponse`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.ConversationStep`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.CreateAgentRequest`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.CreateScheduledAgentRequest`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.DeleteScheduledAgentResponse`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.EnvironmentLastTask`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.EventContentBlock`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.FileArtifactResponse`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.FileArtifactResponseData`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.GcpProviderConfig`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.GitHubRepo`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.ListAgentIdentitiesResponse`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.ListAgentsResponse`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.ListEnvironmentsResponse`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.ListModelsResponse`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.ListScheduledAgentsResponse`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.ModelInfo`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.PlanArtifactResponse`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.PlanArtifactResponseData`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.ProvidersConfig`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.ScheduledAgentHistoryItem`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.ScheduledAgentItem`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.ScreenshotArtifactResponse`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.ScreenshotArtifactResponseData`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.TextContentBlock`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.UpdateAgentRequest`, Why: "not yet described: the next commit describes the other 25 operations"},
	{Pattern: `schemas.UpdateScheduledAgentRequest`, Why: "not yet described: the next commit describes the other 25 operations"},
}
