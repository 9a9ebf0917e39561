package openapi

import (
	"encoding/json"
	"errors"
	"io"
	"math/rand"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi-validator/content"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBodyChecksCoverCreate: the body-only operations are the two create
// paths and the other creates and sends without parameters, and nothing
// with a parameter.
func TestBodyChecksCoverCreate(t *testing.T) {
	v := testValidator(t)
	var keys []string
	for k := range v.bodyChecks {
		keys = append(keys, k)
	}
	assert.ElementsMatch(t, []string{"POST /agent/run", "POST /agent/runs", "POST /agent/schedules", "POST /agent/identities", "POST /agent/messages"}, keys)
}

// TestBodyCheckAcceptsOnlyWhatTheLibraryAccepts holds the shortcut to the
// library's verdict on valid bodies, on every kind of invalid one and on
// thousands of random mutations of both: whenever the shortcut accepts, the
// library accepts too. It must also accept the valid ones, or it is no
// shortcut.
func TestBodyCheckAcceptsOnlyWhatTheLibraryAccepts(t *testing.T) {
	v := testValidator(t)
	valid := []string{
		`{"prompt":"Fix the flaky login test"}`,
		`{"skill":"acme/api:release"}`,
		`{"prompt":"x","images":[{"data":"aGk=","mime_type":"image/gif"}]}`,
		`{"prompt":"x","attachments":[{"file_name":"a.txt","mime_type":"text/plain","data":"aGk="}],"config":{"idle_timeout_minutes":5,"harness":{"type":"oz"}}}`,
		`{"prompt":"x","config":{"mcp_servers":{"a":{"command":"npx","args":["-y"]},"b":{"url":"https://mcp.example.com"}}}}`,
		fullConfigBody,
	}
	invalid := []string{
		`{"prompt":42}`, `{"prompt":"` + strings.Repeat("a", 100001) + `"}`, `{"prompt":"x","config":"fast"}`,
		`{"prompt":"x","config":{"model_id":3}}`,
		`{"prompt":"x","config":{"mcp_servers":{"both":{"command":"npx","url":"https://mcp.example.com"}}}}`,
		`{"prompt":"x","config":{"mcp_servers":{"empty":{"args":["a"]}}}}`,
		`{"prompt":"x","images":[{"data":"aGk=","mime_type":"image/bmp"}]}`,
		`{"prompt":"x","images":[{"mime_type":"image/png"}]}`,
		`{"prompt":`, `["x"]`, `null`, `"x"`, `{"prompt":"x"} {"prompt":"y"}`, `{"prompt":"x"}]`,
		`{"prompt":"x","team":"yes"}`, `{"prompt":"x","config":{"computer_use_enabled":1}}`,
		`{"prompt":"x","attachments":[{"file_name":"a.txt","mime_type":"text/plain","data":"not base64!"}]}`,
		`{"prompt":"x","config":{"idle_timeout_minutes":61}}`, `{"prompt":"x","config":{"harness":{"type":"cursor"}}}`,
	}
	for _, body := range valid {
		for _, path := range []string{"/agent/run", "/agent/runs"} {
			for _, ct := range []string{"application/json", "application/json; charset=utf-8"} {
				r := request("POST", path, ct, body)
				require.True(t, v.bodyChecks["POST "+path].accepts(r, []byte(body)), "the shortcut refused %s %s %s", path, ct, body)
			}
		}
	}
	libraryAccepts := func(path, ct, query, body string) bool {
		ok, _ := v.lib.ValidateHttpRequestSync(request("POST", path+query, ct, body))
		return ok
	}
	check := func(path, ct, query, body string) {
		t.Helper()
		r := request("POST", path+query, ct, body)
		if v.bodyChecks["POST "+path].accepts(r, []byte(body)) && !libraryAccepts(path, ct, query, body) {
			t.Fatalf("the shortcut accepted what the library refuses: POST %s%s (%s) %q", path, query, ct, body)
		}
	}
	for _, body := range append(append([]string{""}, valid...), invalid...) {
		for _, ct := range []string{"application/json", "text/plain", "application/merge-patch+json", "", "application/json; charset=latin1"} {
			for _, query := range []string{"", "?x=1"} {
				check("/agent/run", ct, query, body)
			}
		}
	}
	rng := rand.New(rand.NewSource(7))
	bits := []string{`"`, `{`, `}`, `[`, `]`, `,`, `:`, `1`, `null`, `"prompt"`, `"config"`, `"images"`, `"mcp_servers"`, `"x"`, ` `, `\u0000`}
	seen := 0
	for range 3000 {
		b := []byte(valid[rng.Intn(len(valid))])
		for range 1 + rng.Intn(3) {
			i := rng.Intn(len(b) + 1)
			switch rng.Intn(3) {
			case 0: // delete a byte
				if i < len(b) {
					b = append(b[:i], b[i+1:]...)
				}
			case 1: // insert a piece of JSON
				b = append(b[:i], append([]byte(bits[rng.Intn(len(bits))]), b[i:]...)...)
			default: // change a byte
				if i < len(b) {
					b[i] = byte(rng.Intn(128))
				}
			}
		}
		body := string(b)
		if v.bodyChecks["POST /agent/run"].accepts(request("POST", "/agent/run", "application/json", body), b) {
			seen++
		}
		check("/agent/run", "application/json", "", body)
	}
	t.Logf("%d of 3000 mutated bodies were still valid", seen)
}

// TestDecodeJSONAgreesWithEncodingJSON holds the shortcut's decoder to the
// library's (encoding/json, then canonicalized): wherever DecodeJSON
// decodes a body, the library decodes it too, to an equal value, so the
// schema judges the same value either way.
func TestDecodeJSONAgreesWithEncodingJSON(t *testing.T) {
	bodies := []string{
		`{"prompt":"x"}`, `{"prompt":"x","prompt":"y"}`, `{"a":1e400}`, `{"a":-0}`, `{"a":1.5e3,"b":[1,2,{"c":null}]}`,
		`{"s":"\ud800"}`, `{"s":"\u00e9\n\t\\\/"}`, `{"s":"é"}`, "{\"s\":\"\xff\"}", ` {"a":true} `, `{"a":true} x`, `[]`, `"x"`, `1`,
		`{"a":{"b":{"a":1,"b":2}},"b":{"a":{"a":1}}}`, `{"Prompt":"x","prompt":"y"}`, fullConfigBody,
	}
	library := func(body string) (any, error) {
		dec := json.NewDecoder(strings.NewReader(body))
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, errors.New("more than one value")
		}
		return content.Canonicalize(v)
	}
	rng := rand.New(rand.NewSource(11))
	bits := []string{`"`, `{`, `}`, `[`, `]`, `,`, `:`, `1`, `-0`, `1e999`, `null`, `"prompt"`, `\u00e9`, `\ud83d\ude00`, `\ud800`, ` `}
	for i := range 5000 {
		body := bodies[i%len(bodies)]
		if i >= len(bodies) {
			b := []byte(body)
			for range 1 + rng.Intn(3) {
				j := rng.Intn(len(b) + 1)
				b = append(b[:j], append([]byte(bits[rng.Intn(len(bits))]), b[j:]...)...)
			}
			body = string(b)
		}
		got, err := DecodeJSON([]byte(body))
		if err != nil {
			continue
		}
		want, lerr := library(body)
		require.NoError(t, lerr, "DecodeJSON decoded what the library does not: %q", body)
		require.Equal(t, want, got, "the decoders disagree on %q", body)
	}
}

