package explore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/agentruns/agentruns/internal/schemagen"
)

// draw makes one call of op: valid, with exactly one thing wrong
// (invalid, why says what), or odd. ok is false when there is nothing to
// call it on (the other team's call with no resource of the first team's).
// The document has the last word: a "valid" call it refuses is sent as
// odd, an "invalid" one it accepts as valid.
func (q *sequence) draw(t *rapid.T, op *operation, team string, k kind) (c Call, why string, sentAs kind, ok bool) {
	c = Call{Team: team, Method: op.Method, Query: url.Values{}}
	path, invented, ok := q.pathOf(t, op, team)
	if !ok {
		return c, "", k, false
	}
	c.Path = path
	if op.reads() {
		q.queryOf(t, op, c.Query)
	}
	if op.Body {
		body := q.bodyOf(t, op)
		c.Body = jsonOf(body)
	}
	switch k {
	case invalid:
		why, ok = q.breakOne(t, op, &c)
		if !ok {
			return c, "", k, false
		}
		if strings.HasPrefix(why, "body member ") && !strings.HasSuffix(why, " (required)") {
			// Unknown fields are ignored (RunAgentRequest says so): a
			// server may ignore an optional member it has no use for,
			// whatever its value.
			k = odd
		}
		if strings.HasPrefix(why, "query parameter") && op.Name() != "GET /agent/runs" {
			// A server may ignore a parameter it has no use for, whatever
			// its value; the listing of runs reads every one of its own.
			k = odd
		}
	case odd:
		why = q.oddOne(t, op, &c)
	}
	if invented && k == valid {
		why = inventedID
	}
	// The document's verdict on the request.
	if k != odd && !strings.HasPrefix(why, namesNothing) {
		if err := q.e.doc.ValidateRequest(asRequest(c)); err != nil {
			if k == valid {
				return c, "not valid for the document: " + firstLine(err.Error()), odd, true
			}
		} else if k == invalid {
			return c, "", valid, true // the document accepts it after all
		}
	}
	if k == invalid {
		c.Invalid = why
	}
	return c, why, k, true
}

// asRequest is c as an http.Request for the validator.
func asRequest(c Call) *http.Request {
	var body *bytes.Reader
	if c.Body != nil {
		body = bytes.NewReader(c.Body)
	} else {
		body = bytes.NewReader(nil)
	}
	r := httptest.NewRequest(c.Method, "http://server"+c.Path+"?"+encodeQuery(c.Query), body)
	if c.Body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	r.Header.Set("Authorization", "Bearer key")
	return r
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// pathOf fills op's path parameters with ids the server gave (for the
// other team: ids of the first team's own resources), or now and then one
// it never gave (invented).
func (q *sequence) pathOf(t *rapid.T, op *operation, team string) (path string, invented, ok bool) {
	path = op.Template
	for _, name := range op.PathParams {
		var pool []string
		if team == OtherTeam {
			// The first team's resources: what it created, and what its
			// own answers showed.
			switch name {
			case "runId":
				pool = append(slices.Clone(q.ownRuns), q.mainSeen["run_id"]...)
			case "scheduleId":
				pool = append(slices.Clone(q.ownSchedules), q.mainSeen["schedules.id"]...)
			case "uid":
				pool = append(slices.Clone(q.ownIdentities), q.mainSeen["identities.uid"]...)
			}
			if len(pool) == 0 {
				return "", false, false
			}
		} else {
			for _, src := range idSources[name] {
				for _, v := range q.seen[src] {
					if !slices.Contains(pool, v) {
						pool = append(pool, v)
					}
				}
			}
		}
		var v string
		if len(pool) > 0 && (team == OtherTeam || rapid.IntRange(0, 9).Draw(t, name+" known") > 0) {
			v = pool[rapid.IntRange(0, len(pool)-1).Draw(t, name)]
		} else {
			v = fmt.Sprintf("00000000-0000-4000-8000-%012d", rapid.IntRange(1, 999).Draw(t, name+" invented"))
			// A server may give ids of this shape (the mock does, in a
			// session of its own): one it gave is no invention.
			invented = !slices.Contains(pool, v)
		}
		path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(v))
	}
	return path, invented, true
}

