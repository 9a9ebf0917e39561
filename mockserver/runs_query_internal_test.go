package mockserver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// encodeCursor writes a cursor without encoding/json and crypto/hmac; what
// it writes must stay what they give, or cursors already handed out (and
// those of a saved state) would stop checking out.
func TestEncodeCursorIsJSONAndHMAC(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	keys := []string{"", "<title & \"quotes\">", "Fix flaky login test\u2028", "\xff invalid", strings.Repeat("long key ", 80)}
	for i := range 500 {
		key := make([]byte, []int{0, 1, 32, 64, 65, 200}[i%6])
		for j := range key {
			key[j] = byte(rng.IntN(256))
		}
		sg := cursorSigner{key: key, sessionName: []string{"", "ci-42", strings.Repeat("s", 100)}[i%3]}
		c := cursor{Generation: rng.Int64N(1 << 40), Hash: rng.Uint64(), Key: keys[i%len(keys)], Seq: rng.Int64() - 1<<62}
		if i%4 != 0 {
			c.Session, c.Incarnation = tag("session:", []byte(sg.sessionName)), tag("key:", sg.key)
		}
		payload, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		m := hmac.New(sha256.New, sg.key)
		m.Write(payload)
		want := base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:macLen])
		if got := encodeCursor(c, sg); got != want {
			t.Fatalf("cursor %+v with a key of %d bytes:\n got %s\nwant %s", c, len(key), got, want)
		}
		if !utf8.ValidString(c.Key) || len(want) > 512 {
			continue // not read back as given (invalid UTF-8), or refused as too long
		}
		back, err := decodeCursor(want, sg)
		if err != nil || back != c {
			t.Fatalf("decoding %s: %+v, %v; want %+v", want, back, err, c)
		}
	}
	sum := sha256.Sum256([]byte("session:ci-42"))
	if got, want := tag("session:", []byte("ci-42")), base64.RawURLEncoding.EncodeToString(sum[:6]); got != want {
		t.Fatalf("tag = %s, want %s", got, want)
	}
}
