package record_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/internal/schemagen"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/openapi"
	"github.com/agentruns/agentruns/proxy"
	"github.com/agentruns/agentruns/proxy/record"
)

// drawnWorld is an upstream whose every answer is drawn at random from the
// document (and checked by its validator before it is sent): any server
// that follows the document could answer so. A run created through it is
// shown with the agent_config its creation sent, as the service does.
type drawnWorld struct {
	t   *testing.T
	v   *openapi.Validator
	mu  sync.Mutex
	gen *schemagen.Generator
	// configs are the agent_config each created run was sent with.
	configs map[string]any
	created []string
	// seen is the latest agent_config answered for each run.
	seen map[string]any
}

func (w *drawnWorld) draw(req *http.Request, op, status string, shape func(any) any) []byte {
	method, path, _ := strings.Cut(op, " ")
	v, err := schemagen.Draw(50, func() any {
		body, ok := w.gen.Response(method, path, status)
		require.True(w.t, ok, "%s %s is documented", op, status)
		return shape(body)
	}, func(body any) error {
		data, _ := json.Marshal(body)
		code := 0
		fmt.Sscan(status, &code)
		resp := &http.Response{StatusCode: code, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(bytes.NewReader(data)), Request: req}
		return w.v.ValidateResponse(req, resp)
	})
	require.NoError(w.t, err, op)
	data, _ := json.Marshal(v)
	return data
}

// run shapes a drawn RunItem into run id: its own config when it was
// created here, and the answer's agent_config noted.
func (w *drawnWorld) run(id string) func(any) any {
	return func(v any) any {
		run := v.(map[string]any)
		run["run_id"] = id
		if cfg, ok := w.configs[id]; ok {
			run["agent_config"] = cfg
		}
		return run
	}
}

func (w *drawnWorld) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var body []byte
	status := "200"
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/agent/runs" || r.Method == http.MethodPost && r.URL.Path == "/agent/run":
		var req struct {
			Config any `json:"config"`
		}
		require.NoError(w.t, json.NewDecoder(r.Body).Decode(&req))
		id := fmt.Sprintf("run-%d", len(w.created)+1)
		if req.Config != nil {
			w.configs[id] = req.Config
		}
		w.created = append(w.created, id)
		body = w.draw(r, "POST "+r.URL.Path, "200", func(v any) any { v.(map[string]any)["run_id"] = id; return v })
	case r.Method == http.MethodGet && r.URL.Path == "/agent/runs":
		body = w.draw(r, "GET /agent/runs", "200", func(v any) any {
			page := v.(map[string]any)
			runs, _ := page["runs"].([]any)
			for i, id := range w.created {
				run, _ := w.gen.Response("GET", "/agent/runs/{runId}", "200")
				runs = append(runs, w.run(id)(run))
				_ = i
			}
			page["runs"] = runs
			return page
		})
		var page struct {
			Runs []map[string]any `json:"runs"`
		}
		require.NoError(w.t, json.Unmarshal(body, &page))
		for _, run := range page.Runs {
			w.seen[run["run_id"].(string)] = run["agent_config"]
		}
	case r.Method == http.MethodGet && len(parts) == 3 && parts[1] == "runs":
		body = w.draw(r, "GET /agent/runs/{runId}", "200", w.run(parts[2]))
		var run map[string]any
		require.NoError(w.t, json.Unmarshal(body, &run))
		w.seen[parts[2]] = run["agent_config"]
	case r.Method == http.MethodGet:
		template := map[string]string{"/agent/identities": "/agent/identities", "/agent/environments": "/agent/environments",
			"/agent/models": "/agent/models", "/agent/schedules": "/agent/schedules"}[r.URL.Path]
		if template == "" && len(parts) == 3 && parts[1] == "schedules" {
			template = "/agent/schedules/{scheduleId}"
		}
		require.NotEmpty(w.t, template, "the test asks for %s", r.URL.Path)
		body = w.draw(r, "GET "+template, "200", func(v any) any { return v })
	default:
		// Any other request the document allows a body for: a drawn 2xx.
		template := templateOf(r.Method, r.URL.Path)
		status = firstSuccess(w.gen, r.Method, template)
		body = w.draw(r, r.Method+" "+template, status, func(v any) any { return v })
	}
	rw.Header().Set("Content-Type", "application/json")
	code := 0
	fmt.Sscan(status, &code)
	rw.WriteHeader(code)
	_, _ = rw.Write(body)
}

// templates are the operations the test sends bodies to, by the concrete
// path it uses.
var templates = map[string]string{}

func templateOf(method, path string) string { return templates[method+" "+path] }

