package proxy

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"

	"github.com/agentruns/agentruns/openapi"
	"github.com/agentruns/agentruns/rules"
)

// Which document the upstream is held to. The embedded document is the
// published one (May 2026) with what the newest official client added; a
// server built to the published document never shows the fields only the
// newest client requires, and is no worse for it. So, as the contract
// suite does, the proxy judges by the surface the upstream serves unless
// told otherwise: the published view (openapi.PublishedView) until the
// upstream answers one of the newest client's own operations with a
// success, the whole document from then on. The operator can instead name
// the document: the published view, the newest client's, or a file.

// Document names what the proxy holds the upstream to (Options.Document,
// --proxy-document).
type Document string

const (
	// ServedSurface judges by the surface the upstream serves (the
	// default, also "served").
	ServedSurface Document = "served"
	// PublishedDocument holds the upstream to the published document:
	// the newest client's additions accepted, never required.
	PublishedDocument Document = "published"
	// NewestDocument holds the upstream to the whole embedded document,
	// what the newest client requires included.
	NewestDocument Document = "newest"
)

// ParseDocument reads --proxy-document: served, published, newest, or the
// path of an OpenAPI document (YAML or JSON), which is read and checked.
func ParseDocument(s string) (Document, error) {
	switch d := Document(strings.TrimSpace(s)); d {
	case "", ServedSurface:
		return ServedSurface, nil
	case PublishedDocument, NewestDocument:
		return d, nil
	}
	if _, err := os.Stat(s); err != nil {
		return "", fmt.Errorf("want served, published, newest or an OpenAPI document's file: %w", err)
	}
	return Document(s), nil
}

// judge holds the validators and says which one judges an exchange.
type judge struct {
	// fixed, when set, judges everything: the document was named.
	fixed *openapi.Validator
	name  string // what the summary says of a named document
	// file is the named document's text, when it was named by its file:
	// drift is what the upstream does beyond it, and the overlay extends it.
	file []byte

	// For ServedSurface: the published view until the upstream served one
	// of newestOps, the whole document after. For PublishedDocument: the
	// published view always (onlyPublished).
	published, newest *openapi.Validator
	onlyPublished     bool
	newestOps         map[string]bool
	// newestParts are what of each operation's request only the newest
	// client sends: what a server of the published document ignores.
	newestParts map[string]openapi.NewestRequestParts

	// served is the first of newestOps answered with a success, nil
	// before.
	served atomic.Pointer[string]
}

// newJudge builds what judges the upstream: v, when given, judges all
// (Options.Validator); otherwise doc says.
func newJudge(v *openapi.Validator, doc Document) (*judge, error) {
	if v != nil {
		return &judge{fixed: v, name: "the document given"}, nil
	}
	switch doc {
	case NewestDocument:
		v, err := openapi.NewValidator()
		return &judge{fixed: v, name: "the newest client's document (named)"}, err
	case "", ServedSurface, PublishedDocument:
	default:
		data, err := os.ReadFile(string(doc))
		if err != nil {
			return nil, fmt.Errorf("--proxy-document: %w", err)
		}
		v, err := openapi.NewValidatorFromBytes(data)
		if err != nil {
			return nil, fmt.Errorf("--proxy-document %s: %w", doc, err)
		}
		return &judge{fixed: v, name: string(doc), file: data}, nil
	}
	j := &judge{onlyPublished: doc == PublishedDocument}
	var err error
	if j.published, err = openapi.NewPublishedValidator(); err != nil {
		return nil, err
	}
	if j.newest, err = openapi.NewValidator(); err != nil {
		return nil, err
	}
	if j.newestOps, err = openapi.NewestClientOperations(openapi.Document); err != nil {
		return nil, err
	}
	if j.newestParts, err = openapi.NewestClientRequestParts(openapi.Document); err != nil {
		return nil, err
	}
	return j, nil
}

