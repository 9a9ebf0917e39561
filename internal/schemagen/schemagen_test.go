package schemagen_test

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/internal/schemagen"
	"github.com/agentruns/agentruns/openapi"
)

// concrete turns a path template into a path the validator routes.
func concrete(path string) string {
	for strings.Contains(path, "{") {
		i, j := strings.IndexByte(path, '{'), strings.IndexByte(path, '}')
		path = path[:i] + "x1" + path[j+1:]
	}
	return path
}

// Most drawn request bodies and answers pass the real validator at once:
// the generator reads the document's keywords rightly, and Draw's retries
// are for the rare value a keyword it reads loosely refuses.
func TestDrawnBodiesFollowTheDocument(t *testing.T) {
	v, err := openapi.NewValidator()
	require.NoError(t, err)
	g, err := schemagen.New(embedded(t), rand.New(rand.NewSource(3)))
	require.NoError(t, err)
	ops := g.Operations()
	require.Contains(t, ops, "POST /agent/runs")
	require.Contains(t, ops, "POST /agent/identities")
	drawn, valid := 0, 0
	for _, optional := range []float64{1, 0.5, 0} {
		g.Optional = optional
		for _, op := range ops {
			method, path, _ := strings.Cut(op, " ")
			for range 10 {
				body, ok := g.RequestBody(method, path)
				require.True(t, ok, op)
				data, err := json.Marshal(body)
				require.NoError(t, err)
				req := httptest.NewRequest(method, concrete(path), bytes.NewReader(data))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer k")
				drawn++
				if err := v.ValidateRequestBody(req, data); err == nil {
					valid++
				} else {
					t.Logf("%s: %v", op, err)
				}
			}
		}
		for _, op := range []string{"GET /agent/runs", "GET /agent/runs/{runId}", "GET /agent/identities", "GET /agent/environments", "GET /agent/models", "GET /agent/schedules"} {
			method, path, _ := strings.Cut(op, " ")
			for range 10 {
				body, ok := g.Response(method, path, "200")
				require.True(t, ok, op)
				data, err := json.Marshal(body)
				require.NoError(t, err)
				req := httptest.NewRequest(method, concrete(path), nil)
				resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader(data)), Request: req}
				drawn++
				if err := v.ValidateResponse(req, resp); err == nil {
					valid++
				} else {
					t.Logf("%s: %v", op, err)
				}
			}
		}
	}
	assert.GreaterOrEqual(t, float64(valid), 0.9*float64(drawn), "%d of %d drawn bodies valid", valid, drawn)
}

// Optional 1 puts in every property a schema names.
func TestEveryPropertyWhenOptionalIsOne(t *testing.T) {
	g, err := schemagen.New(embedded(t), rand.New(rand.NewSource(1)))
	require.NoError(t, err)
	cfg := g.Component("AmbientAgentConfig").(map[string]any)
	for _, name := range []string{"harness_auth_secrets", "mcp_servers", "credential_strategy", "inference_providers", "memory_stores", "session_sharing"} {
		assert.Contains(t, cfg, name)
	}
}

// embedded is the model of the project's document.
func embedded(t *testing.T) *openapi.Model {
	t.Helper()
	m, err := openapi.Embedded()
	require.NoError(t, err)
	return m
}
