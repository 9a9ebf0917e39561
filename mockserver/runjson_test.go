package mockserver

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentruns/agentruns/fixtures"
)

func TestAppendJSONStringIsJSONMarshal(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabet := []string{"a", "\"", "\\", "<", ">", "&", "\x00", "\x1f", "\x7f", "é", "\u2028", "\u2029", "\xff", "\xe2\x80", "日", "\U0001F600", "\n", " "}
	for range 20000 {
		var s string
		for range rng.Intn(12) {
			s += alphabet[rng.Intn(len(alphabet))]
		}
		if rng.Intn(4) == 0 { // random bytes, mostly invalid UTF-8
			b := make([]byte, rng.Intn(8))
			rng.Read(b)
			s += string(b)
		}
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Fatalf("%q (valid UTF-8: %v):\n got %s\nwant %s", s, utf8.ValidString(s), got, want)
		}
	}
}

// TestRunViewJSONIsItsItem holds the answers written straight from a run
// (runView.appendJSON, runPage.appendJSON) to the RunItem they stand for,
// byte for byte: every fixture run as it moves through its states, and runs
// with every optional part and awkward strings.
func TestRunViewJSONIsItsItem(t *testing.T) {
	s, err := New(Options{ClockMode: VirtualClock, ClockStart: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	w := s.sessions[""]
	yes := true
	odd := "tab\t nl\n q\" <b>&amp; \x00\x1f é 日本 \u2028 bad:\xff end"
	creator := w.runs[0].creator
	for _, extra := range []*run{
		{id: "odd<&>-1234", title: odd, prompt: odd, source: odd, creator: creator, team: odd, teamScope: true,
			createdAt: time.Date(2026, 2, 1, 0, 0, 0, 999_999_999, time.UTC), fromSkill: true,
			config:         &AgentConfig{Name: odd, SkillSpec: "acme/skills:" + odd + "/SKILL.md", ComputerUseEnabled: &yes, MCPServers: map[string]MCPServer{"b": {URL: odd, Headers: map[string]string{"X": odd, "A": ""}}, "a<": {Command: "c", Args: []string{odd, ""}, Env: map[string]string{"B": "2", odd: odd}}, "m": {WarpID: "w", Env: map[string]string{}}}},
			conversationID: odd, schedule: &runSchedule{ID: odd, Name: odd, Cron: "0 * * * *"},
			artifactTypes: []string{"PLAN", "PULL_REQUEST"}, forcedState: Succeeded, forcedMsg: &StatusMessage{Message: odd, ErrorCode: odd, Retryable: &yes},
			tl: timeline{anchor: time.Date(2026, 2, 1, 0, 0, 1, 0, time.UTC), anchorState: Queued, final: Succeeded, steps: stepsOf{time.Second, 0, time.Minute, time.Hour}}},
		{id: "plain-run", title: "", prompt: "", creator: &fixtures.Principal{}, createdAt: time.Date(12345, 1, 1, 0, 0, 0, 0, time.UTC),
			fateMsg: &StatusMessage{Message: "failed"}, tl: timeline{anchor: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), anchorState: InProgress, final: Failed}},
		{id: "empty-config", creator: creator, config: &AgentConfig{}, fromSkill: true, forcedState: Blocked, forcedMsg: &StatusMessage{},
			tl: timeline{anchor: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), anchorState: Blocked, final: Succeeded}},
	} {
		w.mu.Lock()
		w.insertLocked(extra)
		w.mu.Unlock()
	}
	for _, linkBase := range []string{s.cfg.sessionLinkBase, "https://x.example/s", "https://x.example/<odd>&\u2028"} {
		for _, later := range []time.Duration{0, time.Second, 3 * time.Second, time.Minute, time.Hour, 100 * time.Hour, 100000 * time.Hour} {
			now := w.clock.Now().Add(later)
			page := runPage{info: PageInfo{HasNextPage: true, NextCursor: "a.b"}}
			for _, r := range w.runs {
				v := r.view(now, linkBase)
				want, err := json.Marshal(v.item())
				if err != nil {
					t.Fatal(err)
				}
				if got := v.appendJSON(nil); string(got) != string(want) {
					t.Fatalf("run %s at +%v:\n got %s\nwant %s", r.id, later, got, want)
				}
				page.runs = append(page.runs, v)
			}
			for _, p := range []runPage{{}, page} {
				want, _ := json.Marshal(p.response())
				if want := strings.Replace(string(want), `"runs":null`, `"runs":[]`, 1); string(p.appendJSON(nil)) != want {
					t.Fatalf("page at +%v:\n got %s\nwant %s", later, p.appendJSON(nil), want)
				}
			}
		}
	}
	created := RunAgentResponse{RunID: odd, TaskID: "t", State: Queued}
	if want, _ := json.Marshal(created); string(created.appendJSON(nil)) != string(want) {
		t.Fatalf("create answer:\n got %s\nwant %s", created.appendJSON(nil), want)
	}
}

// TestPlain8 checks the eight-bytes-at-once test against jsonSafe for every
// byte value at every position, and next to every other byte value.
func TestPlain8(t *testing.T) {
	for pos := range 8 {
		for b := range 256 {
			for _, fill := range []byte{'a', ' ', '~', 0x21} {
				s := []byte(strings.Repeat(string(fill), 8))
				s[pos] = byte(b)
				want := b < utf8.RuneSelf && jsonSafe[b]
				if got := plain8(string(s)); got != want {
					t.Fatalf("plain8(%q) = %v, want %v", s, got, want)
				}
			}
		}
	}
	for a := range 256 {
		for b := range 256 {
			s := string([]byte{'a', byte(a), byte(b), 'z', 'z', 'z', 'z', 'z'})
			want := a < utf8.RuneSelf && jsonSafe[a] && b < utf8.RuneSelf && jsonSafe[b]
			if got := plain8(s); got != want {
				t.Fatalf("plain8(%q) = %v, want %v", s, got, want)
			}
		}
	}
}

// response is the page as a ListRunsResponse, for the tests to compare.
func (p runPage) response() ListRunsResponse {
	out := ListRunsResponse{Runs: make([]RunItem, len(p.runs)), PageInfo: p.info}
	for i, v := range p.runs {
		out.Runs[i] = v.item()
	}
	return out
}

// TestSessionLinkBaseTrailingSlash: a base given with a trailing slash still
// makes links with one slash before the session id.
func TestSessionLinkBaseTrailingSlash(t *testing.T) {
	s, err := New(Options{SessionLinkBase: "https://sessions.example/s/"})
	if err != nil {
		t.Fatal(err)
	}
	w := s.sessions[""]
	claimed := 0
	for _, r := range w.runs {
		it := r.item(w.clock.Now(), s.cfg.sessionLinkBase)
		if it.SessionID == "" {
			continue
		}
		claimed++
		if want := "https://sessions.example/s/" + it.SessionID; it.SessionLink != want {
			t.Fatalf("run %s: session_link %q, want %q", it.RunID, it.SessionLink, want)
		}
	}
	if claimed == 0 {
		t.Fatal("no fixture run has a session")
	}
}
