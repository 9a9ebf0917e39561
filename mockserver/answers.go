package mockserver

import (
	"net/http"
)

// response is what every handler answers: a status, headers and a body,
// or a problem. The pipeline writes it (write); nothing else writes a
// handler's answer.
type response struct {
	status int         // 0: 200 OK
	header http.Header // set on the answer as they are
	// body is encoded as JSON, unless it writes its own JSON (a
	// jsonAppender: runs and pages, runs_json.go); nil: no body.
	body any
	// raw, when set, is the body as it is, sent with header's Content-Type.
	raw     []byte
	problem *apiError // when set, the answer is this problem
}

// ok is a 200 with body as JSON.
func ok(body any) response { return response{body: body} }

// fail is a problem.
func fail(e *apiError) response { return response{problem: e} }

// rawBody is a 200 with body as it is, of the content type.
func rawBody(contentType string, body []byte) response {
	return response{header: http.Header{"Content-Type": {contentType}}, raw: body}
}

// redirectTo is a 302 Found to location.
func redirectTo(location string) response {
	return response{status: http.StatusFound, header: http.Header{"Location": {location}}}
}

// download is a file answered as an attachment.
func download(name, contentType string, body []byte) response {
	return response{raw: body, header: http.Header{
		"Content-Type":        {contentType},
		"Content-Disposition": {`attachment; filename="` + name + `"`},
		"Cache-Control":       {"private, no-store"},
	}}
}

// write sends the response.
func (v response) write(w http.ResponseWriter, r *http.Request) {
	if v.problem != nil {
		writeProblem(w, r, v.problem)
		return
	}
	status := v.status
	if status == 0 {
		status = http.StatusOK
	}
	h := w.Header()
	for k, vals := range v.header {
		h[k] = vals
	}
	switch body := v.body.(type) {
	case nil:
		if v.raw != nil {
			w.WriteHeader(status)
			_, _ = w.Write(v.raw)
			return
		}
		w.WriteHeader(status)
	case jsonAppender: // runs and pages write their own JSON (runs_json.go)
		writeAppended(w, status, body)
	default:
		b, err := marshalUnescaped(body)
		if err != nil {
			writeProblem(w, r, errorf(codeInternal, "encoding the response: %v", err))
			return
		}
		h.Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(b)
	}
}
