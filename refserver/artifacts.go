package refserver

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strings"
	"time"
)

// Artifacts, as the published document describes them: GET
// /agent/artifacts/{artifactUid} answers a plan with its markdown, a
// screenshot or a file with a download link that works without a key until
// its expires_at. A pull request is not fetched there.

// artifactLinkLife is how long a download link works.
const artifactLinkLife = time.Hour

// screenshotPNG is every screenshot's bytes: a small real PNG.
var screenshotPNG = func() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	for x := range 4 {
		img.Set(x, 1, color.RGBA{R: 0x20, G: 0x60, B: 0xa0, A: 0xff})
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}()

// reportFile is every file artifact's bytes, as long as its size_bytes says.
var reportFile = []byte("# Report\n\n" + strings.Repeat("All checks passed.\n", 2048)[:2048-len("# Report\n\n")])

// downloadLink is a download link's secret: what it serves, until when.
type downloadLink struct {
	contentType string
	body        []byte
	expires     time.Time
}

// artifact answers GET /agent/artifacts/{uid} for an artifact one of the
// caller's team's runs shows now.
func (s *Server) artifact(w http.ResponseWriter, r *http.Request, c caller, uid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for _, run := range s.all {
		for _, a := range run.artifacts(run.at(now)) {
			shown := a.(map[string]any)
			data := shown["data"].(map[string]any)
			if str(data["artifact_uid"]) != uid {
				continue
			}
			if run.team() != c.team {
				if s.opts.ForeignNotFound {
					break
				}
				writeProblem(w, r, http.StatusForbidden, "not_authorized", "Not authorized", "the artifact belongs to another team's run")
				return
			}
			writeJSON(w, http.StatusOK, s.artifactResponse(r, run, shown, now))
			return
		}
	}
	notFound(w, r, "no artifact has the uid "+uid)
}

// artifactResponse is the fetched form of an artifact a run shows. Called
// with s.mu held.
func (s *Server) artifactResponse(r *http.Request, run *run, shown map[string]any, now time.Time) map[string]any {
	data := shown["data"].(map[string]any)
	out := map[string]any{"artifact_uid": data["artifact_uid"], "artifact_type": shown["artifact_type"], "created_at": shown["created_at"]}
	link := func(contentType string, body []byte) (string, string) {
		token := newID()
		expires := now.Add(artifactLinkLife)
		s.downloads[token] = downloadLink{contentType: contentType, body: body, expires: expires}
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		return scheme + "://" + r.Host + "/downloads/artifacts/" + token, stamp(expires)
	}
	switch shown["artifact_type"] {
	case "PLAN":
		out["data"] = map[string]any{"document_uid": data["document_uid"], "notebook_uid": "nb-" + run.id[:8], "url": data["url"],
			"title": data["title"], "content": "# Plan\n\n1. " + run.prompt + "\n2. Check the result.\n", "content_type": "text/markdown"}
	case "SCREENSHOT":
		url, expires := link("image/png", screenshotPNG)
		out["data"] = map[string]any{"download_url": url, "expires_at": expires, "content_type": "image/png", "description": data["description"]}
	default:
		url, expires := link("text/markdown", reportFile)
		out["data"] = map[string]any{"download_url": url, "expires_at": expires, "content_type": "text/markdown",
			"filepath": data["filepath"], "filename": data["filename"], "size_bytes": len(reportFile)}
	}
	return out
}

// download serves an artifact's download link, which is its own credential.
func (s *Server) download(w http.ResponseWriter, r *http.Request, token string) {
	s.mu.Lock()
	link, ok := s.downloads[token]
	s.mu.Unlock()
	switch {
	case !ok:
		notFound(w, r, "no such download link")
	case s.now().After(link.expires):
		writeProblem(w, r, http.StatusForbidden, "not_authorized", "Not authorized", "the download link has expired; fetch the artifact again")
	default:
		w.Header().Set("Content-Type", link.contentType)
		_, _ = w.Write(link.body)
	}
}
