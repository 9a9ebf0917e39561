package drift_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/drift"
)

func embedded(t *testing.T) *drift.Doc {
	t.Helper()
	d, err := drift.Embedded()
	require.NoError(t, err)
	return d
}

func decoded(t *testing.T, s string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	return v
}

// A run's members that RunItem does not declare are its extras, by
// pointer, the topmost of each branch whole; declared ones are not, nor
// the members of a free-form object.
func TestExtrasAreTheMembersTheSchemaDoesNotDeclare(t *testing.T) {
	d := embedded(t)
	run := decoded(t, `{"run_id":"r1","task_id":"r1","title":"t","prompt":"p","state":"FAILED","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z",
		"rollout_ring":"canary","status_message":{"message":"m","hint":{"a":1}},"creator":{"type":"USER","uid":"u","x/y":true},
		"agent_config":{"model_id":"m"}}`)
	got := d.Extras("RunItem", run)
	assert.Equal(t, map[string]json.RawMessage{
		"/rollout_ring":        json.RawMessage(`"canary"`),
		"/status_message/hint": json.RawMessage(`{"a":1}`),
		"/creator/x~1y":        json.RawMessage(`true`),
	}, got)
	assert.Nil(t, d.Extras("RunItem", decoded(t, `{"run_id":"r1","state":"QUEUED"}`)))
	assert.Nil(t, d.Extras("NoSuchSchema", run))
}

func profileOf(t *testing.T, bodies ...string) drift.ProfileData {
	t.Helper()
	d := embedded(t)
	p := drift.NewProfile()
	for _, b := range bodies {
		d.Look(drift.Exchange{Method: "GET", Path: "/agent/runs/x", Status: 200, ContentType: "application/json", Body: []byte(b)}, p.Add)
	}
	return p.Data()
}

// Two servers' answers that differ only in ids, times, the order of
// members and whether a cost happens to be whole are alike; a member or
// an enum value seen on one side only is not.
func TestCompareSeesOnlyWhatDiffersInShape(t *testing.T) {
	a := profileOf(t, `{"run_id":"a1","title":"one","state":"SUCCEEDED","created_at":"2026-01-01T00:00:00Z","request_usage":{"inference_cost":0.5}}`)
	b := profileOf(t, `{"request_usage":{"inference_cost":0},"created_at":"2027-05-05T10:00:00Z","state":"SUCCEEDED","title":"two","run_id":"b2"}`)
	assert.Empty(t, drift.Compare(a, b))

	c := profileOf(t, `{"run_id":"c3","title":"three","state":"FAILED","created_at":"2026-01-01T00:00:00Z","session_link":"https://example.com/s"}`)
	got := drift.Compare(a, c)
	var what []string
	for _, d := range got {
		what = append(what, d.What+" "+d.Location+": "+d.Left+" | "+d.Right)
	}
	assert.Equal(t, []string{
		"field body.request_usage: object | ", // what it holds is on one side only too: not listed again
		"field body.session_link:  | string",
		`value body.state: "SUCCEEDED" | "FAILED"`,
	}, what)
}

// Past its bound the ledger counts distinct facts it does not keep, so a
// server that answers a new member every time costs no more memory.
func TestTheLedgerKeepsItsBoundAndCountsTheRest(t *testing.T) {
	l := drift.NewLedger(2)
	at := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 5; i++ {
		for range 2 { // each seen twice: counted once
			l.Add(drift.Sighting{Drift: true, Kind: drift.KindResponseField, Operation: "GET /agent/runs", Status: 200,
				Location: fmt.Sprintf("body.member_%d", i), Type: "string", Example: "x", Name: fmt.Sprintf("member_%d", i)}, at)
		}
	}
	l.Add(drift.Sighting{Kind: drift.KindResponseField, Location: "body.title"}, at) // documented: not drift
	r := l.Report()
	assert.Len(t, r.Facts, 2)
	assert.Equal(t, 2, r.Facts[0].Count)
	assert.Equal(t, 3, r.Dropped)
	assert.Equal(t, 5, r.Distinct)
	l.Reset()
	assert.Empty(t, l.Report().Facts)
}

// A secret's example is replaced, as a recording replaces it.
func TestAnExampleKeepsNoSecret(t *testing.T) {
	l := drift.NewLedger(0)
	l.Add(drift.Sighting{Drift: true, Kind: drift.KindResponseField, Operation: "GET /agent/runs/{runId}", Status: 200,
		Location: "body.api_token", Type: "string", Example: "sk-live-123", Name: "api_token"}, time.Now())
	r := l.Report()
	require.Len(t, r.Facts, 1)
	assert.NotContains(t, r.Facts[0].Example, "sk-live-123")
}
