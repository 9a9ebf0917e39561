// Package proxy is a validating proxy for the Cloud Agent Runs API: it
// forwards every request to a real server unchanged, with the caller's own
// credentials, and checks each request and answer against the OpenAPI
// document and the rules every server keeps (package rules), off the
// request's path, so a caller waits for the upstream and little else.
//
// What it finds is counted per rule and kept (bounded) for its own control
// API under /__mock/proxy, which also serves the mock's dashboard, the runs
// the traffic showed, and the JUnit and HTML reports. Nothing under
// /__mock/proxy is ever forwarded; every other path is, the mock's own
// control API included when the upstream is a mock, so the contract suite
// can drive a mock through it.
package proxy

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"runtime"
	"strings"
	"time"

	"github.com/agentruns/agentruns/clientcheck"
	"github.com/agentruns/agentruns/drift"
	"github.com/agentruns/agentruns/openapi"
	"github.com/agentruns/agentruns/rules"
)

// Observer is given every exchange the proxy checked, one at a time, in the
// order their answers completed (the proxy then checks on one worker): the
// recorder (package proxy/record) is one.
type Observer interface {
	Observe(rules.Exchange)
}

// Options configure a Proxy.
type Options struct {
	// Upstream is the server to forward to; required. Its path is the
	// prefix every forwarded path is put under.
	Upstream string
	// Validator checks requests and answers against the document it was
	// built from, whatever Document says. When nil, Document says which
	// document judges (document.go).
	Validator *openapi.Validator
	// Document is what the upstream is held to when Validator is nil:
	// ServedSurface ("" too), PublishedDocument, NewestDocument, or the
	// path of an OpenAPI document.
	Document Document
	// ControlToken, when set, must be sent as a bearer token to
	// /__mock/proxy; DisableControl turns /__mock/proxy off (it is then
	// 404, never forwarded).
	ControlToken   string
	DisableControl bool
	// Observer, when set, sees every checked exchange (the recorder).
	Observer Observer
	// MaxBodyBytes is the largest body (request or answer) the proxy
	// checks; larger ones pass through unchecked. 0 means 4 MiB.
	MaxBodyBytes int
	// QueueBytes bounds the bodies waiting to be checked; past it, answers
	// pass through unchecked and are counted so. 0 means 256 MiB.
	QueueBytes int64
	// Backpressure makes a caller whose exchange finds the queues full
	// wait for room (the end of its answer is held back) instead of its
	// exchange passing unchecked.
	Backpressure bool
	// Workers is how many goroutines check exchanges; 0 means one per
	// core (GOMAXPROCS). With an Observer there is one.
	Workers int
	// Limits bound the memory of the rules across answers.
	Limits rules.Limits
	// Drift is the document drift is found against; nil means the file
	// Document names, or else the embedded document (the one the Validator
	// checks by default).
	Drift *drift.Doc
	// Transport reaches the upstream; nil means a transport tuned for one
	// host (many idle connections, no compression added).
	Transport http.RoundTripper
	// Logger gets one line per request (never a header); nil logs nothing.
	Logger *slog.Logger

	// beforeCheck, set by this package's tests, is called on the worker
	// just before it checks an exchange: to hold the workers back, or to
	// see the order they check in.
	beforeCheck func(*pending)
	// decoded, set by this package's tests, is called each time the
	// checker decodes a body, with "request" or "answer": each is decoded
	// once, whoever reads it.
	decoded func(x *pending, part string)
}

// Proxy is an http.Handler. Close it to stop its checker.
type Proxy struct {
	upstream *url.URL
	opts     Options
	rp       *httputil.ReverseProxy
	check    *checker
	found    *findings
	runs     *seenRuns          // for the dashboard
	clients  *clientcheck.Tally // clients.go
	salt     []byte             // makes a caller's id useless outside this process
	log      *slog.Logger
	// overlayExtends is the document the overlay is written against: the
	// file Document names, or the project's (OverlayExtends).
	overlayExtends string
}

// New checks the options and starts the checker.
func New(opts Options) (*Proxy, error) {
	u, err := ParseUpstream(opts.Upstream)
	if err != nil {
		return nil, err
	}
	judge, err := newJudge(opts.Validator, opts.Document)
	if err != nil {
		return nil, err
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 4 << 20
	}
	if opts.QueueBytes <= 0 {
		opts.QueueBytes = 256 << 20
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.Transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns, t.MaxIdleConnsPerHost = 512, 512
		// A client that asked for no compression gets none; one that did
		// gets the upstream's answer as it is.
		t.DisableCompression = true
		opts.Transport = t
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(discard{})
	}
	clients, err := newClientTally()
	if err != nil {
		return nil, err
	}
	overlayExtends := OverlayExtends
	switch {
	case opts.Drift != nil:
	case judge.file != nil:
		// Drift is what the upstream does beyond the document it is held
		// to: an overlay applied to a copy named here is no drift.
		if opts.Drift, err = drift.New(judge.file); err != nil {
			return nil, fmt.Errorf("--proxy-document %s: %w", opts.Document, err)
		}
		overlayExtends = string(opts.Document)
	default:
		if opts.Drift, err = drift.Embedded(); err != nil {
			return nil, err
		}
	}
	p := &Proxy{upstream: u, opts: opts, found: newFindings(time.Now()), runs: newSeenRuns(), clients: clients, salt: make([]byte, 32), log: log,
		overlayExtends: overlayExtends}
	_, _ = rand.Read(p.salt)
	p.check = newChecker(judge, rules.NewMemory(opts.Limits), p.found, p.runs, opts.Observer, opts.QueueBytes, opts.Workers, opts.Backpressure)
	p.check.beforeCheck, p.check.decoded = opts.beforeCheck, opts.decoded
	p.check.clients = clients
	p.check.maxBody = opts.MaxBodyBytes
	p.check.drift, p.check.ledger, p.check.profile = opts.Drift, drift.NewLedger(0), drift.NewProfile()
	p.rp = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      opts.Transport,
		ModifyResponse: p.capture,
		ErrorHandler:   p.upstreamFailed,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return p, nil
}

