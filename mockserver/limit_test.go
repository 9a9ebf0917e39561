package mockserver_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Over the cap, a request is refused at once with a retryable 429 problem
// and Retry-After; once a slot frees, requests go through again.
func TestLimitInFlightRefusesOverTheCap(t *testing.T) {
	s := newServer(t, mockserver.Options{})
	c := serve(t, mockserver.LimitInFlight(s, 2))
	var wg sync.WaitGroup
	slow := make([]int, 2)
	for i := range slow {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A probe below may hold a slot for a moment and turn a slow
			// request away; it tries again until it is in.
			for slow[i] = http.StatusTooManyRequests; slow[i] == http.StatusTooManyRequests; {
				slow[i] = c.on(worker{t}).do("GET", "/agent/runs", nil, mockserver.FaultHeader, "delay=3s").status
			}
		}()
	}
	// Wait until both slow requests hold their slots.
	require.Eventually(t, func() bool {
		return c.do("GET", "/agent/runs", nil).status == http.StatusTooManyRequests
	}, 5*time.Second, 20*time.Millisecond)
	began := time.Now()
	r := c.do("POST", "/agent/run", map[string]string{"prompt": "x"})
	assert.Less(t, time.Since(began), time.Second, "refused at once, not queued")
	require.Equal(t, http.StatusTooManyRequests, r.status, "%s", r.body)
	p := r.problem(t)
	assert.Equal(t, mockserver.ProblemTypeBase+"resource_unavailable", p.Type)
	assert.True(t, p.Retryable)
	assert.Equal(t, "1", r.header.Get("Retry-After"))
	wg.Wait()
	assert.Equal(t, []int{http.StatusOK, http.StatusOK}, slow, "the requests in flight were answered")
	assert.Equal(t, http.StatusOK, c.do("GET", "/agent/runs", nil).status, "the slots are free again")
}

func TestLimitInFlightZeroIsNoLimit(t *testing.T) {
	s := newServer(t, mockserver.Options{})
	assert.Equal(t, http.Handler(s), mockserver.LimitInFlight(s, 0))
}
