package mockserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/openapi"
)

// versionPrefix is where the real service serves the API; the mock serves it
// there and at the root.
const versionPrefix = "/api/v1"

// ServeHTTP routes a request, logs it, and turns a panic into a 500 problem
// so one bad request never takes the server down.
func (s *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	// Per-request logging is off under --quiet; then not even its arguments
	// are built, since at tens of thousands of requests a second they show.
	logging := s.log.Enabled(r.Context(), slog.LevelInfo)
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
			s.log.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v))
			if !w.wroteHeader {
				writeProblem(w, r, errorf(codeInternal, "the mock failed while answering; the failure was logged"))
			}
		}
		if logging {
			s.log.Info("request", "method", r.Method, "path", r.URL.Path, "status", w.status,
				"duration", time.Since(start), "session", r.Header.Get(SessionHeader))
		}
	}()
	s.route(w, r)
}

// statusWriter remembers the status for the request log.
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

func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	// The escaped path keeps an encoded slash inside a run id from splitting it.
	path := r.URL.EscapedPath()
	if strings.HasPrefix(path, versionPrefix+"/") {
		path = strings.TrimPrefix(path, versionPrefix)
	}
	switch {
	case path == "/openapi.yaml":
		if !allowMethod(w, r, "GET, HEAD") {
			return
		}
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(openapi.Document)
	case path == "/__mock/ui" || strings.HasPrefix(path, "/__mock/ui/"):
		s.dashboard(w, r, path)
	case path == "/__mock" || strings.HasPrefix(path, "/__mock/"):
		s.control(w, r, strings.TrimPrefix(path, "/__mock"))
	case strings.HasPrefix(path, "/agent/"):
		s.api(w, r, path)
	default:
		writeProblem(w, r, errorf(codeNotFound, "no such path: %s", r.URL.Path))
	}
}

// allowMethod answers OPTIONS and wrong methods; it reports whether the
// request should go on. HEAD is allowed wherever GET is.
func allowMethod(w http.ResponseWriter, r *http.Request, allow string) bool {
	if r.Method == http.MethodOptions {
		w.Header().Set("Allow", allow+", OPTIONS")
		w.WriteHeader(http.StatusNoContent)
		return false
	}
	for _, m := range strings.Split(allow, ", ") {
		if r.Method == m {
			return true
		}
	}
	e := errorf(codeMethodNotAllowed, "%s is not allowed on %s; allowed: %s", r.Method, r.URL.Path, allow)
	e.allow = allow + ", OPTIONS"
	writeProblem(w, r, e)
	return false
}

// operation is one API endpoint's handler; it returns the 200 body or an error.
type operation func(w *world, p *fixtures.Principal, r *http.Request, body []byte, runID string) (any, *apiError)

