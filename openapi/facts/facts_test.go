package facts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// doc30 and doc31 describe the same contract in OpenAPI 3.0 and 3.1, in
// different words and layouts: their facts must be equal.
const doc30 = `
openapi: 3.0.0
info: {title: Pets, version: "1"}
security:
  - key: []
paths:
  /pets:
    get:
      operationId: listPets
      description: Lists pets.
      parameters:
        - name: limit
          in: query
          description: How many.
          schema: {type: integer, minimum: 1, maximum: 50, default: 10}
        - name: kind
          in: query
          style: form
          explode: true
          schema:
            type: array
            items: {$ref: '#/components/schemas/Kind'}
      responses:
        '200':
          description: Pets.
          content:
            application/json:
              schema:
                type: array
                items: {$ref: '#/components/schemas/Pet'}
        '404':
          description: None.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Problem'}
  /pets/{id}/photo:
    put:
      operationId: putPhoto
      x-internal: true
      parameters:
        - $ref: '#/components/parameters/Id'
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [data]
              properties:
                data: {type: string, format: byte}
      responses:
        '204': {description: Stored.}
        '302':
          description: Elsewhere.
          headers:
            Location: {schema: {type: string, format: uri}}
components:
  securitySchemes:
    key: {type: http, scheme: Bearer}
  parameters:
    Id: {name: id, in: path, required: true, schema: {type: string}}
  schemas:
    Kind: {type: string, enum: [cat, dog]}
    Pet:
      oneOf:
        - {$ref: '#/components/schemas/Cat'}
        - {$ref: '#/components/schemas/Dog'}
      discriminator:
        propertyName: kind
        mapping: {cat: '#/components/schemas/Cat', dog: '#/components/schemas/Dog'}
    Cat:
      type: object
      required: [name, kind]
      properties:
        kind: {type: string, enum: [cat]}
        name: {type: string, description: The name.}
        born: {type: string, format: date-time, nullable: true}
        friends: {type: array, items: {$ref: '#/components/schemas/Cat'}}
    Dog:
      type: object
      required: [kind]
      properties:
        kind: {type: string, enum: [dog]}
        tags: {type: object, additionalProperties: {type: string}}
    Problem: {type: object, properties: {status: {type: integer}}}
    Unused: {type: string}
`

const doc31 = `
openapi: 3.1.0
info: {title: Pets in other words, version: "2"}
security:
  - key: []
components:
  securitySchemes:
    key: {type: http, scheme: bearer, description: A key.}
  responses:
    NotFound:
      description: Nothing here.
      content:
        application/json:
          schema: {$ref: '#/components/schemas/Problem'}
  schemas:
    Kind: {type: string, enum: [dog, cat], description: Sorted differently.}
    Pet:
      oneOf:
        - {$ref: '#/components/schemas/Cat'}
        - {$ref: '#/components/schemas/Dog'}
      discriminator:
        propertyName: kind
        mapping: {dog: '#/components/schemas/Dog', cat: '#/components/schemas/Cat'}
    Cat:
      type: object
      required: [kind, name]
      properties:
        kind: {type: string, enum: [cat]}
        name: {type: string}
        born: {type: [string, "null"], format: date-time}
        friends: {type: array, items: {$ref: '#/components/schemas/Cat'}}
    Dog:
      type: object
      required: [kind]
      properties:
        kind: {type: string, enum: [dog]}
        tags: {type: object, additionalProperties: {type: string}}
    Problem: {type: object, properties: {status: {type: integer}}}
paths:
  /pets/{id}/photo:
    parameters:
      - {name: id, in: path, required: true, schema: {type: string}}
    put:
      operationId: putPhoto
      x-internal: true
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [data]
              properties:
                data: {type: string, contentEncoding: base64}
      responses:
        "204": {description: Done.}
        "302":
          description: Moved.
          headers:
            location: {schema: {type: string, format: uri}}
  /pets:
    get:
      operationId: listPets
      parameters:
        - name: limit
          in: query
          schema: {type: integer, minimum: 1, maximum: 50, default: 10}
        - name: kind
          in: query
          schema:
            type: array
            items: {$ref: '#/components/schemas/Kind'}
      responses:
        "200":
          description: All of them.
          content:
            application/json:
              schema:
                type: array
                items: {$ref: '#/components/schemas/Pet'}
        "404": {$ref: '#/components/responses/NotFound'}
`

