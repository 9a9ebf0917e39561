package mockserver

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestAppendJSONStringIsJSONMarshal(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabet := []string{"a", "\"", "\\", "<", ">", "&", "\x00", "\x1f", "\x7f", "é", "\u2028", "\u2029", "\xff", "\xe2\x80", "日", "\U0001F600", "\n", " "}
	for range 20000 {
		var s string
		for range rng.Intn(12) {
			s += alphabet[rng.Intn(len(alphabet))]
		}
		if rng.Intn(4) == 0 { // random bytes, mostly invalid UTF-8
			b := make([]byte, rng.Intn(8))
			rng.Read(b)
			s += string(b)
		}
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Fatalf("%q (valid UTF-8: %v):\n got %s\nwant %s", s, utf8.ValidString(s), got, want)
		}
	}
}

// TestPlain8 checks the eight-bytes-at-once test against jsonSafe for every
// byte value at every position, and next to every other byte value.
func TestPlain8(t *testing.T) {
	for pos := range 8 {
		for b := range 256 {
			for _, fill := range []byte{'a', ' ', '~', 0x21} {
				s := []byte(strings.Repeat(string(fill), 8))
				s[pos] = byte(b)
				want := b < utf8.RuneSelf && jsonSafe[b]
				if got := plain8(string(s)); got != want {
					t.Fatalf("plain8(%q) = %v, want %v", s, got, want)
				}
			}
		}
	}
	for a := range 256 {
		for b := range 256 {
			s := string([]byte{'a', byte(a), byte(b), 'z', 'z', 'z', 'z', 'z'})
			want := a < utf8.RuneSelf && jsonSafe[a] && b < utf8.RuneSelf && jsonSafe[b]
			if got := plain8(s); got != want {
				t.Fatalf("plain8(%q) = %v, want %v", s, got, want)
			}
		}
	}
}

func TestISODuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "PT0S", 250 * time.Millisecond: "PT0.25S", 150 * time.Second: "PT2M30S",
		time.Hour: "PT1H0M0S", 26*time.Hour + 5*time.Second + 7*time.Millisecond: "PT26H0M5.007S",
		100 * time.Millisecond: "PT0.1S", 1010 * time.Millisecond: "PT1.01S", 59*time.Minute + 999*time.Millisecond: "PT59M0.999S",
	} {
		if got := isoDuration(d); got != want {
			t.Errorf("isoDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
