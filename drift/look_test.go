package drift_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/drift"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/openapi"
)

// served is one exchange with the bundled mock, as the proxy would see it.
type served struct {
	x      drift.Exchange
	header http.Header
}

func serve(t *testing.T, m http.Handler, method, target, body string) served {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r := httptest.NewRequest(method, target, rd)
	r.Header.Set("Authorization", "Bearer wk-mock-alice")
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, r)
	u, _ := url.Parse(target)
	return served{x: drift.Exchange{Method: method, Path: u.Path, Query: u.Query(), RequestContentType: r.Header.Get("Content-Type"),
		RequestBody: []byte(body), Status: rec.Code, ContentType: rec.Header().Get("Content-Type"), Body: rec.Body.Bytes()}, header: rec.Header()}
}

// edit rewrites a JSON body.
func edit(t *testing.T, body []byte, change func(doc map[string]any)) []byte {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal(body, &doc))
	change(doc)
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}

// moved is traffic of a service that moved ahead of the document: the
// mock's own answers, each changed the way a newer server would answer.
func moved(t *testing.T) []served {
	m, err := mockserver.New(mockserver.Options{})
	require.NoError(t, err)
	var out []served

	create := serve(t, m, "POST", "/agent/run", `{"prompt":"Tidy the README","priority":"high"}`)
	require.Equal(t, 200, create.x.Status, string(create.x.Body))
	var created struct {
		RunID string `json:"run_id"`
	}
	require.NoError(t, json.Unmarshal(create.x.Body, &created))
	out = append(out, create)

	page := serve(t, m, "GET", "/agent/runs?limit=2", "")
	require.Equal(t, 200, page.x.Status)
	page.x.Query.Set("colour", "blue")
	page.x.Query.Set("metadata[ticket_id]", "T-1") // documented: metadata is a deepObject
	page.x.Body = edit(t, page.x.Body, func(doc map[string]any) {
		doc["rollout_ring"] = "canary"
		for i, r := range doc["runs"].([]any) {
			run := r.(map[string]any)
			run["rollout_ring"] = "canary"
			run["creator"].(map[string]any)["team_role"] = "owner"
			if i == 0 {
				run["source"] = "SLACK_WORKFLOW"
			}
		}
	})
	out = append(out, page)

	one := serve(t, m, "GET", "/agent/runs/"+created.RunID, "")
	require.Equal(t, 200, one.x.Status)
	one.x.Body = edit(t, one.x.Body, func(doc map[string]any) { doc["rollout_ring"] = "canary" })
	out = append(out, one)

	models := serve(t, m, "GET", "/agent/models", "")
	models.x.Status = 203
	out = append(out, models)

	envs := serve(t, m, "GET", "/agent/environments", "")
	require.Equal(t, 200, envs.x.Status)
	envs.x.ContentType = "application/vnd.agentruns+json"
	out = append(out, envs)

	usage := serve(t, m, "GET", "/agent/runs/"+created.RunID+"/usage", "")
	usage.x.Status, usage.x.ContentType = 200, "application/json"
	usage.x.Body = []byte(`{"run_id":"` + created.RunID + `","credits_used":12}`)
	out = append(out, usage)

	missing := serve(t, m, "GET", "/agent/nothing-here", "")
	require.Equal(t, 404, missing.x.Status)
	out = append(out, missing)
	return out
}

func look(d *drift.Doc, traffic []served) (*drift.Ledger, *drift.Profile) {
	l, p := drift.NewLedger(0), drift.NewProfile()
	at := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	for i, s := range traffic {
		d.Look(s.x, func(sg drift.Sighting) {
			l.Add(sg, at.Add(time.Duration(i)*time.Second))
			p.Add(sg)
		})
	}
	return l, p
}

