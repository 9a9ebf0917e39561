package refserver

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The document's enums for the list filters.
var (
	runStates = set("QUEUED", "PENDING", "CLAIMED", "INPROGRESS", "SUCCEEDED", "FAILED", "BLOCKED", "ERROR", "CANCELLED")
	sources   = set("LINEAR", "API", "SLACK", "LOCAL", "SCHEDULED_AGENT", "WEB_APP", "GITHUB_ACTION", "CLOUD_MODE", "CLI",
		"JIRA", "SELF_IMPROVEMENT", "GITHUB_WEBHOOK", "GITLAB_WEBHOOK", "AUTOFIX", "RUN_SCORER", "ORCHESTRATION")
	locations  = set("LOCAL", "REMOTE")
	artifactTs = set("PLAN", "PULL_REQUEST", "SCREENSHOT", "FILE", "EXTERNAL_REFERENCE")
	sortFields = set("updated_at", "created_at", "title", "agent")
)

func set(vs ...string) map[string]bool {
	m := map[string]bool{}
	for _, v := range vs {
		m[v] = true
	}
	return m
}

// query is a checked list request.
type query struct {
	limit                                     int
	sortBy                                    string
	asc                                       bool
	states                                    map[string]bool
	exact                                     map[string]string // filters matched exactly, by field
	createdAfter, createdBefore, updatedAfter time.Time
	ancestor                                  string
	artifact                                  string
	q                                         string
	metadata                                  map[string]string // metadata[key]=value pairs, all to hold
	factory                                   string
	none                                      bool   // the filters contradict each other
	fingerprint                               string // what a cursor must have been made for
}

// cursor is where the next page starts: after the run with this sort key
// and id. It is tied to the query that made it.
type cursor struct {
	Key   string `json:"k"`
	ID    string `json:"i"`
	Query string `json:"q"`
}

