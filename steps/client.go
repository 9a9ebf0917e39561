package steps

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agentruns/agentruns/clientcheck"
	"github.com/agentruns/agentruns/report"
	"github.com/agentruns/agentruns/suiteconfig"
)

// sessionHeader isolates a scenario inside a mock that offers the control API.
const sessionHeader = "X-Mock-Session"

// apiClient sends one scenario's requests. It knows only a base URL, a key and
// an *http.Client, and it checks every API response against the contract.
type apiClient struct {
	http      *http.Client
	base      *url.URL // the API, e.g. https://app.warp.dev/api/v1
	control   *url.URL // the mock's control API, nil when there is none
	key       string
	session   string // X-Mock-Session value, "" outside the mock
	validator suiteconfig.ResponseValidator
	// clients judges each success answer as each released client version
	// reads it (nil: not judged).
	clients *clientcheck.Tally
	// runs holds every run the suite has seen, for the rules of invariants.go.
	runs *ledger
	// book counts the runs the suite creates and holds them to the budget
	// and the team's capacity (runbook.go); nil: not counted.
	book *runBook
	// marking marks the runs it creates (marker.go); nil: bodies are sent
	// as written.
	marking *runMarking
	// made records what the scenario's requests created, for it to undo
	// when it ends (cleanup.go); nil where nothing is to be undone.
	made *creations
	// cause is the first contract violation the scenario met (causes.go);
	// nil where none is noted.
	cause *firstCause
}

// response is one answer from the server, with its body read.
type response struct {
	op     string // "GET /agent/runs/abc", for messages
	status int
	header http.Header
	body   []byte
	// received is when the answer had arrived, by the suite's clock: with
	// the Date header it tells how the server's clock stands to the suite's.
	received time.Time
}

// auth says how a request authenticates.
type auth struct {
	omit   bool   // send no Authorization header
	header string // send this Authorization header instead of the key
}

// call is one API request.
type call struct {
	method  string
	path    string // relative to the base URL, starting with "/"
	query   url.Values
	body    []byte // sent as application/json when not nil
	headers http.Header
	auth    auth
}

// do sends c and checks the answer against the contract. A contract violation
// is returned as an error together with the response.
func (a *apiClient) do(ctx context.Context, c call) (*response, error) {
	booked := a.book != nil && isRunCreate(c)
	restarted, restarts := "", false
	if a.book != nil && !booked {
		restarted, restarts = a.book.restarts(c)
		booked = restarts
	}
	who := scenarioName(ctx)
	if booked {
		// Before the create's own deadline: a wait for the team's
		// capacity may take as long as a run.
		if err := a.book.reserve(ctx, who); err != nil {
			return nil, err
		}
	}
	ctx, cancel := seeCreatesThrough(ctx, c)
	defer cancel()
	// c.path is already escaped (run ids go through url.PathEscape).
	u, err := url.Parse(a.base.String() + c.path)
	if err != nil {
		return nil, fmt.Errorf("building %s %s: %w", c.method, c.path, err)
	}
	u.RawQuery = c.query.Encode()
	req, err := http.NewRequestWithContext(ctx, c.method, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("building %s %s: %w", c.method, c.path, err)
	}
	req.Header.Set("Accept", "application/json")
	if c.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	switch {
	case c.auth.omit:
	case c.auth.header != "":
		req.Header.Set("Authorization", c.auth.header)
	default:
		req.Header.Set("Authorization", "Bearer "+a.key)
	}
	for k, vs := range c.headers {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if a.session != "" {
		req.Header.Set(sessionHeader, a.session)
	}
	if isRunCreate(c) && c.body != nil {
		c.body = a.marking.mark(c.body) // marker.go
	}
	sent := time.Now()
	resp, err := a.send(req, c.body)
	switch {
	case restarts:
		a.book.settleRestart(who, restarted, resp)
	case booked:
		a.book.settle(who, a.session, req.Header.Get("Authorization"), resp)
	}
	if err != nil {
		return nil, err
	}
	recv := time.Now()
	a.made.note(req.Header.Get("Authorization"), c, resp)
	cause, checked := a.check(req, resp, c.path)
	a.cause.note(cause)
	errs := []error{checked}
	for _, run := range runsIn(c.method, c.path, resp) {
		a.book.seen(str(run["run_id"]), str(run["state"])) // the other team's runs too
	}
	if a.runs != nil {
		for _, run := range runsIn(c.method, c.path, resp) {
			knockOn, err := a.runs.see(a.session, sighting{doc: run, sent: sent, recv: recv, op: resp.op, cause: cause})
			a.cause.note(knockOn)
			errs = append(errs, err)
		}
	}
	return resp, errors.Join(errs...)
}

// send makes the request, waiting out a 429 a few times as a well-behaved
// client would, and reads the whole body.
func (a *apiClient) send(req *http.Request, body []byte) (*response, error) {
	op := req.Method + " " + req.URL.RequestURI()
	for attempt := 0; ; attempt++ {
		if body != nil {
			req.Body = io.NopCloser(bytes.NewReader(body))
			req.ContentLength = int64(len(body))
		}
		hr, err := a.http.Do(req)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		data, err := io.ReadAll(hr.Body)
		hr.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: reading the body: %w", op, err)
		}
		if hr.StatusCode != http.StatusTooManyRequests || attempt == 3 {
			return &response{op: op, status: hr.StatusCode, header: hr.Header, body: data, received: time.Now()}, nil
		}
		wait := time.Second << attempt
		if s, err := strconv.Atoi(hr.Header.Get("Retry-After")); err == nil && s >= 0 && s <= 60 {
			wait = time.Duration(s) * time.Second
		}
		select {
		case <-req.Context().Done():
			return nil, fmt.Errorf("%s: %w", op, req.Context().Err())
		case <-time.After(wait):
		}
	}
}

