package openapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An answer judged from its decoded value gets the verdict, findings and
// all, that ValidateResponse gives it from its bytes; a valid one twice
// (the second from the answers remembered) too.
func TestValidateResponseValueJudgesAsValidateResponse(t *testing.T) {
	v := testValidator(t)
	badState := strings.Replace(fullRunItem, `"state": "FAILED"`, `"state": "DONE"`, 1)
	require.NotEqual(t, fullRunItem, badState)
	// A valid answer is accepted without the library.
	var run any
	require.NoError(t, json.Unmarshal([]byte(fullRunItem), &run))
	assert.True(t, v.answers.accepts(request("GET", "/agent/runs/r1", "", ""), response(200, "application/json", fullRunItem), []byte(fullRunItem), run))
	for _, tc := range []struct {
		method, path string
		status       int
		ct, body     string
	}{
		{"GET", "/agent/runs/r1", 200, "application/json", fullRunItem},
		{"GET", "/agent/runs/r1", 200, "application/json", fullRunItem},
		{"GET", "/agent/runs/r1", 200, "application/json", badState},
		{"GET", "/agent/runs/r1", 200, "text/plain", fullRunItem},
		{"GET", "/agent/runs/r1", 418, "application/json", fullRunItem},
		{"GET", "/agent/runs/r1", 200, "application/json", `null`},
		{"GET", "/agent/runs/r1", 404, "application/problem+json", `{"type":"about:blank","title":"Not found","status":404}`},
		{"GET", "/agent/runs", 200, "application/json", `{"runs":[` + fullRunItem + `],"page_info":{"has_next_page":false}}`},
		{"GET", "/agent/runs", 200, "application/json", `{"runs":[` + badState + `]}`},
		{"GET", "/nowhere", 200, "application/json", `{}`},
	} {
		var decoded any
		require.NoError(t, json.Unmarshal([]byte(tc.body), &decoded))
		req := request(tc.method, tc.path, "", "")
		want := v.ValidateResponse(req, response(tc.status, tc.ct, tc.body))
		got := v.ValidateResponseValue(req, response(tc.status, tc.ct, tc.body), []byte(tc.body), decoded, true)
		if want == nil {
			assert.NoError(t, got, tc.path)
			continue
		}
		assert.False(t, v.answers.accepts(req, response(tc.status, tc.ct, tc.body), []byte(tc.body), decoded), tc.path)
		require.Error(t, got, tc.path)
		assert.Equal(t, want.Error(), got.Error(), tc.path)
	}
}
