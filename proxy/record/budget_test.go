package record_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/proxy/record"
)

// The recorder keeps what it saw of the schedules, environments, agents
// and models whole (a member the document does not declare becomes the
// fixture's extra), so a server answering large ones would grow the proxy
// without end: past HeldBytes of them together, a new one is left out,
// counted once however often it is seen, and said in the summary that
// POST /__mock/proxy/record answers and the proxy logs.
func TestTheRecorderKeepsAtMostHeldBytesAndSaysWhatItLeftOut(t *testing.T) {
	dir := t.TempDir()
	rec := record.New(dir, 0)
	// Eight of these fit in HeldBytes, the ninth does not.
	long := strings.Repeat("a", record.HeldBytes/8-4096)
	agent := func(i int) map[string]any {
		return map[string]any{"uid": fmt.Sprintf("agent-%d", i), "name": fmt.Sprintf("Agent %d", i),
			"created_at": time.Now().Add(-time.Hour).Format(time.RFC3339), "description": long}
	}
	for i := range 10 {
		rec.Observe(seen("GET", "/agent/identities", map[string]any{"agents": []any{agent(i)}}))
	}
	rec.Observe(seen("GET", "/agent/identities", map[string]any{"agents": []any{agent(9)}})) // seen again
	// Nor is there room left for a large environment, or a large look at
	// an agent kept (the look before stays).
	rec.Observe(seen("GET", "/agent/environments", map[string]any{"environments": []any{
		map[string]any{"uid": "env-large", "config": map[string]any{"name": "large", "description": long}}}}))
	wider := agent(0)
	wider["description"] = long + long
	wider["name"] = "Renamed"
	rec.Observe(seen("GET", "/agent/identities", map[string]any{"agents": []any{wider}}))

	written, err := rec.Write()
	require.NoError(t, err)
	sum := written.(record.Summary)
	assert.Equal(t, 8, sum.Identities)
	assert.Equal(t, 2, sum.DroppedAgents, "agent-8 and agent-9, each once")
	assert.Equal(t, 0, sum.Environments)
	assert.Equal(t, 1, sum.DroppedEnvironments)
	assert.Equal(t, "seen but not recorded, the recorder's memory being bounded: 1 environment(s), 2 agent(s) past 16 MiB of their JSON together", sum.LeftOut)

	set, err := fixtures.Load(os.DirFS(dir))
	require.NoError(t, err)
	require.Len(t, set.Identities, 8)
	assert.Equal(t, "Agent 0", set.Identities[0].Name, "the look before the one too large to keep")
}

// A recording that kept everything it saw says nothing left out.
func TestAWholeRecordingSaysNothingLeftOut(t *testing.T) {
	rec := record.New(t.TempDir(), 0)
	rec.Observe(seen("GET", "/agent/schedules", map[string]any{"schedules": []any{schedule("sch_1", "Nightly", true)}}))
	written, err := rec.Write()
	require.NoError(t, err)
	sum := written.(record.Summary)
	assert.Equal(t, 1, sum.Schedules)
	assert.Empty(t, sum.LeftOut)
	assert.Zero(t, sum.Dropped+sum.DroppedSchedules+sum.DroppedEnvironments+sum.DroppedAgents+sum.DroppedModels)
}
