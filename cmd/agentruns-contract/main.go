// Command agentruns-contract runs the contract suite of the Cloud Agent Runs
// API against a server and exits 0 only when every selected scenario passed.
//
// With no --base-url (and no OZ_API_BASE_URL) it starts the bundled mock in
// the same process and verifies it:
//
//	go run ./cmd/agentruns-contract
//	go run ./cmd/agentruns-contract --base-url https://api.example.com/api/v1 --api-key "$WARP_API_KEY" --read-only
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/steps"
)

// errFailed means the suite ran and some scenario failed.
var errFailed = errors.New("the server does not meet the contract")

// errUsage means the command line was wrong; flag has already said why.
var errUsage = errors.New("usage")

// errHelp means the usage was asked for and shown.
var errHelp = errors.New("help")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil, errors.Is(err, errHelp):
	case errors.Is(err, errUsage):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "agentruns-contract:", err)
		os.Exit(1)
	}
}

// options are the command line.
type options struct {
	baseURL     string
	apiKey      string
	tags        string
	readOnly    bool
	timeout     time.Duration
	format      string
	output      string
	concurrency int
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("agentruns-contract", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: agentruns-contract [flags]

Runs the Cloud Agent Runs API contract suite against a server. Without a base
URL it starts the bundled mock in this process and verifies it.

Flags:
`)
		fs.PrintDefaults()
	}
	// The environment fills these in after parsing, so that -help never
	// prints a key.
	fs.StringVar(&o.baseURL, "base-url", "", "`URL` of the API under test, e.g. https://app.warp.dev/api/v1 (default $OZ_API_BASE_URL; neither: the bundled mock)")
	fs.StringVar(&o.apiKey, "api-key", "", "API `key` sent as a bearer token (default $WARP_API_KEY)")
	fs.StringVar(&o.tags, "tags", "", "godog tag `expression` selecting scenarios, e.g. '~@slow' or '@mock-control && ~@creates-runs'")
	fs.BoolVar(&o.readOnly, "read-only", false, "leave out the scenarios that create runs (@creates-runs)")
	fs.DurationVar(&o.timeout, "timeout", steps.DefaultTimeout, "longest wait for one run to progress")
	fs.StringVar(&o.format, "format", steps.DefaultFormat, "output `format`: pretty, progress, junit or cucumber")
	fs.StringVar(&o.output, "output", "", "`file` for the output (junit and cucumber; default stdout)")
	fs.IntVar(&o.concurrency, "concurrency", steps.DefaultConcurrency, "scenarios run at once")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, errHelp
		}
		return o, errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		fs.Usage()
		return o, errUsage
	}
	if o.baseURL == "" {
		o.baseURL = os.Getenv("OZ_API_BASE_URL")
	}
	if o.apiKey == "" {
		o.apiKey = os.Getenv("WARP_API_KEY")
	}
	return o, nil
}

// run is the whole command, testable: it parses args, starts the bundled mock
// when no server is given, runs the suite and summarises it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	cfg := steps.Config{
		BaseURL:     o.baseURL,
		APIKey:      o.apiKey,
		Tags:        o.tags,
		ReadOnly:    o.readOnly,
		Timeout:     o.timeout,
		Format:      o.format,
		Output:      stdout,
		NoColors:    !isTerminal(stdout),
		Concurrency: o.concurrency,
		Log:         stderr,
		HTTPClient:  &http.Client{Timeout: 60 * time.Second},
	}
	if o.output != "" {
		f, err := os.Create(o.output)
		if err != nil {
			return err
		}
		defer f.Close()
		cfg.Output, cfg.NoColors = f, true
	}
	if cfg.BaseURL == "" {
		url, stop, err := startMock()
		if err != nil {
			return fmt.Errorf("starting the bundled mock: %w", err)
		}
		defer stop()
		cfg.BaseURL = url
		if cfg.APIKey == "" {
			cfg.APIKey = "wk-mock-alice"
		}
		fmt.Fprintf(stderr, "no --base-url: verifying the bundled mock at %s\n", url)
	} else if cfg.APIKey == "" {
		return errors.New("no API key: pass --api-key or set WARP_API_KEY")
	}

	res, err := steps.Run(ctx, cfg)
	summarise(stderr, res, cfg)
	if err != nil {
		return err
	}
	if !res.Passed() {
		return errFailed
	}
	return nil
}

// summarise tells people what ran, what failed and what was skipped.
func summarise(w io.Writer, res steps.Result, cfg steps.Config) {
	passed, failed, skipped := res.Count()
	mode := "polling the server"
	if res.Control {
		mode = "driving the mock's control API"
	}
	fmt.Fprintf(w, "\n%d scenarios: %d passed, %d failed, %d skipped in %s (%s)\n",
		len(res.Scenarios), passed, failed, skipped, res.Duration.Round(time.Millisecond), mode)
	if cfg.ReadOnly {
		fmt.Fprintln(w, "read-only: scenarios tagged @creates-runs were left out")
	}
	for _, s := range res.Skipped() {
		fmt.Fprintf(w, "SKIPPED %s: %s (%s)\n", s.Feature, s.Name, s.Message)
	}
	for _, s := range res.Failed() {
		fmt.Fprintf(w, "FAILED  %s: %s\n        %s\n", s.Feature, s.Name, strings.ReplaceAll(s.Message, "\n", "\n        "))
	}
}

// startMock serves the bundled mock on a free local port.
func startMock() (url string, stop func(), err error) {
	m, err := mockserver.New(mockserver.Options{})
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}
	return "http://" + ln.Addr().String(), stop, nil
}

// isTerminal reports whether w is a character device, to colour only there.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
