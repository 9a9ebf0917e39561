package mockserver

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// LimitInFlight lets at most n requests into next at once and answers
// the rest at once with a retryable 429 problem and Retry-After, so a burst
// of clients (each holding up to a body's worth of memory, or a delay
// fault's worth of time) cannot pile up without bound. Refusing rather than
// queueing keeps memory flat and tells a client to back off, as the real
// service's gateway would. n <= 0 means no limit.
func LimitInFlight(next http.Handler, n int) http.Handler {
	if n <= 0 {
		return next
	}
	slots := make(chan struct{}, n)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
			sl := &slot{free: func() { <-slots }}
			defer sl.release()
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), slotKey{}, sl)))
		default:
			writeProblem(w, r, &apiError{code: codeUnavailable, retryAfter: time.Second,
				detail: "the mock is answering as many requests as it is allowed to at once; try again shortly"})
		}
	})
}

// A request waiting on a delay fault costs a goroutine and a connection, no
// work and little memory; it gives its in-flight slot back while it waits,
// so clients delaying their own requests cannot lock other mock sessions
// and the control API out.
type slot struct {
	once sync.Once
	free func()
}

type slotKey struct{}

func (s *slot) release() { s.once.Do(s.free) }

// leaveInFlight gives the request's in-flight slot back early, if it holds one.
func leaveInFlight(ctx context.Context) {
	if s, ok := ctx.Value(slotKey{}).(*slot); ok {
		s.release()
	}
}
