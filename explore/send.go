package explore

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxAnswerBytes bounds the answer kept of one call: a page of 500 runs
// fits.
const maxAnswerBytes = 8 << 20

// sent is one exchange as it went: the call, and what the judges need of
// the answer besides.
type sent struct {
	call           Call
	header         http.Header
	sentAt, gotAt  time.Time
	err            error // no answer came
	op             *operation
	decoded        any // the answer's JSON, nil when it is none
	decodedOK      bool
	requestDecoded any
}

// send sends c (Method, Path, Query, Body, Team) to the server and fills in
// what came back.
func (e *explorer) send(ctx context.Context, c Call, session string) sent {
	u := *e.base
	// c.Path is written as it goes in a URL (its ids escaped once): it is
	// the path as sent, not a path to escape again.
	raw := strings.TrimSuffix(e.base.EscapedPath(), "/") + c.Path
	if p, err := url.PathUnescape(raw); err == nil {
		u.Path, u.RawPath = p, raw
	} else {
		u.Path, u.RawPath = raw, ""
	}
	u.RawQuery = encodeQuery(c.Query)
	var body io.Reader
	if c.Body != nil {
		body = bytes.NewReader(c.Body)
	}
	s := sent{call: c}
	req, err := http.NewRequestWithContext(ctx, c.Method, u.String(), body)
	if err != nil {
		s.err = err
		return s
	}
	key := e.o.APIKey
	if c.Team == OtherTeam {
		key = e.o.OtherAPIKey
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if c.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if session != "" {
		req.Header.Set("X-Mock-Session", session)
	}
	s.sentAt = time.Now()
	resp, err := e.hc.Do(req)
	e.calls++
	if c.Team == OtherTeam {
		e.result.OtherTeamCalls++
	}
	if err != nil {
		s.err = err
		s.gotAt = time.Now()
		return s
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	s.gotAt = time.Now()
	if err != nil {
		s.err = err
		return s
	}
	s.call.Status, s.call.Answer, s.header = resp.StatusCode, data, resp.Header
	if len(data) > 0 {
		s.decodedOK = json.Unmarshal(data, &s.decoded) == nil
	}
	if c.Body != nil {
		_ = json.Unmarshal(c.Body, &s.requestDecoded)
	}
	return s
}

// encodeQuery writes q with its keys in order and a deepObject key's
// brackets as written, so that a call reads as it was sent.
func encodeQuery(q url.Values) string {
	var b strings.Builder
	for _, k := range sortedKeys(q) {
		for _, v := range q[k] {
			if b.Len() > 0 {
				b.WriteByte('&')
			}
			b.WriteString(url.QueryEscape(k))
			b.WriteByte('=')
			b.WriteString(url.QueryEscape(v))
		}
	}
	return b.String()
}

// control calls the mock's control API in session; nil when the server has
// none.
func (e *explorer) control(ctx context.Context, method, path, session string, body any) (int, []byte) {
	if e.controlURL == nil {
		return 0, nil
	}
	var r io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.controlURL.String()+path, r)
	if err != nil {
		return 0, nil
	}
	if e.o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.o.APIKey)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-Mock-Session", session)
	resp, err := e.hc.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, data
}

// detectControl finds the mock's control API next to the API or at the
// root of its host, as the suite does (steps/control.go).
func detectControl(ctx context.Context, hc *http.Client, base *url.URL) *url.URL {
	for _, p := range []string{strings.TrimSuffix(base.Path, "/") + "/__mock", "/__mock"} {
		u := &url.URL{Scheme: base.Scheme, Host: base.Host, User: base.User, Path: p}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String()+"/info", nil)
		if err != nil {
			continue
		}
		resp, err := hc.Do(req)
		if err != nil {
			continue
		}
		var info struct {
			Mock string `json:"mock"`
		}
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && json.Unmarshal(data, &info) == nil && info.Mock == "agentruns" {
			return u
		}
	}
	return nil
}
