package mockserver

import (
	"context"
	"errors"
	"io"
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
		// A guarded connection carries one request at a time (the mock
		// speaks HTTP/1 only), so the slot lives on the connection; else
		// on a copy of the request, which costs a few hundred bytes each.
		sl := connSlot(r.Context(), slots)
		if sl == nil {
			sl = &slot{slots: slots}
			r = r.WithContext(context.WithValue(r.Context(), slotKey{}, sl))
		}
		if !sl.take() {
			writeProblem(w, r, errBusy())
			return
		}
		defer sl.release()
		next.ServeHTTP(w, r)
	})
}

func errBusy() *apiError {
	return &apiError{code: codeUnavailable, retryAfter: time.Second,
		detail: "the mock is answering as many requests as it is allowed to at once; try again shortly"}
}

// A request's in-flight slot is held while the mock works on it, not while
// it waits on someone: a request waiting on a delay fault gives its slot
// back (it costs a goroutine and a connection, no work and little memory),
// and so does one whose body is still arriving, until the body is whole.
// So clients delaying their own requests or trickling bodies cannot lock
// other mock sessions and the control API out.
type slot struct {
	mu    sync.Mutex
	held  bool
	slots chan struct{}
}

type slotKey struct{}

// take holds a slot if one is free.
func (s *slot) take() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held {
		return true
	}
	select {
	case s.slots <- struct{}{}:
		s.held = true
	default:
	}
	return s.held
}

func (s *slot) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held {
		<-s.slots
		s.held = false
	}
}

// connSlot is the slot of the guarded connection ctx's request came on,
// drawing on slots; nil if it came on another.
func connSlot(ctx context.Context, slots chan struct{}) *slot {
	g, ok := ctx.Value(connKey{}).(*guardedConn)
	if !ok {
		return nil
	}
	g.inFlight.mu.Lock()
	g.inFlight.slots = slots
	g.inFlight.mu.Unlock()
	return &g.inFlight
}

// slotOf is the request's in-flight slot, nil if the limiter never saw it.
func slotOf(ctx context.Context) *slot {
	if s, ok := ctx.Value(slotKey{}).(*slot); ok {
		return s
	}
	if g, ok := ctx.Value(connKey{}).(*guardedConn); ok {
		g.inFlight.mu.Lock()
		defer g.inFlight.mu.Unlock()
		if g.inFlight.slots != nil {
			return &g.inFlight
		}
	}
	return nil
}

// leaveInFlight gives the request's in-flight slot back early, if it holds one.
func leaveInFlight(ctx context.Context) {
	if s := slotOf(ctx); s != nil {
		s.release()
	}
}

// reenterInFlight takes an in-flight slot again for a request that left
// its own, reporting false if none is free; a request the limiter never saw
// needs none.
func reenterInFlight(ctx context.Context) bool {
	s := slotOf(ctx)
	return s == nil || s.take()
}

// byteBudget bounds the bytes of request bodies the mock holds at once.
// Bodies being received hold no in-flight slot, so this is what bounds
// their memory: a body draws on the budget as its bytes arrive (never ahead
// of them, so a declared length costs nothing until it is sent) and gives
// them back when its request ends.
type byteBudget struct {
	mu   sync.Mutex
	left int64
	size int64
}

func newByteBudget(size int64) *byteBudget { return &byteBudget{left: size, size: size} }

func (b *byteBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.left {
		return false
	}
	b.left -= n
	return true
}

func (b *byteBudget) give(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.left += n
}

// errOverBudget ends the reading of a body the budget has no room for.
var errOverBudget = errors.New("over the body budget")

// budgetedReader draws on a budget for every byte it reads.
type budgetedReader struct {
	r      io.Reader
	budget *byteBudget
	held   int64
}

func (br *budgetedReader) Read(p []byte) (int, error) {
	n, err := br.r.Read(p)
	if n > 0 {
		if !br.budget.take(int64(n)) {
			return 0, errOverBudget
		}
		br.held += int64(n)
	}
	return n, err
}

// bodiesAtOnce sizes the default body budget: as many whole bodies as the
// default --max-inflight lets in at once.
const bodiesAtOnce = 256
