package proxy

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentruns/agentruns/mockserver/dashboard"
)

// The proxy's own control API, under /__mock/proxy (and under the
// version prefix too), never forwarded:
//
//	GET    /__mock/proxy              what was found: counts per rule, the latest violations
//	DELETE /__mock/proxy              forget what was found, the drift and the profile (the rules' memory of runs stays)
//	GET    /__mock/proxy/requests     the journal of forwarded requests
//	GET    /__mock/proxy/runs         the runs the traffic showed, latest look, newest first (?limit=, 100)
//	GET    /__mock/proxy/runs/{id}    the latest look at one of them
//	GET    /__mock/proxy/drift        what the traffic showed that the document does not declare
//	GET    /__mock/proxy/drift/overlay.yaml  the OpenAPI Overlay that declares it
//	GET    /__mock/proxy/profile      the shape of the answers seen, for agentruns-drift compare
//	GET    /__mock/proxy/report.xml   the JUnit report, now
//	GET    /__mock/proxy/report.html  the HTML report, now
//	POST   /__mock/proxy/record       write the recorded fixtures now (with --record)
//	GET    /__mock/proxy/ui/          the dashboard
//
// It asks for the control token when one is set, and is off under
// --no-control (404). The dashboard reads only these: nothing it does
// reaches the upstream or the counts of what was checked.

// Recorder is an Observer that writes what it recorded on demand.
type Recorder interface {
	Observer
	Write() (any, error)
}

var dashboardFiles = http.StripPrefix(ControlPrefix+"/ui", dashboard.Handler())

func (p *Proxy) control(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, versionPrefix)
	if p.opts.DisableControl {
		problem(w, http.StatusNotFound, "Not found", "no such path: "+r.URL.Path+" (the proxy's control API is turned off)")
		return
	}
	if path == ControlPrefix+"/ui" {
		http.Redirect(w, r, r.URL.Path+"/", http.StatusMovedPermanently)
		return
	}
	if strings.HasPrefix(path, ControlPrefix+"/ui/") {
		// Static files: the page asks for the token when it reads data.
		r2 := r.Clone(r.Context())
		r2.URL.Path, r2.URL.RawPath = path, ""
		dashboardFiles.ServeHTTP(w, r2)
		return
	}
	if !p.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="agentruns proxy control"`)
		problem(w, http.StatusUnauthorized, "Unauthorized", "the proxy's control API needs Authorization: Bearer <control token>")
		return
	}
	// What was found includes every answer completed before this request.
	if err := p.Drain(r.Context()); err != nil {
		return // the caller went away
	}
	switch route := r.Method + " " + path; route {
	case "GET " + ControlPrefix:
		writeJSON(w, answerOf(p.Summary()))
	case "DELETE " + ControlPrefix:
		p.found.reset(time.Now())
		p.clients.Reset()
		p.check.ledger.Reset()
		p.check.profile.Reset()
		writeJSON(w, answerOf(p.Summary()))
	case "GET " + ControlPrefix + "/drift":
		writeJSON(w, p.Drift())
	case "GET " + ControlPrefix + "/drift/overlay.yaml":
		w.Header().Set("Content-Type", "application/yaml")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Disposition", `attachment; filename="drift-overlay.yaml"`)
		_ = p.WriteOverlay(w)
	case "GET " + ControlPrefix + "/profile":
		writeJSON(w, p.Profile())
	case "GET " + ControlPrefix + "/requests":
		writeJSON(w, p.found.entries())
	case "GET " + ControlPrefix + "/runs":
		limit := 100
		if v := r.URL.Query().Get("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > seenRunsLimit {
				problem(w, http.StatusBadRequest, "Bad request", fmt.Sprintf("limit must be a whole number from 1 to %d, got %q", seenRunsLimit, v))
				return
			}
			limit = n
		}
		writeJSON(w, p.runs.page(limit))
	case "GET " + ControlPrefix + "/report.xml":
		w.Header().Set("Content-Type", "application/xml; charset=utf-8")
		_ = p.WriteJUnit(w)
	case "GET " + ControlPrefix + "/report.html":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:")
		_ = p.WriteHTML(w)
	case "POST " + ControlPrefix + "/record":
		rec, ok := p.opts.Observer.(Recorder)
		if !ok {
			problem(w, http.StatusNotFound, "Not recording", "the proxy records nothing: start it with --record DIR")
			return
		}
		out, err := rec.Write()
		if err != nil {
			problem(w, http.StatusInternalServerError, "Recording not written", err.Error())
			return
		}
		writeJSON(w, out)
	default:
		if id, ok := strings.CutPrefix(path, ControlPrefix+"/runs/"); ok && r.Method == http.MethodGet && id != "" && !strings.Contains(id, "/") {
			if run, seen := p.runs.get(id); seen {
				writeJSON(w, run)
				return
			}
			problem(w, http.StatusNotFound, "Not found", "no answer through the proxy has shown run "+id)
			return
		}
		problem(w, http.StatusNotFound, "Not found", "no such path of the proxy's control API: "+r.Method+" "+r.URL.Path)
	}
}

func (p *Proxy) authorized(r *http.Request) bool {
	if p.opts.ControlToken == "" {
		return true
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	got, want := sha256.Sum256([]byte(strings.TrimSpace(token))), sha256.Sum256([]byte(p.opts.ControlToken))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = writeIndented(w, v)
}

func problem(w http.ResponseWriter, status int, title, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	writeProblemBody(w, map[string]any{"type": "about:blank", "title": title, "status": status, "detail": detail})
}

// writeProblemBody writes a problem's JSON with < and > as they are (a
// detail may quote "Bearer <api key>"); encoding/json would escape them.
func writeProblemBody(w io.Writer, p map[string]any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(p)
}
