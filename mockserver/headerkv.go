package mockserver

import (
	"fmt"
	"strings"
)

// The X-Mock-Fate and X-Mock-Fault headers share one syntax: "key=value"
// pairs separated by ";" or ",", e.g. "state=FAILED; error_code=insufficient_credits".
// Keys are matched without regard to case; spaces around keys and values
// are ignored. A value that holds a separator (a message with a comma) is
// written in double quotes, as in HTTP's own quoted-string:
// message="Disk full, try again; later". Inside quotes, \" is a quote and
// \\ a backslash.

// headerPair is one key=value of such a header; key is lower case.
type headerPair struct{ key, value string }

// parseHeaderPairs splits h into its pairs. A key listed in bare may stand
// alone, meaning "true" (drop); any other pair needs a non-empty value.
func parseHeaderPairs(h string, bare ...string) ([]headerPair, error) {
	parts, err := splitHeaderPairs(h)
	if err != nil {
		return nil, err
	}
	var out []headerPair
	for _, part := range parts {
		key, value, ok := strings.Cut(part.text, "=")
		key, value = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(value)
		if part.quoted {
			value = part.value
		}
		if !ok {
			for _, b := range bare {
				if key == b {
					value, ok = "true", true
				}
			}
		}
		if !ok || value == "" {
			return nil, fmt.Errorf("%q is not key=value", strings.TrimSpace(part.text))
		}
		out = append(out, headerPair{key, value})
	}
	return out, nil
}

// rawPair is one separated part of a header: its text, and when its value
// was quoted, the value with the quotes and escapes taken out.
type rawPair struct {
	text   string
	quoted bool
	value  string
}

// splitHeaderPairs cuts h at the separators outside quoted values. A quote
// opens a quoted value only right after "=" (spaces aside), so a plain
// value may still hold a quote character.
func splitHeaderPairs(h string) ([]rawPair, error) {
	var out []rawPair
	var cur rawPair
	var text strings.Builder
	flush := func() {
		cur.text = text.String()
		if strings.TrimSpace(cur.text) != "" {
			out = append(out, cur)
		}
		cur, text = rawPair{}, strings.Builder{}
	}
	for i := 0; i < len(h); i++ {
		ch := h[i]
		switch {
		case ch == ';' || ch == ',':
			flush()
		case ch == '"' && !cur.quoted && strings.HasSuffix(strings.TrimSpace(text.String()), "=") && strings.Count(text.String(), "=") == 1:
			var v strings.Builder
			closed := false
			for i++; i < len(h); i++ {
				if h[i] == '\\' && i+1 < len(h) {
					i++
					v.WriteByte(h[i])
					continue
				}
				if h[i] == '"' {
					closed = true
					break
				}
				v.WriteByte(h[i])
			}
			if !closed {
				return nil, fmt.Errorf("%q: the quoted value has no closing quote", strings.TrimSpace(text.String()))
			}
			cur.quoted, cur.value = true, v.String()
			text.WriteString(`"` + v.String() + `"`)
			// Only spaces may follow a quoted value before the next separator.
			for i+1 < len(h) && (h[i+1] == ' ' || h[i+1] == '\t') {
				i++
			}
			if i+1 < len(h) && h[i+1] != ';' && h[i+1] != ',' {
				return nil, fmt.Errorf("%q: text after the closing quote", strings.TrimSpace(text.String()))
			}
		default:
			text.WriteByte(ch)
		}
	}
	flush()
	return out, nil
}
