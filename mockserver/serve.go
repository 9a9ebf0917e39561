package mockserver

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Hardening is what keeps one caller from holding the mock for everyone
// else: a cap on the requests answered at once, and the time a client has
// for each part of an exchange.
type Hardening struct {
	// MaxInFlight is the most requests answered at once; more get 429
	// with Retry-After (LimitInFlight). 0 means no cap.
	MaxInFlight int
	// The timeouts of the HTTP server, so a slow or stalled client cannot
	// hold a connection for long (net/http's fields of the same names).
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// ShutdownTimeout is how long a graceful shutdown waits for the
	// requests in flight before it cuts them off.
	ShutdownTimeout time.Duration
}

// DefaultHardening is the mock's defaults, the flags' of agentruns-mock.
// WriteTimeout is above the longest delay a fault may ask for (2m).
var DefaultHardening = Hardening{
	MaxInFlight:       256,
	ReadHeaderTimeout: 5 * time.Second,
	ReadTimeout:       30 * time.Second,
	WriteTimeout:      3 * time.Minute,
	IdleTimeout:       2 * time.Minute,
	ShutdownTimeout:   10 * time.Second,
}

// Serve serves h on ln, hardened, until ctx ends; then it shuts down
// gracefully: the requests in flight are finished, for at most
// ShutdownTimeout, and cut off after. It is the one way both commands run
// the mock (and the validating proxy): whatever serves it gets the same
// guards. ln is guarded (GuardListener), so even net/http's own refusals
// are problem+json; log takes net/http's complaints and the shutdown's.
// Serve returns nil after a shutdown, or why serving stopped.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, hd Hardening, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	srv := &http.Server{
		Handler:           LimitInFlight(h, hd.MaxInFlight),
		ReadHeaderTimeout: hd.ReadHeaderTimeout,
		ReadTimeout:       hd.ReadTimeout,
		WriteTimeout:      hd.WriteTimeout,
		IdleTimeout:       hd.IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		ConnContext:       ConnContext,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(GuardListener(ln)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), hd.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		// Requests still running past the timeout are cut off.
		log.Warn("requests still running at the shutdown timeout were cut off", "err", err)
		_ = srv.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
