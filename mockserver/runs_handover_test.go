package mockserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

// handedOverElsewhere are the create's fields that are not kept under
// their own name in the run's record and its answer, and where each is
// found instead. Every other field of runRequest must reach the stored
// run under its JSON name, and the answer too when RunItem has a member of
// that name.
var handedOverElsewhere = map[string]string{
	"config":      `the record's "config" and the answer's "agent_config" hold each member given`,
	"skill":       `the record's config.skill_spec and the answer's agent_skill.full_path`,
	"team":        `the record's "team_scope" and the answer's scope.type`,
	"attachments": "not kept: resolve counts them with images, and the mock keeps no file",
	"images":      "not kept: resolve counts them with attachments",
}

// TestCreateHandsEveryFieldToTheRun: a create with every field of
// runRequest set, over HTTP on loopback, stores a run whose record holds
// each field and whose answer shows it. A field the reader reads but
// resolve does not copy into the store's NewRun, or one the store keeps
// under another name than the request's, fails here. A field this test
// gives no value of its own gets one from its reader's row (sampleValue).
func TestCreateHandsEveryFieldToTheRun(t *testing.T) {
	s := newVirtualServer(t)
	ms := openDefault(t, s)
	srv := httptest.NewUnstartedServer(s)
	srv.Listener = GuardListener(srv.Listener)
	srv.Config.ConnContext = ConnContext
	srv.Start()
	t.Cleanup(srv.Close)
	call := func(key, method, path string, body []byte) map[string]json.RawMessage {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s %s %s: %d %s", method, path, body, res.StatusCode, out)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, out)
		}
		return m
	}
	idOf := func(m map[string]json.RawMessage) string {
		var id string
		if err := json.Unmarshal(m["run_id"], &id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	// A run to be the parent, whose conversation has begun once a worker
	// has it.
	first := idOf(call("wk-mock-alice", "POST", "/agent/runs", []byte(`{"prompt":"Write the migration"}`)))
	if _, err := ms.Advance(time.Hour); err != nil {
		t.Fatal(err)
	}
	conversation := string(call("wk-mock-alice", "GET", "/agent/runs/"+first, nil)["conversation_id"])

	// An agent's key creates the run on a member's behalf, as an agent
	// identity, continuing the first run's conversation under it.
	given := map[string]string{
		"prompt":             `"Add a rollback"`,
		"config":             `{"name":"release","model_id":"auto","base_prompt":"Be brief.","environment_id":"env-web-app","computer_use_enabled":true,"idle_timeout_minutes":30}`,
		"title":              `"Roll back"`,
		"skill":              `"acme/api:release"`,
		"team":               `true`,
		"conversation_id":    conversation,
		"attachments":        `[{"file_name":"trace.log","mime_type":"text/plain","data":"aGVsbG8="}]`,
		"images":             `[{"mime_type":"image/png","data":"iVBORw0KGgo="}]`,
		"agent_identity_uid": `"agent-acme-release"`,
		"parent_run_id":      `"` + first + `"`,
		"interactive":        `true`,
		"metadata":           `{"ticket_id":"T-1"}`,
		"mode":               `"plan"`,
		"on_behalf_of":       `"user-alice"`,
	}
	var members []string
	for _, row := range requestFields.rows {
		v, ok := given[row.name]
		if !ok {
			v = sampleValue(row.kind)
			given[row.name] = v
		}
		members = append(members, `"`+row.name+`":`+v)
	}
	body := []byte("{" + strings.Join(members, ",") + "}")
	id := idOf(call("wk-mock-ci-bot", "POST", "/agent/runs", body))
	answer := call("wk-mock-ci-bot", "GET", "/agent/runs/"+id, nil)
	v, err := ms.Run(id)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := json.Marshal(v.Run) // the record, as the state file keeps it
	if err != nil {
		t.Fatal(err)
	}
	var record map[string]json.RawMessage
	if err := json.Unmarshal(saved, &record); err != nil {
		t.Fatal(err)
	}
	shown := map[string]bool{}
	for _, p := range jsonNames(reflect.TypeFor[RunItem]()) {
		shown[p] = true
	}

	same := func(where string, got json.RawMessage, want string) {
		t.Helper()
		var g, w any
		if err := json.Unmarshal(got, &g); got == nil || err != nil {
			t.Errorf("%s: missing, want %s", where, want)
			return
		}
		if err := json.Unmarshal([]byte(want), &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: %s, want %s", where, got, want)
		}
	}
	member := func(obj json.RawMessage, name string) json.RawMessage {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(obj, &m)
		return m[name]
	}
	for _, row := range requestFields.rows {
		name, value := row.name, given[row.name]
		switch name {
		case "config":
			var cfg map[string]json.RawMessage
			if err := json.Unmarshal([]byte(value), &cfg); err != nil {
				t.Fatal(err)
			}
			for k, want := range cfg {
				same("the record's config."+k, member(record["config"], k), string(want))
				same("the answer's agent_config."+k, member(answer["agent_config"], k), string(want))
			}
		case "skill":
			same("the record's config.skill_spec", member(record["config"], "skill_spec"), value)
			same("the answer's agent_skill.full_path", member(answer["agent_skill"], "full_path"), value)
		case "team":
			same("the record's team_scope", record["team_scope"], value)
			same("the answer's scope.type", member(answer["scope"], "type"), `"Team"`)
		case "attachments", "images":
		default:
			if _, ok := handedOverElsewhere[name]; ok {
				t.Fatalf("%s is handed over elsewhere, but this test does not look there", name)
			}
			same("the record's "+name+" (is it copied in resolve, and a field of store.Details or store.Run?)", record[name], value)
			if shown[name] {
				same("the answer's "+name, answer[name], value)
			}
		}
	}
	// What the request names the creator by is who the run is for; the
	// agent that sent it executes it.
	same("the answer's executor.uid", member(answer["executor"], "uid"), `"sa-acme-ci"`)
}

// jsonNames are the JSON names of typ's fields.
func jsonNames(typ reflect.Type) []string {
	var out []string
	for i := range typ.NumField() {
		if name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}
