// Command _prof is the mock as agentruns-mock serves it (mockserver.Serve
// with the default hardening) plus net/http/pprof on 127.0.0.1:6060, for
// CPU profiles of the mock under wrk's load. The leading underscore keeps
// it out of ./... : build it by path (go build ./bench/_prof).
//
//	go build -o /tmp/prof ./bench/_prof && /tmp/prof &
//	wrk -t2 -c32 -d30s -H 'Authorization: Bearer wk-mock-alice' http://127.0.0.1:4620/agent/runs?limit=20 &
//	go tool pprof -top http://127.0.0.1:6060/debug/pprof/profile?seconds=20
package main

import (
	"context"
	"log"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"

	"github.com/agentruns/agentruns/mockserver"
)

func main() {
	go func() { log.Println(http.ListenAndServe("127.0.0.1:6060", nil)) }()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	h, err := mockserver.New(mockserver.Options{Logger: logger})
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:4620")
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(mockserver.Serve(context.Background(), ln, h, mockserver.DefaultHardening, logger))
}
