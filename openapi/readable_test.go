package openapi

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// tiny is a document of one operation answering status; paths is its
// path, schemas its components' schemas.
func tiny(path, status, schemas string) string {
	return "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  " + path + ":\n    get:\n      responses:\n        '" + status +
		"':\n          description: ok\n          content:\n            application/json:\n              schema: {$ref: '#/components/schemas/A'}\n" +
		"components:\n  schemas:\n" + schemas
}

func TestCheckDocumentRefusesWhatIsNoReadableDocument(t *testing.T) {
	assert.NoError(t, CheckDocument([]byte(tiny("/a", "200", "    A: {type: string}\n"))))
	assert.NoError(t, CheckDocument(Document))
	for _, c := range []struct{ name, doc, says string }{
		{"empty", " \n", "empty"},
		{"not YAML", "openapi: [3.1.0", "neither YAML nor JSON"},
		{"a list", "- openapi\n", "top level is not an object"},
		{"a drift report", `{"facts":[],"distinct":0,"dropped":0}`, "a drift report"},
		{"a profile", `{"operations":{}}`, "a traffic profile"},
		{"Swagger 2.0", "swagger: '2.0'\ninfo: {title: t, version: '1'}\npaths: {}\n", "Swagger 2.0 document"},
		{"an overlay", "overlay: 1.0.0\ninfo: {title: t, version: '1'}\nactions: []\n", "an overlay"},
		{"no version", "info: {title: t}\n", `no "openapi" member`},
		{"OpenAPI 4", strings.Replace(string(Document), "openapi: 3.1.0", "openapi: 4.0.0", 1), `OpenAPI "4.0.0": only 3.0.x and 3.1.x`},
		{"cyclic $refs", tiny("/a", "200", "    A: {$ref: '#/components/schemas/B'}\n    B: {$ref: '#/components/schemas/A'}\n"), "cycle"},
		{"a $ref to itself", tiny("/a", "200", "    A: {$ref: '#/components/schemas/A'}\n"), "cycle"},
		{"cyclic $refs met through a list", strings.Replace(string(Document), "    RunItem:\n",
			"    Loop: {$ref: '#/components/schemas/Loop2'}\n    Loop2: {$ref: '#/components/schemas/Loop'}\n    RunItem:\n      $ref: '#/components/schemas/Loop'\n    Unused:\n", 1),
			"#/components/schemas/Loop -> #/components/schemas/Loop2 -> #/components/schemas/Loop come back to where they began"},
		{"a missing $ref", tiny("/a", "200", "    B: {type: string}\n"), "A"},
		{"status abc", tiny("/a", "abc", "    A: {type: string}\n"), "abc"},
		{"path without slash", tiny("a", "200", "    A: {type: string}\n"), "paths.a"},
		// libopenapi looks for keys named twice in YAML only; JSON it reads
		// with encoding/json, which keeps the last (kin-openapi keeps it too,
		// libopenapi's model the first).
		{"a key named twice (YAML)", tiny("/a", "200", "    A: {type: string}\n") + "  x: 1\ncomponents: {}\n", `mapping key "components" already defined at line`},
		{"a path named twice (JSON)", `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}},` +
			`"/a":{"post":{"responses":{"200":{"description":"ok"}}}}}}`, `mapping key "/a" already defined`},
	} {
		err := CheckDocument([]byte(c.doc))
		if assert.Error(t, err, c.name) {
			assert.Contains(t, err.Error(), c.says, c.name)
		}
	}
}
