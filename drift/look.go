package drift

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/url"
	"strconv"
	"strings"

	"github.com/agentruns/agentruns/openapi"
)

// Kind is what a fact of drift is about.
type Kind string

// The kinds of drift.
const (
	// KindOperation is a method and path the document has no operation
	// for, its template guessed (template.go).
	KindOperation Kind = "operation"
	// KindQueryParameter is a query parameter the operation does not
	// declare, sent in a request the server accepted.
	KindQueryParameter Kind = "query-parameter"
	// KindRequestField is a member of a request body its schema does not
	// declare, in a request the server accepted.
	KindRequestField Kind = "request-field"
	// KindResponseField is a member of an answer its schema does not
	// declare.
	KindResponseField Kind = "response-field"
	// KindEnumValue is a value outside the enum its schema declares.
	KindEnumValue Kind = "enum-value"
	// KindStatus is a status the operation does not document.
	KindStatus Kind = "status"
	// KindContentType is a content type the answer's documented status
	// does not list.
	KindContentType Kind = "content-type"
)

// Exchange is what Look reads of one request and its answer.
type Exchange struct {
	Method string
	Path   string // without the version prefix: /agent/runs
	Query  url.Values
	// RequestContentType and RequestBody are the request's.
	RequestContentType string
	RequestBody        []byte
	// RequestDecoded, when set, is RequestBody decoded as Look decodes it
	// (its first JSON value, numbers as written: json.Number), for a
	// caller that decoded it already: Look then does not again.
	RequestDecoded any
	Status         int
	ContentType    string
	Body           []byte // without its Content-Encoding
	// Decoded, when set, is Body as encoding/json decodes it into any,
	// for a caller that decoded it already: Look then does not again.
	Decoded any
}

// Sighting is one thing one exchange showed: a fact of drift (Drift), or,
// for the profile, a documented status, content type or member.
type Sighting struct {
	Drift       bool
	Kind        Kind
	Operation   string // "GET /agent/runs/{runId}"
	Status      int    // 0 for what is about the request
	ContentType string // the answer's media type, without parameters
	// Location names where in the exchange: "body.runs[].state",
	// "query.colour".
	Location string
	Type     string // the JSON type of the value: string, integer, number, boolean, object, array, null
	// Value is the JSON of a value whose schema declares an enum (and of
	// one outside it, for KindEnumValue).
	Value   string
	Example any // the value itself, for a fact's example
	// Target is where in the document an overlay declares the fact, as a
	// JSONPath; Name is the member, parameter, status or method it adds
	// there.
	Target string
	Name   string
}

// apiPrefix is the part of the API the document covers: the rest (the
// mock's control API, a health check) is not its to declare.
const apiPrefix = "/agent"

// Look walks one exchange against the document and calls seen for each
// fact of drift and each documented status, content type and answer member
// (in no particular order).
func (d *Doc) Look(x Exchange, seen func(Sighting)) {
	if x.Path != apiPrefix && !strings.HasPrefix(x.Path, apiPrefix+"/") {
		return
	}
	ct := mediaType(x.ContentType)
	template, op := d.model.Match(x.Method, x.Path)
	if op == nil {
		d.lookUndocumented(x, template, ct, seen)
		return
	}
	opName := x.Method + " " + template
	opTarget := "$" + key("paths") + key(template) + key(strings.ToLower(x.Method))
	accepted := x.Status >= 200 && x.Status <= 299
	if accepted {
		d.lookRequest(x, opName, opTarget, op, seen)
	}
	resp := op.Response(x.Status)
	seen(Sighting{Kind: KindStatus, Operation: opName, Status: x.Status, ContentType: ct})
	body, isJSON := x.Decoded, x.Decoded != nil
	if !isJSON {
		body, isJSON = decode(ct, x.Body)
	}
	if resp == nil {
		seen(Sighting{Drift: true, Kind: KindStatus, Operation: opName, Status: x.Status, ContentType: ct,
			Location: "status", Example: body, Target: opTarget + key("responses"), Name: strconv.Itoa(x.Status)})
		if isJSON {
			w := walker{op: opName, status: x.Status, ct: ct, seen: seen, profile: true}
			w.shape(body, "body")
		}
		return
	}
	if len(x.Body) == 0 && ct == "" {
		return
	}
	media := resp.Media(ct)
	if media == nil {
		seen(Sighting{Drift: true, Kind: KindContentType, Operation: opName, Status: x.Status, ContentType: ct,
			Location: "content-type", Example: body, Target: refTarget(resp.Where), Name: ct})
		if isJSON {
			w := walker{op: opName, status: x.Status, ct: ct, seen: seen, profile: true}
			w.shape(body, "body")
		}
		return
	}
	if !isJSON || !media.HasSchema {
		return
	}
	w := walker{op: opName, status: x.Status, ct: ct, kind: KindResponseField, drift: true, profile: true, seen: seen}
	w.value(body, media.Schema, "body")
}

// lookUndocumented reports an operation the document lacks, unless the
// server has none either.
func (d *Doc) lookUndocumented(x Exchange, template, ct string, seen func(Sighting)) {
	switch x.Status {
	case 404, 405, 501:
		return // the server does not have it either
	case 401:
		// Refused before routing (the mock answers an unknown path 401 to
		// a caller without a key): it says nothing of the operation.
		return
	}
	target := "$" + key("paths")
	name := strings.ToLower(x.Method)
	if template == "" {
		template = d.templateOf(x.Path)
	} else {
		target += key(template) // the path is documented, the method not
	}
	opName := x.Method + " " + template
	body, isJSON := decode(ct, x.Body)
	seen(Sighting{Drift: true, Kind: KindOperation, Operation: opName, Status: x.Status, ContentType: ct,
		Location: template, Example: body, Target: target, Name: name})
	seen(Sighting{Kind: KindStatus, Operation: opName, Status: x.Status, ContentType: ct})
	if isJSON {
		w := walker{op: opName, status: x.Status, ct: ct, seen: seen, profile: true}
		w.shape(body, "body")
	}
}

// lookRequest reports the query parameters and request members the
// operation does not declare.
func (d *Doc) lookRequest(x Exchange, opName, opTarget string, op *openapi.Operation, seen func(Sighting)) {
	for name, values := range x.Query {
		if op.DeclaresQuery(name) {
			continue
		}
		typ, example := "string", any(values[0])
		if len(values) > 1 {
			typ, example = "array", values
		}
		seen(Sighting{Drift: true, Kind: KindQueryParameter, Operation: opName, Location: "query." + name, Type: typ,
			Example: example, Target: opTarget, Name: name})
	}
	rb := op.RequestBody()
	if rb == nil || len(x.RequestBody) == 0 {
		return
	}
	ct := mediaType(x.RequestContentType)
	media := rb.Media(ct)
	body, isJSON := x.RequestDecoded, x.RequestDecoded != nil && (ct == "" || strings.Contains(ct, "json"))
	if x.RequestDecoded == nil {
		body, isJSON = decode(ct, x.RequestBody)
	}
	if media == nil || !media.HasSchema || !isJSON {
		return
	}
	w := walker{op: opName, kind: KindRequestField, drift: true, seen: seen}
	w.value(body, media.Schema, "body")
}

// mediaType is a Content-Type without its parameters, lower case.
func mediaType(ct string) string {
	if ct == "" {
		return ""
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		return mt
	}
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// decode reads a JSON body, numbers kept as written so that an integer
// is told from a number.
func decode(ct string, body []byte) (any, bool) {
	if len(body) == 0 || ct != "" && !strings.Contains(ct, "json") {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}
