package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/agentruns/agentruns/mockserver"
)

// errUsage means the command line was wrong and flag has already said why;
// a usageError says why itself. Both exit 2, as the contract runner's do.
var errUsage = errors.New("usage")

type usageError struct{ error }

func (usageError) Is(target error) bool { return target == errUsage }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

const usageHead = `Usage: agentruns-mock [flags]
       agentruns-mock proxy URL [flags]   (the same as --proxy URL)

Serves a stateful mock of the Cloud Agent Runs API on --addr: the runs
created through it exist afterwards and move through their states on its
clock, and tests steer it through the control API under /__mock/ (see
docs/control-api.md). With --proxy URL it is instead a validating proxy in
front of a real server (docs/proxy.md). Every flag is in docs/mock-flags.md.

Exit status: 0 stopped cleanly, 1 it could not start or serve (with --proxy:
also the traffic broke the contract), 2 the command line is wrong.

Flags:
`

// proxyVerb reads "agentruns-mock proxy URL [flags]" as "--proxy URL
// [flags]": the proxy is a job of its own, and the verb says so on the
// command line as other API mocking tools' "proxy" commands do, while the
// flag keeps every existing script working. Only the first argument is a
// verb: anywhere else "proxy" is what it always was, an unexpected
// argument.
func proxyVerb(args []string) ([]string, error) {
	if len(args) == 0 || args[0] != "proxy" {
		return args, nil
	}
	if len(args) < 2 || strings.HasPrefix(args[1], "-") {
		return nil, usagef("proxy needs the URL of the server it stands in front of: agentruns-mock proxy URL [flags]")
	}
	return append([]string{"--proxy", args[1]}, args[2:]...), nil
}

// usageHint is what a wrong command line ends with, rather than every flag.
const usageHint = "run agentruns-mock --help for every flag"

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	args, err := proxyVerb(args)
	if err != nil {
		return c, err
	}
	fs := flag.NewFlagSet("agentruns-mock", flag.ContinueOnError)
	// flag's own message goes through flagMessage; it calls Usage after it
	// on every error, and the whole list is printed only when asked for
	// (below).
	var said strings.Builder
	fs.SetOutput(&said)
	fs.Usage = func() {}
	fs.StringVar(&c.addr, "addr", "127.0.0.1:4010", "`address` to listen on, host:port")
	fs.StringVar(&c.fixturesDir, "fixtures", "", "`folder` with principals.json, runs.json and fates.json (default: the embedded fixtures)")
	c.opts.ClockMode = mockserver.RealClock
	fs.Var((*clockValue)(&c.opts.ClockMode), "clock", "clock `mode`: real (wall time) or virtual (moves only through the control API)")
	c.opts.Step = 2 * time.Second
	fs.Var(&durationValue{&c.opts.Step, mockserver.MaxStep}, "step", "time a new run spends in each state before its final one, a `duration` such as 2s (at most 8760h)")
	fs.Var(&durationValue{&c.opts.Queued, mockserver.MaxStep}, "queued", "time in QUEUED, a `duration` (default: --step)")
	fs.Var(&durationValue{&c.opts.Pending, mockserver.MaxStep}, "pending", "time in PENDING, a `duration` (default: --step)")
	fs.Var(&durationValue{&c.opts.Claimed, mockserver.MaxStep}, "claimed", "time in CLAIMED, a `duration` (default: --step)")
	fs.Var(&durationValue{&c.opts.InProgress, mockserver.MaxStep}, "inprogress", "time in INPROGRESS, a `duration` (default: --step)")
	fs.Var(&durationValue{&c.opts.LinkLifetime, mockserver.MaxLinkLifetime}, "link-lifetime", "how long every signed download link works, a `duration` of at most 168h: artifacts, handoff files, transcripts (default: an hour for downloads, ten minutes for transcripts)")
	fs.BoolVar(&c.opts.StrictAuth, "strict-auth", false, "accept only the API keys of the fixtures' principals")
	fs.StringVar(&c.opts.ControlToken, "control-token", "", "bearer `token` the control API requires (default: none)")
	fs.BoolVar(&c.opts.DisableControl, "no-control", false, "turn the control API off")
	fs.Var((*countValue)(&c.opts.MaxRuns), "max-runs", "most runs (a `number`) each team may create in one session, directly or by its schedules (fixture runs do not count; a reset makes room); more are refused with a non-retryable 429 (0: no cap)")
	c.opts.MaxBodyBytes = 1 << 20
	fs.Var((*sizeValue)(&c.opts.MaxBodyBytes), "max-body", "largest request body in `bytes`, 1 or more; larger ones get 413")
	c.opts.BodyTimeout = 10 * time.Second
	fs.Var(&durationValue{&c.opts.BodyTimeout, 0}, "body-timeout", "time a request body has to arrive once the mock reads it, a `duration`; slower ones get 400")
	fs.BoolVar(&c.quiet, "quiet", false, "do not log each request")
	c.hardening = mockserver.DefaultHardening
	fs.Var((*countValue)(&c.hardening.MaxInFlight), "max-inflight", "most requests (a `number`) answered at once; more get 429 with Retry-After (0: no cap)")
	fs.StringVar(&c.stateFile, "state-file", "", "keep the runs in this `file` across restarts: load it at start, save it periodically and on shutdown (default: memory only)")
	c.saveEvery = 5 * time.Second
	fs.Var(&durationValue{&c.saveEvery, 0}, "save-every", "with --state-file, how often to save when something changed, a `duration` (0: only on shutdown)")
	fs.Var(&durationValue{&c.hardening.ShutdownTimeout, 0}, "shutdown-timeout", "how long a graceful shutdown waits for requests in flight, a `duration`")
	fs.Var(&durationValue{&c.hardening.ReadHeaderTimeout, 0}, "read-header-timeout", "time a client has to send a request's headers, a `duration`")
	fs.Var(&durationValue{&c.hardening.ReadTimeout, 0}, "read-timeout", "time a client has to send a whole request, a `duration`")
	fs.Var(&durationValue{&c.hardening.WriteTimeout, 0}, "write-timeout", "time to answer a request, from the end of its headers, a `duration` (above the longest delay fault, 2m)")
	fs.Var(&durationValue{&c.hardening.IdleTimeout, 0}, "idle-timeout", "how long an idle keep-alive connection stays open, a `duration`")
	fs.StringVar(&c.healthcheck, "healthcheck", "", "do not serve: ask the server at this `URL` (e.g. http://127.0.0.1:4010/openapi.yaml) once and exit 0 if it answers 200, 1 if not (the image's health check)")
	c.proxy.flags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fmt.Fprint(stderr, usageHead)
			fs.PrintDefaults()
			return c, err
		}
		fmt.Fprint(stderr, flagMessage(said.String()))
		fmt.Fprintln(stderr, usageHint)
		return c, errUsage
	}
	if fs.NArg() > 0 {
		return c, usagef("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if err := c.proxy.check(fs); err != nil {
		return c, usageError{err}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case c.opts.DisableControl && set["control-token"]:
		return c, usagef("--no-control turns the control API off, so --control-token would protect nothing: give one or the other")
	case set["save-every"] && c.stateFile == "":
		return c, usagef("--save-every says how often to write --state-file, which is not given")
	}
	if err := checkAddr(c.addr); err != nil {
		return c, usagef("--addr %q: %v", c.addr, err)
	}
	if c.healthcheck != "" {
		if u, err := url.Parse(c.healthcheck); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, usagef("--healthcheck %q: want the URL of a running server, such as http://127.0.0.1:4010/openapi.yaml", c.healthcheck)
		}
	}
	return c, nil
}

