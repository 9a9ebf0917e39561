package explore

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// seen holds the values the server showed in one sequence, by member:
// "run_id", "agent_config.name" (the member and the object holding it), and
// a few kinds of ids named after where they came from ("schedules.id",
// "identities.uid"). The first values seen are kept, in the order seen, so
// that a sequence replayed draws the same ones.
type seen map[string][]string

// maxSeen bounds the values kept per member.
const maxSeen = 24

func (s seen) add(key, value string) {
	if value == "" || len(s[key]) >= maxSeen || slices.Contains(s[key], value) {
		return
	}
	s[key] = append(s[key], value)
}

// harvest walks an answer (or a request body) and keeps its values. area
// is the collection the answer came from ("schedules", "identities"), for
// members as plain as "id" and "uid".
func (s seen) harvest(area string, v any) {
	var walk func(parent string, v any, depth int)
	walk = func(parent string, v any, depth int) {
		if depth > 8 {
			return
		}
		switch v := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(v) {
				child := v[k]
				switch c := child.(type) {
				case string:
					s.leaf(area, parent, k, c)
				case float64:
					s.leaf(area, parent, k, strconv.FormatFloat(c, 'f', -1, 64))
				case bool:
				default:
					if parent == "metadata" || k == "metadata" {
						if m, ok := c.(map[string]any); ok {
							for _, mk := range sortedKeys(m) {
								if mv, ok := m[mk].(string); ok {
									s.add("metadata pair", mk+"="+mv)
								}
							}
						}
					}
					walk(k, child, depth+1)
				}
			}
		case []any:
			for _, x := range v {
				walk(parent, x, depth+1)
			}
		}
	}
	walk("", v, 0)
}

func (s seen) leaf(area, parent, key, value string) {
	s.add(key, value)
	if parent != "" {
		s.add(parent+"."+key, value)
	}
	if area != "" && (parent == "" || parent == area) {
		s.add(area+"."+key, value)
	}
}

// idSources name the members whose values a path parameter takes.
var idSources = map[string][]string{
	"runId":           {"run_id"},
	"scheduleId":      {"schedules.id", "schedule_id"},
	"uid":             {"identities.uid"},
	"artifactUid":     {"artifact_uid"},
	"conversation_id": {"conversation_id"},
	"conversationId":  {"conversation_id"},
	"sessionUuid":     {"session_id"},
	"messageId":       {"message_id"},
}

// queryHints name the members whose values a query parameter takes.
var queryHints = map[string][]string{
	"name":            {"agent_config.name"},
	"model_id":        {"agent_config.model_id", "models.id"},
	"creator":         {"creator.uid"},
	"executor":        {"executor.uid", "creator.uid"},
	"environment_id":  {"agent_config.environment_id", "environments.id"},
	"schedule_id":     {"schedule.schedule_id", "schedules.id"},
	"skill_spec":      {"agent_config.skill_spec", "skill.spec"},
	"skill":           {"agent_config.skill_spec"},
	"ancestor_run_id": {"run_id"},
	"run_ids":         {"run_id"},
	"run_id":          {"run_id"},
	"automation_id":   {"metadata.automation_id"},
	"factory_uid":     {"factory_uid"},
	"created_after":   {"created_at"},
	"created_before":  {"created_at"},
	"updated_after":   {"updated_at"},
	"q":               {"title"},
}

// areaOf is the collection a path answers from.
func areaOf(path string) string {
	switch {
	case strings.HasPrefix(path, "/agent/schedules"):
		return "schedules"
	case strings.HasPrefix(path, "/agent/identities"):
		return "identities"
	case strings.HasPrefix(path, "/agent/environments"):
		return "environments"
	case strings.HasPrefix(path, "/agent/models"):
		return "models"
	}
	return ""
}

// shiftedTime is an RFC 3339 instant of value moved by d, or value itself
// when it is no instant.
func shiftedTime(value string, d time.Duration) string {
	t, err := time.Parse(time.RFC3339Nano, value)
	if err != nil {
		return value
	}
	return t.Add(d).UTC().Format(time.RFC3339Nano)
}

// word is a plain word made of n, for names and prompts.
func word(kind string, n int) string { return fmt.Sprintf("explore-%s-%d", kind, n) }
