package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/suiteconfig"
)

// chooseTarget settles the server under test, starting the bundled mock when
// none is named, and says which it is and why. A server named only by
// $OZ_API_BASE_URL, exported for another tool perhaps, is tested read-only:
// runs are created only on a server named on this command line, or with
// --allow-writes.
func chooseTarget(o options, cfg *suiteconfig.Config) (target, keyFrom string, stop func(), err error) {
	switch {
	case cfg.BaseURL == "":
		url, stop, err := startMock()
		if err != nil {
			return "", "", nil, fmt.Errorf("starting the bundled mock: %w", err)
		}
		cfg.BaseURL = url
		keyFrom = o.apiKeyFrom
		if cfg.APIKey == "" {
			cfg.APIKey, keyFrom = "wk-mock-alice", "a fixture key of the mock"
			if cfg.OtherAPIKey == "" {
				cfg.OtherAPIKey = "wk-mock-carol" // of another team than alice's (fixtures/principals.json)
			}
			if cfg.IdentityPlan == 0 {
				cfg.IdentityPlan = 3 // the plan of alice's team (fixtures/principals.json)
			}
		}
		if cfg.FailingPrompt == "" {
			cfg.FailingPrompt = bundledMockFailingPrompt
		}
		target := fmt.Sprintf("the bundled mock at %s (started in this process: no --base-url, no $OZ_API_BASE_URL)", url)
		return target, keyFrom, stop, nil
	case cfg.APIKey == "":
		return "", "", nil, usageError{errors.New("no API key: pass --api-key or set WARP_API_KEY")}
	case o.baseURLFrom == "$OZ_API_BASE_URL" && !o.allowWrites && !cfg.ReadOnly:
		cfg.ReadOnly = true
		target = fmt.Sprintf("%s (from $OZ_API_BASE_URL), read-only: name it with --base-url, or add --allow-writes, to run the scenarios that create runs", cfg.BaseURL)
	default:
		target = fmt.Sprintf("%s (from %s)", cfg.BaseURL, o.baseURLFrom)
	}
	return target, o.apiKeyFrom, func() {}, nil
}

// bundledMockFailingPrompt is a prompt the bundled mock ends in FAILED
// (fixtures/fates.json).
const bundledMockFailingPrompt = "Contract suite run that fails: [mock:fail]"

// startMock serves the bundled mock on a free local port, hardened as
// agentruns-mock serves it (mockserver.Serve).
func startMock() (url string, stop func(), err error) {
	m, err := mockserver.New(mockserver.Options{})
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = mockserver.Serve(ctx, ln, m, mockserver.DefaultHardening, nil)
	}()
	stop = func() { cancel(); <-done }
	return "http://" + ln.Addr().String(), stop, nil
}

// isTerminal reports whether w is a character device, to colour only there.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// reportPlace names where the report goes, for people.
func reportPlace(output string) string {
	if output == "" {
		return "stdout"
	}
	return output
}
