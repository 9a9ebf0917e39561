package drift_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/drift"
	"github.com/agentruns/agentruns/internal/suitetest"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/openapi"
	"github.com/agentruns/agentruns/proxy"
	"github.com/agentruns/agentruns/refserver"
)

// Drift: the proxy names what a server does that the document does not
// declare, the overlay it writes declares exactly that, and two servers
// given the same traffic are compared by the shape of their answers
// (package drift, docs/proxy.md "Drift").

// The mock, the reference server and the proxy as the tests of several
// packages start them (package suitetest).
var (
	newReferenceServer = suitetest.NewReferenceServer
	newProxy           = suitetest.NewProxy
	foundBy            = suitetest.FoundBy
	describe           = suitetest.Describe
)

func newMock(t *testing.T, opts mockserver.Options) *httptest.Server {
	return suitetest.NewMock(t, opts, nil)
}

// call sends one request with the team's key and returns the status and
// body.
func call(t *testing.T, method, url, body string, header ...string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer wk-mock-alice")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b
}

// probeTraffic is the same few requests for any server: a run created,
// looked at once it has ended (finish makes it end, talking to the server
// directly, not through the proxy), found by its metadata, the models and
// the environments. Nothing in it depends on how fast the server is.
func probeTraffic(t *testing.T, through string, finish func(runID string)) string {
	t.Helper()
	status, body := call(t, "POST", through+"/agent/run", `{"prompt":"Summarise the changelog","title":"drift probe","metadata":{"probe":"drift"}}`)
	require.Equal(t, http.StatusOK, status, string(body))
	var created struct {
		RunID string `json:"run_id"`
	}
	require.NoError(t, json.Unmarshal(body, &created))
	finish(created.RunID)
	status, body = call(t, "GET", through+"/agent/runs/"+created.RunID, "")
	require.Equal(t, http.StatusOK, status, string(body))
	status, body = call(t, "GET", through+"/agent/runs?metadata%5Bprobe%5D=drift&limit=5", "")
	require.Equal(t, http.StatusOK, status, string(body))
	call(t, "GET", through+"/agent/models", "")
	call(t, "GET", through+"/agent/environments", "")
	return created.RunID
}

// waitForEnd polls a server directly until the run has ended.
func waitForEnd(t *testing.T, base string) func(string) {
	return func(id string) {
		require.Eventually(t, func() bool {
			_, body := call(t, "GET", base+"/agent/runs/"+id, "")
			var run struct {
				State string `json:"state"`
			}
			_ = json.Unmarshal(body, &run)
			return run.State == "SUCCEEDED" || run.State == "FAILED" || run.State == "ERROR" || run.State == "CANCELLED"
		}, time.Minute, 5*time.Millisecond)
	}
}

// movedTraffic is probeTraffic plus what only a server that moved ahead of
// the document answers: the undocumented status and operation.
func movedTraffic(t *testing.T, through, upstream string) {
	t.Helper()
	id := probeTraffic(t, through, waitForEnd(t, upstream))
	status, _ := call(t, "GET", through+"/agent/models", "", "Prefer", "status=203")
	require.Equal(t, http.StatusNonAuthoritativeInfo, status)
	status, body := call(t, "GET", through+"/agent/runs/"+id+"/usage", "")
	require.Equal(t, http.StatusOK, status, string(body))
}

func driftOf(t *testing.T, p *proxy.Proxy) drift.Report {
	t.Helper()
	return foundBy(t, p).Drift
}

// A reference server that answers an undocumented member in every open
// object, a value outside an enum, an undocumented status and an operation
// the document lacks: the drift names each, and nothing else. Applied, the
// overlay it writes leaves the same traffic no drift and no violation.
func TestDriftNamesEachExtraAndTheOverlayClosesIt(t *testing.T) {
	upstream := newReferenceServer(t, refserver.Options{Step: time.Millisecond, Extras: true})
	p, base := newProxy(t, upstream, proxy.Options{})
	movedTraffic(t, base, upstream)
	report := driftOf(t, p)

	kinds := map[drift.Kind]int{}
	for _, f := range report.Facts {
		kinds[f.Kind]++
		switch f.Kind {
		case drift.KindResponseField:
			assert.True(t, strings.HasSuffix(f.Location, ".rollout_ring"), "only the extra member: %+v", f)
			assert.Equal(t, []string{"string"}, f.Types)
			assert.Equal(t, `"canary"`, f.Example)
		case drift.KindEnumValue:
			assert.Equal(t, `"SLACK_WORKFLOW"`, f.Value, "%+v", f)
			assert.True(t, strings.HasSuffix(f.Location, "source"), "%+v", f)
		case drift.KindStatus:
			assert.Equal(t, "GET /agent/models", f.Operation)
			assert.Equal(t, 203, f.Status)
		case drift.KindOperation:
			assert.Equal(t, "GET /agent/runs/{runId}/usage", f.Operation)
		default:
			t.Errorf("drift the server does not have: %+v", f)
		}
	}
	assert.Equal(t, 1, kinds[drift.KindStatus])
	assert.Equal(t, 1, kinds[drift.KindOperation])
	assert.NotZero(t, kinds[drift.KindEnumValue])
	locations := map[string]bool{}
	for _, f := range report.Facts {
		locations[f.Operation+" "+f.Location] = true
	}
	for _, want := range []string{
		"POST /agent/run body.rollout_ring",
		"GET /agent/runs/{runId} body.rollout_ring",
		"GET /agent/runs/{runId} body.creator.rollout_ring",
		"GET /agent/runs body.rollout_ring",
		"GET /agent/runs body.runs[].rollout_ring",
		"GET /agent/models body.rollout_ring",
		"GET /agent/environments body.rollout_ring",
	} {
		assert.True(t, locations[want], "drift names %s; it has %v", want, locations)
	}

	var ov bytes.Buffer
	require.NoError(t, p.WriteOverlay(&ov))
	applied, err := drift.Apply(openapi.Document, ov.Bytes())
	require.NoError(t, err)
	d2, err := drift.New(applied)
	require.NoError(t, err)
	v2, err := openapi.NewValidatorFromBytes(applied)
	require.NoError(t, err)
	before := foundBy(t, p)
	assert.NotZero(t, before.Violations, "the value outside its enum and the status break the document as it is")

	p2, base2 := newProxy(t, upstream, proxy.Options{Drift: d2, Validator: v2})
	movedTraffic(t, base2, upstream)
	after := foundBy(t, p2)
	assert.Empty(t, after.Drift.Facts, "the overlay declares everything the traffic showed")
	assert.Zero(t, after.Violations, describe(after))
}

