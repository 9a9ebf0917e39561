package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/proxy"
	"github.com/agentruns/agentruns/proxy/record"
)

// The proxy mode: --proxy URL puts the validating proxy (package proxy) in
// place of the mock. See docs/proxy.md.

type proxyConfig struct {
	upstream  string
	recordDir string
	junit     string
	html      string
	// drift, overlay and profile are where to write what the traffic
	// showed that the document does not declare, the overlay that
	// declares it, and the shape of the answers (docs/proxy.md, "Drift").
	drift   string
	overlay string
	profile string
	// backpressure: a full check queue slows the caller down instead of
	// letting its exchange pass unchecked.
	backpressure bool
	// document is what the upstream is held to: the surface it serves
	// (default), the published document, the newest client's, or a file.
	document proxy.Document
}

func (p *proxyConfig) flags(fs *flag.FlagSet) {
	fs.StringVar(&p.upstream, "proxy", "", "forward every request to the server at this `URL` (e.g. https://staging.example.com/api/v1) and check its traffic against the contract, instead of serving the mock")
	fs.StringVar(&p.recordDir, "record", "", "with --proxy, write what passes through as a fixtures `folder` here, on exit and on POST /__mock/proxy/record")
	fs.StringVar(&p.junit, "proxy-junit", "", "with --proxy, write the violations found as a JUnit report to this `file` on exit")
	fs.BoolVar(&p.backpressure, "proxy-backpressure", false, "with --proxy, when the check queues are full hold back the end of an answer until there is room, instead of passing the exchange unchecked")
	fs.StringVar(&p.html, "proxy-html", "", "with --proxy, write the violations found as an HTML report to this `file` on exit")
	fs.StringVar(&p.drift, "proxy-drift", "", "with --proxy, write what the traffic showed that the OpenAPI document does not declare, as JSON, to this `file` on exit")
	fs.StringVar(&p.overlay, "proxy-overlay", "", "with --proxy, write the OpenAPI Overlay that declares what the traffic showed to this `file` on exit")
	fs.Var((*documentValue)(&p.document), "proxy-document", "with --proxy, the `document` the upstream is held to: served (the published document until the upstream serves one of the newest client's own operations, then the newest client's; the default), published, newest, or an OpenAPI document's file")
	fs.StringVar(&p.profile, "proxy-profile", "", "with --proxy, write the shape of the answers seen to this `file` on exit, for agentruns-drift compare")
}

// check refuses what makes no sense: the proxy's flags without --proxy (or
// with an empty one: the proxy never guesses where to send credentials),
// and the mock's own world flags with it.
func (p *proxyConfig) check(fs *flag.FlagSet) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["proxy"] {
		if _, err := proxy.ParseUpstream(p.upstream); err != nil {
			return fmt.Errorf("--proxy: %w", err)
		}
		for _, name := range []string{"fixtures", "state-file", "clock", "step", "queued", "pending", "claimed", "inprogress", "strict-auth", "max-runs"} {
			if set[name] {
				return fmt.Errorf("--%s shapes the mock's own runs; with --proxy the upstream serves them", name)
			}
		}
		return nil
	}
	for _, name := range []string{"record", "proxy-junit", "proxy-html", "proxy-backpressure", "proxy-drift", "proxy-overlay", "proxy-profile", "proxy-document"} {
		if set[name] {
			return fmt.Errorf("--%s needs --proxy URL: the upstream server to forward to", name)
		}
	}
	return nil
}