func extract(t *testing.T, doc string) *Facts {
	t.Helper()
	f, err := Extract([]byte(doc))
	require.NoError(t, err)
	return f
}

func TestExtractIgnoresWordingVersionAndLayout(t *testing.T) {
	a, b := extract(t, doc30), extract(t, doc31)
	diffs, err := Diff(a, b)
	require.NoError(t, err)
	assert.Empty(t, diffs)
	ja, err := Marshal(a)
	require.NoError(t, err)
	jb, err := Marshal(b)
	require.NoError(t, err)
	assert.Equal(t, string(ja), string(jb), "the canonical files are byte for byte equal")
}

func TestExtractRecordsTheFacts(t *testing.T) {
	f := extract(t, doc30)
	require.Len(t, f.Operations, 2)

	list := f.Operations["GET /pets"]
	require.NotNil(t, list)
	assert.Equal(t, "listPets", list.OperationID)
	assert.Equal(t, []string{"key"}, list.Security, "the document's security applies")
	limit := list.Parameters["query limit"]
	require.NotNil(t, limit)
	assert.Equal(t, "form", limit.Style, "defaults are filled in")
	assert.True(t, limit.Explode)
	assert.Equal(t, 10.0, limit.Schema.Default)
	assert.Equal(t, 1.0, *limit.Schema.Minimum)
	assert.Equal(t, 50.0, *limit.Schema.Maximum)
	assert.Equal(t, "Kind", list.Parameters["query kind"].Schema.Items.Ref, "schema references stay names")
	assert.Equal(t, "Problem", list.Responses["404"].Content["application/json"].Ref)

	photo := f.Operations["PUT /pets/{id}/photo"]
	require.NotNil(t, photo)
	assert.True(t, photo.Internal)
	id := photo.Parameters["path id"]
	require.NotNil(t, id, "parameter references are resolved")
	assert.True(t, id.Required)
	assert.Equal(t, "simple", id.Style)
	require.NotNil(t, photo.RequestBody)
	assert.True(t, photo.RequestBody.Required)
	assert.Equal(t, "byte", photo.RequestBody.Content["application/json"].Properties["data"].Format)
	assert.Nil(t, photo.Responses["204"].Content, "a bodiless status has no content")
	assert.Equal(t, "uri", photo.Responses["302"].Headers["location"].Schema.Format)

	assert.Equal(t, &SecurityScheme{Type: "http", Scheme: "bearer"}, f.SecuritySchemes["key"])

	// Reachable schemas only, found through references, discriminator
	// mappings and a schema that refers to itself.
	var names []string
	for name := range f.Schemas {
		names = append(names, name)
	}
	assert.ElementsMatch(t, []string{"Kind", "Pet", "Cat", "Dog", "Problem"}, names)
	assert.Equal(t, []any{"cat", "dog"}, f.Schemas["Kind"].Enum)
	pet := f.Schemas["Pet"]
	assert.Equal(t, &Discriminator{PropertyName: "kind", Mapping: map[string]string{"cat": "Cat", "dog": "Dog"}}, pet.Discriminator)
	require.Len(t, pet.OneOf, 2)
	assert.Equal(t, "Dog", pet.OneOf[1].Ref)
	cat := f.Schemas["Cat"]
	assert.Equal(t, []string{"kind", "name"}, cat.Required, "required lists are sorted")
	assert.True(t, cat.Properties["born"].Nullable)
	assert.Equal(t, "string", cat.Properties["born"].Type)
	assert.Equal(t, "Cat", cat.Properties["friends"].Items.Ref)
	assert.Equal(t, "string", f.Schemas["Dog"].Properties["tags"].AdditionalProperties.Type)
}

func TestExtractRejectsWhatIsNoOpenAPI3Document(t *testing.T) {
	for name, doc := range map[string]string{
		"not YAML":        "openapi: [",
		"a list":          "- a\n- b\n",
		"swagger 2":       "swagger: '2.0'\ninfo: {title: x, version: '1'}\npaths: {}\n",
		"broken ref":      "openapi: 3.1.0\npaths:\n  /x:\n    get:\n      responses:\n        '200':\n          description: x\n          content:\n            application/json:\n              schema: {$ref: '#/components/schemas/Gone'}\n",
		"odd parameter":   "openapi: 3.1.0\npaths:\n  /x:\n    get:\n      parameters: [7]\n      responses: {}\n",
		"no openapi line": "info: {title: x}\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Extract([]byte(doc))
			assert.Error(t, err)
		})
	}
}