// list answers GET /agent/runs: filters, the document's default order
// (updated_at, newest first), and keyset pages.
func (s *Server) list(w http.ResponseWriter, r *http.Request, c caller) {
	vals := r.URL.Query()
	if s.refuseEmptyFilter(w, r, vals) {
		return
	}
	if s.opts.Published {
		var refused string
		if vals, refused = publishedQuery(vals); refused != "" {
			writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request", refused)
			return
		}
	}
	q, err := parseQuery(vals)
	if err != nil {
		writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request", err.Error())
		return
	}
	var after *cursor
	if raw := vals.Get("cursor"); raw != "" {
		c, err := decodeCursor(raw)
		if err != nil || c.Query != q.fingerprint {
			writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request", "cursor is not one this listing handed out")
			return
		}
		after = &c
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if q.ancestor != "" && s.runs[q.ancestor] == nil {
		writeProblem(w, r, http.StatusBadRequest, "invalid_request", "Invalid request", "ancestor_run_id names no run")
		return
	}
	type entry struct {
		key  string
		id   string
		item map[string]any
	}
	var matches []entry
	for _, run := range s.all {
		if run.team() != c.team {
			continue
		}
		item := s.show(run, now)
		if q.matches(s, run, item) {
			matches = append(matches, entry{q.sortKey(item), run.id, item})
		}
	}
	less := func(a, b entry) bool {
		if a.key != b.key {
			return a.key < b.key == q.asc
		}
		return a.id != b.id && a.id < b.id == q.asc
	}
	sort.Slice(matches, func(i, j int) bool { return less(matches[i], matches[j]) })
	start := 0
	if after != nil {
		start = sort.Search(len(matches), func(i int) bool { return less(entry{key: after.Key, id: after.ID}, matches[i]) })
	}
	size := q.limit
	if s.opts.PageCap > 0 {
		size = min(size, s.opts.PageCap)
	}
	end := min(start+size, len(matches))
	page := make([]any, 0, q.limit)
	for _, e := range matches[start:end] {
		page = append(page, e.item)
	}
	info := map[string]any{"has_next_page": end < len(matches)}
	if end < len(matches) {
		last := matches[end-1]
		info["next_cursor"] = encodeCursor(cursor{Key: last.key, ID: last.id, Query: q.fingerprint})
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": page, "page_info": info})
}

func parseQuery(v url.Values) (query, error) {
	q := query{limit: 20, sortBy: "updated_at", states: map[string]bool{}, exact: map[string]string{}}
	if raw := v.Get("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > 500 {
			return q, fmt.Errorf("limit must be a whole number from 1 to 500, not %q", raw)
		}
		q.limit = n
	}
	if raw := v.Get("sort_by"); raw != "" {
		if !sortFields[raw] {
			return q, fmt.Errorf("sort_by must be updated_at, created_at, title or agent, not %q", raw)
		}
		q.sortBy = raw
	}
	switch raw := v.Get("sort_order"); raw {
	case "", "desc":
	case "asc":
		q.asc = true
	default:
		return q, fmt.Errorf("sort_order must be asc or desc, not %q", raw)
	}
	for _, st := range v["state"] {
		if !runStates[st] {
			return q, fmt.Errorf("state %q is not a run state", st)
		}
		q.states[st] = true
	}
	for param, enum := range map[string]map[string]bool{"source": sources, "execution_location": locations, "artifact_type": artifactTs} {
		if raw := v.Get(param); raw != "" && !enum[raw] {
			return q, fmt.Errorf("%s %q is not one of the document's values", param, raw)
		}
	}
	q.metadata = map[string]string{}
	for param, vs := range v {
		key, isPair := strings.CutPrefix(param, "metadata[")
		if !isPair || !strings.HasSuffix(key, "]") {
			continue
		}
		key = strings.TrimSuffix(key, "]")
		if !metadataKey.MatchString(key) || len(vs) != 1 {
			return q, fmt.Errorf("%s must name one metadata key of a-z A-Z 0-9 . _ - once", param)
		}
		q.metadata[key] = vs[0]
	}
	if len(q.metadata) > 5 {
		return q, fmt.Errorf("at most 5 metadata pairs, got %d", len(q.metadata))
	}
	if raw := v.Get("automation_id"); raw != "" {
		if other, set := q.metadata["automation_id"]; set && other != raw {
			q.none = true // two different automations: no run matches both
		}
		q.metadata["automation_id"] = raw
	}
	q.factory = v.Get("factory_uid")
	for _, param := range []string{"name", "model_id", "creator", "executor", "source", "execution_location", "environment_id", "schedule_id"} {
		if raw := v.Get(param); raw != "" {
			q.exact[param] = raw
		}
	}
	if raw := v.Get("skill_spec"); raw != "" {
		q.exact["skill_spec"] = raw
	} else if raw := v.Get("skill"); raw != "" {
		q.exact["skill_spec"] = raw
	}
	for _, t := range []struct {
		param string
		dst   *time.Time
	}{{"created_after", &q.createdAfter}, {"created_before", &q.createdBefore}, {"updated_after", &q.updatedAfter}} {
		if raw := v.Get(t.param); raw != "" {
			parsed, err := time.Parse(time.RFC3339Nano, raw)
			if err != nil {
				return q, fmt.Errorf("%s must be an RFC 3339 timestamp, not %q", t.param, raw)
			}
			*t.dst = parsed
		}
	}
	q.ancestor, q.artifact, q.q = v.Get("ancestor_run_id"), v.Get("artifact_type"), strings.ToLower(v.Get("q"))
	// A cursor belongs to one query: every parameter but the cursor and the
	// page size.
	fp := url.Values{}
	for k, vs := range v {
		if k != "cursor" && k != "limit" {
			fp[k] = vs
		}
	}
	sum := sha256.Sum256([]byte(fp.Encode()))
	q.fingerprint = hex.EncodeToString(sum[:8])
	return q, nil
}

// matches applies every filter (AND) to a run as it is now.
func (q query) matches(s *Server, r *run, item map[string]any) bool {
	if len(q.states) > 0 && !q.states[item["state"].(string)] {
		return false
	}
	fields := map[string]string{
		"name": str(r.config["name"]), "model_id": str(r.config["model_id"]), "creator": r.creator.uid, "executor": r.creator.uid,
		"source": r.source, "execution_location": r.location, "environment_id": str(r.config["environment_id"]),
		"skill_spec": str(r.config["skill_spec"]), "schedule_id": str(r.schedule["schedule_id"]),
	}
	for k, want := range q.exact {
		if fields[k] != want {
			return false
		}
	}
	for k, want := range q.metadata {
		if got, ok := r.metadata[k]; !ok || got != want {
			return false
		}
	}
	// This server has no factories: a factory the caller cannot see
	// matches no run.
	if q.factory != "" || q.none {
		return false
	}
	updated, _ := time.Parse(time.RFC3339Nano, item["updated_at"].(string))
	switch {
	case !q.createdAfter.IsZero() && !r.createdAt.After(q.createdAfter),
		!q.createdBefore.IsZero() && !r.createdAt.Before(q.createdBefore),
		!q.updatedAfter.IsZero() && !updated.After(q.updatedAfter):
		return false
	}
	if q.ancestor != "" && !s.descends(r, q.ancestor) {
		return false
	}
	if q.artifact != "" && !hasArtifact(item, q.artifact) {
		return false
	}
	if q.q != "" && !strings.Contains(strings.ToLower(r.title+"\n"+r.prompt+"\n"+str(r.config["skill_spec"])), q.q) {
		return false
	}
	return true
}

func (s *Server) descends(r *run, ancestor string) bool {
	for seen := 0; r != nil && r.parentRunID != "" && seen < len(s.all); seen++ {
		if r.parentRunID == ancestor {
			return true
		}
		r = s.runs[r.parentRunID]
	}
	return false
}

func hasArtifact(item map[string]any, typ string) bool {
	arts, _ := item["artifacts"].([]any)
	for _, a := range arts {
		if a.(map[string]any)["artifact_type"] == typ {
			return true
		}
	}
	return false
}

// sortKey orders runs by the query's field as strings: timestamps in a fixed
// width so that text order is time order; runs without a skill after every
// skill, whichever the direction.
func (q query) sortKey(item map[string]any) string {
	switch q.sortBy {
	case "created_at", "updated_at":
		t, _ := time.Parse(time.RFC3339Nano, item[q.sortBy].(string))
		return t.UTC().Format("2006-01-02T15:04:05.000000000")
	case "title":
		return strings.ToLower(item["title"].(string))
	default: // agent
		skill, _ := item["agent_skill"].(map[string]any)
		name := str(skill["name"])
		switch {
		case name == "" && q.asc:
			return "\U0010FFFF"
		case name == "":
			return ""
		}
		return "1" + strings.ToLower(name)
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func encodeCursor(c cursor) string {
	data, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(data)
}

func decodeCursor(raw string) (cursor, error) {
	var c cursor
	data, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(data, &c); err != nil || c.ID == "" {
		return c, fmt.Errorf("not a cursor")
	}
	return c, nil
}
