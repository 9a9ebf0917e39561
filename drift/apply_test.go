package drift_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pb33f/go-yaml"
	"github.com/pb33f/libopenapi"
	applier "github.com/pb33f/libopenapi/overlay"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/drift"
	"github.com/agentruns/agentruns/openapi"
)

// byTheEngine is the document the overlay engine makes of doc, action by
// action as the overlay lists them, written as Apply writes it.
func byTheEngine(t *testing.T, doc, overlay []byte) []byte {
	t.Helper()
	ov, err := libopenapi.NewOverlayDocument(overlay)
	require.NoError(t, err)
	res, err := applier.Apply(doc, ov)
	require.NoError(t, err)
	require.Empty(t, res.Warnings)
	var root yaml.Node
	require.NoError(t, yaml.Unmarshal(res.Bytes, &root))
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	require.NoError(t, enc.Encode(&root))
	require.NoError(t, enc.Close())
	return b.Bytes()
}

func overlayOf(actions ...string) []byte {
	return []byte("overlay: 1.0.0\ninfo: {title: t, version: \"1\"}\nactions:\n" + strings.Join(actions, ""))
}

func update(target, yamlUpdate string) string {
	return fmt.Sprintf("  - target: %s\n    update: %s\n", target, yamlUpdate)
}

// Apply merges the updates of one object wherever they stand in the
// overlay (so that its time grows with the actions, not their square):
// the document it makes is the one the engine makes applying each action
// in turn, whatever else stands between them.
func TestApplyMakesTheDocumentTheActionsMakeInTurn(t *testing.T) {
	const (
		runItem  = "$['components']['schemas']['RunItem']"
		pageInfo = "$['components']['schemas']['PageInfo']"
		state    = "$['components']['schemas']['RunState']"
	)
	l, _ := look(embedded(t), moved(t))
	fromTraffic, err := drift.Overlay(l.Report().Facts, "openapi.yaml", time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC))
	require.NoError(t, err)

	for name, ov := range map[string][]byte{
		"written from traffic": fromTraffic,
		"two objects in turn": overlayOf(
			update(runItem, "{properties: {a: {type: string}}}"),
			update(pageInfo, "{properties: {b: {type: string}}}"),
			update(runItem, "{properties: {c: {type: string}, a: {description: twice}}}"),
			update(pageInfo, "{properties: {d: {type: string}}}"),
			update(state, "{enum: [NEW]}"),
			update(runItem, "{required: [c]}"),
			update(state, "{enum: [NEWER]}"),
		),
		"an object and one inside it": overlayOf(
			update(runItem, "{properties: {a: {type: string}}}"),
			update(runItem+"['properties']", "{b: {type: string}}"),
			update(runItem, "{properties: {c: {type: string}}}"),
			update("$['components']['schemas']", "{New: {type: object}}"),
			update(pageInfo, "{properties: {d: {type: string}}}"),
			update("$['components']['schemas']", "{Newer: {type: object}}"),
		),
		"a place made by an action before": overlayOf(
			update(pageInfo, "{properties: {a: {type: object, properties: {x: {type: string}}}}}"),
			update(runItem, "{properties: {b: {type: string}}}"),
			update(pageInfo+"['properties']['a']['properties']", "{y: {type: string}}"),
			update(runItem, "{properties: {c: {type: string}}}"),
			update(pageInfo+"['properties']['a']", "{properties: {z: {type: string}}}"),
		),
		"a removal between": overlayOf(
			update(runItem, "{properties: {a: {type: string}}}"),
			update(pageInfo, "{properties: {b: {type: string}}}"),
			"  - target: "+runItem+"['properties']['a']\n    remove: true\n",
			update(runItem, "{properties: {a: {type: integer}}}"),
			update(pageInfo, "{properties: {c: {type: string}}}"),
		),
		"removals first": overlayOf(
			"  - target: "+runItem+"['properties']['title']\n    remove: true\n",
			"  - target: $.paths.*.delete\n    remove: true\n",
			update(runItem, "{properties: {a: {type: string}}}"),
			update(pageInfo, "{properties: {b: {type: string}}}"),
			update(runItem, "{properties: {title: {type: integer}}}"),
			update(pageInfo, "{properties: {c: {type: string}}}"),
		),
		"a removed place made again": overlayOf(
			"  - target: "+runItem+"['properties']\n    remove: true\n",
			update(pageInfo, "{properties: {a: {type: string}}}"),
			update(runItem, "{properties: {b: {type: string}}}"),
			update(runItem+"['properties']", "{c: {type: string}}"),
			update(pageInfo, "{properties: {d: {type: string}}}"),
			update(runItem+"['properties']", "{e: {type: string}}"),
			update(runItem, "{properties: {f: {type: string}}}"),
		),
		"a wildcard between": overlayOf(
			update(runItem, "{properties: {a: {type: string}}}"),
			update("$.paths.*.get", "{x-seen: true}"),
			update(runItem, "{properties: {b: {type: string}}}"),
			update(pageInfo, "{x-order: 1}"),
			update("$.paths['/agent/runs']", "{x-seen: 1}"),
			update(pageInfo, "{x-order: 2}"),
		),
		"new paths and members in turn": overlayOf(
			update("$.paths", "{/seen/1: {get: {responses: {'200': {description: seen}}}}}"),
			update(runItem, "{properties: {a: {type: string}}}"),
			update("$.paths", "{/seen/2: {get: {responses: {'200': {description: seen}}}}}"),
			update(runItem, "{properties: {b: {type: string}}}"),
			update("$.paths", "{/seen/1: {post: {responses: {'201': {description: seen}}}}}"),
		),
	} {
		got, err := drift.Apply(openapi.Document, ov)
		require.NoError(t, err, name)
		require.Equal(t, string(byTheEngine(t, openapi.Document, ov)), string(got), name)
	}
}

// An overlay for another document, each of its many actions matching
// nothing, is refused naming the first few, not with every one of them.
func TestAnOverlayMatchingNothingIsRefusedInAFewLines(t *testing.T) {
	var actions []string
	for i := range 1000 {
		actions = append(actions, update(fmt.Sprintf("$['components']['schemas']['Gone%d']", i), "{x-seen: true}"))
	}
	_, err := drift.Apply(openapi.Document, overlayOf(actions...))
	require.Error(t, err)
	require.Contains(t, err.Error(), "Gone0")
	require.Contains(t, err.Error(), "; and 990 more")
	require.NotContains(t, err.Error(), "Gone10'")
}
