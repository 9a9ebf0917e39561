// Package readcap reads a whole file, or a whole stream, up to a limit:
// the command-line tools read documents, overlays and profiles into memory,
// and a file that never ends (/dev/zero, a pipe left open) or one far
// larger than any of them must be refused, not held.
package readcap

import (
	"fmt"
	"io"
	"os"
)

// Limit is the most the tools read of one file: 64 MiB, some four hundred
// times the API's document and six times an overlay of 100,000 actions.
const Limit = 64 << 20

// File reads name whole if it holds at most limit bytes, and refuses it
// otherwise, having read no more than limit+1 bytes of it.
func File(name string, limit int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: larger than %s, the most read of one file", name, size(limit))
	}
	return b, nil
}

func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
