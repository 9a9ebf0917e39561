package mockserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/openapi"
)

// checkFixtureRuns shows every fixture run as GET /agent/runs/{runId} would
// and holds it to the OpenAPI document, the same schemas the API answers
// are held to: a fixture with a state, source or artifact type the API does
// not have is refused at start, naming its file and run, rather than served.
func (s *Server) checkFixtureRuns(set *fixtures.Set) error {
	ms, err := s.store.Open("")
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range set.Runs {
		v, err := ms.Run(f.ID)
		if err != nil {
			errs = append(errs, fmt.Errorf("fixtures: runs.json: run %s: %v", f.ID, err))
			continue
		}
		// The answer as sent, with the run's extra members (undocumented,
		// which the document's open objects allow).
		body := runJSON{v, s.sessionLinkBase}.appendJSON(nil)
		req := &http.Request{Method: http.MethodGet, URL: &url.URL{Scheme: "http", Host: "mock", Path: "/agent/runs/" + f.ID}, Header: http.Header{}}
		resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(bytes.NewReader(body)), Request: req}
		if err := s.validator.ValidateResponse(req, resp); err != nil {
			errs = append(errs, fmt.Errorf("fixtures: runs.json: run %s does not fit the API's Run schema: %s", f.ID, findings(err)))
		}
	}
	return errors.Join(errs...)
}

func findings(err error) string {
	var ve *openapi.ValidationError
	if errors.As(err, &ve) && len(ve.Findings) > 0 {
		var b bytes.Buffer
		for i, f := range ve.Findings {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(f.Field + ": " + f.Message)
		}
		return b.String()
	}
	return err.Error()
}

// The embedded fixtures never change, so the many mocks a test suite builds
// check them once.
var (
	embeddedCheck    sync.Once
	embeddedCheckErr error
)

// checkExtras refuses an extra member of a fixture that the document
// declares (fixtures.CheckExtras); the document's model is read only when
// some fixture has extras.
func checkExtras(set *fixtures.Set) error {
	return fixtures.CheckExtras(set, func() (fixtures.Document, error) { return openapi.Embedded() })
}
