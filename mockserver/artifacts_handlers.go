package mockserver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/agentruns/agentruns/mockserver/store"
	"github.com/google/uuid"
)

// Artifacts over HTTP (mockserver/store/artifacts.go): GET
// /agent/artifacts/{artifactUid}, and the mock's own download address that
// the time-limited download_url of a screenshot or a file points to.
//
// A download URL is signed, as a storage service's are: it carries the
// mock session, the artifact and the instant it expires, and an HMAC of the
// three under a key of this server. So whoever has the URL can download
// without credentials until it expires on the mock session's clock (a
// virtual clock too); a changed URL, or one from before a restart, is
// refused, and GET /agent/artifacts/{artifactUid} hands out a new one.

// DownloadTTL is how long a download URL stays valid on the mock
// session's clock, unless Options.LinkLifetime says otherwise.
const DownloadTTL = time.Hour

// MaxLinkLifetime bounds Options.LinkLifetime (--link-lifetime): a week is
// longer than any test keeps a link. A link's expiry is shown no later than
// the last instant a clock shows (linkExpiry).
const MaxLinkLifetime = 7 * 24 * time.Hour

// linkExpiry is when a link handed out at now for ttl expires: at most the
// clock's last instant, so its expiry is always a date-time the API can
// write (a year of four digits).
func linkExpiry(now time.Time, ttl time.Duration) time.Time {
	if t := now.Add(ttl); t.Before(store.MaxInstant) {
		return t
	}
	return store.MaxInstant
}

// downloadsRoot holds every signed link the mock hands out. A path under it
// that is not exactly such a link is a 404, without credentials: a link is
// its own permission, so a mangled one is simply not found.
const downloadsRoot = "/downloads/"

// exactLink reports whether a link's query holds no parameter but those
// named, each at most once: a link as the mock handed it out, not one
// added to. (One missing or changed fails its signature instead.)
func exactLink(q url.Values, names ...string) bool {
	for n, vs := range q {
		if len(vs) != 1 || !slices.Contains(names, n) {
			return false
		}
	}
	return true
}

// notALink is the answer to a link that is not exactly one the mock signed.
func notALink(c *call) response {
	return fail(errorf(codeNotFound, "no such download link: %s (a link is used exactly as the mock handed it out)", truncate(c.r.URL.RequestURI(), 200)))
}

// downloadPrefix is where the mock serves artifacts' bytes.
const downloadPrefix = "/downloads/artifacts/"

// ArtifactResponse is what GET /agent/artifacts/{artifactUid} answers:
// a PlanArtifactResponse, ScreenshotArtifactResponse or FileArtifactResponse.
type ArtifactResponse struct {
	ArtifactUID  string       `json:"artifact_uid"`
	ArtifactType string       `json:"artifact_type"`
	CreatedAt    string       `json:"created_at"`
	Data         ArtifactData `json:"data"`
}

// ArtifactData holds the fields of all three kinds' data; each kind fills
// in its own.
type ArtifactData struct {
	// A plan's.
	DocumentUID string `json:"document_uid,omitempty"`
	NotebookUID string `json:"notebook_uid,omitempty"`
	Title       string `json:"title,omitempty"`
	Content     string `json:"content,omitempty"`
	// A screenshot's and a file's.
	DownloadURL string `json:"download_url,omitempty"`
	ExpiresAt   string `json:"expires_at,omitempty"`
	// A file's.
	Filepath  string `json:"filepath,omitempty"`
	Filename  string `json:"filename,omitempty"`
	SizeBytes *int64 `json:"size_bytes,omitempty"`

	ContentType string `json:"content_type"`
	Description string `json:"description,omitempty"`
}