// verdict is how one exchange is judged.
type verdict struct {
	validator *openapi.Validator
	// operation is the documented operation, "METHOD /template"; "" when
	// it was not looked up (a named document judges).
	operation string
	// asPublished: the exchange is judged as a server of the published
	// document reads it, without what only the newest client sends.
	asPublished bool
	// notServed: one of the newest client's own operations, answered
	// 404, 405 or 501 by a server judged by the published document,
	// which does not have it. Its answer is not held to the operation.
	notServed bool
	// lacked: the judging document has no such operation and the upstream
	// answered 404, 405 or 501, as a server of that document does. It is
	// no drift: the upstream serves what it is held to.
	lacked bool
}

// refusesUnserved reports whether status is how a server says it has no
// such operation.
func refusesUnserved(status int) bool {
	return status == http.StatusNotFound || status == http.StatusMethodNotAllowed || status == http.StatusNotImplemented
}

// lacks reports whether v, the judging document, has no operation for x
// and the upstream answered as a server without it does.
func lacks(v *openapi.Validator, x *pending) bool {
	if !refusesUnserved(x.status) {
		return false
	}
	_, ok := v.Operation(&http.Request{Method: x.method, URL: &url.URL{Path: x.path}, Host: "upstream"})
	return !ok
}

// judging says how x is judged. An answer to one of the newest client's
// operations that succeeded shows the upstream serves that surface: it,
// and every exchange checked after it, is judged by the whole document.
// Exchanges checked on other workers at the same moment may still be
// judged by the published view; none is judged more strictly than the
// surface the upstream showed.
func (j *judge) judging(x *pending) verdict {
	if j.fixed != nil {
		return verdict{validator: j.fixed, lacked: lacks(j.fixed, x)}
	}
	if !j.onlyPublished && j.served.Load() != nil {
		return verdict{validator: j.newest}
	}
	r := &http.Request{Method: x.method, URL: &url.URL{Path: x.path}, Host: "upstream"}
	op, _ := j.newest.Operation(r)
	if !j.onlyPublished && x.status >= 200 && x.status <= 299 && j.newestOps[op] {
		evidence := fmt.Sprintf("%s answered %d", op, x.status)
		j.served.CompareAndSwap(nil, &evidence)
		return verdict{validator: j.newest, operation: op}
	}
	notServed := j.newestOps[op] && refusesUnserved(x.status)
	return verdict{validator: j.published, operation: op, asPublished: true, notServed: notServed,
		lacked: notServed || lacks(j.published, x)}
}

// asPublishedServerReads is ex as a server of the published document reads
// it: without the query parameters and body fields only the newest client
// sends, which such a server ignores. The rules across answers then never
// hold it to a filter or a field it does not have (a listing by executor,
// the metadata a creation sent). The body is taken out of ex.Decoded, which
// the rules read; RequestBody stays as sent.
func (j *judge) asPublishedServerReads(ex rules.Exchange, op string) rules.Exchange {
	parts, ok := j.newestParts[op]
	if !ok {
		return ex
	}
	if len(parts.Query) > 0 && len(ex.Query) > 0 {
		q := url.Values{}
		for k, vs := range ex.Query {
			name, _, _ := strings.Cut(k, "[")
			if !parts.Query[name] {
				q[k] = vs
			}
		}
		ex.Query = q
	}
	if len(parts.Body) > 0 && ex.Decoded != nil {
		// The rules read the request from its decoded body.
		if body, ok := ex.Decoded.Request.(map[string]any); ok {
			kept := make(map[string]any, len(body))
			for k, v := range body {
				if !parts.Body[k] {
					kept[k] = v
				}
			}
			d := *ex.Decoded
			d.Request = kept
			ex.Decoded = &d
		}
	}
	return ex
}

// describe says which document judges the upstream, for the summary.
func (j *judge) describe() string {
	switch {
	case j.fixed != nil:
		return j.name
	case j.onlyPublished:
		return "the published document (named)"
	}
	if served := j.served.Load(); served != nil {
		return "the newest client's document: the upstream serves its surface (" + *served + ")"
	}
	return "the published document: the upstream has served none of the newest client's own operations so far"
}
