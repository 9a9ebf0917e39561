package openapi

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pb33f/go-yaml"
	"github.com/pb33f/libopenapi"
	"github.com/stretchr/testify/require"
)

// The engine merges an update of a few members into a wide object by a
// scan of its members, so the updates of one object must reach it as one
// action, however they alternate with the updates of another: 1,000
// actions taking turns on two objects are two actions for the engine.
func TestUpdatesOfOneObjectReachTheEngineAsOneWhereverTheyStand(t *testing.T) {
	var b strings.Builder
	b.WriteString("overlay: 1.0.0\ninfo: {title: t, version: \"1\"}\nactions:\n")
	// A removal first does not stop it: what it removes is known.
	b.WriteString("  - target: $['components']['schemas']['PageInfo']\n    remove: true\n")
	for i := range 1000 {
		if i%2 == 0 {
			fmt.Fprintf(&b, "  - target: $.paths\n    update: {/seen/%d: {get: {responses: {'200': {description: seen}}}}}\n", i)
		} else {
			fmt.Fprintf(&b, "  - target: $['components']['schemas']['RunItem']\n    update: {properties: {seen_%d: {type: string}}}\n", i)
		}
	}
	ov, err := libopenapi.NewOverlayDocument([]byte(b.String()))
	require.NoError(t, err)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(Document, &doc))
	merged := coalesce(&doc, ov.Actions)
	require.Equal(t, 3, len(merged), "actions reaching the engine")
	require.True(t, merged[0].Remove)
	require.Equal(t, 2*500, len(merged[1].Update.Content), "one new path per action on $.paths")
	require.Equal(t, "$.paths", merged[1].Target)
}
