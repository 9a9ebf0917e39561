package explore_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/explore"
)

// The curl line, run by a shell, sends the request as the exploration
// sent it, with the key taken from the environment.
func TestCurlSendsTheRequestAgain(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl on this machine")
	}
	type seen struct {
		method, path, rawQuery, auth, contentType, body string
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), string(body)}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	for _, tc := range []struct {
		name string
		call explore.Call
		key  string
	}{
		{"a listing", explore.Call{Method: "GET", Path: "/agent/runs", Query: url.Values{"state": {"QUEUED", "BLOCKED"}, "name": {"it's a [test] {x} $HOME"}}}, "Bearer main-key"},
		{"another team's replace", explore.Call{Team: explore.OtherTeam, Method: "PUT", Path: "/agent/schedules/abc%20def", Body: []byte(`{"prompt": "don't expand $HOME or` + "`id`" + `"}`)}, "Bearer other-key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := explore.Curl(tc.call, srv.URL+"/api/v1/")
			t.Log(line)
			assert.NotContains(t, line, "main-key")
			cmd := exec.Command("sh", "-c", line)
			cmd.Env = []string{"WARP_API_KEY=main-key", "OTHER_API_KEY=other-key", "PATH=/usr/bin:/bin:/usr/local/bin"}
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, string(out))
			s := <-got
			assert.Equal(t, tc.call.Method, s.method)
			assert.Equal(t, "/api/v1"+tc.call.Path, s.path)
			assert.Equal(t, tc.call.Query.Encode(), s.rawQuery)
			assert.Equal(t, tc.key, s.auth)
			assert.Equal(t, string(tc.call.Body), s.body)
			if tc.call.Body != nil {
				assert.Equal(t, "application/json", s.contentType)
			}
		})
	}
}
