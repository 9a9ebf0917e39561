package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"time"

	"github.com/agentruns/agentruns/drift"
)

// Beside the violations, the proxy keeps what the traffic shows that the
// document does not declare (package drift): an operation it lacks, a
// query parameter, a member, a value outside an enum, a status or a content
// type. Undocumented is not wrong, so drift fails nothing; it is served by
// the control API (GET /__mock/proxy's "drift", /__mock/proxy/drift and
// the overlay that declares it, /__mock/proxy/drift/overlay.yaml), shown on
// the dashboard and in the HTML report. The profile (/__mock/proxy/profile)
// is the shape of every answer, documented or not, for comparing two
// servers given the same traffic (agentruns-drift compare).

// OverlayExtends is the document the proxy's overlay is written against,
// unless --proxy-document names a file (the overlay then extends it).
const OverlayExtends = "openapi/openapi.yaml"

// lookForDrift walks one checked exchange against the document; every
// worker calls it (the ledger and the profile lock). An exchange the
// judging document lacks the operation of, answered 404, 405 or 501
// (lacked: the suite probing the newest client's operations on a server
// held to the published document), is no drift of the upstream: the
// profile keeps it, the ledger does not. Drift reads the bodies as the
// exchange decoded them.
func (c *checker) lookForDrift(e *exchange) {
	if c.drift == nil {
		return
	}
	x := e.x
	seen := func(s drift.Sighting) {
		// A request without credentials is answered by the server's
		// door, not its API: what it shows is no drift of the upstream
		// (the profile, two servers' answers to the same traffic, keeps it).
		if x.caller != "" && !e.verdict.lacked {
			c.ledger.Add(s, x.received)
		}
		c.profile.Add(s)
	}
	look := func(seen func(drift.Sighting)) {
		c.drift.Look(drift.Exchange{
			Method: x.method, Path: x.apiPath, Query: x.query,
			RequestContentType: x.header.Get("Content-Type"), RequestBody: x.reqBody.bytes(), RequestDecoded: e.requestAsWritten,
			Status: x.status, ContentType: x.respHeader.Get("Content-Type"), Body: e.body, Decoded: e.json(),
		}, seen)
	}
	if e.repeat == nil {
		look(seen)
		return
	}
	// The same exchange shows the same sightings: walked once, and once
	// the profile holds them all, they only count (repeat.go).
	e.repeat.walked.Do(func() {
		look(func(s drift.Sighting) { e.repeat.sightings = append(e.repeat.sightings, s) })
	})
	for _, s := range e.repeat.sightings {
		if s.Drift && x.caller != "" && !e.verdict.lacked {
			c.ledger.Add(s, x.received)
		}
	}
	c.profile.AddAgain(e.repeat.sightings, &e.repeat.profiled)
}

// Drift is what the traffic showed that the document does not declare.
func (p *Proxy) Drift() drift.Report { return p.check.ledger.Report() }

// Profile is the shape of the answers seen.
func (p *Proxy) Profile() drift.ProfileData { return p.check.profile.Data() }

// WriteDrift writes the drift as JSON.
func (p *Proxy) WriteDrift(w io.Writer) error { return writeIndented(w, p.Drift()) }

// WriteProfile writes the profile as JSON.
func (p *Proxy) WriteProfile(w io.Writer) error { return writeIndented(w, p.Profile()) }

// WriteOverlay writes the drift as an OpenAPI Overlay of the document.
func (p *Proxy) WriteOverlay(w io.Writer) error {
	ov, err := drift.Overlay(p.Drift().Facts, p.overlayExtends, time.Now())
	if err != nil {
		return err
	}
	_, err = w.Write(ov)
	return err
}

// writeIndented writes v as indented JSON, with what a terminal would
// act on (the C1 controls such as U+009B, DEL, the characters that reorder
// text) written as \u escapes: member names and values come from
// traffic, and these answers and files are read with curl and cat as
// often as by programs, which read the escapes back as the characters.
func writeIndented(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(drift.PrintableJSON(b.Bytes()))
	return err
}
