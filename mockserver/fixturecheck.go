package mockserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/agentruns/agentruns/drift"
	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/internal/extras"
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
// declares: the mock sends those members itself, from the fixture's own
// fields, and an extra of the same name would be a second, silent answer
// for them. An extra is the topmost member the document does not declare,
// as the recorder keeps them; one inside another undocumented member
// belongs in that member's value. The document is read only when some
// fixture has extras.
func checkExtras(set *fixtures.Set) error {
	type object struct {
		where, component string
		extra            fixtures.Extra
	}
	var objects []object
	for _, r := range set.Runs {
		objects = append(objects, object{"runs.json: run " + r.ID, "RunItem", r.Extra})
	}
	for _, e := range set.Environments {
		objects = append(objects, object{"environments.json: " + e.UID, "CloudEnvironment", e.Extra})
	}
	for _, m := range set.Models {
		objects = append(objects, object{"models.json: " + m.ID, "ModelInfo", m.Extra})
	}
	for _, a := range set.Identities {
		objects = append(objects, object{"identities.json: " + a.UID, "AgentResponse", a.Extra})
	}
	for _, sc := range set.Schedules {
		objects = append(objects, object{"schedules.json: schedule " + sc.ID, "ScheduledAgentItem", sc.Extra})
	}
	var doc *drift.Doc
	var errs []error
	for _, o := range objects {
		for _, ptr := range o.extra.Pointers() {
			if doc == nil {
				var err error
				if doc, err = drift.Embedded(); err != nil {
					return fmt.Errorf("fixtures: checking extra members: %w", err)
				}
			}
			if err := CheckExtra(doc, o.component, ptr, o.extra[ptr]); err != nil {
				errs = append(errs, fmt.Errorf("fixtures: %s: %w", o.where, err))
			}
		}
	}
	return errors.Join(errs...)
}

// CheckExtra says why the mock would refuse an extra member at ptr, with
// value, of an object of the document's component schema (RunItem,
// CloudEnvironment, ModelInfo, AgentResponse, ScheduledAgentItem): the
// document declares it, or it lies inside a member the document does not
// declare (which is then the extra, whole). nil when the mock takes it.
func CheckExtra(doc *drift.Doc, component, ptr string, value json.RawMessage) error {
	found := doc.Extras(component, extras.Skeleton(ptr, value))
	if _, ok := found[ptr]; ok {
		return nil
	}
	for p := range found {
		if strings.HasPrefix(ptr, p+"/") {
			return fmt.Errorf("extra %q lies inside %q, which the document does not declare either: keep the whole member at %q", ptr, p, p)
		}
	}
	return fmt.Errorf("extra %q is a member the document declares (%s): the mock sends it itself, from the fixture's own fields", ptr, component)
}
