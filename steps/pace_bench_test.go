package steps_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/agentruns/agentruns/refserver"
	"github.com/agentruns/agentruns/runner"
	"github.com/agentruns/agentruns/suiteconfig"
)

// BenchmarkFullPassAtATeamsPace is `make bench`'s row for issue 46: a full
// pass (--tags 'not @newest-client', a second team's key, a failing prompt,
// the identity plan) against the reference server of the published
// document whose runs each hold one of the team's places for D, the team
// running C at once. It prints the runs created, the wall time and the
// bound ceil(runs / C) x D + 1 min; it asserts nothing. D and C come from
// BENCH_PACE (a duration, 12s) and BENCH_CAPACITY (4); it takes minutes of
// real time, mostly waiting.
func BenchmarkFullPassAtATeamsPace(b *testing.B) {
	pace, capacity := 12*time.Second, 4
	if v, err := time.ParseDuration(os.Getenv("BENCH_PACE")); err == nil && v > 0 {
		pace = v
	}
	if v, err := strconv.Atoi(os.Getenv("BENCH_CAPACITY")); err == nil && v > 0 {
		capacity = v
	}
	for range b.N {
		// A run holds its place from PENDING to its end: three Steps.
		srv := refserver.New(refserver.Options{Step: pace / 3, Published: true, Capacity: capacity, FailingPrompt: refFailingPrompt})
		hs := httptest.NewServer(srv)
		cfg := suiteconfig.Config{
			HTTPClient: &http.Client{}, BaseURL: hs.URL + "/api/v1", APIKey: "wk-bench",
			Output: io.Discard, Format: "progress", NoColors: true,
			Concurrency: 32, Timeout: 10 * time.Minute,
		}
		fullPass(&cfg)
		start := time.Now()
		res, err := runner.Run(context.Background(), cfg)
		wall := time.Since(start)
		hs.Close()
		if err != nil {
			b.Fatal(err)
		}
		runs := res.Report.Runs.Created
		bound := time.Duration(math.Ceil(float64(runs)/float64(capacity)))*pace + time.Minute
		passed, failed, skipped := res.Count()
		b.ReportMetric(float64(runs), "runs")
		b.ReportMetric(wall.Seconds(), "wall-s")
		b.ReportMetric(bound.Seconds(), "bound-s")
		fmt.Fprintf(os.Stderr, "full pass at D=%s, C=%d: %d runs created (the server counted %d), wall %s, bound ceil(runs/C) x D + 1 min = %s; %d passed, %d failed, %d skipped; %s\n",
			pace, capacity, runs, srv.Created(), wall.Round(time.Second), bound, passed, failed, skipped, res.Report.Runs.Cost())
		for i, f := range res.Failed() {
			if i == 5 {
				fmt.Fprintf(os.Stderr, "  and %d more failed\n", len(res.Failed())-i)
				break
			}
			fmt.Fprintf(os.Stderr, "  FAILED %s: %s\n", f.Name, f.Message)
		}
	}
}
