package mockserver

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/agentruns/agentruns/mockserver/store"
	"github.com/agentruns/agentruns/openapi"
)

// versionPrefix is where the real service serves the API; the mock serves it
// there and at the root.
const versionPrefix = "/api/v1"

// ServeHTTP answers one request, logs it, and turns a panic into a 500
// problem so one bad request never takes the server down.
func (s *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	// Per-request logging is off under --quiet; then not even its arguments
	// are built, since at tens of thousands of requests a second they show.
	level := requestLogLevel(r) // dashboard.go: its own polling is not news
	logging := s.log.Enabled(r.Context(), level)
	var start time.Time
	if logging {
		start = time.Now()
	}
	w := &statusWriter{ResponseWriter: rw}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler { // the deliberate way to drop a connection
				panic(v)
			}
			s.log.Error("handler panic", "method", truncate(r.Method, 16), "path", truncate(r.URL.Path, logFieldMax), "panic", fmt.Sprint(v))
			if !w.wroteHeader {
				writeProblem(w, r, errorf(codeInternal, "the mock failed while answering; the failure was logged"))
			}
		}
		if logging {
			s.log.Log(r.Context(), level, "request", "method", truncate(r.Method, 16), "path", truncate(r.URL.Path, logFieldMax), "status", w.status,
				"duration", time.Since(start), "session", truncate(r.Header.Get(SessionHeader), logFieldMax))
		}
	}()
	s.serve(w, r)
}