func names(r drift.Report) []string {
	var out []string
	for _, f := range r.Facts {
		s := string(f.Kind) + " " + f.Operation + " " + f.Location
		if f.Value != "" {
			s += " " + f.Value
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Each thing the moved service does that the document does not declare is
// one fact, and nothing else is: not the members the document declares,
// not the path the server answers 404 too.
func TestDriftNamesWhatTheDocumentDoesNotDeclare(t *testing.T) {
	d := embedded(t)
	traffic := moved(t)
	l, _ := look(d, traffic)
	r := l.Report()
	assert.Equal(t, []string{
		"content-type GET /agent/environments content-type",
		"enum-value GET /agent/runs body.runs[].source \"SLACK_WORKFLOW\"",
		"operation GET /agent/runs/{runId}/usage /agent/runs/{runId}/usage",
		"query-parameter GET /agent/runs query.colour",
		"request-field POST /agent/run body.priority",
		"response-field GET /agent/runs body.rollout_ring",
		"response-field GET /agent/runs body.runs[].creator.team_role",
		"response-field GET /agent/runs body.runs[].rollout_ring",
		"response-field GET /agent/runs/{runId} body.rollout_ring",
		"status GET /agent/models status",
	}, names(r))
	assert.Equal(t, len(r.Facts), r.Distinct)
	for _, f := range r.Facts {
		switch f.Location {
		case "body.runs[].rollout_ring":
			assert.Equal(t, 2, f.Count, "once per run of the page")
			assert.Equal(t, []string{"string"}, f.Types)
			assert.Equal(t, `"canary"`, f.Example)
			assert.Equal(t, 200, f.Status)
			assert.Equal(t, "$['components']['schemas']['RunItem']", f.Target)
		case "body.priority":
			assert.Equal(t, 0, f.Status, "about the request")
		}
	}

	// The same answers decoded already (as encoding/json decodes them, for
	// a caller that reads them for more) show the same drift.
	var given []served
	for _, s := range traffic {
		if err := json.Unmarshal(s.x.Body, &s.x.Decoded); err != nil {
			s.x.Decoded = nil
		}
		given = append(given, s)
	}
	lg, _ := look(d, given)
	assert.Equal(t, names(r), names(lg.Report()))

	// A refused request says nothing of what the server takes.
	m, err := mockserver.New(mockserver.Options{})
	require.NoError(t, err)
	refused := serve(t, m, "POST", "/agent/run?colour=blue", `{"priority":"high"}`)
	require.Equal(t, 400, refused.x.Status)
	l2, _ := look(d, []served{refused})
	assert.Empty(t, l2.Report().Facts)
}

// Applied to the document, the overlay declares every fact: the same
// traffic then shows no drift, and the validator built from the new
// document finds nothing wrong with it.
func TestTheOverlayClosesTheDrift(t *testing.T) {
	d := embedded(t)
	traffic := moved(t)
	l, _ := look(d, traffic)
	before := l.Report()
	require.NotEmpty(t, before.Facts)

	ov, err := drift.Overlay(before.Facts, "openapi.yaml", time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	assert.Contains(t, string(ov), "overlay: 1.0.0")
	assert.Contains(t, string(ov), "x-agentruns-source: live traffic", "marked as the document marks what it holds beyond the published one")
	assert.Contains(t, string(ov), "Seen in live traffic 3 time(s)", "a member missing from one schema is counted over every operation it was seen in")
	assert.Contains(t, string(ov), "and 1 other place(s)")
	assert.Contains(t, string(ov), "example: blue", "a parameter comes with its example")
	assert.Contains(t, string(ov), "default_model_id", "a new status comes with the answer seen")
	applied, err := drift.Apply(openapi.Document, ov)
	require.NoError(t, err, string(ov))

	d2, err := drift.New(applied)
	require.NoError(t, err)
	l2, _ := look(d2, traffic)
	assert.Empty(t, l2.Report().Facts, string(ov))

	v, err := openapi.NewValidatorFromBytes(applied)
	require.NoError(t, err, "the overlaid document is a valid OpenAPI document")
	for _, s := range traffic {
		if s.x.Status == 404 {
			continue
		}
		req := httptest.NewRequest(s.x.Method, s.x.Path+"?"+s.x.Query.Encode(), bytes.NewReader(s.x.RequestBody))
		req.Header.Set("Authorization", "Bearer wk-mock-alice")
		if len(s.x.RequestBody) > 0 {
			req.Header.Set("Content-Type", "application/json")
		}
		h := s.header.Clone()
		h.Set("Content-Type", s.x.ContentType)
		resp := &http.Response{StatusCode: s.x.Status, Header: h, Body: io.NopCloser(bytes.NewReader(s.x.Body)), Request: req}
		assert.NoError(t, v.ValidateResponse(req, resp), "%s %s", s.x.Method, s.x.Path)
	}
}

// An overlay for another document is refused, not half applied.
func TestAnOverlayForAnotherDocumentIsRefused(t *testing.T) {
	ov := []byte("overlay: 1.0.0\ninfo:\n  title: t\n  version: \"1\"\nactions:\n  - target: $['components']['schemas']['NoSuchSchema']\n    update:\n      properties:\n        x:\n          type: string\n")
	_, err := drift.Apply(openapi.Document, ov)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "NoSuchSchema")
}

// Without drift the overlay is still one (Overlay 1.0 asks for an action)
// and applying it changes nothing the document says.
func TestTheOverlayOfNoDriftChangesNothing(t *testing.T) {
	ov, err := drift.Overlay(nil, "openapi/openapi.yaml", time.Now())
	require.NoError(t, err)
	applied, err := drift.Apply(openapi.Document, ov)
	require.NoError(t, err)
	d, err := drift.New(applied)
	require.NoError(t, err)
	l, _ := look(d, moved(t))
	l0, _ := look(embedded(t), moved(t))
	assert.Equal(t, names(l0.Report()), names(l.Report()))
}

// A value of another JSON type than its enum's is no new value of it: a
// number where the states are strings is the validator's to report, and
// an overlay adding 5 to a list of strings would declare nonsense. A
// string outside the list still is one.
func TestAValueOfAnotherTypeIsNoNewEnumValue(t *testing.T) {
	d := embedded(t)
	l := drift.NewLedger(0)
	for _, state := range []string{`5`, `true`, `{"a":1}`, `"PAUSED"`} {
		d.Look(drift.Exchange{Method: "GET", Path: "/agent/runs", Status: 200, ContentType: "application/json",
			Body: []byte(`{"runs":[{"run_id":"r1","state":` + state + `}],"page_info":{"has_next_page":false}}`)},
			func(s drift.Sighting) { l.Add(s, time.Now()) })
	}
	var values []string
	for _, f := range l.Report().Facts {
		if f.Kind == drift.KindEnumValue {
			values = append(values, f.Value)
		}
	}
	assert.Equal(t, []string{`"PAUSED"`}, values)
}
