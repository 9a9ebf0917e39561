package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// overlayOf writes an overlay of n actions of one of the shapes an
// overlay grows by: each action adding a member to one schema
// ("members"), or an operation to the paths ("paths"); or, taking turns,
// members to two schemas ("alternating"), or a new path and a member
// ("paths-and-members").
func overlayOf(tb testing.TB, n int, shape string) string {
	var b strings.Builder
	b.WriteString("overlay: 1.0.0\ninfo: {title: t, version: \"1\"}\nactions:\n")
	for i := range n {
		switch {
		case shape == "members", shape == "paths-and-members" && i%2 == 1:
			fmt.Fprintf(&b, "  - target: $['components']['schemas']['RunItem']\n    update:\n      properties:\n        seen_%d: {type: string}\n", i)
		case shape == "paths", shape == "paths-and-members":
			fmt.Fprintf(&b, "  - target: $.paths\n    update:\n      /seen/%d:\n        get:\n          responses:\n            '200': {description: seen}\n", i)
		case shape == "alternating":
			schema := []string{"RunItem", "PageInfo"}[i%2]
			fmt.Fprintf(&b, "  - target: $['components']['schemas']['%s']\n    update:\n      properties:\n        seen_%d: {type: string}\n", schema, i)
		}
	}
	file := filepath.Join(tb.TempDir(), shape+".yaml")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return file
}

// BenchmarkApply runs the whole of agentruns-drift apply (read, apply,
// check the document it makes, write it) on overlays of 1,000 to 100,000
// actions: the time per action should stay flat (32,000 actions took
// 12.7 s, and 100,000 did not end, when the engine merged each action's
// member by a scan of the members before it, then when actions taking
// turns on two objects reached it one by one, and when libopenapi's check
// of the document made compared each of its paths with every other).
func BenchmarkApply(b *testing.B) {
	for _, shape := range []string{"members", "paths", "alternating", "paths-and-members"} {
		for _, n := range benchSizes {
			ov := overlayOf(b, n, shape)
			out := filepath.Join(b.TempDir(), "openapi.yaml")
			b.Run(fmt.Sprintf("%s/%d", shape, n), func(b *testing.B) {
				for b.Loop() {
					if code, _, errOut := runCmd("apply", "--out", out, ov); code != exitSame {
						b.Fatal(errOut)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/action")
			})
		}
	}
}

var benchSizes = []int{1000, 10000, 100000}