func (s *Server) api(w http.ResponseWriter, r *http.Request, path string) {
	parts := strings.Split(strings.TrimPrefix(path, "/agent/"), "/")
	var op operation
	var allow, runID string
	switch {
	case len(parts) == 1 && parts[0] == "run":
		op, allow = s.createRun, "POST"
	case len(parts) == 1 && parts[0] == "runs":
		allow = "GET, HEAD, POST"
		op = s.listRuns
		if r.Method == http.MethodPost {
			op = s.createRun
		}
	case len(parts) == 2 && parts[0] == "runs":
		op, allow, runID = s.getRun, "GET, HEAD", parts[1]
	case len(parts) == 3 && parts[0] == "runs" && parts[2] == "cancel":
		op, allow, runID = s.cancelRun, "POST", parts[1]
	default:
		writeProblem(w, r, errorf(codeNotFound, "no such path: %s", r.URL.Path))
		return
	}
	if !allowMethod(w, r, allow) {
		return
	}
	world, err := s.world(r)
	if err != nil {
		writeProblem(w, r, &apiError{code: codeUnavailable, detail: "too many isolated sessions are open; reset or reuse one", retryAfter: 5 * time.Second})
		return
	}
	injected, observer := false, r.Header.Get(ObserverHeader) != ""
	if !observer {
		defer func() { world.journal.add(attempt(r, path, w, injected)) }()
	}
	// The body is read before a delay fault waits: only then does the server
	// notice a client that hangs up, so nothing is created for a caller gone.
	body, bodyErr := s.readBody(r)
	if !observer && s.inject(w, r, world, path, &injected) {
		return
	}
	p, aerr := s.cfg.authenticate(r)
	if aerr != nil {
		writeProblem(w, r, aerr)
		return
	}
	if runID != "" {
		id, err := url.PathUnescape(runID)
		if err != nil || !isRunID(id) {
			writeProblem(w, r, errorf(codeInvalidRequest, "runId %q is not a valid run id (1 to 128 letters, digits, '-' or '_')", truncate(runID, 80)))
			return
		}
		runID = id
	}
	if bodyErr != nil {
		writeProblem(w, r, bodyErr)
		return
	}
	if aerr := s.validate(r, path, body); aerr != nil {
		writeProblem(w, r, aerr)
		return
	}
	out, aerr := op(world, p, r, body, runID)
	if aerr != nil {
		writeProblem(w, r, aerr)
		return
	}
	writeJSON(w, r, out)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// readBody reads a POST body within the size cap. Only create takes a
// body; it must be JSON.
func (s *Server) readBody(r *http.Request) ([]byte, *apiError) {
	if r.Body == nil || r.Method != http.MethodPost {
		return nil, nil
	}
	if r.ContentLength > s.cfg.maxBodyBytes {
		return nil, errorf(codePayloadTooLarge, "the body is %d bytes; the limit is %d", r.ContentLength, s.cfg.maxBodyBytes)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, s.cfg.maxBodyBytes+1))
	if err != nil {
		return nil, errorf(codeInvalidRequest, "reading the body: %v", err)
	}
	if int64(len(body)) > s.cfg.maxBodyBytes {
		return nil, errorf(codePayloadTooLarge, "the body is over the limit of %d bytes", s.cfg.maxBodyBytes)
	}
	if len(body) == 0 {
		return body, nil
	}
	if ct := r.Header.Get("Content-Type"); !isJSON(ct) {
		return nil, errorf(codeUnsupportedMediaType, "the body must be application/json, not %q", ct)
	}
	if !utf8.Valid(body) {
		return nil, errorf(codeInvalidRequest, "the body is not valid UTF-8")
	}
	return body, nil
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// validate checks the request against the OpenAPI document, as the path the
// document knows (without the version prefix) and with HEAD checked as GET.
func (s *Server) validate(r *http.Request, path string, body []byte) *apiError {
	if r.Method == http.MethodPost && len(body) == 0 && !strings.HasSuffix(path, "/cancel") {
		return errorf(codeInvalidRequest, "the body is empty; send a JSON object with at least a prompt or a skill")
	}
	// A GET the validator accepted before is accepted again (validcache.go).
	key, cacheable := "", r.Method == http.MethodGet || r.Method == http.MethodHead
	if cacheable {
		if key, cacheable = getVerdictKey(path, r.URL.RawQuery); cacheable && s.acceptedGETs.has(key) {
			return nil
		}
	}
	// A shallow copy with its own URL: the validator reads the request and
	// changes nothing in it, so the headers need no deep copy.
	vr := r.WithContext(r.Context())
	u := *r.URL
	vr.URL = &u
	vr.URL.Path, vr.URL.RawPath = path, ""
	if p, err := url.PathUnescape(path); err == nil {
		vr.URL.Path, vr.URL.RawPath = p, path
	}
	if vr.Method == http.MethodHead {
		vr.Method = http.MethodGet
	}
	vr.Body = io.NopCloser(bytes.NewReader(body))
	err := s.validator.ValidateRequest(vr)
	if err == nil {
		if cacheable {
			s.acceptedGETs.add(key)
		}
		return nil
	}
	var ve *openapi.ValidationError
	if errors.As(err, &ve) && len(ve.Findings) > 0 {
		msgs := make([]string, 0, len(ve.Findings))
		for _, f := range ve.Findings {
			msgs = append(msgs, f.Field+": "+f.Message)
		}
		return errorf(codeInvalidRequest, "%s", strings.Join(msgs, "; "))
	}
	return errorf(codeInvalidRequest, "%v", err)
}

// runRequest is a RunAgentRequest.
type runRequest struct {
	Prompt         *string      `json:"prompt"`
	Config         *AgentConfig `json:"config"`
	Title          *string      `json:"title"`
	Skill          *string      `json:"skill"`
	Team           *bool        `json:"team"`
	ConversationID *string      `json:"conversation_id"`
	Images         []struct {
		Data     string `json:"data"`
		MimeType string `json:"mime_type"`
	} `json:"images"`
}

// RunAgentResponse answers a create.
type RunAgentResponse struct {
	RunID  string `json:"run_id"`
	TaskID string `json:"task_id"`
	State  State  `json:"state"`
}

var skillSpecPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+:[^\s:]+$`)

func (s *Server) createRun(w *world, p *fixtures.Principal, r *http.Request, body []byte, _ string) (any, *apiError) {
	var req runRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, decodeError(err)
	}
	n, aerr := s.resolve(req)
	if aerr != nil {
		return nil, aerr
	}
	f, err := s.cfg.fateFor(n.prompt, r.Header.Get(FateHeader), &w.fates)
	if err != nil {
		return nil, errorf(codeInvalidRequest, "header %s: %v", FateHeader, err)
	}
	n.fate = f
	v, err := w.create(p, n)
	if errors.Is(err, errStoreFull) {
		return nil, &apiError{code: codeUnavailable, detail: fmt.Sprintf("the mock holds its maximum of %d runs; reset it or raise --max-runs", s.cfg.maxRuns), retryAfter: 30 * time.Second}
	}
	if err != nil {
		return nil, errorf(codeInternal, "%v", err)
	}
	return RunAgentResponse{RunID: v.r.id, TaskID: v.r.id, State: v.snap.state}, nil
}

// resolve fills in what the service would: the skill's name, the default
// model and a title, and checks what the schema alone cannot.
func (s *Server) resolve(req runRequest) (newRun, *apiError) {
	var n newRun
	if req.Prompt != nil {
		n.prompt = *req.Prompt
	}
	cfg := AgentConfig{}
	if req.Config != nil {
		cfg = *req.Config
	}
	field := "config.skill_spec"
	if req.Skill != nil && *req.Skill != "" {
		cfg.SkillSpec, field = *req.Skill, "skill" // skill wins over config.skill_spec
	}
	if strings.TrimSpace(n.prompt) == "" && cfg.SkillSpec == "" {
		return n, errorf(codeInvalidRequest, "prompt: a prompt or a skill is required")
	}
	if cfg.SkillSpec != "" {
		if !skillSpecPattern.MatchString(cfg.SkillSpec) {
			return n, errorf(codeInvalidRequest, "%s: %q is not <owner>/<repo>:<skill_name> or <owner>/<repo>:<path>/SKILL.md", field, cfg.SkillSpec)
		}
		n.fromSkill = true
		if cfg.Name == "" {
			cfg.Name = skillName(cfg.SkillSpec)
		}
	}
	for name, m := range cfg.MCPServers {
		kinds := 0
		for _, v := range []string{m.WarpID, m.Command, m.URL} {
			if v != "" {
				kinds++
			}
		}
		if kinds != 1 {
			return n, errorf(codeInvalidRequest, "config.mcp_servers.%s: give exactly one of warp_id, command or url", name)
		}
	}
	if cfg.ModelID == "" {
		cfg.ModelID = s.cfg.fixtures.DefaultModelID
	}
	n.config = &cfg
	switch {
	case req.Title != nil && strings.TrimSpace(*req.Title) != "":
		n.title = strings.TrimSpace(*req.Title)
	case strings.TrimSpace(n.prompt) != "":
		n.title = titleFrom(n.prompt)
	default:
		n.title = "Run skill " + cfg.Name
	}
	if req.Team != nil {
		n.teamScope = *req.Team
	}
	if req.ConversationID != nil {
		n.conversationID = *req.ConversationID
	}
	return n, nil
}

// decodeError turns a JSON decoding failure into a problem that names the
// field, for whatever the schema check did not already catch.
func decodeError(err error) *apiError {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return errorf(codeInvalidRequest, "the body is not valid JSON (at byte %d): %v", syn.Offset, err)
	case errors.As(err, &typ) && typ.Field == "":
		return errorf(codeInvalidRequest, "the body must be a JSON object, not %s", typ.Value)
	case errors.As(err, &typ):
		return errorf(codeInvalidRequest, "%s: must be %s, not %s", typ.Field, jsonType(typ.Type.Kind().String()), typ.Value)
	}
	return errorf(codeInvalidRequest, "the body could not be read as JSON: %v", err)
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "map", "struct", "ptr":
		return "an object"
	case "slice":
		return "an array"
	}
	return kind
}

func (s *Server) listRuns(w *world, p *fixtures.Principal, r *http.Request, _ []byte, _ string) (any, *apiError) {
	q, err := parseListQuery(r.URL.Query(), s.cfg.cursorSecret)
	if err != nil {
		return nil, asAPIError(err)
	}
	out, err := w.list(p, q, s.cfg.cursorSecret)
	if err != nil {
		return nil, asAPIError(err)
	}
	return out, nil
}

func (s *Server) getRun(w *world, p *fixtures.Principal, _ *http.Request, _ []byte, id string) (any, *apiError) {
	it, err := w.get(p, id)
	if err != nil {
		return nil, asAPIError(err)
	}
	return it, nil
}

func (s *Server) cancelRun(w *world, p *fixtures.Principal, _ *http.Request, _ []byte, id string) (any, *apiError) {
	if err := w.cancel(p, id); err != nil {
		return nil, asAPIError(err)
	}
	return id, nil
}

// asAPIError maps the store's sentinel errors onto the API's error codes.
func asAPIError(err error) *apiError {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, errRunNotFound):
		return errorf(codeNotFound, "no run with this id")
	case errors.Is(err, errOtherTeam):
		return errorf(codeNotAuthorized, "the run belongs to another team")
	case errors.Is(err, errTerminal):
		return errorf(codeInvalidRequest, "the run cannot be cancelled: %v", err)
	case errors.Is(err, errPending):
		return &apiError{code: codeConflict, detail: "the run is being handed to a worker; try again shortly", retryAfter: time.Second}
	case errors.Is(err, errNotCancelable):
		return errorf(codeNotSupported, "runs of this type cannot be cancelled")
	case errors.Is(err, errBackwards):
		// Not the retryable conflict of the table: trying again cannot help.
		return &apiError{code: codeInvalidRequest, status: http.StatusConflict, detail: err.Error()}
	}
	return errorf(codeInternal, "%v", err)
}

// inject applies the request's X-Mock-Fault header or the session's first
// matching fault rule, noting in injected that it did. It reports whether
// the fault answered the request (a delay alone lets it go on).
func (s *Server) inject(w http.ResponseWriter, r *http.Request, world *world, path string, injected *bool) bool {
	var f *Fault
	if h := r.Header.Get(FaultHeader); h != "" {
		parsed, err := parseFaultHeader(h)
		if err != nil {
			writeProblem(w, r, errorf(codeInvalidRequest, "header %s: %v", FaultHeader, err))
			return true
		}
		f = &parsed
	} else if f = world.faults.match(r, path); f == nil {
		return false
	}
	*injected = true
	if f.delay > 0 {
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

func attempt(r *http.Request, path string, w http.ResponseWriter, injected bool) Attempt {
	a := Attempt{At: formatTime(time.Now()), Method: r.Method, Path: path, Injected: injected}
	if sw, ok := w.(*statusWriter); ok {
		a.Status = sw.status
	}
	if v := r.Header.Get("X-Stainless-Retry-Count"); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			a.RetryCount = &n
		}
	}
	return a
}
