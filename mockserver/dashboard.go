package mockserver

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/agentruns/agentruns/mockserver/dashboard"
)

// ObserverHeader marks an API request made to look, not to test: the
// dashboard's. Such a request is answered as any other, but it is left out
// of the request journal and no fault rule matches it, so watching a session
// never changes what its clients see.
const ObserverHeader = "X-Mock-Observer"

// requestLogLevel is the level of a request's log line: Debug for what the
// dashboard fetches to look (its page and its reads, marked with
// ObserverHeader), which it repeats every few seconds and would otherwise
// flood the console; Info for everything else.
func requestLogLevel(r *http.Request) slog.Level {
	if r.Method == http.MethodGet && (r.Header.Get(ObserverHeader) != "" || strings.HasPrefix(r.URL.Path, "/__mock/ui")) {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

var dashboardHandler = http.StripPrefix("/__mock/ui", dashboard.Handler())

// dashboard serves the page at /__mock/ui/, static files that need no token
// and open no mock session: the page's data come from the control API,
// which asks for the token. Like the control API, it is off under
// --no-control (serve checks that first).
func (s *Server) dashboard(w http.ResponseWriter, r *http.Request, path string) {
	if path == "/__mock/ui" {
		http.Redirect(w, r, strings.TrimSuffix(r.URL.Path, "/")+"/", http.StatusMovedPermanently)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		e := errorf(codeMethodNotAllowed, "%s is not allowed on %s; the dashboard is read with GET", r.Method, r.URL.Path)
		e.allow = "GET, HEAD"
		writeProblem(w, r, e)
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath = path, ""
	nf := &notFoundCatcher{ResponseWriter: w}
	dashboardHandler.ServeHTTP(nf, r2)
	if nf.caught {
		writeProblem(w, r, errorf(codeNotFound, "the dashboard has no file %s", r.URL.Path))
	}
}

// notFoundCatcher holds back the file server's text/plain 404, so the
// dashboard answers it as a problem like the rest of the mock.
type notFoundCatcher struct {
	http.ResponseWriter
	caught bool
}

func (w *notFoundCatcher) WriteHeader(code int) {
	if code == http.StatusNotFound {
		w.caught = true
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *notFoundCatcher) Write(b []byte) (int, error) {
	if w.caught {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}
