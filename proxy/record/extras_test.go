package record_test

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/openapi"
	"github.com/agentruns/agentruns/proxy/record"
)

// newerServer is a server that answers with more than the document says:
// the mock, each of whose answers gains members the document does not
// declare, at the top of an object and inside nested ones, the values
// telling the objects apart.
type newerServer struct{ mock http.Handler }

func (n newerServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	n.mock.ServeHTTP(rec, r)
	body := rec.Body.Bytes()
	if r.Method == http.MethodGet && rec.Code == http.StatusOK {
		body = newerAnswer(r.URL.Path, body)
	}
	maps.Copy(w.Header(), rec.Header())
	w.Header().Del("Content-Length")
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body)
}

// newerRun gives a run the members a newer server shows.
func newerRun(run map[string]any) {
	id, _ := run["run_id"].(string)
	run["rollout_ring"] = "ring-" + id
	run["deploy_token"] = "tok-" + id // a secret, which a recording replaces
	if m, ok := run["status_message"].(map[string]any); ok {
		m["hint"] = map[string]any{"retry_after_s": 30.0, "doc": "https://docs.example.com/" + id}
	}
	if c, ok := run["creator"].(map[string]any); ok {
		c["team_role"] = "role-" + id
	}
	// Inside the configuration too, at every depth: the configuration
	// itself, its harness, one of its tool servers.
	if cfg, ok := run["agent_config"].(map[string]any); ok {
		cfg["foo"] = "foo-" + id
		cfg["harness"] = map[string]any{"type": "oz", "foo": "harness-" + id}
		cfg["mcp_servers"] = map[string]any{"s": map[string]any{"url": "https://mcp.example.com/" + id, "foo": "server-" + id}}
	}
}

func newerAnswer(path string, body []byte) []byte {
	var v map[string]any
	if json.Unmarshal(body, &v) != nil {
		return body
	}
	each := func(list string, add func(map[string]any)) {
		items, _ := v[list].([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				add(m)
			}
		}
	}
	switch {
	case path == "/agent/runs":
		each("runs", newerRun)
	case strings.HasPrefix(path, "/agent/runs/") && strings.Count(path, "/") == 3:
		newerRun(v)
	case path == "/agent/environments":
		each("environments", func(e map[string]any) { e["region"] = "region-" + e["uid"].(string) })
	case path == "/agent/models":
		each("models", func(m map[string]any) { m["context_window"] = float64(len(m["id"].(string)) * 1000) })
	case path == "/agent/identities":
		each("agents", func(a map[string]any) { a["avatar_color"] = "color-" + a["uid"].(string) })
	case path == "/agent/schedules":
		each("schedules", func(s map[string]any) {
			s["timezone"] = "Europe/Paris"
			s["history"].(map[string]any)["skipped"] = 2.0
		})
	default:
		return body
	}
	out, err := json.Marshal(v)
	if err != nil {
		return body
	}
	return out
}

