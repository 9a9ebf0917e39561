// Command agentruns-contract runs the contract suite of the Cloud Agent Runs
// API against a server and exits 0 only when no selected scenario failed and
// at least one passed.
//
// With no --base-url (and no OZ_API_BASE_URL) it starts the bundled mock in
// the same process and verifies it. It says which server it tests, and why,
// before anything runs; a server named only by OZ_API_BASE_URL is tested
// read-only unless --allow-writes is given (docs/contract-suite-runner.md):
//
//	go run ./cmd/agentruns-contract
//	go run ./cmd/agentruns-contract --base-url https://api.example.com/api/v1 --api-key "$WARP_API_KEY" --read-only
//
// The command is the command line around package runner: its flags
// (flags.go), the server it tests (target.go), then runner.Run and
// runner.Summarise, and the exit status (here).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentruns/agentruns/report"
	"github.com/agentruns/agentruns/runner"
	"github.com/agentruns/agentruns/suiteconfig"
)

// errFailed means the suite ran and some scenario failed.
var errFailed = errors.New("the server does not meet the contract")

// errClientBroken means every scenario passed but a client version that
// --fail-on-client promised breaks.
var errClientBroken = errors.New("an answer breaks a client version named by --fail-on-client")

// errNothingChecked means every selected scenario was skipped: nothing
// failed, and nothing was checked either, which must not pass for green.
var errNothingChecked = errors.New("nothing was checked: every selected scenario was skipped")

// errUsage means the command line was wrong; flag has already said why.
var errUsage = errors.New("usage")

// usageError is a wrong command line that flag did not catch, saying why;
// it exits 2 like errUsage.
type usageError struct{ error }

func (usageError) Is(target error) bool { return target == errUsage }

// errHelp means the usage was asked for and shown.
var errHelp = errors.New("help")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	finished := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			// The first Ctrl-C stops the suite, which then cancels its runs;
			// from now on a second one ends the process at once.
			stop()
			fmt.Fprintln(os.Stderr, "\nagentruns-contract: interrupted: cancelling the runs this suite started (Ctrl-C again to stop at once)")
		case <-finished:
		}
	}()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	close(finished)
	stop()
	if err != nil && !errors.Is(err, errHelp) && err != errUsage {
		fmt.Fprintln(os.Stderr, "agentruns-contract:", err) // flag has said what errUsage alone means
	}
	os.Exit(exitStatus(err))
}

// The exit statuses, as docs/contract-suite-runner.md lists them.
const (
	exitPassed         = 0
	exitFailed         = 1 // a scenario failed, or the server cannot be tested
	exitUsage          = 2
	exitNothingChecked = 3
	exitInterrupted    = 130 // as a shell reports a command stopped by Ctrl-C
)

// exitStatus is the status the command ends with after run returned err.
func exitStatus(err error) int {
	switch {
	case err == nil, errors.Is(err, errHelp):
		return exitPassed
	case errors.Is(err, errUsage):
		return exitUsage
	case errors.Is(err, errNothingChecked):
		return exitNothingChecked
	case errors.Is(err, runner.ErrInterrupted):
		return exitInterrupted
	}
	return exitFailed
}

// run is the whole command, testable: it parses args, starts the bundled mock
// when no server is given, says what it tests, runs the suite and
// summarises it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "docs" {
		return runDocs(args[1:], stdout, stderr) // docs.go
	}
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if o.explore.set() {
		return runExplore(ctx, o, stdout, stderr) // explore.go
	}
	cfg := suiteconfig.Config{
		BaseURL:         o.baseURL,
		APIKey:          o.apiKey,
		OtherAPIKey:     o.otherAPIKey,
		FailingPrompt:   o.failPrompt,
		Prompt:          o.prompt,
		MaxRuns:         o.maxRuns,
		MaxRunsAtOnce:   o.maxAtOnce,
		WaitForTicks:    o.waitForTicks,
		IdentityPlan:    o.identityPlan,
		Tags:            o.tags,
		ReadOnly:        o.readOnly,
		Timeout:         o.timeout,
		PollInterval:    o.pollInterval,
		Output:          stdout,
		NoColors:        !isTerminal(stdout),
		Concurrency:     o.concurrency,
		Seed:            o.seed,
		NoControl:       o.noControl,
		ExactTimestamps: o.exactStamps,
		FailOnClient:    o.failOnClient,
		NewestClient:    o.newestClient,
		Log:             io.Discard, // the summary says why scenarios were skipped
		HTTPClient:      &http.Client{Timeout: 60 * time.Second},
	}
	if o.output != "" {
		f, err := os.Create(o.output)
		if err != nil {
			return err
		}
		defer f.Close()
		cfg.Output, cfg.NoColors = f, true
	}
	if o.output != "" || (o.format != "pretty" && o.format != "progress") {
		// The report is not on the terminal, or not for people: the
		// scenarios are marked on stderr as they end.
		cfg.Progress = stderr
	}
	if f, _ := findFormat(o.format); f.new != nil {
		cfg.Report = f.new(cfg.Output, report.Options{Colors: !cfg.NoColors})
	} else {
		cfg.Format = f.name
	}

	target, keyFrom, stop, err := chooseTarget(o, &cfg)
	if err != nil {
		return err
	}
	defer stop()
	if err := cfg.Check(); err != nil {
		return usageError{err}
	}
	if cfg.Seed == 0 {
		cfg.Seed = runner.NewSeed()
	}
	fmt.Fprintf(stderr, "testing %s\n", target)
	fmt.Fprintf(stderr, "key from %s; scenarios in random order, seed %d (--seed %d replays it), %d at a time\n",
		keyFrom, cfg.Seed, cfg.Seed, cfg.Concurrency)
	if cfg.Progress != nil {
		fmt.Fprintf(stderr, "writing the %s report to %s; a mark per scenario as it ends (. passed, F failed, S skipped, I interrupted, U undefined):\n", o.format, reportPlace(o.output))
	}

	res, err := runner.Run(ctx, cfg)
	var pre *runner.PreflightError
	if errors.As(err, &pre) {
		return err // one sentence, before any scenario
	}
	runner.Summarise(stderr, res, cfg)
	if err != nil {
		return err
	}
	if _, failed, _ := res.Count(); failed == 0 && len(res.Interrupted()) == 0 && len(res.ClientsFailing()) > 0 {
		return errClientBroken
	}
	if !res.Passed() {
		return errFailed
	}
	if res.NothingChecked() {
		return errNothingChecked
	}
	return nil
}
