package rules

import (
	"encoding/json"
	"strings"
)

// Decoded is an exchange's bodies decoded already, as encoding/json decodes
// them into an any, for an observer that reads them for more than the rules
// (the proxy decodes each exchange once, for the validator, the rules, the
// client versions and drift). With it, Memory reads these values and never
// decodes Body or RequestBody itself.
type Decoded struct {
	// Answer is Body decoded. AnswerOK is false when Body is not JSON; an
	// empty Body is AnswerOK with a nil Answer.
	Answer   any
	AnswerOK bool
	// AnswerAsWritten is Body decoded with its numbers as written
	// (json.Number), for an observer that keeps them so (the recorder);
	// nil when the decoder was not asked for it, or Body is not JSON.
	AnswerAsWritten any
	// Request is RequestBody decoded. RequestOK is false when RequestBody
	// is empty or not JSON.
	Request   any
	RequestOK bool
}

// answer is the answer's body decoded: ok is false for a body that is no
// JSON; an empty body is nil.
func (ex Exchange) answer() (any, bool) {
	if ex.Decoded != nil {
		return ex.Decoded.Answer, ex.Decoded.AnswerOK
	}
	var doc any
	if len(ex.Body) > 0 && json.Unmarshal(ex.Body, &doc) != nil {
		return nil, false
	}
	return doc, true
}

// request is the request's body decoded: ok is false for an empty body or
// one that is no JSON.
func (ex Exchange) request() (any, bool) {
	if ex.Decoded != nil {
		return ex.Decoded.Request, ex.Decoded.RequestOK
	}
	var v any
	if json.Unmarshal(ex.RequestBody, &v) != nil {
		return nil, false
	}
	return v, true
}

// members reads a decoded JSON object as encoding/json reads it into a
// struct, so the rules judge a decoded value as they judged the bytes: a
// member is found by its exact name, else case-insensitively; null and
// absent read as the zero value; a value of another type than the one read
// spoils the whole read (ok false), as Unmarshal's error did. A value that
// is neither an object nor null is spoilt from the start.
type members struct {
	obj map[string]any
	ok  bool
}

func membersOf(v any) members {
	switch o := v.(type) {
	case nil:
		return members{ok: true}
	case map[string]any:
		return members{obj: o, ok: true}
	}
	return members{}
}

func (m *members) get(name string) any {
	if v, ok := m.obj[name]; ok {
		return v
	}
	for k, v := range m.obj {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return nil
}

// str reads a string member.
func (m *members) str(name string) string {
	switch v := m.get(name).(type) {
	case nil:
	case string:
		return v
	default:
		m.ok = false
	}
	return ""
}

// boolean reads a boolean member.
func (m *members) boolean(name string) bool {
	switch v := m.get(name).(type) {
	case nil:
	case bool:
		return v
	default:
		m.ok = false
	}
	return false
}

// object reads a member that is itself read as a struct.
func (m *members) object(name string) members {
	inner := membersOf(m.get(name))
	if !inner.ok {
		m.ok = false
	}
	return inner
}

// mapOf reads a member into a map[string]any.
func (m *members) mapOf(name string) map[string]any {
	switch v := m.get(name).(type) {
	case nil:
	case map[string]any:
		return v
	default:
		m.ok = false
	}
	return nil
}

// strs reads a member into a []string (a null element is "").
func (m *members) strs(name string) []string {
	switch v := m.get(name).(type) {
	case nil:
	case []any:
		out := make([]string, len(v))
		for i, e := range v {
			switch s := e.(type) {
			case nil:
			case string:
				out[i] = s
			default:
				m.ok = false
			}
		}
		return out
	default:
		m.ok = false
	}
	return nil
}

// objs reads a member into a []map[string]any (a null element is nil).
func (m *members) objs(name string) []map[string]any {
	switch v := m.get(name).(type) {
	case nil:
	case []any:
		out := make([]map[string]any, len(v))
		for i, e := range v {
			switch o := e.(type) {
			case nil:
			case map[string]any:
				out[i] = o
			default:
				m.ok = false
			}
		}
		return out
	default:
		m.ok = false
	}
	return nil
}
