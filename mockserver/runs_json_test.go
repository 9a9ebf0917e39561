package mockserver

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/mockserver/store"
)

// TestRunJSONIsItsItem holds the answers written straight from a run
// (runJSON.appendJSON, runPage.appendJSON) to the RunItem they stand for,
// byte for byte: every fixture run as it moves through its states, and runs
// with every optional part and awkward strings. wantItem, below, is the
// RunItem built field by field, the second copy of a run's shape that the
// encoder is held to. Every field of RunItem, nested ones too, must be
// shown by one of these runs: so a field added to RunItem but not to the
// encoder (or to the encoder and RunItem but not wantItem) fails here,
// whether or not it is omitted when empty.
func TestRunJSONIsItsItem(t *testing.T) {
	s := newVirtualServer(t)
	ms := openDefault(t, s)
	yes, sixty := true, 60
	odd := "tab\t nl\n q\" <b>&amp; \x00\x1f é 日本 \u2028 bad:\xff end"
	creator := ms.Runs()[0].Run.Creator
	for _, extra := range []*store.Run{
		{ID: "odd<&>-1234", Title: odd, Prompt: odd, Creator: creator, Team: odd, TeamScope: true,
			CreatedAt: time.Date(2026, 2, 1, 0, 0, 0, 999_999_999, time.UTC), FromSkill: true,
			Config: &AgentConfig{Name: odd, SkillSpec: "acme/skills:" + odd + "/SKILL.md", ComputerUseEnabled: &yes, WorkerHost: odd, IdleTimeoutMinutes: &sixty,
				Harness: &store.Harness{Type: "claude", ModelID: odd, ReasoningLevel: "high"}, HarnessAuthSecrets: &store.HarnessAuthSecrets{ClaudeAuthSecretName: odd, CodexAuthSecretName: odd},
				ComputerUseModelID: odd, CredentialStrategy: "EXECUTOR", InferenceProviders: &store.InferenceProviders{AWS: &store.AWSInference{Disabled: &yes, Region: odd, RoleARN: odd}},
				MemoryStores: []store.MemoryStoreAccess{{UID: odd, Access: "read_only", Instructions: odd}}, RunnerID: odd, SessionSharing: &store.SessionSharing{PublicAccess: "VIEWER"}, Skills: []string{odd, "a:b"}, MCPServers: map[string]MCPServer{"b": {URL: odd, Headers: map[string]string{"X": odd, "A": ""}}, "a<": {Command: "c", Args: []string{odd, ""}, Env: map[string]string{"B": "2", odd: odd}}, "m": {WarpID: "w", Env: map[string]string{}}}},
			Details: &store.Details{Source: odd, ConversationID: odd, Schedule: &store.Schedule{ID: odd, Name: odd, Cron: "0 * * * *"},
				Metadata: map[string]string{"ticket_id": odd, "a": ""}, Executor: &store.Creator{Principal: &fixtures.Principal{UID: odd, Type: "service_account"}},
				ArtifactTypes: []string{"PLAN", "PULL_REQUEST", "SCREENSHOT", "FILE"}, TriggerURL: "https://x.example/" + odd, ParentRunID: odd},
			ForcedState: Succeeded, ForcedMsg: &StatusMessage{Message: odd, ErrorCode: odd, Retryable: &yes},
			Timeline: store.Timeline{Anchor: time.Date(2026, 2, 1, 0, 0, 1, 0, time.UTC), AnchorState: Queued, Final: Succeeded, Steps: store.Steps{time.Second, 0, time.Minute, time.Hour}}},
		{ID: "plain-run", Title: "", Prompt: "", Creator: store.Creator{Principal: &fixtures.Principal{}}, CreatedAt: time.Date(12345, 1, 1, 0, 0, 0, 0, time.UTC),
			FateMsg: &StatusMessage{Message: "failed"}, Timeline: store.Timeline{Anchor: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), AnchorState: InProgress, Final: Failed}},
		{ID: "followed-up", Details: &store.Details{Source: "API"}, Creator: creator, CreatedAt: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC),
			Timeline: store.Timeline{Anchor: time.Date(2026, 2, 1, 0, 0, 5, 0, time.UTC), AnchorState: Queued, Final: Succeeded, Steps: store.Steps{time.Second, time.Second, time.Second, 90 * time.Minute},
				StartedAt: time.Date(2026, 2, 1, 0, 0, 1, 0, time.UTC), WasClaimed: true, Execution: 1, PriorRun: 2500 * time.Millisecond}},
		{ID: "empty-config", Details: &store.Details{Source: "LOCAL"}, Creator: creator, Config: &AgentConfig{Harness: &store.Harness{}, HarnessAuthSecrets: &store.HarnessAuthSecrets{}}, FromSkill: true, ForcedState: Blocked, ForcedMsg: &StatusMessage{},
			Timeline: store.Timeline{Anchor: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), AnchorState: Blocked, Final: Succeeded}},
	} {
		if extra.ID == "odd<&>-1234" {
			// A Details field added since, if a string, a bool or a map
			// of strings, is shown too.
			fillPlain(reflect.ValueOf(extra.Details).Elem(), odd)
		}
		ms.Adopt(extra)
	}
	shown := map[string]bool{}
	moved := time.Duration(0)
	for _, later := range []time.Duration{0, time.Second, 3 * time.Second, time.Minute, time.Hour, 100 * time.Hour, 100000 * time.Hour} {
		if _, err := ms.Advance(later - moved); err != nil {
			t.Fatal(err)
		}
		moved = later
		for _, linkBase := range []string{s.sessionLinkBase, "https://x.example/s", "https://x.example/<odd>&\u2028"} {
			page := runPage{linkBase: linkBase, info: PageInfo{HasNextPage: true, NextCursor: "a.b"}}
			for _, v := range ms.Runs() {
				want, err := json.Marshal(wantItem(v, linkBase))
				if err != nil {
					t.Fatal(err)
				}
				got := (runJSON{v, linkBase}).appendJSON(nil)
				if string(got) != string(want) {
					t.Fatalf("run %s at +%v:\n got %s\nwant %s", v.Run.ID, later, got, want)
				}
				var fields any
				if err := json.Unmarshal(got, &fields); err != nil {
					t.Fatal(err)
				}
				markShown(reflect.TypeOf(RunItem{}), fields, "", shown)
				// What the Go API hands out is that JSON, decoded.
				var wantDecoded RunItem
				if err := json.Unmarshal(want, &wantDecoded); err != nil {
					t.Fatal(err)
				}
				if got := runItem(v, linkBase); !reflect.DeepEqual(got, wantDecoded) {
					t.Fatalf("run %s at +%v: decoded as\n %+v\nwant %+v", v.Run.ID, later, got, wantDecoded)
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
	var paths []string
	fieldPaths(reflect.TypeOf(RunItem{}), "", &paths)
	for _, p := range paths {
		if !shown[p] {
			t.Errorf("RunItem's %s is never shown: write it in runJSON.appendJSON and wantItem, and give a run here a value for it", p)
		}
	}
	created := RunAgentResponse{RunID: odd, TaskID: "t", State: Queued}
	if want, _ := json.Marshal(created); string(created.appendJSON(nil)) != string(want) {
		t.Fatalf("create answer:\n got %s\nwant %s", created.appendJSON(nil), want)
	}
}

// fillPlain gives each string, bool or map[string]string field of v that
// is still empty a value made of text.
func fillPlain(v reflect.Value, text string) {
	for i := range v.NumField() {
		switch f := v.Field(i); {
		case !f.CanSet() || !f.IsZero():
		case f.Type() == reflect.TypeFor[string]():
			f.SetString(text)
		case f.Type() == reflect.TypeFor[bool]():
			f.SetBool(true)
		case f.Type() == reflect.TypeFor[map[string]string]():
			f.Set(reflect.ValueOf(map[string]string{"k": text}))
		}
	}
}

// fieldPaths appends the JSON paths of typ's fields to out, nested ones
// too ("agent_config.harness.type"): a slice's elements are at the slice's
// path, a map's values at its path and ".*".
func fieldPaths(typ reflect.Type, prefix string, out *[]string) {
	switch typ.Kind() {
	case reflect.Pointer, reflect.Slice:
		fieldPaths(typ.Elem(), prefix, out)
	case reflect.Map:
		fieldPaths(typ.Elem(), prefix+".*", out)
	case reflect.Struct:
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			*out = append(*out, prefix+"."+name)
			fieldPaths(typ.Field(i).Type, prefix+"."+name, out)
		}
	}
}

// markShown marks in shown the paths (as fieldPaths writes them) of typ's
// fields that v, typ's JSON decoded, holds.
func markShown(typ reflect.Type, v any, prefix string, shown map[string]bool) {
	switch typ.Kind() {
	case reflect.Pointer:
		markShown(typ.Elem(), v, prefix, shown)
	case reflect.Slice:
		list, _ := v.([]any)
		for _, e := range list {
			markShown(typ.Elem(), e, prefix, shown)
		}
	case reflect.Map:
		m, _ := v.(map[string]any)
		for _, e := range m {
			markShown(typ.Elem(), e, prefix+".*", shown)
		}
	case reflect.Struct:
		m, _ := v.(map[string]any)
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if e, ok := m[name]; ok && name != "" && name != "-" {
				shown[prefix+"."+name] = true
				markShown(typ.Field(i).Type, e, prefix+"."+name, shown)
			}
		}
	}
}

// wantItem builds the RunItem of v independently of the encoder, for
// TestRunJSONIsItsItem: the members its show tags take from fields of the
// view by reflection (shownItem), the others field by field.
func wantItem(v store.View, linkBase string) RunItem {
	r, snap := v.Run, v.Snap
	it := shownItem(v)
	it.Location = "REMOTE"
	it.SandboxRunning = snap.Claimed && !snap.State.Terminal()
	it.ConversationID = r.ConversationID
	it.Scope = &runScope{Type: "User", UID: r.Creator.UID}
	if r.TeamScope {
		it.Scope = &runScope{Type: "Team", UID: r.Team}
	}
	if r.ConversationID == "" && snap.Claimed { // the conversation it began
		it.ConversationID = r.BegunConversation().String()
	}
	if r.Source == "LOCAL" {
		it.Location = "LOCAL"
	}
	if !snap.StartedAt.IsZero() {
		secs := int64(snap.RunTime / time.Second)
		it.RequestUsage = &RequestUsage{InferenceCost: float64(25*secs) / 1e4, ComputeCost: float64(4*secs) / 1e4, PlatformCost: float64(secs) / 1e4,
			InferenceCostUSD: float64(125*secs) / 1e6, ComputeCostUSD: float64(20*secs) / 1e6, PlatformCostUSD: float64(5*secs) / 1e6, TotalTokens: 2500 * secs}
	}
	ex := r.Creator
	if r.Executor != nil {
		ex = *r.Executor
	}
	it.Executor = &creatorInfo{Type: ex.Type, UID: ex.UID, DisplayName: ex.DisplayName, Email: ex.Email, PhotoURL: ex.PhotoURL}
	it.IsRunTypeCancellable = r.Source != "LOCAL" && r.Source != "GITHUB_ACTION"
	if !snap.StartedAt.IsZero() || snap.State.Terminal() || r.Timeline.Execution > 0 {
		it.RunTime = isoDuration(snap.RunTime)
	}
	if snap.Claimed {
		it.SessionID = r.AgentSession.String()
		it.SessionLink = linkBase + "/" + it.SessionID
	}
	if r.ShowsSkill() {
		it.AgentSkill = &agentSkill{Name: store.SkillName(r.Config.SkillSpec), FullPath: r.Config.SkillSpec}
	}
	// Artifacts are what a finished run produced, so they appear at the end.
	if snap.State == Succeeded {
		for i, kind := range r.ArtifactTypes {
			a := artifact{Type: kind, CreatedAt: formatTime(snap.UpdatedAt)}
			uid := r.ArtifactUID(i).String()
			switch kind {
			case "PLAN":
				a.Data = map[string]any{"artifact_uid": uid, "document_uid": "doc-" + r.ID[:8], "notebook_uid": "nb-" + r.ID[:8], "title": "Plan: " + r.Title}
			case "PULL_REQUEST":
				a.Data = map[string]any{"branch": "agent/" + r.ID[:8], "url": "https://git.example.com/pulls/" + r.ID[:8]}
			case "SCREENSHOT":
				a.Data = map[string]any{"artifact_uid": uid, "mime_type": "image/png", "description": store.ScreenshotDesc}
			case "FILE":
				a.Data = map[string]any{"artifact_uid": uid, "filename": "summary.md", "filepath": "outputs/summary.md",
					"mime_type": "text/markdown", "size_bytes": len(store.FileContent(r)), "description": store.FileArtifactDesc}
			}
			it.Artifacts = append(it.Artifacts, a)
		}
	}
	return it
}

// response is the page as a ListRunsResponse, for the tests to compare.
func (p runPage) response() ListRunsResponse {
	out := ListRunsResponse{Runs: make([]RunItem, len(p.runs)), PageInfo: p.info}
	for i, v := range p.runs {
		out.Runs[i] = wantItem(v, p.linkBase)
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
	claimed := 0
	for _, v := range openDefault(t, s).Runs() {
		it := runItem(v, s.sessionLinkBase)
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

// BenchmarkRunJSON is the cost of writing the fixture runs' JSON, as a
// page of them does: the runs as they are (none has extra members, the
// common case), and each with three members beyond the document, one of
// them nested, as a recorded run may have.
func BenchmarkRunJSON(b *testing.B) {
	s := newVirtualServer(b)
	ms := openDefault(b, s)
	views := ms.Runs()
	withExtras := make([]store.View, len(views))
	for i, v := range views {
		r := *v.Run
		d := *r.Details
		d.Extra = fixtures.Extra{"/rollout_ring": json.RawMessage(`"canary"`), "/creator/team_role": json.RawMessage(`"owner"`),
			"/cost_center": json.RawMessage(`{"id":42,"name":"platform"}`)}
		r.Details = &d
		v.Run = &r
		withExtras[i] = v
	}
	for _, bc := range []struct {
		name  string
		views []store.View
	}{{"plain", views}, {"extras", withExtras}} {
		b.Run(bc.name, func(b *testing.B) {
			buf := make([]byte, 0, 64<<10)
			b.ReportAllocs()
			for b.Loop() {
				buf = buf[:0]
				for _, v := range bc.views {
					buf = runJSON{v, s.sessionLinkBase}.appendJSON(buf)
				}
			}
			b.SetBytes(int64(len(buf)))
		})
	}
}
