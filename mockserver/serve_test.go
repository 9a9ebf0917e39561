package mockserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver"
)

// Serve is the one way the commands run the mock: whatever it serves is
// guarded, capped and shut down gracefully.
func TestServeIsHardened(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	entered, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			entered <- struct{}{}
			<-release
		}
		_, _ = io.WriteString(w, "ok")
	})
	hd := mockserver.DefaultHardening
	hd.MaxInFlight = 1
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- mockserver.Serve(ctx, ln, h, hd, nil) }()
	base := "http://" + ln.Addr().String()

	// What net/http refuses itself is a problem too (GuardListener).
	conn, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	go func() {
		_, _ = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\nX-Big: "+strings.Repeat("a", 80<<10)+"\r\n\r\n")
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	resp.Body.Close()
	conn.Close()
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
	assert.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))

	// One request at a time: the second waits for none, it is refused.
	slow := make(chan *http.Response, 1)
	go func() {
		resp, err := http.Get(base + "/slow")
		if err == nil {
			resp.Body.Close()
		}
		slow <- resp
	}()
	<-entered
	resp, err = http.Get(base + "/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)

	// A shutdown finishes the request in flight, then Serve returns.
	cancel()
	close(release)
	first := <-slow
	require.NotNil(t, first, "the request in flight was cut off")
	assert.Equal(t, http.StatusOK, first.StatusCode)
	require.NoError(t, <-served)
}

// A Transfer-Encoding net/http does not read is refused with a 501
// problem whose detail names the encoding sent, not another.
func TestAnUnknownTransferEncodingIsNamed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- mockserver.Serve(ctx, ln, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), mockserver.DefaultHardening, nil)
	}()
	defer func() { cancel(); <-served }()
	for _, te := range []string{"gzip", "brotli-ish"} {
		conn, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		_, err = io.WriteString(conn, "POST /agent/run HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: "+te+"\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		var p struct {
			Detail string `json:"detail"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&p))
		resp.Body.Close()
		conn.Close()
		assert.Equal(t, http.StatusNotImplemented, resp.StatusCode)
		assert.Contains(t, p.Detail, `"`+te+`"`, "the encoding sent is named")
		assert.Contains(t, p.Detail, "it reads chunked only")
	}
}