func TestDiffNamesEachDifference(t *testing.T) {
	ours := strings.NewReplacer(
		"enum: [dog, cat], description: Sorted differently.", "enum: [dog]",
		`"404": {$ref: '#/components/responses/NotFound'}`, `"429": {description: Slow down.}`,
		"operationId: putPhoto", "operationId: storePhoto",
		"schema: {type: integer, minimum: 1, maximum: 50, default: 10}", "schema: {type: integer, minimum: 1, maximum: 100, default: 10}",
		"required: [kind, name]", "required: [kind]",
	).Replace(doc31)
	diffs, err := Diff(extract(t, doc30), extract(t, ours))
	require.NoError(t, err)
	var lines []string
	for _, d := range diffs {
		lines = append(lines, d.String())
	}
	assert.Equal(t, []string{
		`operations["GET /pets"].parameters["query limit"].schema.maximum: published has 50, ours 100`,
		`operations["GET /pets"].responses["404"]: missing, published has {"content":{"application/json":{"$ref":"Problem"}}}`,
		`operations["GET /pets"].responses["429"]: only ours has it ({})`,
		`operations["PUT /pets/{id}/photo"].operation_id: published has "putPhoto", ours "storePhoto"`,
		`schemas.Cat.required: published has ["kind","name"], ours ["kind"]`,
		`schemas.Kind.enum: published has ["cat","dog"], ours ["dog"]`,
		// Only the 404 used it: a schema no operation reaches is no fact.
		`schemas.Problem: missing, published has {"properties":{"status":{"type":"integer"}},"type":"object"}`,
	}, lines)
}

func TestDiffWalksOneOfBranches(t *testing.T) {
	ours := strings.Replace(doc31, "        - {$ref: '#/components/schemas/Dog'}\n      discriminator:", "      discriminator:", 1)
	diffs, err := Diff(extract(t, doc30), extract(t, ours))
	require.NoError(t, err)
	require.Len(t, diffs, 1, "%v", diffs)
	assert.Equal(t, `schemas.Pet.one_of[1]`, diffs[0].Path)
	assert.Equal(t, `{"$ref":"Dog"}`, diffs[0].Want)
	assert.Empty(t, diffs[0].Got)
}

func TestAllowanceCovers(t *testing.T) {
	a := Allowance{Pattern: `operations[*].responses["429"]`, Why: "x"}
	assert.True(t, a.Covers(`operations["GET /pets"].responses["429"]`))
	assert.True(t, a.Covers(`operations["GET /pets"].responses["429"].headers`), "everything under the path")
	assert.False(t, a.Covers(`operations["GET /pets"].responses["4290"]`), "not a longer key")
	assert.False(t, a.Covers(`operations["GET /pets"].responses["404"]`))
	exact := Allowance{Pattern: `schemas.Kind`, Why: "x"}
	assert.True(t, exact.Covers(`schemas.Kind.enum`))
	assert.False(t, exact.Covers(`schemas.KindOf`))
}

func TestFilterReportsUnexplainedAndUnusedEntries(t *testing.T) {
	diffs := []Difference{{Path: `schemas.Kind.enum`}, {Path: `schemas.Cat.required`}}
	allowed := []Allowance{{Pattern: `schemas.Kind`, Why: "a"}, {Pattern: `schemas.Gone`, Why: "b"}}
	unexplained, unused := Filter(diffs, allowed)
	assert.Equal(t, []Difference{{Path: `schemas.Cat.required`}}, unexplained)
	assert.Equal(t, []Allowance{{Pattern: `schemas.Gone`, Why: "b"}}, unused)
}

// TestMarshalRoundTrips writes and reads back the canonical file.
func TestMarshalRoundTrips(t *testing.T) {
	f := extract(t, doc30)
	b, err := Marshal(f)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "facts.json")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	read, err := os.ReadFile(path)
	require.NoError(t, err)
	back, err := Unmarshal(read)
	require.NoError(t, err)
	diffs, err := Diff(f, back)
	require.NoError(t, err)
	assert.Empty(t, diffs)
	assert.NotContains(t, string(b), "The name.", "no prose in the facts")
	assert.NotContains(t, string(b), "Unused", "unreachable schemas are left out")
}
