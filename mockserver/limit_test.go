package mockserver_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Over the cap, a request is refused at once with a retryable 429 problem
// and Retry-After; once a slot frees, requests go through again.
func TestLimitInFlightRefusesOverTheCap(t *testing.T) {
	onBothListeners(t, testLimitInFlightRefusesOverTheCap)
}

func testLimitInFlightRefusesOverTheCap(t *testing.T, serve func(testing.TB, http.Handler) *client) {
	s := newServer(t, mockserver.Options{})
	// Requests to /hold stay in the handler until released: the limiter is
	// tested on its own, whatever the mock does with delays (they give their
	// slot back while they wait).
	entered, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			entered <- struct{}{}
			<-release
			w.WriteHeader(http.StatusNoContent)
			return
		}
		s.ServeHTTP(w, r)
	})
	c := serve(t, mockserver.LimitInFlight(h, 2))
	held := make(chan int, 2)
	for range 2 {
		go func() {
			resp, err := http.Get(c.base + "/hold")
			if err != nil {
				held <- 0
				return
			}
			resp.Body.Close()
			held <- resp.StatusCode
		}()
		<-entered
	}
	// Refused at once, not queued: the two held requests are released only
	// once this one is answered, so a limiter that queued it would answer
	// it never. The bound below only ends such a test; it measures nothing.
	answered := make(chan response, 1)
	go func() {
		cw := c.on(worker{t})
		answered <- cw.do("POST", "/agent/run", map[string]string{"prompt": "x"})
	}()
	var r response
	select {
	case r = <-answered:
	case <-time.After(time.Minute):
		close(release)
		t.Fatal("the request over the cap was queued behind the held ones, not refused")
	}
	require.Equal(t, http.StatusTooManyRequests, r.status, "%s", r.body)
	p := r.problem(t)
	assert.Equal(t, mockserver.ProblemTypeBase+"resource_unavailable", p.Type)
	assert.True(t, p.Retryable)
	assert.Equal(t, "1", r.header.Get("Retry-After"))
	assert.Equal(t, http.StatusTooManyRequests, c.do("GET", "/__mock/info", nil).status, "the control API shares the cap")
	close(release)
	assert.Equal(t, []int{http.StatusNoContent, http.StatusNoContent}, []int{<-held, <-held}, "the requests in flight were answered")
	assert.Equal(t, http.StatusOK, c.do("GET", "/agent/runs", nil).status, "the slots are free again")
}

func TestLimitInFlightZeroIsNoLimit(t *testing.T) {
	s := newServer(t, mockserver.Options{})
	assert.Equal(t, http.Handler(s), mockserver.LimitInFlight(s, 0))
}
