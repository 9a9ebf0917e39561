package clientgate_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/clientcheck"
	"github.com/agentruns/agentruns/clientgate"
	"github.com/agentruns/agentruns/openapi"
)

const (
	alpha8 = "typescript-1.0.0-alpha.8"
	newest = "typescript-1.4.0-alpha.6"
	python = "python-0.11.0"
)

// edit changes the project's document in one place, failing the test if
// the text to change is not there exactly once.
func edit(t *testing.T, from, to string) []byte {
	t.Helper()
	doc := string(openapi.Document)
	require.Equal(t, 1, strings.Count(doc, from), "the document holds %q once", from)
	return []byte(strings.Replace(doc, from, to, 1))
}

func compare(t *testing.T, revision []byte) ([]clientgate.Change, []string) {
	t.Helper()
	versions, err := clientcheck.Load()
	require.NoError(t, err)
	changes, err := clientgate.Compare(openapi.Document, revision, versions)
	require.NoError(t, err)
	return changes, clientgate.BrokenVersions(changes, versions)
}

func TestTheSameDocumentBreaksNoVersion(t *testing.T) {
	changes, broken := compare(t, openapi.Document)
	assert.Empty(t, changes)
	assert.Empty(t, broken)
}

// A field removed from the answers breaks exactly the versions that
// require it: has_next_page only the oldest TypeScript client requires
// (the newer one and the Python client read it as optional); every
// version requires a run's title.
func TestAFieldRemovedBreaksTheVersionsThatRequireIt(t *testing.T) {
	for _, tc := range []struct {
		name     string
		revision []byte
		want     []string
		why      string
	}{
		{"has_next_page", edit(t, `      required: [has_next_page]
      properties:
        has_next_page:
          type: boolean
          description: True when more items follow this page.
`, `      properties:
`), []string{alpha8}, "requires page_info.has_next_page in GET /agent/runs"},
		{"title", edit(t, "required: [run_id, task_id, title, state, prompt, created_at, updated_at]",
			"required: [run_id, task_id, state, prompt, created_at, updated_at]"),
			[]string{python, alpha8, newest}, "requires title in GET /agent/runs/{runId}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changes, broken := compare(t, tc.revision)
			assert.Equal(t, tc.want, broken)
			var whys []string
			for _, c := range changes {
				assert.Contains(t, c.ID, "response-")
				for _, b := range c.Breaks {
					whys = append(whys, b.Why)
				}
			}
			assert.Contains(t, whys, tc.why)
		})
	}
}

// A value added to a set breaks the versions that read the field with a
// set lacking it; an operation removed breaks those that call it.
func TestOtherBreakingChangesNameTheirVersions(t *testing.T) {
	t.Run("a run state added", func(t *testing.T) {
		_, broken := compare(t, edit(t, "        - CANCELLED\n\n    RunSourceType:", "        - CANCELLED\n        - PAUSED\n\n    RunSourceType:"))
		assert.Equal(t, []string{python, alpha8, newest}, broken)
	})
	t.Run("an operation only the newest client calls, removed", func(t *testing.T) {
		doc := string(openapi.Document)
		start := strings.Index(doc, "\n  /agent/runs/{runId}/followups:\n")
		require.Positive(t, start)
		end := strings.Index(doc[start+1:], "\n  /") + start + 1
		changes, broken := compare(t, []byte(doc[:start]+doc[end:]))
		assert.Equal(t, []string{newest}, broken)
		require.NotEmpty(t, changes)
		assert.Equal(t, "calls POST /agent/runs/{runId}/followups", changes[0].Breaks[0].Why)
	})
	t.Run("an optional field no version reads, removed", func(t *testing.T) {
		changes, broken := compare(t, edit(t, `        next_cursor:
          type: string
          description: >-
            Pass this back as the `+"`cursor`"+` query parameter to get the next
            page. Opaque: its content may change without notice.
`, ""))
		// next_cursor is optional for every version: its absence breaks none.
		assert.Empty(t, broken, "%v", changes)
	})
}

// A field that may now be null breaks the versions that read it as never
// null: the TypeScript clients declare session_link a string; the Python
// client reads every optional field as Optional, null included.
func TestAFieldMadeNullableBreaksTheVersionsThatNeverReadNull(t *testing.T) {
	doc := string(openapi.Document)
	at := strings.Index(doc, "\n    RunItem:")
	require.Positive(t, at)
	field := strings.Index(doc[at:], "\n        session_link:\n          type: string\n")
	require.Positive(t, field)
	i := at + field + len("\n        session_link:\n          type: ")
	revision := doc[:i] + "[string, \"null\"]" + doc[i+len("string"):]
	changes, broken := compare(t, []byte(revision))
	assert.Equal(t, []string{alpha8, newest}, broken, "%v", changes)
}
