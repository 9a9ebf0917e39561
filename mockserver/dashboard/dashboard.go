// Package dashboard is the mock's web page, served at /__mock/ui/: the
// sessions, their runs moving through their states, the selected run's
// messages, run events, schedules with their next tick, agent identities,
// the clock, the fault and fate rules and the request journal. It is static files embedded in the
// binary (no build step, nothing fetched from elsewhere); the page reads
// everything through the mock's own control API and the API, as clients do.
package dashboard

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var static embed.FS

// Handler serves the page and its assets from the root of its URL space;
// mount it with http.StripPrefix.
func Handler() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded folder is part of this package
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "the dashboard is read with GET", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		// The page loads its own script and style and talks to this server
		// only; nothing inline, nothing from elsewhere.
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
