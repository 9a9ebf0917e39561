// Command agentruns-mock serves the stateful Cloud Agent Runs API mock.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/mockserver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "agentruns-mock:", err)
		os.Exit(1)
	}
}

// config is what the flags say.
type config struct {
	addr        string
	fixturesDir string
	quiet       bool
	opts        mockserver.Options
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("agentruns-mock", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:4010", "address to listen on")
	fs.StringVar(&c.fixturesDir, "fixtures", "", "folder with principals.json, runs.json and fates.json (default: the embedded fixtures)")
	clock := fs.String("clock", "real", "clock mode: real (wall time) or virtual (moves only through the control API)")
	fs.DurationVar(&c.opts.Step, "step", 2*time.Second, "time a new run spends in each state before its final one")
	fs.DurationVar(&c.opts.Queued, "queued", 0, "time in QUEUED (default: --step)")
	fs.DurationVar(&c.opts.Pending, "pending", 0, "time in PENDING (default: --step)")
	fs.DurationVar(&c.opts.Claimed, "claimed", 0, "time in CLAIMED (default: --step)")
	fs.DurationVar(&c.opts.InProgress, "inprogress", 0, "time in INPROGRESS (default: --step)")
	fs.BoolVar(&c.opts.StrictAuth, "strict-auth", false, "accept only the API keys of the fixtures' principals")
	fs.StringVar(&c.opts.ControlToken, "control-token", "", "bearer token the control API requires (default: none)")
	fs.BoolVar(&c.opts.DisableControl, "no-control", false, "turn the control API off")
	fs.IntVar(&c.opts.MaxRuns, "max-runs", 0, "most runs one session may hold; more are refused with 429 (0: no cap)")
	fs.Int64Var(&c.opts.MaxBodyBytes, "max-body", 1<<20, "largest request body in bytes; larger ones get 413")
	fs.BoolVar(&c.quiet, "quiet", false, "do not log each request")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	c.opts.ClockMode = mockserver.ClockMode(*clock)
	return c, nil
}

// run serves until ctx ends, then shuts down gracefully. ready, when not nil,
// learns the address once the server listens.
func run(ctx context.Context, args []string, stderr io.Writer, ready func(addr string)) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	level := slog.LevelInfo
	if c.quiet {
		level = slog.LevelWarn
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	c.opts.Logger = log
	if c.fixturesDir != "" {
		set, err := fixtures.Load(os.DirFS(c.fixturesDir))
		if err != nil {
			return err
		}
		c.opts.Fixtures = set
	}
	handler, err := mockserver.New(c.opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler: handler,
		// A slow or stalled client cannot hold a connection for long.
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Warn("agentruns mock listening", "url", "http://"+ln.Addr().String(), "clock", c.opts.ClockMode)
	if ready != nil {
		ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	log.Warn("shutting down")
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