// serve is a request's whole way through the mock, in order. Nothing about
// a mock session is touched (opened, journaled, faulted) before the caller
// has shown its credentials.
func (s *Server) serve(w *statusWriter, r *http.Request) {
	// 1. Route. The escaped path keeps an encoded slash inside a run id
	// from splitting it.
	path := r.URL.EscapedPath()
	if strings.HasPrefix(path, versionPrefix+"/") {
		path = strings.TrimPrefix(path, versionPrefix)
	}
	isControl := path == "/__mock" || strings.HasPrefix(path, "/__mock/")
	if isControl && s.disableControl {
		writeProblem(w, r, errorf(codeNotFound, "no such path: %s (the control API is turned off)", truncate(r.URL.Path, logFieldMax)))
		return
	}
	if path == "/__mock/ui" || strings.HasPrefix(path, "/__mock/ui/") {
		s.dashboard(w, r, path) // the dashboard's static files (dashboard.go)
		return
	}
	if aerr := oneReading(r); aerr != nil {
		writeProblem(w, r, aerr)
		return
	}
	rt, param, allow := s.lookup(r.Method, path)
	if rt == nil && r.Method != http.MethodOptions {
		// The service asks for credentials before it looks at the path, so
		// a path or method it does not have is a 401 without them, as is
		// every operation this mock does not serve (yet).
		if !isControl && !s.publicPath(path) {
			if _, aerr := s.authenticate(r); aerr != nil {
				writeProblem(w, r, aerr)
				return
			}
		}
		switch {
		case allow != "":
			e := errorf(codeMethodNotAllowed, "%s is not allowed on %s; allowed: %s", r.Method, r.URL.Path, allow)
			e.allow = allow + ", OPTIONS"
			writeProblem(w, r, e)
		case isControl:
			writeProblem(w, r, errorf(codeNotFound, "no such control path: %s", truncate(r.URL.Path, logFieldMax)))
		default:
			writeProblem(w, r, errorf(codeNotFound, "no such path: %s", truncate(r.URL.Path, logFieldMax)))
		}
		return
	}
	if r.Method == http.MethodOptions {
		if _, _, allow = s.lookup("", path); allow == "" {
			writeProblem(w, r, errorf(codeNotFound, "no such path: %s", truncate(r.URL.Path, logFieldMax)))
			return
		}
		w.Header().Set("Allow", allow+", OPTIONS")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	c := &call{r: r}

	// 2. Authenticate.
	switch rt.area {
	case api:
		if rt.keyless && r.Header.Get("Authorization") == "" {
			break // c.principal stays nil: the handler answers anyone
		}
		p, aerr := s.authenticate(r)
		if aerr != nil {
			writeProblem(w, r, aerr)
			return
		}
		c.principal = p
	case control:
		if aerr := s.authenticateControl(r); aerr != nil {
			writeProblem(w, r, aerr)
			return
		}
	}

	// With the control API off, its headers are off too: a client steering
	// the mock is told, not silently ignored.
	if s.disableControl {
		for _, h := range []string{SessionHeader, FaultHeader, FateHeader} {
			if r.Header.Get(h) != "" {
				writeProblem(w, r, errorf(codeInvalidRequest, "header %s: the control API and its headers are turned off (--no-control)", h))
				return
			}
		}
	}

	// 3. Open the mock session.
	unnamed := false // a keyless request answered from the default session instead
	if rt.area != public {
		var ms *store.Session
		var err error
		if rt.area == api && c.principal == nil {
			ms, unnamed, err = s.keylessSession(r.Header.Get(SessionHeader))
		} else {
			ms, err = s.store.Open(r.Header.Get(SessionHeader))
		}
		if err != nil { // a bad name, or too many mock sessions open
			writeProblem(w, r, problemOf(fmt.Errorf("header %s: %w", SessionHeader, err)))
			return
		}
		c.session = ms
		// The Date header is the mock session's clock, as a server's Date
		// is its own clock: a client that reckons the server's time by it
		// (the contract suite does, to wait for a schedule's tick or a
		// link's expiry) sees the same time as the answers' timestamps.
		w.Header()["Date"] = []string{s.dates.format(ms.Now())}
	}

	if rt.area == api {
		// 4. Journal: every authenticated API request, however it ends.
		// The dashboard's reads (X-Mock-Observer) are neither (dashboard.go).
		injected, observer := false, r.Header.Get(ObserverHeader) != ""
		if !observer && !unnamed {
			defer func() { harnessOf(c.session).journal.add(attempt(r, path, w, injected), time.Now()) }()
		}

		// 5. Inject faults. The body is read before a delay fault waits:
		// only then does the server notice a client that hangs up, so
		// nothing is created for a caller gone.
		body, held, bodyErr := s.readBody(w, r)
		defer s.bodies.give(held)
		if !observer && s.inject(w, r, c.session, path, &injected) {
			return
		}

		// 6. Validate: the path's id, the body, the OpenAPI document.
		if rt.hasID {
			// Every id of the API is a run id so far; a resource with ids
			// of another form gives its route its own check.
			id, err := url.PathUnescape(param)
			if err != nil || !isRunID(id) {
				writeProblem(w, r, errorf(codeInvalidRequest, "%s %q is not a valid id (1 to 128 letters, digits, '-' or '_')", rt.idName, truncate(param, 80)))
				return
			}
			c.id = id
		}
		if bodyErr != nil {
			writeProblem(w, r, bodyErr)
			return
		}
		query, aerr := parseQuery(r.URL.RawQuery)
		if aerr != nil {
			writeProblem(w, r, aerr)
			return
		}
		if rt.target != nil {
			if aerr := rt.target(c); aerr != nil {
				writeProblem(w, r, aerr)
				return
			}
		}
		// Most create bodies are read and checked in one pass by the typed
		// reader (runs_request.go); the rest are checked here as before.
		var decoded any
		request, vouched := readCreateBody(r, path, body)
		if !vouched {
			var aerr *apiError
			if decoded, aerr = s.validate(r, path, !rt.hasID, body); aerr != nil {
				writeProblem(w, r, aerr)
				return
			}
		}
		// The handler reads the query and the body as parsed and decoded
		// here, never from the request again (routes.go's call).
		c.query, c.body, c.decoded, c.request = query, body, decoded, request
	} else {
		query, aerr := parseQuery(r.URL.RawQuery)
		if aerr != nil {
			writeProblem(w, r, aerr)
			return
		}
		c.query = query
		if rt.hasID {
			id, err := url.PathUnescape(param)
			if err != nil {
				writeProblem(w, r, errorf(codeInvalidRequest, "%s %q is not a valid id", rt.idName, truncate(param, 80)))
				return
			}
			c.id = id
		}
	}

	// 7. Handle, and 8. write the answer.
	rt.handle(c).write(w, r)
}

// keylessSession is the mock session a request without a key (the public
// redirects) is answered from: the one it names if that exists, else the
// default session, which always does (then unnamed is true, and the
// request is not journaled there). Such a request never opens a session:
// anyone who reaches the port could otherwise fill the session table.
func (s *Server) keylessSession(name string) (ms *store.Session, unnamed bool, err error) {
	if err := store.CheckSessionName(name); err != nil {
		return nil, false, err
	}
	if ms = s.store.Existing(name); ms != nil {
		return ms, false, nil
	}
	ms, err = s.store.Open("") // the default session: never closed, so this opens nothing
	return ms, true, err
}

// httpDates formats Date headers, remembering the last one: every request
// to a mock session sends one, and Format was a good part of what the
// pipeline cost. A Date header shows whole seconds, so an instant in the
// same second as the one remembered has the same text.
type httpDates struct{ last atomic.Pointer[httpDate] }

type httpDate struct {
	unix int64 // whole seconds, rounded down, as t.Unix() gives them
	text string
}

// format is t.UTC().Format(http.TimeFormat).
func (d *httpDates) format(t time.Time) string {
	sec := t.Unix()
	if last := d.last.Load(); last != nil && last.unix == sec {
		return last.text
	}
	text := t.UTC().Format(http.TimeFormat)
	d.last.Store(&httpDate{sec, text})
	return text
}

// statusWriter remembers the status for the request log and the journal.
type statusWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logFieldMax bounds what one request's log line repeats of the request, so
// a line stays under about 1 KiB whatever a client sends.
const logFieldMax = 256

// truncate keeps the first n bytes of s, marking the cut with "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// readBody reads a POST body within the size cap. Only create takes a
// body; it must be JSON. held is what the body drew on the server's body
// budget, to give back when the request ends.
//
// The body must arrive within bodyTimeout of the handler starting to read
// it, or by the server's own read deadline (--read-timeout) if that comes
// first. While it arrives the request holds no in-flight slot (limit.go),
// only the bytes it has sent so far; it takes a slot again once the body is
// whole, so trickled bodies cannot lock others out.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) (body []byte, held int64, aerr *apiError) {
	if r.Body == nil || r.Method != http.MethodPost && r.Method != http.MethodPut {
		return nil, 0, nil
	}
	rc := http.NewResponseController(w)
	deadline, within := s.bodyDeadline(r)
	_ = rc.SetReadDeadline(deadline) // not every transport has deadlines
	if r.ContentLength > s.maxBodyBytes {
		return nil, 0, errorf(codePayloadTooLarge, "the body is %d bytes; the limit is %d", r.ContentLength, s.maxBodyBytes)
	}
	waits := r.ContentLength != 0 // unknown (-1, chunked) or declared
	if waits {
		leaveInFlight(r.Context())
	}
	br := &budgetedReader{r: io.LimitReader(r.Body, s.maxBodyBytes+1), budget: s.bodies}
	body, err := io.ReadAll(br)
	held = br.held
	if errors.Is(err, errOverBudget) {
		w.Header().Set("Connection", "close") // the rest of the body is not read
		return nil, held, &apiError{code: codeUnavailable, retryAfter: time.Second,
			detail: fmt.Sprintf("the mock holds at most %d bytes of request bodies at once and has no room for this one now; try again shortly", s.bodies.size)}
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		// The rest of the body is not waited for: the connection closes
		// after the answer.
		w.Header().Set("Connection", "close")
		return nil, held, errorf(codeInvalidRequest, "the body did not arrive within %v", within.Round(time.Millisecond))
	}
	if err != nil {
		return nil, held, errorf(codeInvalidRequest, "reading the body: %v", err)
	}
	_ = rc.SetReadDeadline(time.Time{})
	if waits && !reenterInFlight(r.Context()) {
		return nil, held, errBusy()
	}
	if int64(len(body)) > s.maxBodyBytes {
		return nil, held, errorf(codePayloadTooLarge, "the body is over the limit of %d bytes", s.maxBodyBytes)
	}
	if len(body) == 0 {
		return body, held, nil
	}
	if ct := r.Header.Get("Content-Type"); !isJSON(ct) {
		return nil, held, errorf(codeUnsupportedMediaType, "the body must be application/json, not %q", ct)
	}
	if !utf8.Valid(body) {
		return nil, held, errorf(codeInvalidRequest, "the body is not valid UTF-8")
	}
	return body, held, nil
}

