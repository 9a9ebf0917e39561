package main

import (
	"log"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"time"

	"github.com/agentruns/agentruns/mockserver"
)

func main() {
	go func() { log.Println(http.ListenAndServe("127.0.0.1:6060", nil)) }()
	h, err := mockserver.New(mockserver.Options{Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:4620")
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 3 * time.Minute, IdleTimeout: 2 * time.Minute, Handler: mockserver.LimitInFlight(h, 256), MaxHeaderBytes: mockserver.MaxHeaderBytes, ConnContext: mockserver.ConnContext}
	log.Fatal(srv.Serve(mockserver.GuardListener(ln)))
}
