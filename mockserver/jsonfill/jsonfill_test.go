package jsonfill

import (
	"encoding/json"
	"reflect"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type color string

type inner struct {
	Label string            `json:"label,omitempty"`
	Tags  []string          `json:"tags"`
	Env   map[string]string `json:"env"`
	On    *bool             `json:"on"`
}

// request has a field of every kind Fill handles, and some it leaves to
// encoding/json.
type request struct {
	Name     *string            `json:"name"`
	Plain    string             `json:"plain"`
	Flag     bool               `json:"flag"`
	Ratio    float64            `json:"ratio"`
	Count    *int               `json:"count"` // left to encoding/json
	Color    color              `json:"color"`
	Inner    *inner             `json:"inner"`
	Byval    inner              `json:"byval"`
	Many     []inner            `json:"many"`
	ByName   map[string]*inner  `json:"by_name"`
	Colors   map[color]string   `json:"colors"`
	Anything any                `json:"anything"`
	Raw      []json.RawMessage  `json:"raw"` // decodes itself: left to encoding/json
	Nested   map[string][]*bool `json:"nested"`
	Untagged string
	Skipped  string `json:"-"`
}

// decode is the one decoding a caller of Fill makes: generic values, no
// duplicate names (openapi.DecodeJSON's rules).
func decode(body string) (any, error) {
	var v any
	err := jsonv2.Unmarshal([]byte(body), &v)
	return v, err
}

// sameAsEncodingJSON fails the test when Fill, given body decoded once,
// answers other than json.Unmarshal does; it reports whether Fill answered.
func sameAsEncodingJSON(t *testing.T, body string) bool {
	t.Helper()
	v, err := decode(body)
	if err != nil {
		return false
	}
	var got request
	if !Fill(&got, v) {
		return false
	}
	var want request
	if err := json.Unmarshal([]byte(body), &want); err != nil {
		t.Fatalf("Fill took %s, which encoding/json refuses: %v", body, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\nFill:          %#v\nencoding/json: %#v", body, got, want)
	}
	return true
}

var seeds = []string{
	`{}`,
	`{"name":"a","plain":"b","flag":true,"ratio":0.25,"color":"red"}`,
	`{"name":null,"plain":null,"flag":null,"inner":null,"many":null,"anything":null}`,
	`{"inner":{"label":"x","tags":["a","b"],"env":{"K":"v"},"on":false}}`,
	`{"byval":{"tags":[]},"many":[{"label":"1"},{}],"by_name":{"a":{"env":{}}}}`,
	`{"colors":{"red":"#f00"},"anything":{"a":[1,"x",null,true,{"b":2.5}]},"Untagged":"u","Skipped":"s"}`,
	`{"nested":{"a":[true,false]},"unknown":{"deep":[1,2]},"ratio":1e300,"private":"p"}`,
	`{"plain":"\u00e9\ud83d\ude00<&>","name":"line\nbreak"}`,
	// what Fill leaves to encoding/json
	`{"count":1}`,
	`{"count":1.0}`,
	`{"raw":[{"a":1}]}`,
	`{"NAME":"folded"}`,
	`{"name":"a","Name":"b"}`,
	`{"plain":1}`,
	`{"flag":"true"}`,
	`{"many":[null]}`,
	`{"inner":{"env":{"k":null}}}`,
	`{"inner":{"tags":"a"}}`,
	`{"ſkipped":"s"}`,
	`[]`,
	`"string"`,
	`null`,
}

func TestFillAgreesWithEncodingJSON(t *testing.T) {
	filled := 0
	for _, body := range seeds {
		if sameAsEncodingJSON(t, body) {
			filled++
		}
	}
	// The first eight seeds are bodies Fill must take, or it fills nothing.
	assert.Equal(t, 8, filled, "Fill took some seeds it should leave, or left some it should take")
}

// Fill takes the common request, or it saves no decoding.
func TestFillTakesTheCommonRequest(t *testing.T) {
	v, err := decode(`{"name":"n","inner":{"label":"l","tags":["t"],"env":{"a":"b"},"on":true},"anything":[1]}`)
	require.NoError(t, err)
	var got request
	require.True(t, Fill(&got, v))
	name, on := "n", true
	assert.Equal(t, request{Name: &name, Inner: &inner{Label: "l", Tags: []string{"t"}, Env: map[string]string{"a": "b"}, On: &on},
		Anything: []any{float64(1)}}, got)
}

func TestFillLeavesWhatItCannotBeSureOf(t *testing.T) {
	for _, body := range []string{`{"count":1}`, `{"raw":[{}]}`, `{"NAME":"x"}`, `{"nämé":"x"}`, `{"plain":1}`, `{"many":[null]}`, `[]`} {
		v, err := decode(body)
		require.NoError(t, err)
		var got request
		assert.False(t, Fill(&got, v), body)
	}
	var embedded struct {
		inner
		Name string `json:"name"`
	}
	assert.False(t, Fill(&embedded, map[string]any{"name": "x"}), "an embedded struct")
	var str struct {
		N int `json:"n,string"`
	}
	assert.False(t, Fill(&str, map[string]any{}), "a ,string field")
	assert.False(t, Fill(request{}, map[string]any{}), "not a pointer")
}

func FuzzFillAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) { sameAsEncodingJSON(t, body) })
}
