package mockserver

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/agentruns/agentruns/openapi"
	"github.com/pb33f/go-yaml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// createBodies are create bodies of every kind: the common request, case
// variants of names, nulls, duplicates, unknown names, escapes, values out
// of bounds, fields left to the validator, bad JSON.
var createBodies = []string{
	`{"prompt":"The login test flakes. Fix it.","config":{"name":"flaky-tests","model_id":"auto","environment_id":"env-web-app"}}`,
	`{"prompt":"x","title":" t ","skill":"acme/api:release","team":false,"interactive":true,"mode":"plan","on_behalf_of":"bob"}`,
	`{"prompt":"x","conversation_id":"c","agent_identity_uid":"a","parent_run_id":"p","metadata":{"k":"v","K":"w"}}`,
	`{"prompt":"x","Prompt":"y"}`, `{"PROMPT":"y"}`, `{"prompt":"x","prompt":"y"}`, `{"prompt":null,"config":null,"metadata":null}`,
	`{"prompt":"x","config":{"name":"a","NAME":"b"}}`, `{"prompt":"x","config":{"name":null,"Name":"b"}}`,
	`{"prompt":"x","config":{"mcp_servers":{"a":{"command":"npx"}},"idle_timeout_minutes":5}}`,
	`{"prompt":"x","config":{"worker_host":"h","skill_spec":"s","base_prompt":"b","runner_id":"r","credential_strategy":"CREATOR","computer_use_model_id":"m"}}`,
	`{"prompt":"x","config":{"credential_strategy":null,"computer_use_enabled":true,"idle_timeout_minutes":60}}`,
	`{"prompt":"x","config":{"idle_timeout_minutes":0}}`, `{"prompt":"x","config":{"idle_timeout_minutes":61}}`,
	`{"prompt":"x","config":{"idle_timeout_minutes":5.0}}`, `{"prompt":"x","config":{"idle_timeout_minutes":-1}}`,
	`{"prompt":"x","config":{"credential_strategy":"creator"}}`, `{"prompt":"x","mode":"normal"}`, `{"prompt":"x","mode":"PLAN"}`,
	`{"prompt":"x","attachments":[{"file_name":"a","mime_type":"text/plain","data":"aGk="}],"images":null}`,
	`{"prompt":"x","unknown":{"a":1},"ſkill":"s","K":1,"promp":"y"}`, "{\"prompt\":\"x\",\"\u212aey\":1}",
	`{"prompt":"x","config":{"name":"a","unknown":[1],"harness":null}}`, `{"prompt":"x","metadata":{"a":1}}`,
	`{"prompt":"x","metadata":{"a b":"c"}}`, `{"prompt":"x","metadata":{"":"c"}}`, `{"prompt":"x","metadata":{"a":"b","a":"c"}}`,
	`{"prompt":"x","metadata":{"` + strings.Repeat("k", 64) + `":"` + strings.Repeat("é", 256) + `"}}`,
	`{"prompt":"x","metadata":{"` + strings.Repeat("k", 65) + `":"v"}}`, `{"prompt":"x","metadata":{"k":"` + strings.Repeat("v", 257) + `"}}`,
	`{"prompt":"x","metadata":{"k0":"","k1":"","k2":"","k3":"","k4":"","k5":"","k6":"","k7":"","k8":"","k9":"","k10":"","k11":"","k12":"","k13":"","k14":"","k15":"","k16":"","k17":"","k18":"","k19":""}}`,
	`{"prompt":"x","metadata":{"k0":"","k1":"","k2":"","k3":"","k4":"","k5":"","k6":"","k7":"","k8":"","k9":"","k10":"","k11":"","k12":"","k13":"","k14":"","k15":"","k16":"","k17":"","k18":"","k19":"","k20":""}}`,
	`{"prompt":"tab\t\u00e9\"\\ \ud83d\ude00 \u2028","\u0074itle":"t"}`, `{"prompt":"\ud800"}`, `{"prompt":"x"} `, `{"prompt":"x"} {}`,
	`{"prompt":"x","team":"yes"}`, `{"prompt":1}`, `[]`, `"x"`, `null`, `{}`, `{"config":{}}`, `{"metadata":{}}`, ` { "prompt" : "x" } `,
	// FuzzCreateBody's seeds (fuzz_test.go).
	`{"prompt":"Fix the flaky login test"}`, `{"prompt":"x","title":"t","team":true,"conversation_id":"c"}`,
	`{"skill":"acme/skills:tools/review/SKILL.md","config":{"name":"n","model_id":"m"}}`,
	`{"prompt":"x","images":[{"data":"aGk=","mime_type":"image/png"}]}`,
	`{"config":{"skill_spec":"a/b:c","computer_use_enabled":false,"worker_host":"w","base_prompt":"b","environment_id":"e"}}`,
	`{"prompt":"x","prompt":1}`, `{"prompt":"`, "{\"prompt\":\"\xff\"}", ``, `{"prompt":"\u0000\ud800"}`,
}

