package store

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// packStrings moves the run's own strings (its id, prompt and title) into
// one allocation; its config's are packed, or shared, by configTable. Decoding a request gives each
// its own, and a store of a million runs then holds millions of small
// objects that every GC cycle has to visit; one per run is cheaper to keep
// and to mark. A title cut from the prompt stays a part of it.
func (r *Run) packStrings() {
	var buf [4]*string // on the stack: a run is packed whenever one is stored or loaded
	fields := append(buf[:0], &r.ID, &r.Prompt)
	if r.Details != nil && r.ConversationID != "" {
		fields = append(fields, &r.ConversationID)
	}
	titleInPrompt := strings.HasPrefix(r.Prompt, r.Title)
	if !titleInPrompt {
		fields = append(fields, &r.Title)
	}
	packInto(fields)
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

// configTable shares one AgentConfig among the runs whose configs are
// equal: a team's runs mostly repeat a few configs (one per CI job or
// schedule), and a config is about 150 bytes plus its strings, a sixth of
// what a run costs. Configs never change once stored.
type configTable struct {
	shared map[configKey]*AgentConfig
}

// maxSharedConfigs bounds the table, so a store whose runs all have
// different configs pays little for it.
const maxSharedConfigs = 4096

// configKey is an AgentConfig as a comparable value; configs with MCP
// servers or harness secrets are not shared.
type configKey struct {
	name, modelID, basePrompt, environmentID, skillSpec, workerHost string
	computerUse, idle, harness                                      string
}

func keyOf(c *AgentConfig) (configKey, bool) {
	if len(c.MCPServers) > 0 || c.HarnessAuthSecrets != nil {
		return configKey{}, false
	}
	k := configKey{name: c.Name, modelID: c.ModelID, basePrompt: c.BasePrompt,
		environmentID: c.EnvironmentID, skillSpec: c.SkillSpec, workerHost: c.WorkerHost}
	if c.ComputerUseEnabled != nil {
		k.computerUse = strconv.FormatBool(*c.ComputerUseEnabled)
	}
	if c.IdleTimeoutMinutes != nil {
		k.idle = strconv.Itoa(*c.IdleTimeoutMinutes)
	}
	if c.Harness != nil {
		k.harness = "=" + c.Harness.Type
	}
	return k, true
}

// intern is the stored config equal to c, or c itself with its strings
// packed into one allocation (and kept for the next equal one).
func (t *configTable) intern(c *AgentConfig) *AgentConfig {
	if c == nil {
		return nil
	}
	k, ok := keyOf(c)
	if ok {
		if shared := t.shared[k]; shared != nil {
			return shared
		}
	}
	c = packConfig(c)
	if ok && len(t.shared) < maxSharedConfigs {
		if t.shared == nil {
			t.shared = map[configKey]*AgentConfig{}
		}
		t.shared[k] = c
	}
	return c
}

// packConfig is a copy of c whose strings share one allocation.
func packConfig(c *AgentConfig) *AgentConfig {
	cp := *c
	fields := []*string{&cp.Name, &cp.ModelID, &cp.BasePrompt, &cp.EnvironmentID, &cp.SkillSpec, &cp.WorkerHost}
	packInto(fields)
	return &cp
}

// packInto makes the strings behind fields share one allocation, so a
// stored record keeps one string header's worth of memory alive, not one
// per field.
func packInto(fields []*string) {
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
}
