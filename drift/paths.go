package drift

import "strings"

// Where things are in the document, as the JSONPath (RFC 9535) an
// overlay's action targets: every name in brackets, so that a path
// template or a status needs no special case.

// key is one member's step: ['name'].
func key(name string) string { return "['" + quoteEscaper.Replace(name) + "']" }

var quoteEscaper = strings.NewReplacer(`\`, `\\`, `'`, `\'`)

// refTarget turns a local reference ("#/components/schemas/Run") into a
// JSONPath ("$['components']['schemas']['Run']").
func refTarget(ref string) string {
	_, pointer, _ := strings.Cut(ref, "#")
	var b strings.Builder
	b.WriteString("$")
	for _, seg := range strings.Split(strings.Trim(pointer, "/"), "/") {
		if seg == "" {
			continue
		}
		b.WriteString(key(pointerUnescaper.Replace(seg)))
	}
	return b.String()
}

var pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")

// templateOf guesses the template of a path the document has no
// operation for: the longest documented template it begins with, then
// its own segments, those that look like an id made parameters.
func (d *Doc) templateOf(path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var best []string
	for _, t := range d.model.Templates() {
		if len(t) <= len(best) || len(t) > len(segs) {
			continue
		}
		n := 0
		for n < len(t) && (t[n] == segs[n] || isParam(t[n])) {
			n++
		}
		if n == len(t) {
			best = t
		}
	}
	out := append([]string(nil), best...)
	ids := 0
	for _, s := range segs[len(best):] {
		if looksLikeID(s) {
			ids++
			name := "id"
			if ids > 1 {
				name += string(rune('0' + min(ids, 9)))
			}
			s = "{" + name + "}"
		}
		out = append(out, s)
	}
	return "/" + strings.Join(out, "/")
}

func isParam(seg string) bool { return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") }

// looksLikeID tells an id (a digit in it, or longer than any word a path
// spells) from a fixed segment.
func looksLikeID(seg string) bool {
	return strings.ContainsAny(seg, "0123456789") || len(seg) > 24
}
