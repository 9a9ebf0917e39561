package openapi

import (
	"bytes"
	"fmt"
	"os"
	"slices"
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
		Why: "mended: the published document asks for a key here but lists no 401; the operation is public now (below), yet a server may refuse a key it does not accept"},
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

	// The newer surface of oz-agent-sdk 1.4.0-alpha.6, which is generated
	// from a later document than the published one; marked
	// x-agentruns-source in openapi.yaml. TestDocumentHoldsTheNewestClient
	// checks these facts against the client's own.
	{Pattern: `operations["POST /agent/runs/{runId}/followups"]`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: runs.submitFollowup"},
	{Pattern: `operations["GET /agent/runs/{runId}/handoff/attachments"]`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: runs.listHandoffAttachments"},
	{Pattern: `operations["GET /agent/identities/{uid}"]`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: agent.agent.get"},
	{Pattern: `operations["GET /agent/conversations/{conversationId}/redirect"]`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: conversations.checkRedirect"},
	{Pattern: `operations["GET /agent/sessions/{sessionUuid}/redirect"].security`,
		Why: "oz-agent-sdk 1.4.0-alpha.6 calls the session redirect without a key; the published document asks for one; both are accepted"},
	{Pattern: `operations["GET /agent/runs"].parameters["query *"]`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: filters automation_id, executor, factory_uid, metadata[key]"},
	{Pattern: `operations["GET /agent/runs"].parameters["query artifact_type"].schema.enum`, Why: "oz-agent-sdk 1.4.0-alpha.6 adds EXTERNAL_REFERENCE"},
	{Pattern: `operations["GET /agent/identities"].parameters`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: the factory_uid filter"},
	{Pattern: `schemas.RunSourceType.enum`, Why: "oz-agent-sdk 1.4.0-alpha.6 adds JIRA, SELF_IMPROVEMENT, GITHUB_WEBHOOK, GITLAB_WEBHOOK, AUTOFIX, RUN_SCORER, ORCHESTRATION"},
	{Pattern: `schemas.Harness.properties.type.enum`, Why: "oz-agent-sdk 1.4.0-alpha.6 adds codex and gemini"},
	{Pattern: `schemas.ArtifactItem.one_of[4]`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: EXTERNAL_REFERENCE artifacts"},
	{Pattern: `schemas.ArtifactItem.discriminator.mapping.EXTERNAL_REFERENCE`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: EXTERNAL_REFERENCE artifacts"},
	{Pattern: `schemas.RunAgentRequest.properties`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: metadata, mode, on_behalf_of"},
	{Pattern: `schemas.RunItem.properties`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: executor, is_run_type_cancellable, metadata, run_time"},
	{Pattern: `schemas.RunStatusMessage.properties`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: session_debug_until"},
	{Pattern: `schemas.RequestUsage.properties`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: token totals, platform cost, costs in dollars and their breakdowns"},
	{Pattern: `schemas.AmbientAgentConfig.properties`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: the newer run configuration fields"},
	{Pattern: `schemas.Harness.properties`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: model_id, reasoning_level"},
	{Pattern: `schemas.HarnessAuthSecrets.properties`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: codex_auth_secret_name"},
	{Pattern: `schemas.Error.properties`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6 declares auth_url and provider, members the published document names in prose"},
	{Pattern: `schemas.File*Data.properties.title`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: a file artifact's title"},
	{Pattern: `schemas.*ScheduledAgent*.properties`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: a schedule's agent_uid, metadata and mode"},
	{Pattern: `schemas.CloudEnvironmentConfig.properties`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: failure_session_retention_minutes"},
	{Pattern: `schemas.GcpProviderConfig.properties`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: service_account_email"},
	{Pattern: `schemas.AgentResponse.required`,
		Why: "oz-agent-sdk 1.4.0-alpha.6 requires an identity's updated_at, default_runner_uid, memory, secrets and skills besides the published four"},
	{Pattern: `schemas.*AgentRe*.properties`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: an identity's settings (CreateAgentRequest, UpdateAgentRequest, AgentResponse)"},
	{Pattern: `schemas.AgentMemory*`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: an identity's memory"},
	{Pattern: `schemas.AgentSecret`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: an identity's secrets"},
	{Pattern: `schemas.AgentType`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: an identity's role"},
	{Pattern: `schemas.CredentialStrategy`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6"},
	{Pattern: `schemas.InferenceProviders`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6"},
	{Pattern: `schemas.MemoryStoreAccess`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6"},
	{Pattern: `schemas.SessionSharing`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6"},
	{Pattern: `schemas.ExternalReferenceArtifact*`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: EXTERNAL_REFERENCE artifacts"},
	{Pattern: `schemas.HandoffAttachment*`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: runs.listHandoffAttachments"},
	{Pattern: `schemas.RunFollowupRequest`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: runs.submitFollowup"},
	{Pattern: `schemas.RunMetadata`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: run metadata"},
	{Pattern: `schemas.RunMode`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: run mode"},
	{Pattern: `schemas.TokenCostUsd`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: request_usage breakdowns"},
	{Pattern: `schemas.TokenCount`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: request_usage breakdowns"},
	{Pattern: `schemas.UsageCategory`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: request_usage breakdowns"},
	{Pattern: `schemas.ModelUsage`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: request_usage breakdowns"},

	// Rules the published document states in words, written as schema so
	// that validation enforces them.
	{Pattern: `schemas.RunAgentRequest.properties.attachments.max_items`, Added: true, Why: `prose: "max 5" attachments`},
	{Pattern: `schemas.MCPServerConfig.one_of`, Added: true, Why: `prose: "Must have exactly one of: warp_id, command, or url"`},
	{Pattern: `schemas.MCPServerConfig.properties.warp_id.format`, Added: true, Why: `prose: a shared server "by UUID"`},
	{Pattern: `schemas.RunItem.properties.session_id.format`, Added: true, Why: `prose: "UUID of the shared session"`},
}

// clientFactsFile holds the surface of the newest official client
// (oz-agent-sdk, read from its source by openapi/clientfacts): the
// operations it calls, the fields it sends and reads, their types, enum
// values and required-ness. `make client-facts CLIENT=<checkout>` rewrites
// it; docs/openapi.md says when. It is one of the client versions in
// openapi/clientfacts, the newest.
const clientFactsFile = "clientfacts/typescript-1.4.0-alpha.6.json"

// TestDocumentHoldsTheNewestClient fails on every fact of the newest
// client that openapi.yaml does not hold (see facts.Holds), unless
// allowedClientDifferences explains it.
func TestDocumentHoldsTheNewestClient(t *testing.T) {
	client := loadClientFacts(t)
	ours, err := facts.Extract(Document)
	require.NoError(t, err)
	gaps := facts.Holds(client, ours)
	unexplained, unused := facts.Filter(gaps, allowedClientDifferences)
	for _, d := range unexplained {
		t.Errorf("does not hold the client's fact: %s", describeGap(d))
	}
	for _, a := range unused {
		t.Errorf("allowedClientDifferences entry %q covers no difference any more; remove it (it said: %s)", a.Pattern, a.Why)
	}
	t.Logf("%d facts of the client are not held as stated; %d of them are explained by %d allow-list entries",
		len(gaps), len(gaps)-len(unexplained), len(allowedClientDifferences))
}

func describeGap(d facts.Difference) string {
	if d.Got == "" {
		return fmt.Sprintf("%s: missing, the client has %s", d.Path, d.Want)
	}
	return fmt.Sprintf("%s: the client has %s, ours %s", d.Path, d.Want, d.Got)
}

func loadClientFacts(t *testing.T) *facts.Facts {
	t.Helper()
	b, err := os.ReadFile(clientFactsFile)
	require.NoError(t, err)
	f, err := facts.Unmarshal(b)
	require.NoError(t, err)
	require.NotEmpty(t, f.Operations, "%s lists no operations", clientFactsFile)
	return f
}

// allowedClientDifferences lists where openapi.yaml knowingly does not hold
// a fact of the newest client, each with the reason. Patterns are as in
// allowedDifferences.
var allowedClientDifferences = []facts.Allowance{}

// TestDriftTestsFailWhenAFactIsRemoved removes one fact at a time from the
// facts of openapi.yaml and checks that the drift tests, allow-lists
// applied, name it: a document that loses a published or a client fact
// cannot pass.
func TestDriftTestsFailWhenAFactIsRemoved(t *testing.T) {
	published, client := loadPublishedFacts(t), loadClientFacts(t)
	for _, tc := range []struct {
		name   string
		remove func(f *facts.Facts)
		// want is the start of the path an unexplained difference names.
		want string
	}{
		{"a client operation", func(f *facts.Facts) { delete(f.Operations, "POST /agent/runs/{runId}/followups") },
			`operations["POST /agent/runs/{runId}/followups"]`},
		{"a client field", func(f *facts.Facts) { delete(f.Schemas["RunItem"].Properties, "run_time") },
			`schemas.RunItem.properties.run_time`},
		{"a client filter", func(f *facts.Facts) { delete(f.Operations["GET /agent/runs"].Parameters, "query metadata") },
			`operations["GET /agent/runs"].parameters["query metadata"]`},
		{"a client enum value", func(f *facts.Facts) {
			s := f.Schemas["RunSourceType"]
			s.Enum = s.Enum[1:] // "API" sorts first
		}, `schemas.RunSourceType.enum`},
		{"a public operation", func(f *facts.Facts) {
			f.Operations["GET /agent/conversations/{conversationId}/redirect"].Security = []string{"bearerAuth"}
		}, `operations["GET /agent/conversations/{conversationId}/redirect"].security`},
		{"a published field", func(f *facts.Facts) { delete(f.Schemas["RunItem"].Properties, "session_link") },
			`schemas.RunItem.properties.session_link`},
		{"a published required field", func(f *facts.Facts) {
			s := f.Schemas["RunItem"]
			s.Required = slices.DeleteFunc(slices.Clone(s.Required), func(n string) bool { return n == "title" })
		}, `schemas.RunItem.required`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ours, err := facts.Extract(Document)
			require.NoError(t, err)
			tc.remove(ours)
			diffs, err := facts.Diff(published, ours)
			require.NoError(t, err)
			unexplained, _ := facts.Filter(diffs, allowedDifferences)
			gaps, _ := facts.Filter(facts.Holds(client, ours), allowedClientDifferences)
			var named []string
			for _, d := range append(unexplained, gaps...) {
				named = append(named, d.Path)
			}
			assert.True(t, slices.ContainsFunc(named, func(p string) bool { return strings.HasPrefix(p, tc.want) }),
				"removing %s went unnoticed; the drift tests named %v", tc.name, named)
		})
	}
}
