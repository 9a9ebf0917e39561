package mockserver

import (
	"bytes"
	"errors"
	"net/http"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// A create's body is read once. The typed reader below reads the common
// request straight from the bytes into a runRequest, checking as it goes
// what the OpenAPI document demands of each field it takes (type, enum,
// range, the metadata's limits): a body it vouches for needs neither the
// schema validator's pass over a decoded copy nor a second decoding.
// Whatever it is not sure of (a field it leaves to the validator, an
// unknown name, a name in another case or with an escape, a null where the
// document wants a value, any value out of bounds, bad JSON) goes the way
// every body went before: the OpenAPI check, then encoding/json
// (call.decode). So it changes how fast a create is answered, never what
// it answers: FuzzCreateReader holds the two ways to the same verdict and
// the same request, and TestCreateReaderFollowsTheDocument holds each
// field's check to the document.
//
// requestFields (runs_fields.go) are generated from runRequest's fields,
// and configFields below are AgentConfig's: a row per JSON name, saying how
// it is read and checked, or that it is left to the validator.
// TestRunFieldsAreGenerated fails when runs_fields.go is not what
// runRequest makes (`go generate ./mockserver/` writes it again), and
// TestCreateReaderKnowsEveryField when a field of AgentConfig has no row.

// configFields are AgentConfig's fields, by JSON name, in its order, as a
// create's config.
var configFields = newBodyFields(
	plainStringField("name", func(c *AgentConfig) *string { return &c.Name }),
	plainStringField("model_id", func(c *AgentConfig) *string { return &c.ModelID }),
	plainStringField("base_prompt", func(c *AgentConfig) *string { return &c.BasePrompt }),
	plainStringField("environment_id", func(c *AgentConfig) *string { return &c.EnvironmentID }),
	plainStringField("skill_spec", func(c *AgentConfig) *string { return &c.SkillSpec }),
	leftToValidator[AgentConfig]("mcp_servers"), // formats (uuid, uri) the reader does not check
	boolField("computer_use_enabled", func(c *AgentConfig) **bool { return &c.ComputerUseEnabled }),
	plainStringField("worker_host", func(c *AgentConfig) *string { return &c.WorkerHost }),
	intField("idle_timeout_minutes", func(c *AgentConfig) **int { return &c.IdleTimeoutMinutes }, 1, 60),
	leftToValidator[AgentConfig]("harness"),
	leftToValidator[AgentConfig]("harness_auth_secrets"),
	plainStringField("computer_use_model_id", func(c *AgentConfig) *string { return &c.ComputerUseModelID }),
	nullableEnumField("credential_strategy", func(c *AgentConfig) *string { return &c.CredentialStrategy }, "CREATOR", "EXECUTOR"),
	leftToValidator[AgentConfig]("inference_providers"),
	leftToValidator[AgentConfig]("memory_stores"),
	plainStringField("runner_id", func(c *AgentConfig) *string { return &c.RunnerID }),
	leftToValidator[AgentConfig]("session_sharing"),
	leftToValidator[AgentConfig]("skills"),
)

// The metadata's limits (RunMetadata in the document).
const (
	maxMetadataKeys     = 20
	maxMetadataKeyLen   = 64
	maxMetadataValueLen = 256 // characters, as JSON Schema's maxLength counts
)

// readCreateBody reads r's body, a create's, into a runRequest if the
// typed reader vouches for it; ok is false when the OpenAPI check must
// judge it.
func readCreateBody(r *http.Request, path string, body []byte) (req *runRequest, ok bool) {
	if r.Method != http.MethodPost || path != "/agent/run" && path != "/agent/runs" ||
		r.URL.RawQuery != "" || r.Header.Get("Content-Type") != "application/json" {
		return nil, false
	}
	return readRequest(body)
}

// readRequest is the typed reader: body as a runRequest, if it vouches for
// it.
func readRequest(body []byte) (*runRequest, bool) {
	var rr requestReader
	if jsonv2.Unmarshal(body, &rr) != nil {
		return nil, false
	}
	return &rr.req, true
}

// decodeRequest fills req from the call's body.
func (c *call) decodeRequest(req *runRequest) *apiError {
	if c.request != nil { // the typed reader read it
		*req = *c.request
		return nil
	}
	return c.decode(req)
}

// requestReader reads a runRequest with requestFields. jsonv2.Unmarshal
// hands it a decoder over the body, which refuses duplicate names, invalid
// UTF-8 and anything after the value.
type requestReader struct{ req runRequest }

// errUnsure is the typed reader's "ask the validator".
var errUnsure = errors.New("left to the OpenAPI check")

func (rr *requestReader) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if !requestFields.read(dec, &rr.req) {
		return errUnsure
	}
	return nil
}

// bodyField is how one JSON name of a T is read. kind is the schema the
// reader enforces, which the tests compare with the document's.
type bodyField[T any] struct {
	name string
	kind fieldKind
	read func(dec *jsontext.Decoder, into *T) bool // nil: left to the validator
}

// fieldKind is the schema a field's reader enforces.
type fieldKind struct {
	typ      string   // string, boolean, integer, object
	enum     []string // the values allowed, when there is a list
	nullable bool     // null is allowed too, and leaves the field as it is
	min, max int      // an integer's bounds
	fields   any      // an object's bodyFields
	metadata bool     // RunMetadata: string values, keys and count bounded
}

type bodyFields[T any] struct {
	rows   []bodyField[T]
	byName map[string]*bodyField[T]
}

func newBodyFields[T any](rows ...bodyField[T]) bodyFields[T] {
	f := bodyFields[T]{rows: rows, byName: make(map[string]*bodyField[T], len(rows))}
	for i := range f.rows {
		f.byName[f.rows[i].name] = &f.rows[i]
	}
	return f
}