func isJSON(contentType string) bool {
	if contentType == "application/json" { // what nearly every client sends; parsing it makes a map
		return true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// validate checks the request against the OpenAPI document, as the path the
// document knows (without the version prefix) and with HEAD checked as GET.
// decoded is the body as the validator decoded it (openapi.DecodeJSON),
// when it did.
func (s *Server) validate(r *http.Request, path string, fixedPath bool, body []byte) (decoded any, aerr *apiError) {
	if (r.Method == http.MethodPost || r.Method == http.MethodPut) && len(body) == 0 && !takesNoBody(path) {
		if path == "/agent/run" || path == "/agent/runs" {
			return nil, errorf(codeInvalidRequest, "the body is empty; send a JSON object with at least a prompt or a skill")
		}
		return nil, errorf(codeInvalidRequest, "the body is empty; send a JSON object")
	}
	// A GET the validator accepted before is accepted again (validcache.go).
	// The key is built on the stack: only a verdict remembered for the
	// first time makes a string of it.
	var keyBuf [256]byte
	key, cacheable := keyBuf[:0], r.Method == http.MethodGet || r.Method == http.MethodHead
	if cacheable {
		if key, cacheable = appendVerdictKey(key, path, r.URL.RawQuery, fixedPath); cacheable && s.acceptedGETs.Has(key) {
			return nil, nil
		}
	}
	// The validator sees the path the document knows, unescaped, with HEAD
	// as GET: a shallow copy with its own URL, unless the request is that
	// already (a path without the version prefix or escapes). The validator
	// reads the request and changes nothing in it, so the headers need no
	// deep copy.
	vr := r
	if r.Method == http.MethodHead || r.URL.Path != path || r.URL.RawPath != "" {
		vr = r.WithContext(r.Context())
		u := *r.URL
		vr.URL = &u
		vr.URL.Path, vr.URL.RawPath = path, ""
		if p, err := url.PathUnescape(path); err == nil {
			vr.URL.Path, vr.URL.RawPath = p, path
		}
		if vr.Method == http.MethodHead {
			vr.Method = http.MethodGet
		}
	}
	decoded, err := s.validator.ValidateRequestJSON(vr, body)
	if err == nil {
		if cacheable {
			s.acceptedGETs.Add(key)
		}
		return decoded, nil
	}
	var ve *openapi.ValidationError
	if errors.As(err, &ve) && len(ve.Findings) > 0 {
		msgs := make([]string, 0, len(ve.Findings))
		for _, f := range ve.Findings {
			msgs = append(msgs, f.Field+": "+f.Message)
		}
		return nil, errorf(codeInvalidRequest, "%s", strings.Join(msgs, "; "))
	}
	return nil, errorf(codeInvalidRequest, "%v", err)
}

// inject applies the request's X-Mock-Fault header or the mock session's
// first matching fault rule, noting in injected that it did. It reports
// whether the fault answered the request (a delay alone lets it go on).
func (s *Server) inject(w http.ResponseWriter, r *http.Request, ms *store.Session, path string, injected *bool) bool {
	var f *Fault
	if h := r.Header.Get(FaultHeader); h != "" {
		parsed, err := parseFaultHeader(h)
		if err != nil {
			writeProblem(w, r, errorf(codeInvalidRequest, "header %s: %v", FaultHeader, err))
			return true
		}
		f = &parsed
	} else if f = harnessOf(ms).faults.match(r, path); f == nil {
		return false
	}
	*injected = true
	if f.delay > 0 {
		leaveInFlight(r.Context())
		t := time.NewTimer(f.delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done(): // the client gave up; nothing to answer
			return true
		}
	}
	if f.Drop {
		panic(http.ErrAbortHandler) // net/http closes the connection unanswered
	}
	if f.Status != 0 {
		writeProblem(w, r, f.problem())
		return true
	}
	return false
}

// takesNoBody reports whether a POST path is an action without a body
// (cancel a run, pause or resume a schedule, read or acknowledge a message).
func takesNoBody(path string) bool {
	for _, suffix := range []string{"/cancel", "/pause", "/resume", "/read", "/delivered"} {
		if strings.HasSuffix(path, suffix) {
			return true
		}
	}
	return false
}

// routingHeaders are the headers that say whose a request is: the mock
// session it names and the API key it carries. HAProxy in front of
// replicas (deploy/haproxy.cfg) routes by them too.
var routingHeaders = []string{SessionHeader, "Authorization"}

// oneReading refuses a request that gives a routing header more than
// once. Which of two to read is a choice (net/http's Get reads the first,
// HAProxy the last), so a balancer and the replica it chose could each
// read another session, and one session's runs land on two replicas;
// the balancer refuses such a request with the same answer.
func oneReading(r *http.Request) *apiError {
	for _, h := range routingHeaders {
		if n := len(r.Header.Values(h)); n > 1 {
			return errorf(codeInvalidRequest, "header %s appears %d times: send it once", h, n)
		}
	}
	return nil
}
