package steps

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// "Each run exactly once" holds for walks in creation order only: a server
// that follows the document may show a run twice, or not at all, in an
// order by a key that moves while runs progress. The step refuses to make
// the claim anywhere else, so no feature can make it by mistake.
func TestEachRunOnceIsClaimedInCreationOrderOnly(t *testing.T) {
	for _, q := range []string{"name=x&limit=2", "name=x&sort_by=updated_at&limit=2", "sort_by=title"} {
		err := (&walk{pages: []*listing{{query: q}}, mine: &roster{}}).sawEachOnce()
		require.Error(t, err, q)
		assert.Contains(t, err.Error(), "sort_by=created_at", q)
	}
	assert.NoError(t, (&walk{pages: []*listing{{query: "name=x&sort_by=created_at&limit=2"}}, mine: &roster{}}).sawEachOnce())
}
