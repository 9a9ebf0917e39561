package clientcheck

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An answer judged once and counted again and again is counted as
// judging it each time: the same counts and breaks as AnswerValue, a
// Reset between included.
func TestAJudgementCountsAsAnswerValue(t *testing.T) {
	versions, err := Load()
	require.NoError(t, err)
	judged, valued := NewTally(versions), NewTally(versions)
	answers := []string{
		`{"run_id":"r1","state":"DONE","created_at":1}`,
		`{"run_id":"r1","state":"QUEUED","task_id":"r1","title":"t","prompt":"p","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}`,
	}
	judgements := map[string]Judgement{}
	for round := range 3 {
		for _, body := range answers {
			var v any
			require.NoError(t, json.Unmarshal([]byte(body), &v))
			j, ok := judgements[body]
			if !ok {
				j = judged.Judge("GET", "/agent/runs/r1", 200, v)
				judgements[body] = j
			}
			judged.Count(j)
			valued.AnswerValue("GET", "/agent/runs/r1", 200, v)
		}
		// The same counts; the first breaks are as many (which five of
		// more an answer shows first follows the order Judge walks its
		// members in, which Go does not fix).
		want, got := valued.Counts(), judged.Counts()
		require.Len(t, got, len(want))
		for i := range want {
			assert.Equal(t, want[i].Checked, got[i].Checked, "round %d %s", round, want[i].Version)
			assert.Equal(t, want[i].Broken, got[i].Broken, "round %d %s", round, want[i].Version)
			assert.Len(t, got[i].First, len(want[i].First), "round %d %s", round, want[i].Version)
		}
		if round == 1 {
			judged.Reset()
			valued.Reset()
		}
	}
	broken := 0
	for _, c := range judged.Counts() {
		broken += c.Broken
	}
	assert.Positive(t, broken, "some version breaks on the first answer")
}