// check validates resp against the OpenAPI document and, for an error,
// against the problem details rules. cause is the first violation found,
// nil when there is none.
func (a *apiClient) check(req *http.Request, resp *response, path string) (cause *report.Cause, err error) {
	// The validator sees the path relative to the base URL, so that a server
	// under any prefix matches the document's paths.
	vreq := req.Clone(req.Context())
	vreq.Body = http.NoBody
	vreq.URL.Path, vreq.URL.RawPath = path, ""
	if p, err := url.PathUnescape(path); err == nil {
		vreq.URL.Path, vreq.URL.RawPath = p, path
	}
	hr := &http.Response{
		StatusCode: resp.status,
		Status:     fmt.Sprintf("%d %s", resp.status, http.StatusText(resp.status)),
		Header:     resp.header,
		Body:       io.NopCloser(bytes.NewReader(resp.body)),
		Request:    vreq,
	}
	// Beside the document, as each client version reads it; this never
	// fails the scenario (Config.FailOnClient fails the run instead).
	a.clients.Answer(req.Method, vreq.URL.Path, resp.status, resp.header, resp.body)
	var errs []error
	if err := a.validator.ValidateResponse(vreq, hr); err != nil {
		// The validator's message names the operation, status and field.
		errs = append(errs, fmt.Errorf("contract violation: %w", err))
		cause = violationCause(err, req.Method, path, resp.status)
	}
	if resp.status >= 400 {
		if err := checkProblem(resp); err != nil {
			errs = append(errs, fmt.Errorf("%s answered %d: %w", resp.op, resp.status, err))
			if cause == nil {
				cause = problemCause(err, req.Method, path, resp.status)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return cause, fmt.Errorf("%w\n%s", err, resp.excerpt())
	}
	return nil, nil
}

// checkProblem checks that an error response is an RFC 7807 problem document
// with the fields this API promises.
func checkProblem(resp *response) error {
	// The service's prose promises application/problem+json, but its published
	// document declares error bodies as application/json, so a correct server
	// may send either; what makes it a problem document is its fields.
	ct := resp.header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || (mt != "application/problem+json" && mt != "application/json") {
		return fmt.Errorf("error responses must be application/problem+json (or application/json), got Content-Type %q", ct)
	}
	var p map[string]any
	if err := json.Unmarshal(resp.body, &p); err != nil {
		return fmt.Errorf("problem document is not a JSON object: %v", err)
	}
	var errs []error
	for _, f := range []string{"type", "title", "error"} {
		if s, ok := p[f].(string); !ok || s == "" {
			errs = append(errs, fmt.Errorf("problem document: expected a non-empty string %q, got %s", f, show(p[f])))
		}
	}
	if st, ok := p["status"].(float64); !ok || int(st) != resp.status {
		errs = append(errs, fmt.Errorf("problem document: expected \"status\" %d (the HTTP status), got %s", resp.status, show(p["status"])))
	}
	return errors.Join(errs...)
}

// json decodes the body into v.
func (r *response) json(v any) error {
	if err := json.Unmarshal(r.body, v); err != nil {
		return fmt.Errorf("%s answered %d with a body that is not the expected JSON: %v\n%s", r.op, r.status, err, r.excerpt())
	}
	return nil
}

// object decodes the body as a JSON object.
func (r *response) object() (map[string]any, error) {
	var m map[string]any
	return m, r.json(&m)
}

// excerpt is the start of the body, for messages.
func (r *response) excerpt() string {
	const max = 600
	s := strings.TrimSpace(string(r.body))
	if len(s) > max {
		s = s[:max] + "…"
	}
	return "    body: " + s
}

// expectStatus fails unless the response has the given status.
func (r *response) expectStatus(want int) error {
	if r.status != want {
		return fmt.Errorf("%s: expected status %d, got %d\n%s", r.op, want, r.status, r.excerpt())
	}
	return nil
}

// controlCall sends a request to the mock's control API. Its answers are not
// part of the contract, so they are only checked for success.
func (a *apiClient) controlCall(ctx context.Context, method, path string, payload any) (map[string]any, error) {
	if a.control == nil {
		return nil, errors.New("this server offers no mock control API")
	}
	var data []byte
	if payload != nil {
		var err error
		if data, err = json.Marshal(payload); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, a.control.String()+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if a.session != "" {
		req.Header.Set(sessionHeader, a.session)
	}
	resp, err := a.send(req, data)
	if err != nil {
		return nil, err
	}
	if resp.status/100 != 2 {
		return nil, fmt.Errorf("mock control API: %s answered %d\n%s", resp.op, resp.status, resp.excerpt())
	}
	var m map[string]any
	if len(bytes.TrimSpace(resp.body)) > 0 {
		if err := resp.json(&m); err != nil {
			return nil, err
		}
	}
	return m, nil
}