// The mock and the reference server, given the same traffic through the
// proxy, differ where they legitimately may (the list below, each with
// why), and nowhere else: not in ids or times, which always differ.
func TestTheMockComparedWithTheReferenceServer(t *testing.T) {
	mock := newMock(t, mockserver.Options{ClockMode: mockserver.VirtualClock}).URL
	pm, mockBase := newProxy(t, mock, proxy.Options{})
	probeTraffic(t, mockBase, func(string) {
		status, body := call(t, "POST", mock+"/__mock/clock/advance", `{"by":"1h"}`)
		require.Equal(t, http.StatusOK, status, string(body))
	})
	ref := newReferenceServer(t, refserver.Options{Step: time.Millisecond})
	pr, refBase := newProxy(t, ref, proxy.Options{})
	probeTraffic(t, refBase, waitForEnd(t, ref))

	foundBy(t, pm)
	foundBy(t, pr)
	got := drift.Compare(pm.Profile(), pr.Profile())
	var b strings.Builder
	require.NoError(t, drift.WriteTable(&b, got, "mock", "reference"))
	t.Logf("\n%s", b.String())
	var lines []string
	for _, d := range got {
		lines = append(lines, d.Operation+" "+d.What+" "+d.Location+": "+d.Left+" | "+d.Right)
	}
	assert.Equal(t, knownDifferences, lines)
}

// knownDifferences are how the mock's answers to probeTraffic differ from
// the reference server's today: both follow the document, which leaves
// these members optional and these values open.
var knownDifferences = []string{
	// The mock's fixture environments are configured and in use; the
	// reference server's are bare.
	"GET /agent/environments field body.environments[].config.description: null|string | ",
	"GET /agent/environments field body.environments[].config.github_repos: array | ",
	"GET /agent/environments field body.environments[].config.providers: object | ",
	"GET /agent/environments field body.environments[].config.setup_commands: array | ",
	"GET /agent/environments field body.environments[].creator: object | ",
	"GET /agent/environments field body.environments[].last_task_created: object | ",
	"GET /agent/environments field body.environments[].last_task_run_timestamp: null|string | ",
	"GET /agent/environments field body.environments[].scope: object | ",
	// The mock's models say more, and are disabled for other reasons.
	"GET /agent/models field body.models[].description: string | ",
	`GET /agent/models value body.models[].disable_reason: "PROVIDER_OUTAGE", "REQUIRES_UPGRADE" | "ADMIN_DISABLED"`,
	// The reference server's runs end with artifacts; the run this traffic
	// makes on the mock ends without (a fate can ask for them).
	"GET /agent/runs field body.runs[].artifacts:  | array",
	// The mock shows a creator's and an executor's email and photo, and
	// the newer usage figures.
	"GET /agent/runs field body.runs[].creator.email: string | ",
	"GET /agent/runs field body.runs[].creator.photo_url: string | ",
	"GET /agent/runs field body.runs[].executor.email: string | ",
	"GET /agent/runs field body.runs[].executor.photo_url: string | ",
	"GET /agent/runs field body.runs[].request_usage.compute_cost_usd: number | ",
	"GET /agent/runs field body.runs[].request_usage.inference_cost_usd: number | ",
	"GET /agent/runs field body.runs[].request_usage.platform_cost: number | ",
	"GET /agent/runs field body.runs[].request_usage.platform_cost_usd: number | ",
	"GET /agent/runs field body.runs[].request_usage.total_tokens: integer | ",
	"GET /agent/runs/{runId} field body.artifacts:  | array",
	"GET /agent/runs/{runId} field body.creator.email: string | ",
	"GET /agent/runs/{runId} field body.creator.photo_url: string | ",
	"GET /agent/runs/{runId} field body.executor.email: string | ",
	"GET /agent/runs/{runId} field body.executor.photo_url: string | ",
	"GET /agent/runs/{runId} field body.request_usage.compute_cost_usd: number | ",
	"GET /agent/runs/{runId} field body.request_usage.inference_cost_usd: number | ",
	"GET /agent/runs/{runId} field body.request_usage.platform_cost: number | ",
	"GET /agent/runs/{runId} field body.request_usage.platform_cost_usd: number | ",
	"GET /agent/runs/{runId} field body.request_usage.total_tokens: integer | ",
}