// queryOf draws a few of op's query parameters, each with a value the
// server showed or its schema allows.
func (q *sequence) queryOf(t *rapid.T, op *operation, out url.Values) {
	params := slices.DeleteFunc(slices.Clone(op.Query), func(p param) bool {
		return p.Name == "cursor" || (p.Newest && !q.e.newest)
	})
	if len(params) == 0 {
		return
	}
	// The filters, the order and the size of a page are drawn more often
	// than the rest: they are what listings get wrong.
	for _, p := range slices.Clone(params) {
		if slices.Contains(favoured, p.Name) {
			params = append(params, p, p)
		}
	}
	n := rapid.IntRange(0, min(4, len(params))).Draw(t, "parameters")
	for range n {
		p := params[rapid.IntRange(0, len(params)-1).Draw(t, "parameter")]
		if hasParam(out, p.Name) {
			continue
		}
		q.valueOf(t, p, out)
	}
}

func hasParam(q url.Values, name string) bool {
	for k := range q {
		if k == name || strings.HasPrefix(k, name+"[") {
			return true
		}
	}
	return false
}

// valueOf draws a value of p into out.
func (q *sequence) valueOf(t *rapid.T, p param, out url.Values) {
	s := p.Schema
	switch {
	case p.Deep:
		pairs := q.seen["metadata pair"]
		if len(pairs) == 0 {
			out.Set(p.Name+"[explore]", "none")
			return
		}
		k, v, _ := strings.Cut(pairs[rapid.IntRange(0, len(pairs)-1).Draw(t, p.Name)], "=")
		out.Set(p.Name+"["+k+"]", v)
	case p.Array:
		items, _ := s["items"].(map[string]any)
		enum := strings_(items["enum"])
		if len(enum) == 0 {
			out.Set(p.Name, q.stringFor(t, p.Name, items))
			return
		}
		for range rapid.IntRange(1, 2).Draw(t, p.Name+" values") {
			v := rapid.SampledFrom(enum).Draw(t, p.Name)
			if !slices.Contains(out[p.Name], v) {
				out.Add(p.Name, v)
			}
		}
	case len(strings_(s["enum"])) > 0:
		out.Set(p.Name, rapid.SampledFrom(strings_(s["enum"])).Draw(t, p.Name))
	case s["type"] == "integer":
		lo, hi := bound(s, "minimum", 0), bound(s, "maximum", 1000)
		choice := rapid.IntRange(0, 3).Draw(t, p.Name+" edge")
		v := lo
		switch choice {
		case 1:
			v = hi
		case 2, 3:
			v = rapid.IntRange(lo, min(hi, lo+25)).Draw(t, p.Name)
		}
		out.Set(p.Name, strconv.Itoa(v))
	case s["type"] == "number":
		out.Set(p.Name, strconv.Itoa(rapid.IntRange(0, 100).Draw(t, p.Name)))
	case s["type"] == "boolean":
		out.Set(p.Name, strconv.FormatBool(rapid.Bool().Draw(t, p.Name)))
	case slices.Contains(emptiable, p.Name) && rapid.IntRange(0, 2).Draw(t, p.Name+" empty") == 0:
		out.Set(p.Name, "") // no one has an empty uid: no filter, or a 400
	default:
		out.Set(p.Name, q.stringFor(t, p.Name, s))
	}
}

// favoured are the query parameters drawn three times as often.
var favoured = []string{"state", "sort_by", "sort_order", "limit", "created_after", "created_before", "updated_after"}

// emptiable are the filters sent empty now and then.
var emptiable = []string{"creator", "executor"}

// stringFor draws a string for a parameter or member called name: one
// the server showed under the member it filters on, or a word.
func (q *sequence) stringFor(t *rapid.T, name string, s map[string]any) string {
	var pool []string
	for _, src := range append(queryHints[name], name) {
		pool = append(pool, q.seen[src]...)
	}
	if s["format"] == "date-time" {
		if len(pool) == 0 {
			return "2025-01-01T00:00:00Z"
		}
		v := pool[rapid.IntRange(0, len(pool)-1).Draw(t, name)]
		shift := rapid.SampledFrom([]int{0, -1, 1}).Draw(t, name+" shift")
		return shiftedTime(v, msec(shift))
	}
	if len(pool) > 0 && rapid.IntRange(0, 4).Draw(t, name+" seen") > 0 {
		return pool[rapid.IntRange(0, len(pool)-1).Draw(t, name)]
	}
	return word(name, rapid.IntRange(0, 9).Draw(t, name+" word"))
}

