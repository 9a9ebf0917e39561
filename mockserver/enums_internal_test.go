package mockserver

import (
	"testing"

	"github.com/agentruns/agentruns/mockserver/errcode"
	"github.com/agentruns/agentruns/mockserver/store"
	"github.com/agentruns/agentruns/openapi"
	"github.com/pb33f/go-yaml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTablesFollowTheDocument holds the mock's tables of run states, run
// sources and error codes to the enum lists of the OpenAPI document, read
// from the document itself: a value added to (or dropped from) one of them
// in openapi.yaml fails here until the mock knows it.
func TestTablesFollowTheDocument(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Enum []string `yaml:"enum"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	require.NoError(t, yaml.Unmarshal(openapi.Document, &doc))
	enum := func(schema string) []string {
		values := doc.Components.Schemas[schema].Enum
		require.NotEmpty(t, values, "the document has no enum for %s", schema)
		return values
	}

	var states []string
	for _, s := range store.States() {
		states = append(states, string(s))
	}
	assert.ElementsMatch(t, enum("RunState"), states, "run states (mockserver/store/state.go)")

	var srcs []string
	for s := range sources {
		srcs = append(srcs, s)
	}
	assert.ElementsMatch(t, enum("RunSourceType"), srcs, "run sources (runs_query.go)")

	// The mock also answers for its own gateway (405, 413, 415) with codes
	// the document leaves out; every other code is the document's.
	var codes []string
	gateway := map[errcode.Code]bool{}
	for _, c := range errcode.Gateway {
		gateway[c] = true
	}
	for _, c := range errcode.All() {
		if !gateway[c] {
			codes = append(codes, string(c))
		}
	}
	assert.ElementsMatch(t, enum("PlatformErrorCode"), codes, "error codes (mockserver/errcode)")
	for _, c := range enum("PlatformErrorCode") {
		assert.False(t, gateway[errcode.Code(c)], "%s is the document's, not only the gateway's", c)
	}
}