// read reads an object into into, field by field; false means unsure.
// A name is looked up as it is written: one with an escape, or in another
// case than the field's (which encoding/json would match), is unsure.
func (f bodyFields[T]) read(dec *jsontext.Decoder, into *T) bool {
	if dec.PeekKind() != '{' {
		return false
	}
	if _, err := dec.ReadToken(); err != nil {
		return false
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadValue()
		if err != nil || bytes.IndexByte(name, '\\') >= 0 {
			return false
		}
		row := f.byName[string(name[1:len(name)-1])]
		if row == nil || row.read == nil || !row.read(dec, into) {
			return false
		}
	}
	_, err := dec.ReadToken()
	return err == nil
}

func leftToValidator[T any](name string) bodyField[T] { return bodyField[T]{name: name} }

// stringField is an optional string, kept as a pointer.
func stringField[T any](name string, field func(*T) **string) bodyField[T] {
	return bodyField[T]{name, fieldKind{typ: "string"}, func(dec *jsontext.Decoder, into *T) bool {
		s, ok := readString(dec)
		*field(into) = &s
		return ok
	}}
}

// plainStringField is a string kept as it is, "" when absent.
func plainStringField[T any](name string, field func(*T) *string) bodyField[T] {
	return bodyField[T]{name, fieldKind{typ: "string"}, func(dec *jsontext.Decoder, into *T) bool {
		s, ok := readString(dec)
		*field(into) = s
		return ok
	}}
}

func boolField[T any](name string, field func(*T) **bool) bodyField[T] {
	return bodyField[T]{name, fieldKind{typ: "boolean"}, func(dec *jsontext.Decoder, into *T) bool {
		v, err := dec.ReadValue()
		if err != nil || v.Kind() != 't' && v.Kind() != 'f' {
			return false
		}
		b := v.Kind() == 't'
		*field(into) = &b
		return true
	}}
}

func enumField[T any](name string, field func(*T) **string, values ...string) bodyField[T] {
	return bodyField[T]{name, fieldKind{typ: "string", enum: values}, func(dec *jsontext.Decoder, into *T) bool {
		s, ok := readString(dec)
		*field(into) = &s
		return ok && isOneOf(s, values)
	}}
}

// nullableEnumField is a string enum that may be null, which leaves the
// field empty.
func nullableEnumField[T any](name string, field func(*T) *string, values ...string) bodyField[T] {
	return bodyField[T]{name, fieldKind{typ: "string", enum: values, nullable: true}, func(dec *jsontext.Decoder, into *T) bool {
		if dec.PeekKind() == 'n' {
			_, err := dec.ReadValue()
			return err == nil
		}
		s, ok := readString(dec)
		*field(into) = s
		return ok && isOneOf(s, values)
	}}
}

// intField is an integer within [lo, hi] written as plain digits (5.0 and
// 5e0, integers too for the document, are left to the validator).
func intField[T any](name string, field func(*T) **int, lo, hi int) bodyField[T] {
	return bodyField[T]{name, fieldKind{typ: "integer", min: lo, max: hi}, func(dec *jsontext.Decoder, into *T) bool {
		v, err := dec.ReadValue()
		if err != nil || v.Kind() != '0' || len(v) > 3 {
			return false
		}
		n := 0
		for _, c := range v {
			if c < '0' || c > '9' {
				return false
			}
			n = n*10 + int(c-'0')
		}
		*field(into) = &n
		return lo <= n && n <= hi
	}}
}

func objectField[T, F any](name string, field func(*T) **F, fields bodyFields[F]) bodyField[T] {
	return bodyField[T]{name, fieldKind{typ: "object", fields: fields}, func(dec *jsontext.Decoder, into *T) bool {
		v := new(F)
		*field(into) = v
		return fields.read(dec, v)
	}}
}

// metadataField is RunMetadata: at most maxMetadataKeys keys of 1 to
// maxMetadataKeyLen characters from a-z A-Z 0-9 . _ -, string values of at
// most maxMetadataValueLen characters.
func metadataField[T any](name string, field func(*T) *map[string]string) bodyField[T] {
	return bodyField[T]{name, fieldKind{typ: "object", metadata: true}, func(dec *jsontext.Decoder, into *T) bool {
		if dec.PeekKind() != '{' {
			return false
		}
		if _, err := dec.ReadToken(); err != nil {
			return false
		}
		m := map[string]string{}
		*field(into) = m
		for dec.PeekKind() != '}' {
			k, err := dec.ReadValue()
			if err != nil || !metadataKey(k[1:len(k)-1]) || len(m) == maxMetadataKeys {
				return false
			}
			v, ok := readString(dec)
			if !ok || utf8.RuneCountInString(v) > maxMetadataValueLen {
				return false
			}
			m[string(k[1:len(k)-1])] = v
		}
		_, err := dec.ReadToken()
		return err == nil
	}}
}

// metadataKey reports whether k, as written (an escape is refused), is a
// metadata key.
func metadataKey(k []byte) bool {
	if len(k) == 0 || len(k) > maxMetadataKeyLen {
		return false
	}
	for _, c := range k {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// readString reads a string, escapes undone; anything else is unsure.
func readString(dec *jsontext.Decoder) (string, bool) {
	v, err := dec.ReadValue()
	if err != nil || v.Kind() != '"' {
		return "", false
	}
	raw := v[1 : len(v)-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw), true
	}
	u, err := jsontext.AppendUnquote(nil, v)
	return string(u), err == nil
}

func isOneOf(s string, values []string) bool {
	for _, v := range values {
		if s == v {
			return true
		}
	}
	return false
}
