package mockserver

import (
	"net/http"
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
			defer func() { <-slots }()
			next.ServeHTTP(w, r)
		default:
			writeProblem(w, r, &apiError{code: codeUnavailable, retryAfter: time.Second,
				detail: "the mock is answering as many requests as it is allowed to at once; try again shortly"})
		}
	})
}
