package mockserver

import (
	"net/url"
	"strconv"
	"time"
)

// Follow-ups and handoff files over HTTP (mockserver/store/followups.go and
// handoff.go): POST /agent/runs/{runId}/followups, GET
// /agent/runs/{runId}/handoff/attachments, and the signed download of a
// handoff file.

// followupRequest is a RunFollowupRequest.
type followupRequest struct {
	Message *string `json:"message"`
	Mode    *string `json:"mode"`
}

// followupAccepted is the empty object a follow-up is answered with: what
// it did shows in the run.
type followupAccepted struct{}

// submitFollowup is POST /agent/runs/{runId}/followups.
func (s *Server) submitFollowup(c *call) response {
	var req followupRequest
	if aerr := c.fill(&req); aerr != nil {
		return fail(aerr)
	}
	var message, mode string
	if req.Message != nil {
		message = *req.Message
	}
	if req.Mode != nil && *req.Mode != "normal" {
		mode = *req.Mode
	}
	if _, err := c.session.Followup(c.principal, c.id, message, mode); err != nil {
		return fail(problemOf(err))
	}
	return ok(followupAccepted{})
}

// HandoffAttachment is one handoff file as the API lists it.
type HandoffAttachment struct {
	AttachmentID string `json:"attachment_id"`
	DownloadURL  string `json:"download_url"`
	Filename     string `json:"filename"`
	MimeType     string `json:"mime_type,omitempty"`
}

// HandoffAttachments answers GET /agent/runs/{runId}/handoff/attachments.
type HandoffAttachments struct {
	Attachments []HandoffAttachment `json:"attachments"`
}

// handoffPrefix is where the mock serves handoff files' bytes.
const handoffPrefix = "/downloads/handoff/"

// listHandoffAttachments is GET /agent/runs/{runId}/handoff/attachments:
// each call signs new links, valid for the download lifetime.
func (s *Server) listHandoffAttachments(c *call) response {
	v, files, err := c.session.Handoff(c.principal, c.id)
	if err != nil {
		return fail(problemOf(err))
	}
	out := HandoffAttachments{Attachments: make([]HandoffAttachment, 0, len(files))}
	for _, f := range files {
		out.Attachments = append(out.Attachments, HandoffAttachment{
			AttachmentID: f.ID, Filename: f.Name, MimeType: f.MIMEType, DownloadURL: s.handoffURL(c, v.Run.ID, f.ID),
		})
	}
	return ok(out)
}

// handoffURL is a signed address of a handoff file's bytes, as
// downloadURL is an artifact's: whoever has it may download until it
// expires on the mock session's clock.
func (s *Server) handoffURL(c *call, runID, fileID string) string {
	expires := linkExpiry(c.session.Now(), s.downloadTTL).UnixMilli()
	session := c.r.Header.Get(SessionHeader)
	scheme := "http"
	if c.r.TLS != nil {
		scheme = "https"
	}
	q := url.Values{}
	q.Set("run", runID)
	q.Set("session", session)
	q.Set("expires", strconv.FormatInt(expires, 10))
	q.Set("signature", s.downloadSignature(session, "handoff\x00"+runID+"\x00"+fileID, expires))
	u := url.URL{Scheme: scheme, Host: c.r.Host, Path: handoffPrefix + fileID, RawQuery: q.Encode()}
	return u.String()
}

// downloadHandoff is GET /downloads/handoff/{attachmentId}: a handoff
// file's bytes, for a link this mock signed that has not expired.
func (s *Server) downloadHandoff(c *call) response {
	q := c.query
	if !exactLink(q, "run", "session", "expires", "signature") {
		return notALink(c)
	}
	runID, session, sig := q.Get("run"), q.Get("session"), q.Get("signature")
	expiresMilli, err := strconv.ParseInt(q.Get("expires"), 10, 64)
	if err != nil || sig == "" || !hmacEqual(sig, s.downloadSignature(session, "handoff\x00"+runID+"\x00"+c.id, expiresMilli)) {
		return fail(errorf(codeNotAuthorized, "this download URL was not issued by this mock (or was changed, or issued before it restarted): GET /agent/runs/{runId}/handoff/attachments gives a new one"))
	}
	ms := s.store.Existing(session)
	if ms == nil {
		return fail(errorf(codeNotFound, "the mock session this download URL belongs to is closed"))
	}
	expires, now := time.UnixMilli(expiresMilli).UTC(), ms.Now()
	if !now.Before(expires) {
		return fail(errorf(codeNotAuthorized, "this download URL expired at %s (the mock session's clock reads %s): GET /agent/runs/%s/handoff/attachments gives a new one",
			formatTime(expires), formatTime(now), runID))
	}
	f, body, err := ms.HandoffContent(runID, c.id)
	if err != nil { // the mock session was reset, or the run started again, since
		return fail(problemOf(err))
	}
	return rawBody(f.MIMEType, body)
}