// checkedRequest is what a create's body gave before the typed reader,
// and what it gives when the reader is unsure: the OpenAPI check's verdict,
// then encoding/json's request.
func checkedRequest(s *Server, body []byte) (runRequest, *apiError) {
	r := createRequest()
	if _, aerr := s.validate(r, "/agent/runs", true, body); aerr != nil {
		return runRequest{}, aerr
	}
	var req runRequest
	aerr := (&call{r: r, body: body}).decode(&req)
	return req, aerr
}

func createRequest() *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/agent/runs", nil)
	r.Header.Set("Content-Type", "application/json")
	return r
}

// sameAsChecked fails t unless the typed reader, wherever it vouches for
// body, gives the verdict and the request of the OpenAPI check and
// encoding/json. It reports whether the reader vouched.
func sameAsChecked(t testing.TB, s *Server, body []byte) bool {
	read, vouched := readCreateBody(createRequest(), "/agent/runs", body)
	if !vouched {
		return false // the body goes the checked way: the same by construction
	}
	want, aerr := checkedRequest(s, body)
	if aerr != nil {
		t.Fatalf("the typed reader vouched for %q, which the check refuses: %s", body, aerr.detail)
	}
	if !reflect.DeepEqual(want, *read) {
		t.Fatalf("the readings of %q differ:\nreader:       %s\nencoding/json: %s", body, show(*read), show(want))
	}
	return true
}

func show(req runRequest) string {
	b, _ := json.Marshal(req)
	return string(b)
}

