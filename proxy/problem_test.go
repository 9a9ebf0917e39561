package proxy_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/proxy"
)

// A problem's detail reads as written: "Bearer <control token>", not with
// < and > escaped as \u003c and \u003e.
func TestProblemDetailsKeepAngleBrackets(t *testing.T) {
	p, err := proxy.New(proxy.Options{Upstream: "http://127.0.0.1:1", ControlToken: "ctl"})
	require.NoError(t, err)
	defer p.Close()
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, httptest.NewRequest("GET", "/__mock/proxy", nil))
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	assert.Contains(t, rec.Body.String(), "Bearer <control token>")
}