// runProxy serves the proxy until ctx ends, then writes the reports and the
// recording. It fails when the traffic broke the contract, so a CI job
// running its tests through the proxy fails with them.
func runProxy(ctx context.Context, c config, log *slog.Logger, ready func(addr string)) error {
	opts := proxy.Options{
		Upstream: c.proxy.upstream, ControlToken: c.opts.ControlToken, DisableControl: c.opts.DisableControl,
		Logger: c.opts.Logger, Backpressure: c.proxy.backpressure, Document: c.proxy.document,
	}
	var rec *record.Recorder
	if c.proxy.recordDir != "" {
		rec = record.New(c.proxy.recordDir, 0)
		opts.Observer = rec
	}
	p, err := proxy.New(opts)
	if err != nil {
		return err
	}
	defer p.Close()
	serveErr := serve(ctx, c, p, log, ready, []any{"upstream", p.Upstream(), "record", c.proxy.recordDir})

	drainCtx, cancel := context.WithTimeout(context.Background(), c.hardening.ShutdownTimeout)
	defer cancel()
	errs := []error{serveErr}
	if err := p.Drain(drainCtx); err != nil {
		errs = append(errs, fmt.Errorf("checking the last answers: %w", err))
	}
	if c.proxy.junit != "" {
		errs = append(errs, writeFile(c.proxy.junit, p.WriteJUnit))
	}
	if c.proxy.html != "" {
		errs = append(errs, writeFile(c.proxy.html, p.WriteHTML))
	}
	for _, out := range []struct {
		file  string
		write func(io.Writer) error
	}{{c.proxy.drift, p.WriteDrift}, {c.proxy.overlay, p.WriteOverlay}, {c.proxy.profile, p.WriteProfile}} {
		if out.file != "" {
			errs = append(errs, writeFile(out.file, out.write))
		}
	}
	if rec != nil {
		if sum, err := rec.Write(); err != nil {
			errs = append(errs, fmt.Errorf("--record %s: %w", c.proxy.recordDir, err))
		} else {
			// As POST /__mock/proxy/record answers it: the names the docs use.
			summary, _ := json.Marshal(sum)
			log.Info("recorded", "summary", string(summary))
			if s, ok := sum.(record.Summary); ok && s.LeftOut != "" {
				log.Warn("the recording is not whole", "left_out", s.LeftOut)
			}
		}
	}
	s := p.Summary()
	args := []any{"document", s.Document, "exchanges", s.Exchanges, "checked", s.Checked, "violations", s.Violations, "requests_off_document", s.OffDocument,
		"drift", s.Drift.Distinct}
	if files := reportFiles(c.proxy); len(files) > 0 {
		args = append(args, "reports", strings.Join(files, " and "))
	}
	log.Info("proxy checked the traffic", args...)
	if s.Violations > 0 {
		errs = append(errs, brokeTheContract(s, c.proxy))
	}
	return errors.Join(errs...)
}

// proxyDashboardURL is the proxy's dashboard's address, or what keeps it
// closed.
func proxyDashboardURL(url string, o mockserver.Options) string {
	if o.DisableControl {
		return "off (--no-control)"
	}
	return url + proxy.ControlPrefix + "/ui/"
}

// reportFiles are the reports the proxy writes at exit, as given.
func reportFiles(c proxyConfig) []string {
	var files []string
	for _, f := range []string{c.junit, c.html} {
		if f != "" {
			files = append(files, f)
		}
	}
	return files
}

// brokeTheContract is the exit error of traffic that broke the contract:
// where its reports were written, or, without one, the first violation
// and the flags that keep them all (the control API is gone by now).
func brokeTheContract(s proxy.Summary, c proxyConfig) error {
	if files := reportFiles(c); len(files) > 0 {
		return fmt.Errorf("the upstream broke the contract %d times; %s say where", s.Violations, strings.Join(files, " and "))
	}
	first := ""
	if len(s.Latest) > 0 {
		which := "the first"
		if len(s.Latest) < s.Violations {
			which = "the earliest kept"
		}
		v := s.Latest[0]
		first = fmt.Sprintf(" (%s: %s → %d: %s, %s: expected %s, got %s)", which, v.Request, v.Status, v.Rule, v.Field, v.Expected, v.Got)
	}
	return fmt.Errorf("the upstream broke the contract %d times%s; give --proxy-junit FILE or --proxy-html FILE to keep a report of every one", s.Violations, first)
}

// writeFile writes a report whole or not at all.
func writeFile(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".report-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	_ = os.Chmod(tmp.Name(), 0o644)
	return os.Rename(tmp.Name(), path)
}

// documentValue is --proxy-document, checked as it is read.
type documentValue proxy.Document

func (v *documentValue) String() string { return string(*v) }

func (v *documentValue) Set(s string) error {
	d, err := proxy.ParseDocument(s)
	if err != nil {
		return err
	}
	*v = documentValue(d)
	return nil
}