func firstSuccess(g *schemagen.Generator, method, template string) string {
	for _, s := range []string{"200", "201", "202"} {
		if _, ok := g.Response(method, template, s); ok {
			return s
		}
	}
	return "200"
}

// concrete is a path of the template, each parameter given id.
func concrete(template, id string) string {
	for strings.Contains(template, "{") {
		i, j := strings.IndexByte(template, '{'), strings.IndexByte(template, '}')
		template = template[:i] + id + template[j+1:]
	}
	return template
}

// shapeOf says what a JSON value is made of, its strings aside: the types
// of every value, the keys of every object, the length of every list.
func shapeOf(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			out[k] = shapeOf(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = shapeOf(x)
		}
		return out
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// Whatever a server that follows the document answers, and whatever a
// client sends it, what the recorder writes loads: every request the
// document takes a body for, drawn at random with every field the
// document allows (harness_auth_secrets, mcp_servers' headers and env, an
// identity's secrets, ...), goes through the proxy to an upstream whose
// answers are drawn from the document too; the recording is written and a
// mock started on it replays what was recorded. A secret keeps its type:
// the agent_config written has the shape of the one answered.
func TestAnyValidTrafficRecordsAFolderThatReplays(t *testing.T) {
	v, err := openapi.NewValidator()
	require.NoError(t, err)
	rounds := 12
	if testing.Short() {
		rounds = 3
	}
	sawField := map[string]bool{}
	for round := range rounds {
		seed := int64(round + 1)
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			gen, err := schemagen.New(embeddedModel(t), rng)
			require.NoError(t, err)
			gen.Optional = []float64{1, 0.7, 0.3}[round%3]
			world := &drawnWorld{t: t, v: v, gen: gen, configs: map[string]any{}, seen: map[string]any{}}
			up := httptest.NewServer(world)
			t.Cleanup(up.Close)
			dir, rec, p, srv := recordingProxy(t, up.URL, v)

			send := func(method, path string, body any) {
				t.Helper()
				var rd io.Reader
				if body != nil {
					data, err := json.Marshal(body)
					require.NoError(t, err)
					rd = bytes.NewReader(data)
				}
				req, err := http.NewRequest(method, srv.URL+path, rd)
				require.NoError(t, err)
				req.Header.Set("Authorization", "Bearer wk-live-key")
				if body != nil {
					req.Header.Set("Content-Type", "application/json")
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				require.Less(t, resp.StatusCode, 300, "%s %s", method, path)
			}
			// Every operation that takes a body, a few times, with a body
			// the validator accepts.
			for _, op := range gen.Operations() {
				method, template, _ := strings.Cut(op, " ")
				path := concrete(template, "run-1")
				world.mu.Lock()
				templates[method+" "+path] = template
				world.mu.Unlock()
				for range 3 {
					body, err := schemagen.Draw(50, func() any {
						world.mu.Lock()
						defer world.mu.Unlock()
						b, _ := gen.RequestBody(method, template)
						return b
					}, func(b any) error {
						data, _ := json.Marshal(b)
						req := httptest.NewRequest(method, path, bytes.NewReader(data))
						req.Header.Set("Content-Type", "application/json")
						req.Header.Set("Authorization", "Bearer k")
						return v.ValidateRequestBody(req, data)
					})
					require.NoError(t, err, op)
					send(method, path, body)
				}
			}
			// What a client reads, which is what the recorder learns from.
			send("GET", "/agent/runs", nil)
			world.mu.Lock()
			created := append([]string(nil), world.created...)
			world.mu.Unlock()
			for _, id := range created {
				send("GET", "/agent/runs/"+id, nil)
			}
			for _, path := range []string{"/agent/identities", "/agent/environments", "/agent/models", "/agent/schedules", "/agent/schedules/sch-1"} {
				send("GET", path, nil)
			}
			require.NoError(t, p.Drain(t.Context()))
			for _, r := range p.Summary().Rules {
				if r.ID == "response-follows-document" {
					require.Zero(t, r.Violations, "the drawn answers follow the document")
				}
			}

			_, err = rec.Write()
			require.NoError(t, err, "the recording is written")

			// The recorded agent_config keeps the shape of the one answered.
			data, err := os.ReadFile(filepath.Join(dir, "runs.json"))
			require.NoError(t, err)
			var file struct {
				Runs []struct {
					ID     string         `json:"run_id"`
					Config map[string]any `json:"agent_config"`
				} `json:"runs"`
			}
			require.NoError(t, json.Unmarshal(data, &file))
			require.NotEmpty(t, file.Runs)
			world.mu.Lock()
			compared := 0
			for _, r := range file.Runs {
				if seen, ok := world.seen[r.ID].(map[string]any); ok {
					compared++
					assert.Equal(t, shapeOf(seen), shapeOf(r.Config), "run %s: agent_config as recorded", r.ID)
					for k := range seen {
						sawField[k] = true
					}
				}
			}
			world.mu.Unlock()
			assert.Positive(t, compared, "some run was recorded with its agent_config")
			for _, secret := range []string{"wk-live-key", "?sig="} {
				assert.NotContains(t, string(data), secret)
			}

			// A mock started on the folder replays it.
			set, err := fixtures.Load(os.DirFS(dir))
			require.NoError(t, err)
			m, err := mockserver.New(mockserver.Options{Fixtures: set})
			require.NoError(t, err, "the mock starts on the recording")
			replay := httptest.NewServer(m)
			t.Cleanup(replay.Close)
			get := func(path string) map[string]any {
				t.Helper()
				req, err := http.NewRequest(http.MethodGet, replay.URL+path, nil)
				require.NoError(t, err)
				req.Header.Set("Authorization", "Bearer wk-anyone")
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				raw, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				require.Equal(t, http.StatusOK, resp.StatusCode, "GET %s: %s", path, raw)
				resp.Body = io.NopCloser(bytes.NewReader(raw))
				assert.NoError(t, v.ValidateResponse(req, resp), "the replay of GET %s follows the document", path)
				var out map[string]any
				require.NoError(t, json.Unmarshal(raw, &out))
				return out
			}
			for _, r := range set.Runs {
				got := get("/agent/runs/" + r.ID)
				// What the mock would make up is shown as recorded.
				if r.RequestUsage != nil {
					var want map[string]any
					require.NoError(t, json.Unmarshal(r.RequestUsage, &want))
					usage, _ := got["request_usage"].(map[string]any)
					for k, x := range want {
						assert.Equal(t, x, usage[k], "run %s replays request_usage.%s as recorded", r.ID, k)
					}
					sawField["request_usage"] = true
				}
				for field, want := range map[string]string{"session_id": r.SessionID, "conversation_id": r.ConversationID} {
					if want != "" && got[field] != nil {
						assert.Equal(t, want, got[field], "run %s replays its %s as recorded", r.ID, field)
						sawField[field] = true
					}
				}
				if len(r.Config) > 0 {
					var want map[string]any
					require.NoError(t, json.Unmarshal(r.Config, &want))
					cfg, _ := got["agent_config"].(map[string]any)
					for k, x := range want {
						if !empty(x) {
							assert.Contains(t, cfg, k, "run %s replays agent_config.%s", r.ID, k)
						}
					}
				}
			}
			ids := func(page map[string]any, list, key string) []string {
				var out []string
				items, _ := page[list].([]any)
				for _, it := range items {
					out = append(out, it.(map[string]any)[key].(string))
				}
				return out
			}
			identities := ids(get("/agent/identities"), "agents", "uid")
			for _, a := range set.Identities {
				assert.Contains(t, identities, a.UID)
			}
			environments := ids(get("/agent/environments"), "environments", "uid")
			for _, e := range set.Environments {
				assert.Contains(t, environments, e.UID)
			}
			schedules := ids(get("/agent/schedules"), "schedules", "id")
			for _, s := range set.Schedules {
				assert.Contains(t, schedules, s.ID)
			}
			models := ids(get("/agent/models"), "models", "id")
			for _, mo := range set.Models {
				assert.Contains(t, models, mo.ID)
			}
		})
	}
	for _, field := range []string{"harness_auth_secrets", "mcp_servers", "credential_strategy", "inference_providers",
		"request_usage", "session_id", "conversation_id"} {
		assert.True(t, sawField[field], "some round recorded and replayed a run's %s (agent_config's, for a member of it)", field)
	}
}

// empty is a JSON value the mock leaves out when it shows a config.
func empty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}

// recordingProxy is the proxy in front of upstream, over real HTTP,
// recording into a folder of its own.
func recordingProxy(t *testing.T, upstream string, v *openapi.Validator) (dir string, rec *record.Recorder, p *proxy.Proxy, srv *httptest.Server) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "recorded")
	rec = record.New(dir, 0)
	p, err := proxy.New(proxy.Options{Upstream: upstream, Validator: v, Observer: rec})
	require.NoError(t, err)
	srv = httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Close() })
	return dir, rec, p, srv
}

// embeddedModel is the model of the project's document.
func embeddedModel(t *testing.T) *openapi.Model {
	t.Helper()
	m, err := openapi.Embedded()
	require.NoError(t, err)
	return m
}
