package proxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Forwarding. The request goes out as it came (path under the upstream's
// base path, query, headers, body), except for what HTTP itself requires of
// a proxy: hop-by-hop headers dropped and the Host the upstream's. Request
// and answer bodies are copied aside as they stream through, up to
// MaxBodyBytes each; once the answer's last byte has gone to the caller the
// copy is queued for the checker.

// ObserverHeader marks a request made to look, not to test (the mock's
// dashboard sends it; the proxy's own page sends the upstream nothing). It
// is forwarded and checked like any other, but left out of the journal, as
// the mock does.
const ObserverHeader = "X-Mock-Observer"

// pending is one exchange on its way through.
type pending struct {
	method   string
	path     string // as the caller sent it, prefix included
	apiPath  string // without the version prefix
	rawQuery string
	query    url.Values
	header   http.Header
	session  string
	caller   string
	observer bool
	retry    *int
	sent     time.Time

	reqBody *capture

	status     int
	respHeader http.Header
	respBody   *capture
	received   time.Time
	once       sync.Once
}

type pendingKey struct{}

func (p *Proxy) forward(w http.ResponseWriter, r *http.Request) {
	x := &pending{
		// The method is a piece of the request line: kept as it is, it
		// would keep the whole line (a 60 KB path) alive in the journal.
		method: strings.Clone(r.Method), path: r.URL.Path, rawQuery: r.URL.RawQuery, query: r.URL.Query(),
		header: r.Header.Clone(), session: r.Header.Get("X-Mock-Session"), caller: p.callerOf(r),
		observer: r.Header.Get(ObserverHeader) != "", sent: time.Now(),
	}
	x.apiPath = x.path
	if rest, ok := strings.CutPrefix(x.path, versionPrefix); ok && strings.HasPrefix(rest, "/") {
		x.apiPath = rest
	}
	if v := r.Header.Get("X-Stainless-Retry-Count"); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			x.retry = &n
		}
	}
	if r.Body != nil && r.Body != http.NoBody {
		x.reqBody = &capture{limit: p.opts.MaxBodyBytes}
		r.Body = &teeBody{ReadCloser: r.Body, c: x.reqBody}
	}
	sw := &statusWriter{ResponseWriter: w}
	p.rp.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), pendingKey{}, x)))
	p.log.Info("request", "method", x.method, "path", redactPath(x.apiPath), "status", sw.status, "duration", time.Since(x.sent))
}

// rewrite points the outgoing request at the upstream. ReverseProxy drops
// the caller's X-Forwarded-* headers in this mode; they are put back, so
// the upstream sees what the caller sent.
func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	pr.SetURL(p.upstream)
	for _, h := range []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
		if v, ok := pr.In.Header[h]; ok {
			pr.Out.Header[h] = v
		}
	}
}

// capture starts copying the answer aside.
func (p *Proxy) capture(resp *http.Response) error {
	x, _ := resp.Request.Context().Value(pendingKey{}).(*pending)
	if x == nil {
		return nil
	}
	x.status, x.respHeader = resp.StatusCode, resp.Header.Clone()
	x.respBody = &capture{limit: p.opts.MaxBodyBytes}
	empty := resp.ContentLength == 0 || x.method == http.MethodHead
	resp.Body = &answerBody{ReadCloser: resp.Body, c: x.respBody, done: func(complete bool) {
		x.once.Do(func() {
			x.received = time.Now()
			p.finish(x, complete || empty)
		})
	}}
	return nil
}

// upstreamFailed answers for an upstream that did not answer: a 502 (504
// for a timeout) problem naming the upstream, never the request's
// credentials.
func (p *Proxy) upstreamFailed(w http.ResponseWriter, r *http.Request, err error) {
	x, _ := r.Context().Value(pendingKey{}).(*pending)
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		// The caller went away; there is no one to answer.
		p.found.upstreamFailed(x, 0, "the caller went away")
		return
	}
	status, title := http.StatusBadGateway, "Bad gateway"
	if isTimeout(err) {
		status, title = http.StatusGatewayTimeout, "Gateway timeout"
	}
	detail := redactText("the proxy could not reach the upstream " + p.upstream.String() + ": " + err.Error())
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	writeProblemBody(w, map[string]any{"type": "about:blank", "title": title, "status": status, "detail": detail})
	p.found.upstreamFailed(x, status, detail)
	p.log.Warn("upstream failed", "detail", detail)
}

// finish hands a completed exchange to the checker.
func (p *Proxy) finish(x *pending, complete bool) {
	if !complete {
		p.found.notChecked(x, "the caller went away before the answer's end")
		return
	}
	if x.reqBody != nil && x.reqBody.over || x.respBody.over {
		p.found.notChecked(x, "a body over the size the proxy checks")
		return
	}
	p.check.enqueue(x)
}

// capture keeps a copy of a body up to a limit.
type capture struct {
	buf   bytes.Buffer
	limit int
	over  bool
}

func (c *capture) write(b []byte) {
	if c.over {
		return
	}
	if c.buf.Len()+len(b) > c.limit {
		c.over = true
		c.buf = bytes.Buffer{}
		return
	}
	c.buf.Write(b)
}

func (c *capture) bytes() []byte {
	if c == nil {
		return nil
	}
	return c.buf.Bytes()
}

// teeBody copies a request body aside as the upstream reads it.
type teeBody struct {
	io.ReadCloser
	c *capture
}

func (t *teeBody) Read(b []byte) (int, error) {
	n, err := t.ReadCloser.Read(b)
	t.c.write(b[:n])
	return n, err
}

// answerBody copies an answer aside as it streams to the caller, and says
// when it is done: complete when its end was read.
type answerBody struct {
	io.ReadCloser
	c    *capture
	eof  bool
	done func(complete bool)
}

func (a *answerBody) Read(b []byte) (int, error) {
	n, err := a.ReadCloser.Read(b)
	a.c.write(b[:n])
	if err == io.EOF {
		a.eof = true
	}
	return n, err
}

func (a *answerBody) Close() error {
	err := a.ReadCloser.Close()
	a.done(a.eof)
	return err
}

// statusWriter remembers the status for the log line.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets ReverseProxy flush through it.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
