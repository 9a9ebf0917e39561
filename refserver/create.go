package refserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path"
	"regexp"
	"strings"
	"time"
)

// create starts a run from a RunAgentRequest.
func (s *Server) create(w http.ResponseWriter, r *http.Request, c caller) {
	data, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request", "the body could not be read")
		return
	}
	var body map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil || body == nil || dec.More() {
		writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request", "the body must be one JSON object")
		return
	}
	if s.opts.Published {
		if refused := publishedBody(body); refused != "" {
			writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request", refused)
			return
		}
	}
	req, err := parseRequest(body)
	if err != nil {
		writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request", err.Error())
		return
	}
	if status, code, title, detail := s.checkTeam(req, c); status != 0 {
		writeProblem(w, r, status, code, title, detail)
		return
	}
	if s.opts.StrictReferences {
		if status, code, title, detail := s.offer.check(req); status != 0 {
			writeProblem(w, r, status, code, title, detail)
			return
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	// A child run inherits its parent's metadata, its own keys winning.
	if parent := s.runs[req.parentRunID]; parent != nil && len(parent.metadata) > 0 {
		merged := map[string]string{}
		for k, v := range parent.metadata {
			merged[k] = v
		}
		for k, v := range req.metadata {
			merged[k] = v
		}
		if len(merged) > maxMetadataKeys {
			writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request",
				fmt.Sprintf("the run and its parent together have %d metadata keys, more than %d", len(merged), maxMetadataKeys))
			return
		}
		req.metadata = merged
	}
	s.created++
	now := s.now()
	run := &run{
		id: newID(), title: req.title, prompt: req.prompt, source: "API", location: "REMOTE",
		createdAt: now, creator: c, config: req.config, skill: req.skill,
		parentRunID: req.parentRunID, sessionID: newID(), conversation: req.conversationID,
		lateSessions: s.opts.LateSessions, n: s.created, metadata: req.metadata,
	}
	run.taskID = run.id // a new run's task id is its run id
	if run.conversation == "" {
		run.conversation = newID()
	}
	run.phases = s.plan(now, s.created, run.selfHosted())
	if s.opts.FailingPrompt != "" && req.prompt == s.opts.FailingPrompt && !run.selfHosted() {
		run.phases[len(run.phases)-1].state = "FAILED"
	}
	atCapacity := s.waitForCapacity(run, now) // capacity.go
	switch run.phases[len(run.phases)-1].state {
	case "FAILED":
		run.failure = map[string]any{"message": "The environment's setup command exited with status 1.", "error_code": "environment_setup_failed", "retryable": false}
	case "ERROR":
		run.failure = map[string]any{"message": "No worker could take the run.", "error_code": "resource_unavailable", "retryable": true}
	}
	if s.foreignEnvironment(req, c) { // Options.ForeignEnvironmentFailed: no worker ever claims it
		run.phases = []phase{{"QUEUED", now}, {"FAILED", now.Add(s.opts.Step)}}
		run.failure = map[string]any{"message": "The run's environment was not found.", "error_code": "resource_not_found", "retryable": false}
	}
	s.add(run)
	answer := map[string]any{"run_id": run.id, "task_id": run.taskID, "state": "QUEUED"}
	if atCapacity {
		answer["at_capacity"] = true
	}
	writeJSON(w, http.StatusOK, answer)
}

// plan lays out the states of the n-th created run: one Step in each, every
// third run waiting in BLOCKED for a while, every fifth failing. A run for a
// self-hosted worker waits in QUEUED, as no worker of that name exists here.
func (s *Server) plan(start time.Time, n int, selfHosted bool) []phase {
	if selfHosted {
		return []phase{{"QUEUED", start}}
	}
	if s.opts.TransientErrors > 0 && n%s.opts.TransientErrors == 0 {
		// Half of them before a worker claims the run, half while it works.
		if n%(2*s.opts.TransientErrors) == 0 {
			return []phase{{"QUEUED", start}, {"PENDING", start.Add(s.opts.Step)}, {"ERROR", start.Add(2 * s.opts.Step)}}
		}
		var out []phase
		for i, st := range []string{"QUEUED", "PENDING", "CLAIMED", "INPROGRESS", "ERROR"} {
			out = append(out, phase{st, start.Add(time.Duration(i) * s.opts.Step)})
		}
		return out
	}
	states := []string{"QUEUED", "PENDING", "CLAIMED", "INPROGRESS"}
	var out []phase
	t := start
	for _, st := range states {
		out = append(out, phase{st, t})
		if st == "PENDING" && s.opts.PendingFor > 0 {
			t = t.Add(s.opts.PendingFor)
			continue
		}
		t = t.Add(s.opts.Step)
	}
	if s.opts.BlockedFor > 0 && n%3 == 0 {
		out = append(out, phase{"BLOCKED", t})
		t = t.Add(s.opts.BlockedFor)
		out = append(out, phase{"INPROGRESS", t})
		t = t.Add(s.opts.Step)
	}
	final := "SUCCEEDED"
	if n%5 == 0 {
		final = "FAILED"
	}
	return append(out, phase{final, t})
}

