package mockserver_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Regression tests of the mock's hardening (docs/reliability.md): each
// fails on a mock without the limit it names.

// 1. A session name is checked before anything is opened, and every name
// the mock accepts survives a save and a load byte for byte.
func TestSessionNamesAreCheckedAndSurviveARestart(t *testing.T) {
	s1 := newServer(t, mockserver.Options{ClockMode: mockserver.VirtualClock, ClockStart: clockStart})
	c := serve(t, s1)
	for _, bad := range []string{"\xff", "\xfe", "a\xffb", "caf\u00e9", "with space", strings.Repeat("x", 129)} {
		for _, path := range []string{"/agent/runs", "/__mock/info"} {
			r := c.in(bad).do("GET", path, nil)
			require.Equal(t, http.StatusBadRequest, r.status, "session %q on %s: %s", bad, path, r.body)
			assert.Contains(t, r.problem(t).Detail, mockserver.SessionHeader)
		}
	}
	good := []string{"job-a", strings.Repeat("x", 128), `!"#$%&'()*+,-./:;<=>?@[\]^_{|}~`, "0"}
	want := map[string]string{}
	for _, name := range good {
		want[name] = c.in(name).create(map[string]any{"prompt": "kept across a restart"}).RunID
	}
	state := saved(t, s1)
	s2 := newServer(t, mockserver.Options{ClockMode: mockserver.VirtualClock, ClockStart: clockStart})
	require.NoError(t, s2.Load(bytes.NewReader(state)), "a mock loads every file it saved")
	c2 := serve(t, s2)
	for name, id := range want {
		assert.Equal(t, id, c2.in(name).get(id).RunID, "session %q", name)
	}

	// A file naming a session the mock would refuse was not written by it.
	forged := bytes.Replace(state, []byte(`"name":"job-a"`), []byte(`"name":"job a"`), 1)
	require.NotEqual(t, state, forged)
	assert.ErrorIs(t, newServer(t, mockserver.Options{}).Load(bytes.NewReader(forged)), mockserver.ErrBadStateFile)
}
