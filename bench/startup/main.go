// Command startup measures how long a server takes from exec to its first
// answered request: it starts the command given after "--", asks url every
// half millisecond until the answer is 200, stops the process, and does this
// -n times. It prints the fastest and the median start in milliseconds.
//
//	go run ./bench/startup -n 5 -url http://127.0.0.1:4613/agent/runs?limit=1 -- ./agentruns-mock --quiet --addr 127.0.0.1:4613
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 5, "how many starts to time (1 to 50)")
	target := flag.String("url", "", "a URL on a loopback address that answers 200 once the server is up")
	header := flag.String("header", "Authorization: Bearer wk-mock-alice", "a header to send with each request")
	limit := flag.Duration("timeout", 10*time.Second, "give up on one start after this long")
	flag.Parse()
	if err := run(*n, *target, *header, *limit, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "startup:", err)
		os.Exit(1)
	}
}

func run(n int, target, header string, limit time.Duration, command []string) error {
	u, err := url.Parse(target)
	if err != nil || u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost" && u.Hostname() != "::1" {
		return fmt.Errorf("-url must be an http URL on a loopback address, not %q", target)
	}
	if n < 1 || n > 50 || len(command) == 0 {
		return errors.New("usage: startup -n N -url URL -- command [args]")
	}
	name, value, _ := strings.Cut(header, ":")
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var times []time.Duration
	for range n {
		d, err := once(client, target, strings.TrimSpace(name), strings.TrimSpace(value), limit, command)
		if err != nil {
			return err
		}
		times = append(times, d)
	}
	slices.Sort(times)
	fmt.Printf("%.1f %.1f\n", ms(times[0]), ms(times[len(times)/2]))
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// once starts the command and returns the time to its first 200.
func once(client *http.Client, target, name, value string, limit time.Duration, command []string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		if name != "" {
			req.Header.Set(name, value)
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(start), nil
			}
		}
		time.Sleep(500 * time.Microsecond)
	}
	return 0, fmt.Errorf("%s answered no 200 within %v", target, limit)
}