// ParseUpstream checks an upstream URL: absolute, http or https, no query.
// The proxy refuses to start without one: it never guesses where to send a
// caller's credentials.
func ParseUpstream(raw string) (*url.URL, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, errors.New("the proxy needs the upstream server's URL, e.g. https://staging.example.com/api/v1")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse's own words ("first path segment in URL cannot
		// contain colon" for host:port) do not say what is wanted.
		return nil, fmt.Errorf("upstream %q: give an absolute http:// or https:// URL, e.g. https://staging.example.com/api/v1 (%v)", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("upstream %q: give an absolute http:// or https:// URL", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("upstream %q: give the base URL only, without credentials, query or fragment", u.Redacted())
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// Upstream is the URL requests are forwarded to.
func (p *Proxy) Upstream() string { return p.upstream.String() }

// Close stops the checker once everything queued is checked.
func (p *Proxy) Close() { p.check.close() }

// Drain waits until every answer completed so far has been checked (and
// seen by the Observer), or ctx ends.
func (p *Proxy) Drain(ctx context.Context) error { return p.check.drain(ctx) }

// Summary is what was found so far (GET /__mock/proxy).
func (p *Proxy) Summary() Summary {
	p.check.settle(time.Now().Add(-unexplainedGrace))
	s := p.found.summary(p.upstream.String())
	s.Clients = cleanCounts(p.clients.Counts())
	s.Drift = p.Drift()
	s.Document = p.check.judge.describe()
	return s
}

// ControlPrefix is the proxy's own control API; nothing under it is
// forwarded.
const ControlPrefix = "/__mock/proxy"

// versionPrefix is where the service serves the API; the proxy's rules see
// paths without it.
const versionPrefix = "/api/v1"

// ServeHTTP answers the proxy's control API or forwards the request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if path == "/favicon.ico" {
		// A browser on the proxy's pages asks for it; no API serves one,
		// and the upstream is not bothered for the page's sake.
		serveIcon(w)
		return
	}
	if path == ControlPrefix || strings.HasPrefix(path, ControlPrefix+"/") ||
		strings.HasPrefix(path, versionPrefix+ControlPrefix) {
		p.control(w, r)
		return
	}
	if seg, ok := dotSegment(r.URL); ok {
		// The upstream (or a server in front of it) would resolve it,
		// reaching a path outside its base path: /api/v1/../../x is /x.
		problem(w, http.StatusBadRequest, "Bad request",
			fmt.Sprintf("the path has a %q segment: the proxy forwards only paths under the upstream's base path, and resolves none", seg))
		return
	}
	p.forward(w, r)
}

// dotSegment finds a "." or ".." segment in u's path, written as it is or
// percent-encoded (%2e%2e), or one that hides a slash (..%2f).
func dotSegment(u *url.URL) (string, bool) {
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		dec, err := url.PathUnescape(seg)
		if err != nil {
			continue // the validator and the upstream refuse it
		}
		for _, part := range strings.FieldsFunc(dec, func(r rune) bool { return r == '/' || r == '\\' }) {
			if part == "." || part == ".." {
				return seg, true
			}
		}
		if dec == "." || dec == ".." {
			return seg, true
		}
	}
	return "", false
}

type discard struct{}

func (discard) Enabled(context.Context, slog.Level) bool  { return false }
func (discard) Handle(context.Context, slog.Record) error { return nil }
func (d discard) WithAttrs([]slog.Attr) slog.Handler      { return d }
func (d discard) WithGroup(string) slog.Handler           { return d }

// callerOf is an id for the request's credentials that cannot be turned
// back into them: a salted digest, "" without credentials.
func (p *Proxy) callerOf(r *http.Request) string {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return ""
	}
	h := sha256.New()
	h.Write(p.salt)
	h.Write([]byte(auth))
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// isTimeout tells a timeout from other upstream failures, for the 504.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// icon is the dashboard's mark, for a browser asking for /favicon.ico.
const icon = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><path d="M8 1l7 7-7 7-7-7z" fill="#4a6fa5"/></svg>`

func serveIcon(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "max-age=86400")
	_, _ = w.Write([]byte(icon))
}
