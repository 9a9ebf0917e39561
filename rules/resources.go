package rules

import (
	"net/url"
	"strings"
	"time"
)

// The rules of a single answer beyond runs: the catalogue (models,
// environments, skills), artifacts, conversations and the runs a schedule
// starts. Each holds only what the published document promises of any
// server; what only the bundled mock promises is left to the suite's
// scenarios tagged mock-only.

// DefaultModelIn checks GET /agent/models: default_model_id is one of
// the models listed ("the model a run gets when it names none").
func DefaultModelIn(doc map[string]any) []Violation {
	def, ok := doc["default_model_id"]
	if !ok || def == nil {
		return nil // optional; the document check says if it must be there
	}
	models, _ := doc["models"].([]any)
	ids := make([]string, 0, len(models))
	for _, m := range models {
		if mm, ok := m.(map[string]any); ok {
			if Str(mm["id"]) == Str(def) {
				return nil
			}
			ids = append(ids, Str(mm["id"]))
		}
	}
	return []Violation{{Rule: DefaultModelListed, Field: "body.default_model_id",
		Expected: "one of the models listed: " + cut(strings.Join(ids, ", ")), Got: Show(def)}}
}

// InNameOrder says whether names are in alphabetical order as people read
// it (letters compared without regard to case: "backend, Data, web"), or
// as bytes: the document says no more than "alphabetical".
func InNameOrder(names []string) bool {
	folded, bytewise := true, true
	for i := 1; i < len(names); i++ {
		a, b := names[i-1], names[i]
		folded = folded && strings.ToLower(a) <= strings.ToLower(b)
		bytewise = bytewise && a <= b
	}
	return folded || bytewise
}

// EnvironmentsInOrder checks a GET /agent/environments answer against its
// sort_by: by name (config.name) alphabetically, or by last_updated, the
// default, most recently changed first.
func EnvironmentsInOrder(q url.Values, envs []map[string]any) []Violation {
	if q.Get("sort_by") == "name" {
		names := make([]string, len(envs))
		for i, e := range envs {
			n, _ := Lookup(e, "config.name")
			names[i] = Str(n)
		}
		if InNameOrder(names) {
			return nil
		}
		return []Violation{{Rule: EnvironmentsOrdered, Field: "body.environments",
			Expected: "environments in alphabetical order of config.name (sort_by=name)", Got: cut(strings.Join(names, ", "))}}
	}
	if s := q.Get("sort_by"); s != "" && s != "last_updated" {
		return nil // the request check says what is wrong
	}
	return NewestFirst("body.environments", "last_updated", "uid", envs, EnvironmentsOrdered,
		"environments most recently updated first (sort_by=last_updated, the default)")
}

// NewestFirst checks that items are in descending order of their
// timestamp field; items without one are left out of the comparison.
func NewestFirst(field, tsField, idField string, items []map[string]any, rule, expected string) []Violation {
	var prev time.Time
	var prevID string
	for i, it := range items {
		t, ok := timeOf(it, tsField)
		if !ok {
			continue
		}
		if prevID != "" && t.After(prev) {
			return []Violation{{Rule: rule, Field: at(field, i) + "." + tsField,
				Expected: expected + ": not newer than " + prevID + " above it (" + prev.Format(time.RFC3339Nano) + ")",
				Got:      Str(it[tsField])}}
		}
		prev, prevID = t, Str(it[idField])
	}
	return nil
}

// SkillsInOrder checks GET /agent: the agents (skills) in alphabetical
// order of name unless sort_by asks for last_run.
func SkillsInOrder(q url.Values, agents []map[string]any) []Violation {
	if s := q.Get("sort_by"); s != "" && s != "name" {
		return nil
	}
	names := make([]string, len(agents))
	for i, a := range agents {
		names[i] = Str(a["name"])
	}
	if InNameOrder(names) {
		return nil
	}
	return []Violation{{Rule: SkillsOrdered, Field: "body.agents",
		Expected: "agents in alphabetical order of name (sort_by=name, the default)", Got: cut(strings.Join(names, ", "))}}
}

// PlanContent checks an artifact fetched by id: a PLAN carries its
// markdown in data.content.
func PlanContent(doc map[string]any) []Violation {
	if Str(doc["artifact_type"]) != "PLAN" {
		return nil
	}
	c, _ := Lookup(doc, "data.content")
	if strings.TrimSpace(Str(c)) != "" {
		return nil
	}
	return []Violation{{Rule: PlanHasContent, Field: "body.data.content",
		Expected: "the plan's markdown", Got: Show(c)}}
}

// ConversationInOrder checks a conversation: the messages of each step
// come in time order (a message without a timestamp, which the document
// allows, is left out).
func ConversationInOrder(doc map[string]any) []Violation {
	steps, _ := doc["steps"].([]any)
	for i, st := range steps {
		step, _ := st.(map[string]any)
		msgs, _ := step["messages"].([]any)
		var prev time.Time
		prevAt := -1
		for j, m := range msgs {
			msg, _ := m.(map[string]any)
			t, ok := timeOf(msg, "timestamp")
			if !ok {
				continue
			}
			if prevAt >= 0 && t.Before(prev) {
				return []Violation{{Rule: ConversationInTimeOrder, Field: at(at("body.steps", i)+".messages", j) + ".timestamp",
					Expected: "not before the message above it, at " + prev.Format(time.RFC3339Nano), Got: Str(msg["timestamp"])}}
			}
			prev, prevAt = t, j
		}
	}
	return nil
}

// ConversationHolds tells whether a conversation holds text in one of its
// user messages or a step's description, at any depth.
func ConversationHolds(doc map[string]any, text string) bool {
	var walk func(steps []any) bool
	walk = func(steps []any) bool {
		for _, st := range steps {
			step, _ := st.(map[string]any)
			if strings.Contains(Str(step["description"]), text) {
				return true
			}
			msgs, _ := step["messages"].([]any)
			for _, m := range msgs {
				msg, _ := m.(map[string]any)
				if Str(msg["role"]) != "user" {
					continue
				}
				blocks, _ := msg["content"].([]any)
				for _, b := range blocks {
					if block, _ := b.(map[string]any); Str(block["type"]) == "text" && strings.Contains(Str(block["text"]), text) {
						return true
					}
				}
			}
			if inner, _ := step["steps"].([]any); walk(inner) {
				return true
			}
		}
		return false
	}
	steps, _ := doc["steps"].([]any)
	return walk(steps)
}

// OneRunPerTick checks a page of runs: no two runs of one schedule were
// started at the same instant, a cron's tick starting one run.
func OneRunPerTick(runs []map[string]any) []Violation {
	seen := map[string]string{} // schedule and created_at -> run
	for i, run := range runs {
		sched, _ := run["schedule"].(map[string]any)
		id, created := Str(sched["schedule_id"]), Str(run["created_at"])
		if id == "" || created == "" {
			continue
		}
		key := id + "\x00" + created
		if other, ok := seen[key]; ok {
			return []Violation{{Rule: ScheduleOneRunPerTick, Field: at("body.runs", i) + ".created_at", RunID: Str(run["run_id"]),
				Expected: "one run per tick of schedule " + id + ": run " + other + " was started at this tick already", Got: created}}
		}
		seen[key] = Str(run["run_id"])
	}
	return nil
}

// cut shortens a list for a message.
func cut(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
