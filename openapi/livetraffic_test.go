package openapi

import (
	"strconv"
	"strings"
	"testing"

	"github.com/pb33f/go-yaml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/openapi/facts"
)

// What an overlay of the proxy's drift adds to the document is marked
// x-agentruns-source: live traffic (docs/proxy.md, "The overlay that closes
// it"). Each such addition must have an entry of its own in
// allowedDifferences, whose reason begins "live traffic", so that none
// passes under an entry written for something else: schemas.RunItem.properties
// covers the newest client's members, and would cover a member production
// showed too, without a word about it.
func TestWhatLiveTrafficShowedIsListedAsSuch(t *testing.T) {
	for _, a := range unlistedLiveTraffic(t, Document, allowedDifferences) {
		t.Errorf("%s (at %s) was added from live traffic but has no allowedDifferences entry of its own: "+
			"add {Pattern: `...%s...`, Added: true, Why: \"live traffic: <where and when it was seen, why it stays>\"}", a.token, a.pointer, a.token)
	}
}

// The check names exactly the additions without their own entry.
func TestUnlistedLiveTrafficIsNamed(t *testing.T) {
	doc := []byte(`openapi: 3.1.0
paths:
  /agent/runs:
    get:
      parameters:
        - name: colour
          in: query
          x-agentruns-source: live traffic
      responses:
        "203":
          description: seen
          x-agentruns-source: live traffic
components:
  schemas:
    RunItem:
      properties:
        rollout_ring:
          type: string
          x-agentruns-source: live traffic
        executor:
          type: object
          x-agentruns-source: oz-agent-sdk 1.4.0-alpha.6
`)
	allowed := []facts.Allowance{
		{Pattern: `schemas.RunItem.properties`, Added: true, Why: "oz-agent-sdk 1.4.0-alpha.6: executor"},
		{Pattern: `operations["GET /agent/runs"].responses["203"]`, Added: true, Why: "live traffic: production answers 203 when cached"},
	}
	var got []string
	for _, a := range unlistedLiveTraffic(t, doc, allowed) {
		got = append(got, a.token+" at "+a.pointer)
	}
	assert.Equal(t, []string{
		"query colour at /paths/~1agent~1runs/get/parameters/0",
		"rollout_ring at /components/schemas/RunItem/properties/rollout_ring",
	}, got)
}

// liveAddition is one addition marked as live traffic's: where it is, and
// the name an entry of its own names it by (a member, a status, a media
// type, "query colour" for a parameter, the path of an operation).
type liveAddition struct {
	pointer, token string
}

// unlistedLiveTraffic lists the additions of doc marked as live traffic's
// that no allowance of their own (naming them, its reason beginning "live
// traffic") explains.
func unlistedLiveTraffic(t *testing.T, doc []byte, allowed []facts.Allowance) []liveAddition {
	t.Helper()
	var root yaml.Node
	require.NoError(t, yaml.Unmarshal(doc, &root))
	var out []liveAddition
	var walk func(n *yaml.Node, pointer, key, parentKey string)
	walk = func(n *yaml.Node, pointer, key, parentKey string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, pointer, key, parentKey)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, pointer+"/"+strconv.Itoa(i), key, parentKey)
			}
		case yaml.MappingNode:
			fields := map[string]string{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				fields[n.Content[i].Value] = n.Content[i+1].Value
			}
			if fields["x-agentruns-source"] == "live traffic" {
				token := key
				switch {
				case fields["in"] != "" && fields["name"] != "":
					token = fields["in"] + " " + fields["name"]
				case isMethod(key):
					token = parentKey
				}
				if !listed(token, allowed) {
					out = append(out, liveAddition{pointer: pointer, token: token})
				}
			}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				walk(n.Content[i+1], pointer+"/"+strings.NewReplacer("~", "~0", "/", "~1").Replace(k), k, key)
			}
		}
	}
	walk(&root, "", "", "")
	return out
}

func isMethod(key string) bool {
	switch key {
	case "get", "put", "post", "delete", "options", "head", "patch", "trace":
		return true
	}
	return false
}

func listed(token string, allowed []facts.Allowance) bool {
	for _, a := range allowed {
		if strings.HasPrefix(strings.ToLower(a.Why), "live traffic") && strings.Contains(a.Pattern, token) {
			return true
		}
	}
	return false
}