// What a newer server answers beyond the document is recorded and
// replayed: a recording, through the proxy, of a server whose runs,
// environments, models, agents and schedules carry members the document
// does not declare (at the top of a run, inside its status message and its
// creator, ...) is loaded by a fresh mock, whose GET and list of each run
// give back the same members with the same values, as do its lists of
// the rest. Secrets among them are replaced, as everywhere in a recording.
func TestUndocumentedMembersAreRecordedAndReplayed(t *testing.T) {
	v, err := openapi.NewValidator()
	require.NoError(t, err)
	mock, err := mockserver.New(mockserver.Options{})
	require.NoError(t, err)
	up := httptest.NewServer(newerServer{mock})
	t.Cleanup(up.Close)
	dir, rec, p, srv := recordingProxy(t, up.URL, v)

	call := func(base, key, method, path string, body any) []byte {
		t.Helper()
		var rd io.Reader
		if body != nil {
			data, err := json.Marshal(body)
			require.NoError(t, err)
			rd = bytes.NewReader(data)
		}
		req, err := http.NewRequest(method, base+path, rd)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Less(t, resp.StatusCode, 300, "%s %s: %s", method, path, raw)
		if method == http.MethodGet {
			resp.Body = io.NopCloser(bytes.NewReader(raw))
			require.NoError(t, v.ValidateResponse(req, resp), "%s %s follows the document, extras and all", method, path)
		}
		return raw
	}
	// A schedule to list, made on the server itself.
	call(up.URL, "wk-mock-alice", "POST", "/agent/schedules", map[string]any{"name": "Nightly", "cron_schedule": "0 3 * * *", "prompt": "Look for flaky tests"})

	// What a client reads, through the proxy.
	var upstream struct{ Runs []map[string]any }
	require.NoError(t, json.Unmarshal(call(srv.URL, "wk-mock-alice", "GET", "/agent/runs?limit=100", nil), &upstream))
	require.NotEmpty(t, upstream.Runs)
	seen := map[string]map[string]any{}
	for _, r := range upstream.Runs {
		id := r["run_id"].(string)
		var run map[string]any
		require.NoError(t, json.Unmarshal(call(srv.URL, "wk-mock-alice", "GET", "/agent/runs/"+id, nil), &run))
		seen[id] = run
	}
	for _, path := range []string{"/agent/environments", "/agent/models", "/agent/identities", "/agent/schedules"} {
		call(srv.URL, "wk-mock-alice", "GET", path, nil)
	}
	require.NoError(t, p.Drain(t.Context()))
	written, err := rec.Write()
	require.NoError(t, err)
	sum := written.(record.Summary)
	assert.Positive(t, sum.Extras)
	assert.Zero(t, sum.ExtrasLeftOut)

	data, err := os.ReadFile(filepath.Join(dir, "runs.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(data), "tok-", "a secret among the extras is not written")
	assert.Contains(t, string(data), `"/rollout_ring"`)

	// A fresh mock on the recording gives back what the server gave.
	set, err := fixtures.Load(os.DirFS(dir))
	require.NoError(t, err)
	replay, err := mockserver.New(mockserver.Options{Fixtures: set})
	require.NoError(t, err)
	rs := httptest.NewServer(replay)
	t.Cleanup(rs.Close)
	withConfig := 0
	sameExtras := func(how string, want, got map[string]any) {
		t.Helper()
		id := want["run_id"].(string)
		assert.Equal(t, want["rollout_ring"], got["rollout_ring"], "%s %s", how, id)
		assert.Equal(t, "REDACTED", got["deploy_token"], "%s %s", how, id)
		assert.Equal(t, want["creator"].(map[string]any)["team_role"], got["creator"].(map[string]any)["team_role"], "%s %s", how, id)
		assert.Equal(t, want["creator"].(map[string]any)["uid"], got["creator"].(map[string]any)["uid"], "%s %s", how, id)
		if wantCfg, ok := want["agent_config"].(map[string]any); ok {
			gotCfg, _ := got["agent_config"].(map[string]any)
			assert.Equal(t, "foo-"+id, gotCfg["foo"], "%s %s: agent_config.foo", how, id)
			assert.Equal(t, wantCfg["harness"], gotCfg["harness"], "%s %s: agent_config.harness", how, id)
			assert.Equal(t, wantCfg["mcp_servers"], gotCfg["mcp_servers"], "%s %s: agent_config.mcp_servers", how, id)
			withConfig++
		}
		if m, ok := want["status_message"].(map[string]any); ok {
			gm, _ := got["status_message"].(map[string]any)
			assert.Equal(t, m["hint"], gm["hint"], "%s %s: status_message.hint", how, id)
			assert.Equal(t, m["message"], gm["message"], "%s %s", how, id)
		}
	}
	withHint := 0
	for id, want := range seen {
		var got map[string]any
		require.NoError(t, json.Unmarshal(call(rs.URL, "wk-anyone", "GET", "/agent/runs/"+id, nil), &got))
		sameExtras("GET", want, got)
		if _, ok := want["status_message"]; ok {
			withHint++
		}
	}
	assert.Positive(t, withHint, "some run had a status message")
	assert.Positive(t, withConfig, "some run had a configuration")
	var listed struct{ Runs []map[string]any }
	require.NoError(t, json.Unmarshal(call(rs.URL, "wk-anyone", "GET", "/agent/runs?limit=100", nil), &listed))
	require.Len(t, listed.Runs, len(seen))
	for _, got := range listed.Runs {
		sameExtras("listed", seen[got["run_id"].(string)], got)
	}

	list := func(path, name string) []map[string]any {
		var page map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(call(rs.URL, "wk-anyone", "GET", path, nil), &page))
		var items []map[string]any
		require.NoError(t, json.Unmarshal(page[name], &items))
		require.NotEmpty(t, items, path)
		return items
	}
	for _, e := range list("/agent/environments", "environments") {
		assert.Equal(t, "region-"+e["uid"].(string), e["region"])
	}
	for _, m := range list("/agent/models", "models") {
		assert.Equal(t, float64(len(m["id"].(string))*1000), m["context_window"])
	}
	for _, a := range list("/agent/identities", "agents") {
		assert.Equal(t, "color-"+a["uid"].(string), a["avatar_color"])
	}
	for _, s := range list("/agent/schedules", "schedules") {
		assert.Equal(t, "Europe/Paris", s["timezone"])
		assert.Equal(t, 2.0, s["history"].(map[string]any)["skipped"])
	}

	// The same folder with a pointer that is not one is refused, naming it.
	var file map[string]any
	require.NoError(t, json.Unmarshal(data, &file))
	first := file["runs"].([]any)[0].(map[string]any)
	first["extra"] = map[string]any{"rollout_ring": "canary"}
	bad, err := json.Marshal(file)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "runs.json"), bad, 0o644))
	_, err = fixtures.Load(os.DirFS(dir))
	require.ErrorContains(t, err, `runs.json: run `+first["run_id"].(string)+`: extra "rollout_ring" is not a JSON Pointer`)
}
