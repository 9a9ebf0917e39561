package refserver

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A team runs Capacity runs at once: a run created beyond it answers
// at_capacity: true and waits in QUEUED until one of the team's runs ends;
// another team's runs take none of its places.
func TestATeamRunsNoMoreThanItsCapacityAtOnce(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	pass := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	c := newClient(t, Options{Step: 10 * time.Second, Capacity: 2, Clock: clock})
	other := c
	other.key = OtherTeamKeyPrefix + "b"

	var ids []string
	for i := range 3 {
		status, _, doc, raw := c.do(http.MethodPost, "/agent/run", `{"prompt": "Say hello"}`)
		require.Equal(t, http.StatusOK, status, raw)
		assert.Equal(t, i == 2, doc["at_capacity"] == true, "run %d: %s", i+1, raw)
		ids = append(ids, doc["run_id"].(string))
	}
	status, _, doc, raw := other.do(http.MethodPost, "/agent/run", `{"prompt": "Say hello"}`)
	require.Equal(t, http.StatusOK, status, raw)
	assert.Nil(t, doc["at_capacity"], "another team's run waits for no place of the first team's")

	state := func(id string) string {
		_, _, doc, _ := c.do(http.MethodGet, "/agent/runs/"+id, "")
		return doc["state"].(string)
	}
	pass(35 * time.Second) // the first two work (a place from PENDING, 10 s in, to the end, 40 s in); the third waits its turn
	assert.Equal(t, "INPROGRESS", state(ids[0]))
	assert.Equal(t, "QUEUED", state(ids[2]))
	pass(10 * time.Second) // the first two ended: a place is free
	assert.True(t, isTerminal(state(ids[0])))
	assert.Equal(t, "PENDING", state(ids[2]))
}