// getArtifact is GET /agent/artifacts/{artifactUid}.
func (s *Server) getArtifact(c *call) response {
	uid, err := uuid.Parse(c.id)
	if err != nil {
		return fail(errorf(codeInvalidRequest, "artifactUid: %q is not a UUID, as the artifact_uid of a run's artifacts is", truncate(c.id, 80)))
	}
	a, err := c.session.Artifact(c.principal, uid)
	if err != nil {
		return fail(problemOf(err))
	}
	r := a.Run.Run
	out := ArtifactResponse{ArtifactUID: uid.String(), ArtifactType: a.Type, CreatedAt: formatTime(a.CreatedAt())}
	switch a.Type {
	case store.ArtifactPlan:
		out.Data = ArtifactData{
			DocumentUID: store.PlanDocumentPrefix + r.Short(), NotebookUID: store.PlanNotebookPrefix + r.Short(),
			Title: store.PlanTitlePrefix + r.Title, Content: store.PlanContent(r), ContentType: store.PlanContentType,
		}
	case store.ArtifactScreenshot:
		link, expires := s.downloadURL(c, uid)
		out.Data = ArtifactData{DownloadURL: link, ExpiresAt: expires, ContentType: store.ScreenshotMIMEType, Description: store.ScreenshotDesc}
	default: // FILE
		link, expires := s.downloadURL(c, uid)
		size := fileSize(r)
		out.Data = ArtifactData{DownloadURL: link, ExpiresAt: expires, ContentType: store.FileArtifactMIMEType,
			Filepath: store.FileArtifactPath, Filename: store.FileArtifactName, SizeBytes: &size, Description: store.FileArtifactDesc}
	}
	return ok(out)
}

// downloadURL is a signed address of the artifact's bytes on this mock,
// valid for the download lifetime from the mock session's now, and its expiry as the
// API writes times.
func (s *Server) downloadURL(c *call, uid uuid.UUID) (link, expiresAt string) {
	expires := linkExpiry(c.session.Now(), s.downloadTTL)
	session := c.r.Header.Get(SessionHeader)
	scheme := "http"
	if c.r.TLS != nil {
		scheme = "https"
	}
	q := url.Values{}
	q.Set("session", session)
	q.Set("expires", strconv.FormatInt(expires.UnixMilli(), 10))
	q.Set("signature", s.downloadSignature(session, uid.String(), expires.UnixMilli()))
	u := url.URL{Scheme: scheme, Host: c.r.Host, Path: downloadPrefix + uid.String(), RawQuery: q.Encode()}
	return u.String(), formatTime(expires)
}

func (s *Server) downloadSignature(session, uid string, expiresMilli int64) string {
	m := hmac.New(sha256.New, s.downloadKey)
	m.Write([]byte("artifact download\x00" + session + "\x00" + uid + "\x00" + strconv.FormatInt(expiresMilli, 10)))
	return hex.EncodeToString(m.Sum(nil))
}

// downloadArtifact is GET /downloads/artifacts/{artifactUid}: the bytes of
// a screenshot (a PNG) or a file, for a download URL that is this mock's
// and has not expired. It needs no credentials: the signature is the
// permission.
func (s *Server) downloadArtifact(c *call) response {
	q := c.query
	if !exactLink(q, "session", "expires", "signature") {
		return notALink(c)
	}
	session, sig := q.Get("session"), q.Get("signature")
	expiresMilli, err := strconv.ParseInt(q.Get("expires"), 10, 64)
	uid, uerr := uuid.Parse(c.id)
	if err != nil || uerr != nil || sig == "" ||
		!hmac.Equal([]byte(sig), []byte(s.downloadSignature(session, uid.String(), expiresMilli))) {
		return fail(errorf(codeNotAuthorized, "this download URL was not issued by this mock (or was changed, or issued before it restarted): GET /agent/artifacts/{artifactUid} gives a new one"))
	}
	ms := s.store.Existing(session)
	if ms == nil {
		return fail(errorf(codeNotFound, "the mock session this download URL belongs to is closed"))
	}
	expires, now := time.UnixMilli(expiresMilli).UTC(), ms.Now()
	if !now.Before(expires) {
		return fail(errorf(codeNotAuthorized, "this download URL expired at %s (the mock session's clock reads %s): GET /agent/artifacts/%s gives a new one",
			formatTime(expires), formatTime(now), uid))
	}
	a, err := ms.Artifact(nil, uid)
	if err != nil { // the mock session was reset since
		return fail(errorf(codeNotFound, "artifact %s no longer exists in this mock session", uid))
	}
	switch a.Type {
	case store.ArtifactScreenshot:
		return rawBody(store.ScreenshotMIMEType, store.ScreenshotPNG(a.Run.Run))
	case store.ArtifactFile:
		return rawBody(store.FileArtifactMIMEType+"; charset=utf-8", []byte(store.FileContent(a.Run.Run)))
	}
	return fail(errorf(codeNotFound, "artifact %s has nothing to download", uid)) // only screenshots and files are signed

}

// hmacEqual compares two hex signatures in constant time.
func hmacEqual(got, want string) bool { return hmac.Equal([]byte(got), []byte(want)) }
