package facts

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// holdsDoc is the document side: a run with a state, created by a POST
// whose body may carry a mode.
const holdsDoc = `
openapi: 3.1.0
info: {title: Runs, version: "1"}
security: [{key: []}]
paths:
  /runs:
    post:
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [prompt]
              properties:
                prompt: {type: string}
                mode: {type: string, enum: [normal, plan]}
                note: {type: [string, "null"]}
      responses:
        '201':
          description: made
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Run'}
  /open:
    get:
      security: [{}, {key: []}]
      responses:
        '200': {description: ok}
components:
  securitySchemes:
    key: {type: http, scheme: bearer}
  schemas:
    Run:
      type: object
      required: [id]
      properties:
        id: {type: string}
        state: {type: string, enum: [QUEUED, DONE]}
        cost: {type: integer}
`

func client(t *testing.T, js string) *Facts {
	t.Helper()
	f, err := Unmarshal([]byte(js))
	require.NoError(t, err)
	return f
}

func holdsPaths(t *testing.T, c *Facts) map[string]string {
	t.Helper()
	doc, err := Extract([]byte(holdsDoc))
	require.NoError(t, err)
	out := map[string]string{}
	for _, d := range Holds(c, doc) {
		out[d.Path] = d.Want + " / " + d.Got
	}
	return out
}

func TestHoldsAcceptsWhatTheDocumentHolds(t *testing.T) {
	c := client(t, `{"operations":{
	  "POST /runs":{"security":["key"],
	    "request_body":{"required":true,"content":{"application/json":{"type":"object","required":["prompt"],
	      "properties":{"prompt":{"type":"string"},"mode":{"type":"string","enum":["plan"]},"note":{"type":"string","nullable":true}}}}},
	    "responses":{"2XX":{"content":{"application/json":{"$ref":"RunItem"}}}}},
	  "GET /open":{"security":["none"],"responses":{"2XX":{}}}},
	 "schemas":{"RunItem":{"type":"object","required":["id"],"properties":{"id":{"type":"string"},"state":{"type":"string","enum":["DONE"]},"cost":{"type":"number"}}}}}`)
	assert.Empty(t, holdsPaths(t, c))
}

func TestHoldsNamesEveryMissingFact(t *testing.T) {
	c := client(t, `{"operations":{
	  "POST /runs":{"security":["key"],
	    "request_body":{"content":{"application/json":{"type":"object",
	      "properties":{"prompt":{"type":"string"},"mode":{"type":"string","enum":["orchestrate","plan"]},"title":{"type":"string"},"note":{"type":"string","nullable":true}}}}},
	    "responses":{"2XX":{"content":{"application/json":{"$ref":"RunItem"}}}}},
	  "GET /runs/{id}/more":{"security":["key"],"responses":{"2XX":{}}},
	  "GET /open":{"security":["none"],"responses":{"2XX":{}}}},
	 "schemas":{"RunItem":{"type":"object","required":["id","state"],"properties":{"id":{"type":"string"},"state":{"type":"string","enum":["DONE","FAILED"]},"run_time":{"type":"string"}}}}}`)
	got := holdsPaths(t, c)
	for _, want := range []string{
		`operations["GET /runs/{id}/more"]`,                                  // a missing operation
		`operations["POST /runs"].request_body.required`,                     // the doc requires a body the client may leave out
		`operations["POST /runs"].request_body.content.properties.title`,     // a field the client sends
		`operations["POST /runs"].request_body.content.properties.mode.enum`, // a value the client sends
		`operations["POST /runs"].request_body.content.required.prompt`,      // the doc requires what the client may omit
		`schemas.RunItem.properties.run_time`,                                // a field the client reads
		`schemas.RunItem.properties.state.enum`,                              // a value the client reads
		`schemas.RunItem.required.state`,                                     // a field the client needs
	} {
		assert.Contains(t, got, want)
	}
	assert.Len(t, got, 8, "%v", got)
}

func TestHoldsWantsPublicOperationsPublic(t *testing.T) {
	c := client(t, `{"operations":{"POST /runs":{"security":["none"],"responses":{"2XX":{}}}},"schemas":{}}`)
	assert.Contains(t, holdsPaths(t, c), `operations["POST /runs"].security`)
}
