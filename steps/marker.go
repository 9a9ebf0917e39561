package steps

import (
	"bytes"
	"encoding/json"
)

// Every run the suite creates carries one marker, so that a team can find,
// filter and bill the suite's runs among its own: its title begins with
// RunMarker in brackets and, when the run selects the newest client's
// scenarios (whose servers keep run metadata), its metadata holds
// RunMarker: <this suite run's id>. Config.Prompt, when set, replaces the
// prompt of every run, so that a team pays for the cheapest prompt its
// agents finish.
//
// A scenario tagged @runs-as-written is about what its runs were created
// with (the prompt or the title coming back, a server's own title, the
// exact body of a refused create): its bodies are sent as written. So is
// a body that is not a JSON object, a prompt that is not a string, and the
// failing prompt (Config.FailingPrompt), which is about its ending.

// RunMarker marks the runs the suite creates: "[agentruns-contract] " begins
// their titles, and their metadata holds it as a key when the server keeps
// metadata.
const RunMarker = "agentruns-contract"

// asWrittenTag marks a scenario whose run bodies are sent as written.
const asWrittenTag = "@runs-as-written"

// titlePrefix begins the title of every run the suite creates.
const titlePrefix = "[" + RunMarker + "] "

// runMarking is how a suite run marks the runs it creates.
type runMarking struct {
	prompt        string // Config.Prompt; "" leaves prompts as written
	failingPrompt string // never replaced
	metadata      bool   // the server keeps run metadata (the newest client's surface is selected)
	suiteRun      string // the value of the metadata key: this suite run's id
}

// mark returns body with the marker and the prompt of m, or body itself
// when it is not a JSON object.
func (m *runMarking) mark(body []byte) []byte {
	if m == nil {
		return body
	}
	var b map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&b) != nil || b == nil || dec.More() {
		return body
	}
	if p, ok := b["prompt"].(string); ok && p != "" && m.prompt != "" && p != m.failingPrompt {
		b["prompt"] = m.prompt
	}
	switch t := b["title"].(type) {
	case nil:
		if _, present := b["title"]; !present {
			b["title"] = titlePrefix + titleFrom(b)
		}
	case string:
		b["title"] = titlePrefix + t
	}
	if m.metadata {
		switch md := b["metadata"].(type) {
		case nil:
			if _, present := b["metadata"]; !present {
				b["metadata"] = map[string]any{RunMarker: m.suiteRun}
			}
		case map[string]any:
			if _, taken := md[RunMarker]; !taken && len(md) < 20 {
				md[RunMarker] = m.suiteRun
			}
		}
	}
	out, err := json.Marshal(b)
	if err != nil {
		return body
	}
	return out
}

// titleFrom is a title for a run created without one: the start of its
// prompt, or its skill.
func titleFrom(b map[string]any) string {
	s, _ := b["prompt"].(string)
	if s == "" {
		s, _ = b["skill"].(string)
	}
	if r := []rune(s); len(r) > 60 {
		s = string(r[:60]) + "…"
	}
	return s
}

// describe says how the runs are marked, for the reports.
func (m *runMarking) describe() string {
	s := "titles begin with " + titlePrefix[:len(titlePrefix)-1]
	if m.metadata {
		s += ", metadata " + RunMarker + "=" + m.suiteRun
	}
	return s
}
