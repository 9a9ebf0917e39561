// Command agentruns-mock serves the stateful Cloud Agent Runs API mock.
package main

import (
	"bufio"
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
	err := run(ctx, os.Args[1:], os.Stderr, nil)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp): // --help asked for the usage, which is printed
	case errors.Is(err, errUsage):
		if err != errUsage { // flag has not said why, nor pointed at --help
			fmt.Fprintln(os.Stderr, "agentruns-mock:", err)
			fmt.Fprintln(os.Stderr, usageHint)
		}
		os.Exit(2)
	default:
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

	proxy proxyConfig // --proxy and its flags (proxy.go)

	stateFile string
	saveEvery time.Duration
	// healthcheck: instead of serving, ask a running server whether it
	// answers (the image's HEALTHCHECK, which has no curl to run).
	healthcheck string
	// hardening caps the requests answered at once and bounds the time a
	// client has for each part of an exchange (mockserver.Serve).
	hardening mockserver.Hardening
}

// controlState says who may use the control API (/__mock/ and the
// X-Mock-* headers), for the start-up line: by default anyone who can
// reach the port.
func controlState(o mockserver.Options) string {
	switch {
	case o.DisableControl:
		return "off"
	case o.ControlToken != "":
		return "token"
	}
	return "open"
}

// dashboardURL is the dashboard's address, or what keeps it closed.
func dashboardURL(url string, o mockserver.Options) string {
	if o.DisableControl {
		return "off (--no-control)"
	}
	return url + "/__mock/ui/"
}

// run serves until ctx ends, then shuts down gracefully: requests in flight
// are finished and, with --state-file, the state is saved. ready, when not
// nil, learns the address once the server listens.
func run(ctx context.Context, args []string, stderr io.Writer, ready func(addr string)) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if c.healthcheck != "" {
		return healthcheck(ctx, c.healthcheck)
	}
	// The mock's own lines (listening, shutting down, saved) are INFO and
	// always shown; --quiet silences only the line per request.
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	c.opts.Logger = log
	if c.quiet {
		c.opts.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if c.proxy.upstream != "" {
		return runProxy(ctx, c, log, ready)
	}
	if c.fixturesDir != "" {
		if fi, err := os.Stat(c.fixturesDir); err != nil || !fi.IsDir() {
			return fmt.Errorf("--fixtures %s: no such folder (it should hold principals.json, runs.json and fates.json)", c.fixturesDir)
		}
		set, err := fixtures.Load(os.DirFS(c.fixturesDir))
		if err != nil {
			return fmt.Errorf("--fixtures %s: %w", c.fixturesDir, err)
		}
		c.opts.Fixtures = set
	}
	var stateFile *os.File
	if c.stateFile != "" {
		if stateFile, err = openStateFile(c.stateFile, log); err != nil {
			return err
		}
	}
	if stateFile != nil {
		c.opts.State = bufio.NewReader(stateFile)
	}
	handler, err := mockserver.New(c.opts)
	if stateFile != nil {
		stateFile.Close()
	}
	var stateErr *mockserver.StateError
	switch {
	case errors.As(err, &stateErr):
		return loadError(c.stateFile, stateErr.Err)
	case err != nil && c.fixturesDir != "":
		return fmt.Errorf("--fixtures %s: %w", c.fixturesDir, err)
	case err != nil:
		return err
	}
	var store *stateStore
	if c.stateFile != "" {
		if store, err = newStateStore(c.stateFile, handler, log, stateFile != nil); err != nil {
			return err
		}
	}
	saverCtx, stopSaver := context.WithCancel(context.Background())
	saverDone := make(chan struct{})
	go func() {
		defer close(saverDone)
		if store != nil && c.saveEvery > 0 {
			store.loop(saverCtx, c.saveEvery)
		}
	}()
	serveErr := serve(ctx, c, handler, log, ready, []any{"clock", c.opts.ClockMode, "state_file", c.stateFile})
	stopSaver()
	<-saverDone
	if store != nil {
		if err := store.save(); err != nil {
			return errors.Join(serveErr, fmt.Errorf("saving the state: %w", err))
		}
		log.Info("state saved", "state_file", c.stateFile)
	}
	return serveErr
}

// serve listens on c.addr and serves handler, hardened, until ctx ends,
// then shuts down gracefully (mockserver.Serve). ready, when not nil,
// learns the address once the server listens; attrs go on the line that
// says so.
func serve(ctx context.Context, c config, handler http.Handler, log *slog.Logger, ready func(addr string), attrs []any) error {
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String()
	if c.proxy.upstream != "" {
		log.Info("agentruns proxy listening", append([]any{"url", url, "dashboard", proxyDashboardURL(url, c.opts), "control", controlState(c.opts)}, attrs...)...)
	} else {
		log.Info("agentruns mock listening", append([]any{"url", url, "dashboard", dashboardURL(url, c.opts), "control", controlState(c.opts)}, attrs...)...)
	}
	if ready != nil {
		ready(ln.Addr().String())
	}
	return mockserver.Serve(ctx, ln, handler, c.hardening, log)
}

// healthcheck asks url once and succeeds when it answers 200 within five
// seconds.
func healthcheck(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("--healthcheck %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("--healthcheck: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("--healthcheck %s: answered %s, want 200 OK", url, resp.Status)
	}
	return nil
}
