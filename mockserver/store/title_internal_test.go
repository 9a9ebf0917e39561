package store

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/uuid"
)

// titleFromSlow is titleFrom as first written; the fast one must agree.
func titleFromSlow(prompt string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	line = strings.Join(strings.Fields(line), " ")
	const max = 60
	if len([]rune(line)) <= max {
		return line
	}
	cut := string([]rune(line)[:max])
	if i := strings.LastIndex(cut, " "); i > max/2 {
		cut = cut[:i]
	}
	return cut + "…"
}

func TestTitleFromAgreesWithTheSimpleVersion(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	words := []string{"fix", "the", "flaky", "login", "test", " ", "  ", "\t", "\n", "\r\n", "é", "日本語", "\u00a0", "\xff", "a-very-long-word-without-any-space-in-it", "…"}
	cases := []string{"", " ", "\n", "one", " one ", "a  b", strings.Repeat("word ", 30), strings.Repeat("x", 61), strings.Repeat("é", 61)}
	for range 20000 {
		var b strings.Builder
		for range rng.Intn(40) {
			b.WriteString(words[rng.Intn(len(words))])
			if rng.Intn(2) == 0 {
				b.WriteByte(' ')
			}
		}
		cases = append(cases, b.String())
	}
	for _, c := range cases {
		if got, want := TitleFrom(c), titleFromSlow(c); got != want {
			t.Fatalf("TitleFrom(%q) = %q, want %q", c, got, want)
		}
	}
}

// TestPackStringsKeepsEveryValue: packing moves a run's strings into one
// allocation and changes none of them; a title cut from the prompt stays a
// part of it.
func TestPackStringsKeepsEveryValue(t *testing.T) {
	for _, title := range []string{"Fix the", "Another title", "", "Fix the flaky test…"} {
		prompt := "Fix the flaky test in web/auth"
		cfg := &AgentConfig{Name: "n", ModelID: "", BasePrompt: "be brief", EnvironmentID: "env-1", SkillSpec: "a/b:c", WorkerHost: "w"}
		want := *cfg
		r := &Run{ID: "0c4bd1b8-5f7e-4a57-9a39-2f5a0f7d9e11", Prompt: prompt, Title: title, Details: &Details{ConversationID: "conv"}, Config: cfg}
		r.packStrings()
		if r.ID != "0c4bd1b8-5f7e-4a57-9a39-2f5a0f7d9e11" || r.Prompt != prompt || r.Title != title || r.ConversationID != "conv" || !reflect.DeepEqual(*r.Config, want) {
			t.Fatalf("packing changed a value: %+v %+v", r, *r.Config)
		}
		if title != "" && strings.HasPrefix(prompt, title) && unsafe.StringData(r.Title) != unsafe.StringData(r.Prompt) {
			t.Errorf("title %q does not share the prompt's memory", title)
		}
	}
	(&Run{}).packStrings() // nothing to pack, no config
}

// nameUUID is uuid.NewSHA1, without its allocations.
func TestNameUUIDIsNewSHA1(t *testing.T) {
	for _, name := range []string{"", "0c4bd1b8-5f7e-4a57-9a39-2f5a0f7d9e11", "odd<&>-1234", strings.Repeat("x", 100)} {
		if got, want := nameUUID(agentSessionNamespace, name), uuid.NewSHA1(agentSessionNamespace, []byte(name)); got != want {
			t.Errorf("%q: %s, want %s", name, got, want)
		}
	}
}