// request is a checked RunAgentRequest.
type request struct {
	prompt, title  string
	config         map[string]any
	skill          map[string]any
	parentRunID    string
	conversationID string
	metadata       map[string]string
}

// The document's bounds on a run's metadata.
const (
	maxMetadataKeys  = 20
	maxMetadataValue = 256
)

var metadataKey = regexp.MustCompile(`^[a-zA-Z0-9._-]{1,64}$`)

// runModes are the document's RunMode values.
var runModes = set("normal", "plan", "orchestrate")

// parseMetadata checks a RunMetadata object.
func parseMetadata(v any, present bool) (map[string]string, error) {
	if !present || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("metadata must be an object of strings")
	}
	if len(m) > maxMetadataKeys {
		return nil, fmt.Errorf("metadata has %d keys, at most %d are allowed", len(m), maxMetadataKeys)
	}
	out := map[string]string{}
	for k, val := range m {
		sv, isString := val.(string)
		switch {
		case !metadataKey.MatchString(k):
			return nil, fmt.Errorf("metadata key %q must be 1 to 64 characters of a-z A-Z 0-9 . _ -", k)
		case !isString:
			return nil, fmt.Errorf("metadata.%s must be a string", k)
		case len(sv) > maxMetadataValue || strings.ContainsRune(sv, 0):
			return nil, fmt.Errorf("metadata.%s must be at most %d bytes, without NUL", k, maxMetadataValue)
		}
		out[k] = sv
	}
	return out, nil
}

// checkMode checks an optional RunMode.
func checkMode(b map[string]any) error {
	v, ok := b["mode"]
	if !ok || v == nil {
		return nil
	}
	if m, _ := v.(string); !runModes[m] {
		return fmt.Errorf("mode must be normal, plan or orchestrate")
	}
	return nil
}

// parseRequest checks a create body field by field against the document's
// RunAgentRequest and resolves its configuration. Unknown fields are ignored.
func parseRequest(b map[string]any) (request, error) {
	var req request
	var skill string
	var team *bool
	for _, f := range []struct {
		name string
		dst  *string
	}{{"prompt", &req.prompt}, {"title", &req.title}, {"skill", &skill}, {"conversation_id", &req.conversationID},
		{"parent_run_id", &req.parentRunID}, {"agent_identity_uid", new(string)}} {
		if err := optString(b, f.name, f.dst); err != nil {
			return req, err
		}
	}
	for _, name := range []string{"team", "interactive"} {
		if v, ok := b[name]; ok {
			bv, isBool := v.(bool)
			if !isBool {
				return req, fmt.Errorf("%s must be a boolean", name)
			}
			if name == "team" {
				team = &bv
			}
		}
	}
	if id, _ := b["agent_identity_uid"].(string); id != "" && team != nil && !*team {
		return req, fmt.Errorf("agent_identity_uid is only valid for team-owned runs")
	}
	for _, name := range []string{"attachments", "images"} {
		if err := checkAttachments(b, name); err != nil {
			return req, err
		}
	}
	config, err := parseConfig(b["config"], b["config"] != nil)
	if err != nil {
		return req, err
	}
	if req.metadata, err = parseMetadata(b["metadata"], b["metadata"] != nil); err != nil {
		return req, err
	}
	if err := checkMode(b); err != nil {
		return req, err
	}
	if skill != "" {
		config["skill_spec"] = skill // the skill field wins over config.skill_spec
	}
	spec, _ := config["skill_spec"].(string)
	if strings.TrimSpace(req.prompt) == "" && spec == "" {
		return req, fmt.Errorf("prompt is required unless a skill is given (skill or config.skill_spec)")
	}
	if spec != "" {
		name := skillName(spec)
		req.skill = map[string]any{"name": name, "full_path": spec}
		if _, ok := config["name"]; !ok {
			config["name"] = name
		}
	}
	if _, ok := config["model_id"]; !ok {
		config["model_id"] = defaultModel
	}
	if req.title == "" {
		req.title = titleFrom(req.prompt, req.skill)
	}
	req.config = config
	return req, nil
}

