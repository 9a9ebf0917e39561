package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/agentruns/agentruns/rules"
)

// exchange is one proxied exchange as every reader of it sees it: built
// once (classify), from what forwarding kept, by the first worker to reach
// it. Its bodies are decoded once here, the request's and the answer's,
// and every reader takes them from it: the validator's findings, the
// rules (rules.Exchange.Decoded), the dashboard's runs, the client
// versions, drift and the Observer (the recorder). Which document judges
// it is looked up once too (verdict).
type exchange struct {
	x *pending
	// unchecked, when set, is why the exchange passes unchecked: its
	// answer could not be decoded from its Content-Encoding.
	unchecked string
	// body is the answer without its Content-Encoding.
	body []byte
	// answer is body decoded, answerOK false when it is no JSON (an
	// empty body is answerOK and nil).
	answer   any
	answerOK bool
	// answerAsWritten is body decoded with its numbers as written, for
	// the recorder (Options.Observer), which keeps them so; nil without
	// one. answer is then converted from it, not decoded again.
	answerAsWritten any
	// requestAsWritten is the request's body decoded with its numbers as
	// written (json.Number), its first JSON value, for drift, which tells
	// an integer by how it was written; nil when it is empty or no JSON.
	// The rules read it as encoding/json decodes a whole body, numbers as
	// float64 (ex.Decoded.Request), converted, not decoded again;
	// requestOK is false when encoding/json would not decode it.
	requestAsWritten any
	requestOK        bool
	// ex is the exchange as observed; judged as the rules judge it (as a
	// server of the published document reads it, when one judges).
	ex, judged rules.Exchange
	verdict    verdict
	// repeat is what the same exchange gave before, or will give the next
	// time (repeat.go); nil for one too large to remember.
	repeat *repeat
	// found are the document's findings, issues the request's problems
	// (a request off the document).
	found  []rules.Violation
	issues []string
}

// json is the answer decoded for the readers after the validator: nil for
// another media type than JSON (a body without one is taken as JSON), an
// empty body or one that is no JSON.
func (e *exchange) json() any {
	if ct := e.x.respHeader.Get("Content-Type"); !e.answerOK || ct != "" && !strings.Contains(strings.ToLower(ct), "json") {
		return nil
	}
	return e.answer
}

// classify builds the exchange of x: its answer undone from a gzip
// Content-Encoding, both bodies decoded, the document that judges it.
func (c *checker) classify(x *pending) *exchange {
	e := &exchange{x: x}
	body, err := decoded(x.respHeader, x.respBody.bytes(), c.maxBody)
	switch {
	case errors.Is(err, errDecodedTooLarge):
		// A small gzip answer may decode to a huge one (a bomb): it is
		// not decoded past the size a plain body is checked to, and is
		// counted, not walked, as a plain body over it is.
		e.unchecked = "an answer over the size the proxy checks, once decoded"
		return e
	case err != nil:
		e.unchecked = "an answer body the proxy could not decode: " + err.Error()
		return e
	}
	e.body = body
	rp, fresh := c.repeats.lookup(x, body)
	e.repeat = rp
	if rp != nil && !fresh {
		e.answer, e.answerOK, e.answerAsWritten = rp.answer, rp.answerOK, rp.answerAsWritten // repeat.go
	} else {
		e.answerOK = true
		if len(body) > 0 {
			c.decoding(x, "answer")
			if c.observer != nil {
				var whole bool
				if e.answerAsWritten, whole = decodeAsWritten(body); whole {
					e.answer, e.answerOK = asFloats(e.answerAsWritten)
				} else {
					e.answerAsWritten, e.answerOK = nil, false
				}
				if !e.answerOK {
					e.answer, e.answerAsWritten = nil, nil
				}
			} else {
				e.answerOK = json.Unmarshal(body, &e.answer) == nil
			}
		}
		if rp != nil {
			rp.answer, rp.answerOK, rp.answerAsWritten = e.answer, e.answerOK, e.answerAsWritten
			c.repeats.remember(rp, x, body)
		}
	}
	var forRules any
	if reqBody := x.reqBody.bytes(); len(reqBody) > 0 {
		c.decoding(x, "request")
		var whole bool
		e.requestAsWritten, whole = decodeAsWritten(reqBody)
		if whole {
			forRules, e.requestOK = asFloats(e.requestAsWritten)
		}
	}
	e.ex = rules.Exchange{
		Method: x.method, Path: x.apiPath, Query: x.query, Session: x.session, Caller: x.caller,
		Status: x.status, Body: body, RequestBody: x.reqBody.bytes(), Sent: x.sent, Received: x.received,
		Request: requestName(x.method, x.apiPath, x.query),
		Decoded: &rules.Decoded{Answer: e.answer, AnswerOK: e.answerOK, AnswerAsWritten: e.answerAsWritten, Request: forRules, RequestOK: e.requestOK},
	}
	e.judged = e.ex
	if strings.HasPrefix(x.apiPath, "/agent") {
		e.verdict = c.judge.judging(x) // document.go
		if e.verdict.asPublished {
			e.judged = c.judge.asPublishedServerReads(e.ex, e.verdict.operation)
		}
	}
	return e
}

// decoding counts one body decoded (Options.decoded, for tests).
func (c *checker) decoding(x *pending, part string) {
	if c.decoded != nil {
		c.decoded(x, part)
	}
}

// decodeAsWritten decodes the first JSON value of a body with its numbers
// as written (nil when there is none); whole is true when that value is
// the whole body, as encoding/json.Unmarshal wants it.
func decodeAsWritten(body []byte) (v any, whole bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil, false
	}
	_, err := dec.Token()
	return v, err == io.EOF
}

// asFloats is v, decoded with its numbers as written, as encoding/json
// decodes the same body into an any: numbers as float64. ok is false for a
// number no float64 holds, which encoding/json refuses.
func asFloats(v any) (any, bool) {
	switch val := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(val), 64)
		return f, err == nil
	case map[string]any:
		out := make(map[string]any, len(val))
		for k, e := range val {
			f, ok := asFloats(e)
			if !ok {
				return nil, false
			}
			out[k] = f
		}
		return out, true
	case []any:
		out := make([]any, len(val))
		for i, e := range val {
			f, ok := asFloats(e)
			if !ok {
				return nil, false
			}
			out[i] = f
		}
		return out, true
	}
	return v, true
}