// bodyOf draws the JSON body of op: the run creations and follow-ups by
// hand, so that most are taken, every other from the document's schema.
func (q *sequence) bodyOf(t *rapid.T, op *operation) any {
	switch {
	case op.Method == http.MethodPost && (op.Template == "/agent/run" || op.Template == "/agent/runs"):
		body := map[string]any{"prompt": word("prompt", rapid.IntRange(0, 9).Draw(t, "prompt"))}
		if rapid.Bool().Draw(t, "title") {
			body["title"] = word("title", rapid.IntRange(0, 3).Draw(t, "title word"))
		}
		if rapid.Bool().Draw(t, "config") {
			body["config"] = map[string]any{"name": word("config", rapid.IntRange(0, 3).Draw(t, "config name"))}
		}
		if q.e.newest && rapid.Bool().Draw(t, "metadata") {
			body["metadata"] = map[string]any{"automation_id": word("automation", rapid.IntRange(0, 3).Draw(t, "automation"))}
		}
		return body
	case strings.HasSuffix(op.Template, "/followups"):
		return map[string]any{"message": word("followup", rapid.IntRange(0, 9).Draw(t, "message"))}
	case (op.Method == http.MethodPost && op.Template == "/agent/schedules" || op.Method == http.MethodPut && op.Template == "/agent/schedules/{scheduleId}") &&
		rapid.IntRange(0, 3).Draw(t, "schedule as a person writes it") > 0:
		// A cron expression the schema cannot say: drawn from the
		// schema, a schedule is nearly always refused.
		return map[string]any{
			"name":          word("schedule", rapid.IntRange(0, 3).Draw(t, "schedule name")),
			"cron_schedule": rapid.SampledFrom(crons).Draw(t, "cron"),
			"prompt":        word("prompt", rapid.IntRange(0, 9).Draw(t, "prompt")),
			"enabled":       rapid.Bool().Draw(t, "enabled"),
		}
	}
	seed := rapid.Int64Range(0, 1<<20).Draw(t, "body")
	g, err := schemagen.New(q.e.model, rand.New(rand.NewSource(seed)))
	if err != nil {
		return map[string]any{}
	}
	g.Optional = 0.5
	v, ok := g.RequestBody(op.Method, op.Template)
	if !ok {
		return map[string]any{}
	}
	return v
}

// What a call's id is, when it is none the server gave: one no server
// gives ("not an id!"), or one well formed that the exploration made up.
const (
	namesNothing = "an id that names nothing"
	inventedID   = "an id the server never gave"
)

// crons are a few cron expressions a schedule is written with.
var crons = []string{"0 9 * * 1-5", "*/15 * * * *", "30 16 * * 5", "0 0 1 * *"}

