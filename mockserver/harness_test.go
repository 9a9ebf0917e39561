package mockserver_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/agentruns/agentruns/internal/syncbuf"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/openapi"
	"github.com/stretchr/testify/require"
)

// serve puts an existing mock (or a handler wrapping one) behind a real HTTP
// server, with the same checking client newMock gives; for tests that need
// the *Server itself, e.g. to save it.
func serve(t testing.TB, h http.Handler) *client {
	t.Helper()
	// As agentruns-mock serves: on a guarded listener, each connection
	// known to its requests.
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = mockserver.GuardListener(srv.Listener)
	srv.Config.ConnContext = mockserver.ConnContext
	srv.Start()
	t.Cleanup(srv.Close)
	return &client{t: t, base: srv.URL, key: "wk-mock-alice", validator: checkingValidator(t)}
}

// onBothListeners runs test with each of serve and servePlain: what the
// mock keeps per connection when it can (limit.go) must hold either way.
func onBothListeners(t *testing.T, test func(*testing.T, func(testing.TB, http.Handler) *client)) {
	t.Run("guarded", func(t *testing.T) { test(t, serve) })
	t.Run("plain", func(t *testing.T) { test(t, servePlain) })
}

// servePlain serves h as a program embedding the mock might: a plain
// listener.
func servePlain(t testing.TB, h http.Handler) *client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &client{t: t, base: srv.URL, key: "wk-mock-alice", validator: checkingValidator(t)}
}

// testValidator is the validator the tests check answers with, built once:
// compiling the document's schemas is the slowest part of starting a mock,
// several seconds under the race detector, and a validator is immutable and
// safe for concurrent use. It is the tests' own, apart from the one inside
// the mock.
var testValidator = sync.OnceValues(openapi.NewValidator)

func checkingValidator(t testing.TB) *openapi.Validator {
	t.Helper()
	v, err := testValidator()
	require.NoError(t, err)
	return v
}

// on is the same client reporting to t, so a subtest's failure stops only
// the subtest.
func (c *client) on(t testing.TB) *client { cc := *c; cc.t = t; return &cc }

// worker is t for a goroutine a test starts. t.FailNow (and so require)
// may only be called from the test's own goroutine; through a worker, a
// failed check is reported with t's goroutine-safe Fail and ends only the
// goroutine it happened in.
type worker struct{ testing.TB }

func (w worker) FailNow()                       { w.TB.Fail(); runtime.Goexit() }
func (w worker) Fatal(args ...any)              { w.TB.Error(args...); runtime.Goexit() }
func (w worker) Fatalf(format string, a ...any) { w.TB.Errorf(format, a...); runtime.Goexit() }

// fakeWall is a wall clock a test moves by hand, so real-mode clocks are
// deterministic.
type fakeWall struct {
	mu  sync.Mutex
	now time.Time
}

func (w *fakeWall) Now() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now
}

func (w *fakeWall) Add(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.now = w.now.Add(d)
}

// debugLogger logs everything, as text, into buf.
func debugLogger(buf *syncbuf.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func newServer(t testing.TB, opts mockserver.Options) *mockserver.Server {
	t.Helper()
	if opts.ClockMode == "" {
		opts.ClockMode = mockserver.VirtualClock
		opts.ClockStart = clockStart
	}
	s, err := mockserver.New(opts)
	require.NoError(t, err)
	return s
}