// TestBodyCheckRemembersOnlyAcceptances: a body accepted once is accepted
// again without decoding, under the same content type only, never with a
// query, and a refused body is refused every time.
func TestBodyCheckRemembersOnlyAcceptances(t *testing.T) {
	v := testValidator(t)
	c := v.bodyChecks["POST /agent/run"]
	body := []byte(`{"prompt":"remember me"}`)
	ok, decoded := c.check(request("POST", "/agent/run", "application/json", string(body)), body)
	require.True(t, ok)
	assert.Equal(t, map[string]any{"prompt": "remember me"}, decoded)
	ok, decoded = c.check(request("POST", "/agent/run", "application/json", string(body)), body)
	assert.True(t, ok)
	assert.Nil(t, decoded, "accepted before, so not decoded again")
	ok, decoded = c.check(request("POST", "/agent/run", "application/json; charset=utf-8", string(body)), body)
	assert.True(t, ok)
	assert.NotNil(t, decoded, "another content type is checked afresh")
	ok, _ = c.check(request("POST", "/agent/run?x=1", "application/json", string(body)), body)
	assert.False(t, ok, "a query goes to the library")
	ok, _ = c.check(request("POST", "/agent/run", "text/plain", string(body)), body)
	assert.False(t, ok, "another media type goes to the library")
	bad := []byte(`{"prompt":42}`)
	for range 2 {
		ok, _ = c.check(request("POST", "/agent/run", "application/json", string(bad)), bad)
		assert.False(t, ok)
	}
}