// breakOne puts exactly one thing wrong in c, and says what.
func (q *sequence) breakOne(t *rapid.T, op *operation, c *Call) (string, bool) {
	type breakage struct {
		why   string
		apply func()
	}
	var options []breakage
	for _, p := range op.Query {
		if p.Newest && !q.e.newest || p.Name == "cursor" {
			continue
		}
		s := p.Schema
		if p.Array {
			s, _ = s["items"].(map[string]any)
		}
		set := func(v string) func() {
			return func() { c.Query.Del(p.Name); c.Query.Set(p.Name, v) }
		}
		if len(strings_(s["enum"])) > 0 {
			options = append(options, breakage{"query parameter " + p.Name + " outside its enum", set("NOT_ONE_OF_THEM")})
		}
		switch s["type"] {
		case "integer":
			if _, ok := s["minimum"]; ok {
				lo := bound(s, "minimum", 0)
				options = append(options, breakage{fmt.Sprintf("query parameter %s below its minimum %d", p.Name, lo), set(strconv.Itoa(lo - 1))})
			}
			if _, ok := s["maximum"]; ok {
				hi := bound(s, "maximum", 0)
				options = append(options, breakage{fmt.Sprintf("query parameter %s above its maximum %d", p.Name, hi), set(strconv.Itoa(hi + 1))})
			}
			options = append(options, breakage{"query parameter " + p.Name + " not an integer", set("ten")})
		}
		if s["format"] == "date-time" {
			options = append(options, breakage{"query parameter " + p.Name + " not a date-time", set("yesterday")})
		}
	}
	if body, ok := decodeObject(c.Body); ok && op.Body {
		schema := q.bodySchema(op)
		for _, name := range strings_(schema["required"]) {
			if _, present := body[name]; present {
				options = append(options, breakage{"body without its required member " + name, func() {
					delete(body, name)
					c.Body = jsonOf(body)
				}})
			}
		}
		props, _ := schema["properties"].(map[string]any)
		required := strings_(schema["required"])
		for _, name := range sortedKeys(props) {
			ps := resolveIn(q.e, props[name])
			mark := ""
			if slices.Contains(required, name) {
				mark = " (required)"
			}
			switch ps["type"] {
			case "string":
				if len(strings_(ps["enum"])) > 0 {
					options = append(options, breakage{"body member " + name + " outside its enum" + mark, func() {
						body[name] = "NOT_ONE_OF_THEM"
						c.Body = jsonOf(body)
					}})
				}
				options = append(options, breakage{"body member " + name + " a number rather than a string" + mark, func() {
					body[name] = 42
					c.Body = jsonOf(body)
				}})
			case "integer", "boolean", "array":
				options = append(options, breakage{fmt.Sprintf("body member %s a string rather than %s%s", name, ps["type"], mark), func() {
					body[name] = "forty-two"
					c.Body = jsonOf(body)
				}})
			}
		}
	}
	if op.Body && c.Body != nil {
		options = append(options, breakage{"body that is no JSON", func() { c.Body = []byte(`{"prompt": `) }})
	}
	// An id no server gives names nothing: where the operation declares a
	// 404, it must be refused (elsewhere an empty answer may be its
	// answer). The document's ids are plain strings, so it is no malformed
	// id, only one of nothing.
	if len(op.PathParams) > 0 && q.declares(op, http.StatusNotFound) {
		name := op.PathParams[len(op.PathParams)-1]
		options = append(options, breakage{namesNothing + " in path parameter " + name, func() {
			seg := url.PathEscape("not an id!")
			parts := strings.Split(c.Path, "/")
			tparts := strings.Split(op.Template, "/")
			for i := range tparts {
				if tparts[i] == "{"+name+"}" && i < len(parts) {
					parts[i] = seg
				}
			}
			c.Path = strings.Join(parts, "/")
		}})
	}
	if len(options) == 0 {
		return "", false
	}
	b := options[rapid.IntRange(0, len(options)-1).Draw(t, "breakage")]
	b.apply()
	return b.why, true
}

// oddOne makes c odd but not wrong: an unknown parameter, or a parameter
// given twice.
func (q *sequence) oddOne(t *rapid.T, op *operation, c *Call) string {
	if len(c.Query) > 0 && rapid.Bool().Draw(t, "repeat") {
		names := sortedKeys(c.Query)
		name := names[rapid.IntRange(0, len(names)-1).Draw(t, "repeated")]
		c.Query.Add(name, c.Query.Get(name))
		return "query parameter " + name + " repeated"
	}
	c.Query.Set("explore_unknown", "1")
	return "an unknown query parameter"
}

func (q *sequence) bodySchema(op *operation) map[string]any {
	root, err := q.e.model.Tree()
	if err != nil {
		return nil
	}
	paths, _ := root["paths"].(map[string]any)
	item, _ := paths[op.Template].(map[string]any)
	raw, _ := item[strings.ToLower(op.Method)].(map[string]any)
	rb := resolve(root, raw["requestBody"])
	content, _ := rb["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	return resolve(root, media["schema"])
}

func resolveIn(e *explorer, v any) map[string]any {
	root, err := e.model.Tree()
	if err != nil {
		return nil
	}
	return resolve(root, v)
}

func decodeObject(body []byte) (map[string]any, bool) {
	var v map[string]any
	if body == nil || jsonUnmarshal(body, &v) != nil || v == nil {
		return nil, false
	}
	return v, true
}

func strings_(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func bound(s map[string]any, key string, dflt int) int {
	switch v := s[key].(type) {
	case float64:
		return int(v)
	case int:
		return v
	case uint64:
		return int(v)
	case int64:
		return int(v)
	}
	return dflt
}

func msec(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// declares tells whether op declares status itself.
func (q *sequence) declares(op *operation, status int) bool {
	root, err := q.e.model.Tree()
	if err != nil {
		return false
	}
	paths, _ := root["paths"].(map[string]any)
	item, _ := paths[op.Template].(map[string]any)
	raw, _ := item[strings.ToLower(op.Method)].(map[string]any)
	responses, _ := raw["responses"].(map[string]any)
	_, ok := responses[strconv.Itoa(status)]
	return ok
}
