package drift_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentruns/agentruns/drift"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/openapi"
)

// The proxy looks for drift in every exchange it checks, beside the
// validator's check of the same answer: these two benchmarks put the two
// costs side by side for the costliest common answer, a page of 20 runs.

func pageOf20(b *testing.B) served {
	m, err := mockserver.New(mockserver.Options{})
	if err != nil {
		b.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/agent/runs?limit=20", nil)
	r.Header.Set("Authorization", "Bearer wk-mock-alice")
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, r)
	return served{x: drift.Exchange{Method: "GET", Path: "/agent/runs", Query: r.URL.Query(), Status: rec.Code,
		ContentType: rec.Header().Get("Content-Type"), Body: rec.Body.Bytes()}, header: rec.Header()}
}

func BenchmarkLookPageOf20(b *testing.B) {
	d, err := drift.Embedded()
	if err != nil {
		b.Fatal(err)
	}
	s := pageOf20(b)
	l, p := drift.NewLedger(0), drift.NewProfile()
	at := time.Now()
	b.SetBytes(int64(len(s.x.Body)))
	b.ReportAllocs()
	for b.Loop() {
		d.Look(s.x, func(sg drift.Sighting) { l.Add(sg, at); p.Add(sg) })
	}
}

func BenchmarkValidatePageOf20(b *testing.B) {
	v, err := openapi.NewValidator()
	if err != nil {
		b.Fatal(err)
	}
	s := pageOf20(b)
	req := httptest.NewRequest("GET", "/agent/runs?limit=20", nil)
	req.Header.Set("Authorization", "Bearer wk-mock-alice")
	b.SetBytes(int64(len(s.x.Body)))
	b.ReportAllocs()
	for b.Loop() {
		resp := &http.Response{StatusCode: s.x.Status, Header: s.header, Body: io.NopCloser(bytes.NewReader(s.x.Body)), Request: req}
		if err := v.ValidateResponse(req, resp); err != nil {
			b.Fatal(err)
		}
	}
}
