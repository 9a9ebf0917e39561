package mockserver

import (
	"math/rand"
	"strings"
	"testing"
)

// titleFromSlow is titleFrom as first written; the fast one must agree.
func titleFromSlow(prompt string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	line = strings.Join(strings.Fields(line), " ")
	const max = 60
	if len([]rune(line)) <= max {
		return line
	}
	cut := string([]rune(line)[:max])
	if i := strings.LastIndex(cut, " "); i > max/2 {
		cut = cut[:i]
	}
	return cut + "…"
}

func TestTitleFromAgreesWithTheSimpleVersion(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	words := []string{"fix", "the", "flaky", "login", "test", " ", "  ", "\t", "\n", "\r\n", "é", "日本語", "\u00a0", "\xff", "a-very-long-word-without-any-space-in-it", "…"}
	cases := []string{"", " ", "\n", "one", " one ", "a  b", strings.Repeat("word ", 30), strings.Repeat("x", 61), strings.Repeat("é", 61)}
	for range 20000 {
		var b strings.Builder
		for range rng.Intn(40) {
			b.WriteString(words[rng.Intn(len(words))])
			if rng.Intn(2) == 0 {
				b.WriteByte(' ')
			}
		}
		cases = append(cases, b.String())
	}
	for _, c := range cases {
		if got, want := titleFrom(c), titleFromSlow(c); got != want {
			t.Fatalf("titleFrom(%q) = %q, want %q", c, got, want)
		}
	}
}
