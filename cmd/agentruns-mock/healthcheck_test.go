package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver"
)

// --healthcheck asks a running server once: success when it answers 200,
// an error naming what it answered otherwise. The document it asks for in
// the image needs neither a key nor the control token.
func TestHealthcheckAsksARunningServer(t *testing.T) {
	m, err := mockserver.New(mockserver.Options{ControlToken: "ctl-secret"})
	require.NoError(t, err)
	up := httptest.NewServer(m)
	defer up.Close()
	require.NoError(t, run(t.Context(), []string{"--healthcheck", up.URL + "/openapi.yaml"}, io.Discard, nil))

	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer down.Close()
	err = run(t.Context(), []string{"--healthcheck", down.URL + "/openapi.yaml"}, io.Discard, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "503")
	down.Close()
	require.Error(t, run(t.Context(), []string{"--healthcheck", down.URL + "/openapi.yaml"}, io.Discard, nil))
}
