package store

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// packStrings moves the run's own strings (its id, prompt, title and the
// config's plain strings) into one allocation. Decoding a request gives each
// its own, and a store of a million runs then holds millions of small
// objects that every GC cycle has to visit; one per run is cheaper to keep
// and to mark. A title cut from the prompt stays a part of it.
func (r *Run) packStrings() {
	fields := []*string{&r.ID, &r.Prompt, &r.ConversationID}
	if c := r.Config; c != nil {
		fields = append(fields, &c.Name, &c.ModelID, &c.BasePrompt, &c.EnvironmentID, &c.SkillSpec, &c.WorkerHost)
	}
	titleInPrompt := strings.HasPrefix(r.Prompt, r.Title)
	if !titleInPrompt {
		fields = append(fields, &r.Title)
	}
	size := 0
	for _, f := range fields {
		size += len(*f)
	}
	var b strings.Builder
	b.Grow(size)
	for _, f := range fields {
		b.WriteString(*f)
	}
	all := b.String()
	for _, f := range fields {
		n := len(*f)
		*f, all = all[:n], all[n:]
	}
	if titleInPrompt {
		r.Title = r.Prompt[:len(r.Title)]
	}
}

// SkillName is the name a skill spec gives a run: the part after the colon,
// or the folder holding SKILL.md.
func SkillName(spec string) string {
	_, path, ok := strings.Cut(spec, ":")
	if !ok {
		return spec
	}
	path = strings.TrimSuffix(path, "/SKILL.md")
	if i := strings.LastIndex(path, "/"); i >= 0 {
		path = path[i+1:]
	}
	return path
}

// TitleFrom makes a title from a prompt the way a person would skim it: the
// first line, cut at a word boundary.
func TitleFrom(prompt string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	if !singleSpaced(line) {
		line = strings.Join(strings.Fields(line), " ")
	}
	const max = 60
	if !utf8.ValidString(line) { // []rune turns bad bytes into U+FFFD
		if len([]rune(line)) <= max {
			return line
		}
		line = string([]rune(line)[:max+1])
	}
	// A title that is a part of the prompt shares its memory.
	end, n := 0, 0
	for end < len(line) && n < max {
		_, size := utf8.DecodeRuneInString(line[end:])
		end += size
		n++
	}
	if end == len(line) {
		return line
	}
	cut := line[:end]
	if i := strings.LastIndex(cut, " "); i > max/2 {
		cut = cut[:i]
	}
	return cut + "…"
}

// singleSpaced reports whether strings.Join(strings.Fields(s), " ") is s:
// no space but single ' ' between words.
func singleSpaced(s string) bool {
	prevSpace := true // no leading space
	for _, r := range s {
		switch {
		case r == ' ':
			if prevSpace {
				return false
			}
			prevSpace = true
		case unicode.IsSpace(r):
			return false
		default:
			prevSpace = false
		}
	}
	return !prevSpace || s == ""
}