// TestCreateReaderAgreesWithTheCheck holds the typed reader to the two
// passes it stands for, on createBodies whole and mutated.
func TestCreateReaderAgreesWithTheCheck(t *testing.T) {
	s := newVirtualServer(t)
	rng := rand.New(rand.NewSource(5))
	bits := []string{`"`, `{`, `}`, `,`, `:`, `1`, `null`, `true`, `"prompt"`, `"Prompt"`, `"config"`, `"name"`, `"NAME"`, `"metadata"`, `"x"`, `{"a":"b"}`, `"mode"`, `"plan"`, `\`}
	vouched := 0
	for i := range 20000 {
		body := createBodies[i%len(createBodies)]
		if i >= len(createBodies) {
			b := []byte(body)
			for range 1 + rng.Intn(3) {
				j := rng.Intn(len(b) + 1)
				if rng.Intn(2) == 0 && j < len(b) {
					b = append(b[:j], b[j+1:]...)
				} else {
					b = append(b[:j], append([]byte(bits[rng.Intn(len(bits))]), b[j:]...)...)
				}
			}
			body = string(b)
		}
		if sameAsChecked(t, s, []byte(body)) {
			vouched++
		}
	}
	t.Logf("the typed reader vouched for %d of 20000 bodies", vouched)
	require.Greater(t, vouched, 300)
	// The benchmarks' bodies, the common request, are all read in one pass.
	for i := range 100 {
		require.True(t, sameAsChecked(t, s, []byte(benchRequest(i))), benchRequest(i))
	}
}

// FuzzCreateReader: on every body, the typed reader and the OpenAPI check
// give the same verdict, the same problem (naming the same field) and the
// same request. Where the reader is unsure the check judges, so the
// verdicts can only differ where it vouches: there the check must accept,
// and encoding/json must read the same request.
func FuzzCreateReader(f *testing.F) {
	for _, b := range createBodies {
		f.Add([]byte(b))
	}
	for i := range 8 {
		f.Add([]byte(benchRequest(i)))
	}
	s := newVirtualServer(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		sameAsChecked(t, s, body)
	})
}

// TestCreateReaderKnowsEveryField: every JSON name of runRequest and of
// AgentConfig has its row in requestFields or configFields (read there or
// left to the validator), and every row is a field's, so a field cannot be
// added to one but not the other. Each row that reads its field reads it
// into the field of its name: a body with a value for that field alone is
// read as encoding/json reads it.
func TestCreateReaderKnowsEveryField(t *testing.T) {
	s := newVirtualServer(t)
	checkRows(t, s, reflect.TypeOf(runRequest{}), requestFields, func(name, value string) string {
		return `{"` + name + `":` + value + `}`
	})
	checkRows(t, s, reflect.TypeOf(AgentConfig{}), configFields, func(name, value string) string {
		return `{"config":{"` + name + `":` + value + `}}`
	})
}

func checkRows[T any](t *testing.T, s *Server, typ reflect.Type, fields bodyFields[T], body func(name, value string) string) {
	var names, rows []string
	for i := range typ.NumField() {
		if name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	for _, row := range fields.rows {
		rows = append(rows, row.name)
	}
	assert.Equal(t, names, rows, "%s's JSON names (in order) and its rows in runs_request.go", typ.Name())
	for _, row := range fields.rows {
		if row.read == nil {
			continue
		}
		b := body(row.name, sampleValue(row.kind))
		assert.True(t, sameAsChecked(t, s, []byte(b)), "the typed reader left %s to the check", b)
	}
}

// sampleValue is a value of kind, not its type's zero value.
func sampleValue(kind fieldKind) string {
	switch {
	case kind.metadata:
		return `{"ticket":"T-1"}`
	case kind.enum != nil:
		return `"` + kind.enum[len(kind.enum)-1] + `"`
	case kind.typ == "boolean":
		return "true"
	case kind.typ == "integer":
		return fmt.Sprint(kind.max)
	case kind.typ == "object":
		return `{}`
	}
	return `"sample"`
}

// TestCreateReaderFollowsTheDocument holds what each row of the typed
// reader checks to the schema of its field in openapi.yaml: a field whose
// schema gains a keyword the reader does not check (a pattern, a format, a
// length, a value added to an enum) fails here until the row checks it, or
// leaves the field to the validator.
func TestCreateReaderFollowsTheDocument(t *testing.T) {
	var doc map[string]any
	require.NoError(t, yaml.Unmarshal(openapi.Document, &doc))
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	resolve := func(s any) map[string]any {
		m := s.(map[string]any)
		if ref, ok := m["$ref"].(string); ok {
			m = schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
		}
		return m
	}
	properties := func(schema string) map[string]any {
		return resolve(schemas[schema])["properties"].(map[string]any)
	}
	checkKinds(t, "RunAgentRequest", properties("RunAgentRequest"), requestFields, resolve)
	checkKinds(t, "AmbientAgentConfig", properties("AmbientAgentConfig"), configFields, resolve)
}

func checkKinds[T any](t *testing.T, where string, props map[string]any, fields bodyFields[T], resolve func(any) map[string]any) {
	for _, row := range fields.rows {
		prop, ok := props[row.name]
		if !assert.True(t, ok, "%s has no property %q", where, row.name) || row.read == nil {
			continue
		}
		got := validationKeywords(resolve(prop))
		if row.kind.fields != nil { // an object whose rows are held to its own schema
			assert.Equal(t, "object", got["type"], "%s.%s", where, row.name)
			continue
		}
		assert.Equal(t, wantKeywords(row.kind), got, "%s.%s: what the typed reader checks (runs_request.go) and what the document demands", where, row.name)
	}
}

// validationKeywords is a schema without what only describes it.
func validationKeywords(schema map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range schema {
		switch {
		case k == "description" || k == "examples" || k == "default" || k == "title" || strings.HasPrefix(k, "x-"):
		case k == "propertyNames" || k == "additionalProperties":
			if m, ok := v.(map[string]any); ok {
				out[k] = validationKeywords(m)
			} else {
				out[k] = v
			}
		default:
			out[k] = v
		}
	}
	return out
}

// wantKeywords is the schema a row's reader enforces, as the document
// would write it.
func wantKeywords(kind fieldKind) map[string]any {
	if kind.metadata {
		return map[string]any{
			"type": "object", "maxProperties": maxMetadataKeys,
			"propertyNames":        map[string]any{"pattern": fmt.Sprintf("^[a-zA-Z0-9._-]{1,%d}$", maxMetadataKeyLen)},
			"additionalProperties": map[string]any{"type": "string", "maxLength": maxMetadataValueLen},
		}
	}
	out := map[string]any{"type": kind.typ}
	if kind.enum != nil {
		enum := []any{}
		for _, v := range kind.enum {
			enum = append(enum, v)
		}
		if kind.nullable {
			enum = append(enum, nil)
			out["type"] = []any{kind.typ, "null"}
		}
		out["enum"] = enum
	}
	if kind.typ == "integer" {
		out["format"], out["minimum"], out["maximum"] = "int32", kind.min, kind.max
	}
	return out
}
