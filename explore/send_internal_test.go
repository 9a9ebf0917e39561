package explore

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A call's path is sent as it is written, escaped once: a malformed id
// "not an id!" reaches the server as not%20an%20id%21, which is what the
// scenario and the curl line show, not escaped a second time.
func TestACallsPathIsSentAsWritten(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.EscapedPath()
	}))
	t.Cleanup(srv.Close)
	base, err := url.Parse(srv.URL + "/api/v1")
	require.NoError(t, err)
	e := &explorer{base: base, hc: srv.Client()}
	s := e.send(context.Background(), Call{Method: http.MethodGet, Path: "/agent/runs/" + url.PathEscape("not an id!")}, "")
	require.NoError(t, s.err)
	assert.Equal(t, "/api/v1/agent/runs/not%20an%20id%21", got)
}

// The replay line names the budget, seed, limits and the server, and the
// keys only by the variables that hold them; none for a mock the command
// started itself.
func TestTheReplayLineReplays(t *testing.T) {
	o := Options{BaseURL: "https://api.example.com/api/v1", APIKey: "secret-a", OtherAPIKey: "secret-b", Steps: 500, ReadOnly: true, MaxRuns: 3}
	assert.Equal(t, `agentruns-contract --explore 500 --seed 9 --base-url https://api.example.com/api/v1 --api-key "$WARP_API_KEY" --other-api-key "$OTHER_API_KEY" --read-only --max-runs 3`, replayLine(o, 9))
	o.ReplayBaseURL = "-"
	assert.Equal(t, "agentruns-contract --explore 500 --seed 9 --read-only --max-runs 3", replayLine(o, 9))
}
