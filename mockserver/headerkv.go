package mockserver

import (
	"fmt"
	"strings"
)

// The X-Mock-Fate and X-Mock-Fault headers share one syntax: "key=value"
// pairs separated by ";" or ",", e.g. "state=FAILED; error_code=insufficient_credits".
// Keys are matched without regard to case; spaces around keys and values
// are ignored.

// headerPair is one key=value of such a header; key is lower case.
type headerPair struct{ key, value string }

// parseHeaderPairs splits h into its pairs. A key listed in bare may stand
// alone, meaning "true" (drop); any other pair needs a non-empty value.
func parseHeaderPairs(h string, bare ...string) ([]headerPair, error) {
	var out []headerPair
	for _, part := range strings.FieldsFunc(h, func(r rune) bool { return r == ';' || r == ',' }) {
		key, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		key, value = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(value)
		if !ok {
			for _, b := range bare {
				if key == b {
					value, ok = "true", true
				}
			}
		}
		if !ok || value == "" {
			return nil, fmt.Errorf("%q is not key=value", strings.TrimSpace(part))
		}
		out = append(out, headerPair{key, value})
	}
	return out, nil
}
