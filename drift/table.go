package drift

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"
)

// WriteTable writes differences as a table for a person, one a line, the
// sides named left and right; "—" is what a side did not show. Member
// names and values come from traffic, so every cell is made printable
// first (Printable): the table is read in a terminal.
func WriteTable(w io.Writer, diffs []Difference, left, right string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "OPERATION\tSTATUS\tWHAT\tLOCATION\t%s\t%s\n", Printable(strings.ToUpper(left)), Printable(strings.ToUpper(right)))
	for _, d := range diffs {
		status := ""
		if d.Status != 0 {
			status = fmt.Sprint(d.Status)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", Printable(d.Operation), status, Printable(string(d.What)),
			Printable(orDash(d.Location)), Printable(orDash(d.Left)), Printable(orDash(d.Right)))
	}
	return tw.Flush()
}

// Printable is s with what a terminal would act on instead of showing
// written as Go escapes: control characters (an escape sequence can
// recolour, retitle or rewrite the screen), the characters that reorder
// text (U+202E and its kin), and bytes that are not UTF-8. A tab or a
// newline is escaped too: each would break the table's columns. An ASCII
// control is written \x1b, any other \u009b, so that neither reads as a
// byte that is not UTF-8 (\xff).
func Printable(s string) string {
	clean := true
	for _, r := range s {
		if unsafeRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafeRune(r) && r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}

// PrintableJSON is JSON (as encoding/json writes it) with what a terminal
// would act on written as \u escapes, its meaning unchanged:
// encoding/json escapes the C0 controls but writes the C1 controls (U+009B
// is a one-character CSI to many terminals), DEL and the characters that
// reorder text as they are. Outside its strings such JSON holds only
// ASCII, so every such character it holds is in a string.
func PrintableJSON(b []byte) []byte {
	clean := true
	for _, r := range string(b) {
		if r >= 0x7f && unsafeRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return b
	}
	out := make([]byte, 0, len(b)+64)
	for _, r := range string(b) {
		if r >= 0x7f && unsafeRune(r) {
			out = fmt.Appendf(out, `\u%04x`, r) // every such character is in the BMP
			continue
		}
		out = utf8.AppendRune(out, r)
	}
	return out
}

func unsafeRune(r rune) bool {
	return r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) ||
		r == '\u2028' || r == '\u2029'
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