func optString(b map[string]any, name string, dst *string) error {
	v, ok := b[name]
	if !ok || v == nil {
		return nil
	}
	s, isString := v.(string)
	if !isString {
		return fmt.Errorf("%s must be a string", name)
	}
	*dst = s
	return nil
}

// checkAttachments checks attachments (and images, the older clients' name):
// at most five, each with a MIME type and base64 data.
func checkAttachments(b map[string]any, name string) error {
	v, ok := b[name]
	if !ok {
		return nil
	}
	list, isList := v.([]any)
	if !isList {
		return fmt.Errorf("%s must be an array", name)
	}
	if len(list) > 5 {
		return fmt.Errorf("%s: at most 5, got %d", name, len(list))
	}
	required := []string{"mime_type", "data"}
	if name == "attachments" {
		required = append(required, "file_name")
	}
	for i, a := range list {
		m, isObject := a.(map[string]any)
		if !isObject {
			return fmt.Errorf("%s[%d] must be an object", name, i)
		}
		for _, f := range required {
			if s, _ := m[f].(string); s == "" {
				return fmt.Errorf("%s[%d].%s is required", name, i, f)
			}
		}
		if _, err := base64.StdEncoding.DecodeString(m["data"].(string)); err != nil {
			return fmt.Errorf("%s[%d].data must be base64", name, i)
		}
	}
	return nil
}

// parseConfig checks an AmbientAgentConfig and returns a copy to resolve.
func parseConfig(v any, present bool) (map[string]any, error) {
	out := map[string]any{}
	if !present {
		return out, nil
	}
	c, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("config must be an object")
	}
	for k, val := range c {
		switch k {
		case "name", "model_id", "base_prompt", "environment_id", "skill_spec", "worker_host":
			if _, isString := val.(string); !isString {
				return nil, fmt.Errorf("config.%s must be a string", k)
			}
		case "computer_use_enabled":
			if _, isBool := val.(bool); !isBool {
				return nil, fmt.Errorf("config.%s must be a boolean", k)
			}
		case "idle_timeout_minutes":
			n, isNumber := val.(json.Number)
			i, err := n.Int64()
			if !isNumber || err != nil || i < 1 || i > 60 {
				return nil, fmt.Errorf("config.idle_timeout_minutes must be a whole number from 1 to 60")
			}
			val = i
		case "harness":
			h, isObject := val.(map[string]any)
			if t, _ := h["type"].(string); !isObject || h["type"] != nil && !harnesses[t] {
				return nil, fmt.Errorf("config.harness.type must be oz, claude, codex or gemini")
			}
		case "harness_auth_secrets":
			if _, isObject := val.(map[string]any); !isObject {
				return nil, fmt.Errorf("config.harness_auth_secrets must be an object")
			}
		case "mcp_servers":
			if err := checkMCPServers(val); err != nil {
				return nil, err
			}
		}
		out[k] = val
	}
	return out, nil
}

// harnesses are the document's harness types, the newest client's codex
// and gemini included.
var harnesses = set("oz", "claude", "codex", "gemini")

// checkMCPServers: each server has exactly one of warp_id, command or url.
func checkMCPServers(v any) error {
	servers, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("config.mcp_servers must be an object")
	}
	for name, sv := range servers {
		m, isObject := sv.(map[string]any)
		if !isObject {
			return fmt.Errorf("config.mcp_servers.%s must be an object", name)
		}
		n := 0
		for _, k := range []string{"warp_id", "command", "url"} {
			if _, set := m[k]; set {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("config.mcp_servers.%s needs exactly one of warp_id, command or url", name)
		}
	}
	return nil
}

// skillName is the last part of a skill spec: "org/repo:deploy" and
// "org/repo:skills/deploy/SKILL.md" are both "deploy".
func skillName(spec string) string {
	_, p, found := strings.Cut(spec, ":")
	if !found {
		p = spec
	}
	p = strings.TrimSuffix(p, "/SKILL.md")
	return path.Base(p)
}

func titleFrom(prompt string, skill map[string]any) string {
	if t := strings.TrimSpace(prompt); t != "" {
		if r := []rune(t); len(r) > 60 {
			return string(r[:60]) + "…"
		}
		return t
	}
	return fmt.Sprintf("Run the %s skill", skill["name"])
}
