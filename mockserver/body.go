package mockserver

import (
	"encoding/json"
	"reflect"

	"github.com/agentruns/agentruns/mockserver/jsonfill"
	"github.com/agentruns/agentruns/openapi"
)

// A request body is decoded once. The pipeline reads it (readBody) and the
// OpenAPI check decodes it into generic JSON values to validate it, handing
// the value on (call.decoded) when it has one. A handler reads its body
// through the methods below, which fill its request type from that value;
// only when the check did not decode the body (it had accepted the same
// body before, or the library judged it) do they decode it, once, here.
// encoding/json reads the bytes again only where the value cannot tell what
// it would answer (jsonfill's package comment says when), so every request
// and every error is what encoding/json alone would make of the body.

// value is the body as generic JSON values (openapi.DecodeJSON's): the
// check's decoding, or this call's own, made at most once. It is nil when
// there is no body, or DecodeJSON refuses it (duplicate names, say).
func (c *call) value() any {
	if c.decoded == nil && len(c.body) > 0 && !c.undecodable {
		c.decoded, _ = openapi.DecodeJSON(c.body)
		c.undecodable = c.decoded == nil
	}
	return c.decoded
}

// fill sets v, a pointer to a zero request struct, from the body, as
// json.Unmarshal would.
func (c *call) fill(v any) *apiError {
	if jsonfill.Fill(v, c.value()) {
		return nil
	}
	reflect.ValueOf(v).Elem().SetZero() // Fill may have set part of it
	return c.decode(v)
}

// object is the body as a JSON object, as json.Unmarshal into a
// map[string]any would give it.
func (c *call) object() (map[string]any, *apiError) {
	if obj, ok := c.value().(map[string]any); ok {
		return obj, nil
	}
	var obj map[string]any
	if err := json.Unmarshal(c.body, &obj); err != nil {
		return nil, decodeError(err)
	}
	return obj, nil
}
