package mockserver_test

import (
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Many clients creating, listing, getting and cancelling at once lose and
// duplicate nothing.
func TestConcurrentClientsLoseNothing(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: 50 * time.Millisecond, ClockMode: mockserver.RealClock})
	const workers, each = 8, 15
	var mu sync.Mutex
	created := map[string]bool{}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c := c.on(worker{t})
			for i := 0; i < each; i++ {
				id := c.create(map[string]any{"prompt": fmt.Sprintf("worker %d run %d", w, i), "config": map[string]any{"name": "load"}}).RunID
				mu.Lock()
				assert.False(t, created[id], "duplicate id %s", id)
				created[id] = true
				mu.Unlock()
				assert.Equal(t, id, c.get(id).RunID)
				if i%3 == 0 {
					r := c.do("POST", "/agent/runs/"+id+"/cancel", nil)
					assert.Contains(t, []int{http.StatusOK, http.StatusConflict, http.StatusBadRequest}, r.status, "%s", r.body)
				}
				c.list("name=load&limit=7")
			}
		}(w)
	}
	wg.Wait()
	seen := map[string]int{}
	q := "name=load&limit=13&sort_by=created_at" // an order running runs do not change
	page := c.list(q)
	for {
		for _, r := range page.Runs {
			seen[r.RunID]++
		}
		if !page.PageInfo.HasNextPage {
			break
		}
		page = c.list(q + "&cursor=" + url.QueryEscape(page.PageInfo.NextCursor))
	}
	require.Len(t, created, workers*each)
	assert.Len(t, seen, workers*each)
	for id := range created {
		assert.Equal(t, 1, seen[id], "run %s listed once", id)
	}
}