// checkAddr refuses an address no listener can take, with the form
// wanted: what net.Listen would say is no command-line message ("missing
// port in address") and would exit 1 as if the port were taken.
func checkAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("want host:port, such as 127.0.0.1:4010, or :4010 for every interface")
	}
	if n, err := strconv.Atoi(port); port != "" && (err != nil || n < 0 || n > 65535) {
		return errors.New("want a port from 0 to 65535, such as 127.0.0.1:4010")
	}
	return nil
}

// flagMessage is the flag package's message with the flags named as the
// docs and --help name them (--step, not -step), after the command's name.
func flagMessage(msg string) string {
	msg = flagName.ReplaceAllString(msg, "$1 --$2")
	if strings.HasPrefix(msg, "invalid boolean value") { // flag says only "parse error"
		msg = strings.Replace(msg, ": parse error", ": want true or false, or the flag alone", 1)
	}
	return "agentruns-mock: " + msg
}

var flagName = regexp.MustCompile(`(flag|defined:|argument:|for) -([a-z])`)

// durationValue is a duration flag that says what it wants where the flag
// package would answer "parse error", refuses a negative one, and one
// above max (0: no bound).
type durationValue struct {
	d   *time.Duration
	max time.Duration
}

// String is "" for 0, so the usage shows no "(default 0s)" beside a flag
// whose unset value means something else.
func (v *durationValue) String() string {
	if v == nil || v.d == nil || *v.d == 0 {
		return ""
	}
	return v.d.String()
}

func (v *durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return errors.New("want a duration with its unit, such as 2s, 500ms or 1m30s")
	case d < 0:
		return errors.New("want a duration of 0 or more, such as 2s")
	case v.max > 0 && d > v.max:
		return fmt.Errorf("want a duration of at most %s", strings.TrimSuffix(strings.TrimSuffix(v.max.String(), "0s"), "0m"))
	}
	*v.d = d
	return nil
}

// countValue is a whole number of things, 0 or more.
type countValue int

func (v *countValue) String() string { return strconv.Itoa(int(*v)) }

func (v *countValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return errors.New("want a whole number, 0 or more, such as 100")
	}
	*v = countValue(n)
	return nil
}

// sizeValue is a size in bytes, 1 or more.
type sizeValue int64

func (v *sizeValue) String() string { return strconv.FormatInt(int64(*v), 10) }

func (v *sizeValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return errors.New("want a number of bytes, 1 or more, such as 1048576")
	}
	*v = sizeValue(n)
	return nil
}

// clockValue is the clock mode, checked as it is read.
type clockValue mockserver.ClockMode

func (v *clockValue) String() string { return string(*v) }

func (v *clockValue) Set(s string) error {
	switch m := mockserver.ClockMode(s); m {
	case mockserver.RealClock, mockserver.VirtualClock:
		*v = clockValue(m)
		return nil
	}
	return errors.New("want real or virtual")
}
