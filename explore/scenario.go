package explore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/agentruns/agentruns/rules"
)

// ExploredTag marks every scenario printed from a finding.
const ExploredTag = "@explored"

// Scenario prints a finding as a feature of one scenario written with the
// suite's own steps, ready to paste into a feature file and run with
// agentruns-contract: each call becomes the step that sends it as written
// ("I send the request …", steps/exchanges.go), the values the server gave
// back and a later call sends again (ids, cursors, times) are remembered
// by name and carried, as the server gives new ones on each run, and the
// last call is followed by the steps that check what broke, by the
// finding's cause. Where the suite has no step to say a call or a check,
// missing says which, and a comment in the scenario says so too.
func Scenario(f Finding) (feature string, missing []string) {
	p := &printer{carried: carriedValues(f.Calls)}
	var b strings.Builder
	cause := oneLine(f.Cause)
	fmt.Fprintf(&b, "Feature: Found by exploration: %s\n", cause)
	b.WriteString("  A sequence of calls an exploration of the server found to show a finding,\n")
	b.WriteString("  shrunk to a shortest one and written with the suite's steps.\n\n")
	fmt.Fprintf(&b, "  %s\n", strings.Join(tagsOf(f.Calls), " "))
	fmt.Fprintf(&b, "  Scenario: %s, at %s\n", cause, p.operation(f.Calls))
	if r, ok := rules.RuleByID(strings.TrimSpace(f.Cause)); ok {
		fmt.Fprintf(&b, "    # %s: %s\n", r.ID, oneLine(r.Title))
	}
	for _, line := range strings.Split(strings.TrimSpace(f.Detail), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			fmt.Fprintf(&b, "    # %s\n", line)
		}
	}
	replay := f.Replay
	if replay == "" {
		replay = fmt.Sprintf("agentruns-contract --explore --seed %d", f.Seed)
	}
	fmt.Fprintf(&b, "    # Replay the exploration: %s\n", replay)
	for _, lacks := range uncarried(f.Calls, p.carried) {
		missing = append(missing, lacks)
		fmt.Fprintf(&b, "    # missing step: %s\n", lacks)
	}
	checks, note := checksFor(f)
	// A change that did not move what records the last change is checked
	// against the time an answer before it showed.
	before := map[int][]carried{}
	moment := -1
	if changeCause(f.Cause) {
		if k, ok := lastLookBeforeChange(f.Calls); ok {
			before[k], moment = []carried{{name: "last change before", field: "updated_at", call: k}}, k
			checks = []string{`the response field "updated_at" is later than the remembered "last change before"`}
		}
	}
	// The first team's resource on the other team's listing: remembered
	// where the first team saw it first, and looked for.
	if strings.Contains(strings.ToLower(f.Cause), "listing shows the first team's resource") {
		if k, field, ok := firstShownOfListed(f.Calls); ok {
			before[k] = append(before[k], carried{name: "mine", field: field, call: k})
			checks = []string{`the response does not show "{mine}"`}
		}
	}
	// A resource the other team's refused call changed: each member that
	// changed, against the first team's look before.
	if strings.Contains(strings.ToLower(f.Cause), "changed the resource") {
		if k, members := lookBeforeRefused(f.Calls); len(members) > 0 {
			for _, m := range members {
				name := m + " before"
				before[k] = append(before[k], carried{name: name, field: m, call: k})
				checks = append(checks, fmt.Sprintf("the response field %q is \"{%s}\"", m, name))
			}
		}
	}
	for i, c := range f.Calls {
		keyword := "And"
		switch {
		case i == len(f.Calls)-1:
			keyword = "When"
		case i == 0:
			keyword = "Given"
		}
		if c.Invalid != "" {
			fmt.Fprintf(&b, "    # wrong on purpose: %s\n", oneLine(c.Invalid))
		}
		step, lacks := p.send(i, c)
		if lacks != "" {
			missing = append(missing, lacks)
			fmt.Fprintf(&b, "    # missing step: %s\n", lacks)
		}
		fmt.Fprintf(&b, "    %s %s\n", keyword, step)
		if i == len(f.Calls)-1 {
			fmt.Fprintf(&b, "    # the server answered %d\n", c.Status)
		}
		for _, r := range p.remembered(i) {
			fmt.Fprintf(&b, "    And I remember the response field %q as %q\n", r.field, r.name)
		}
		for _, r := range before[i] {
			fmt.Fprintf(&b, "    And I remember the response field %q as %q\n", r.field, r.name)
		}
		if i == moment {
			// A moment, for the change to be at a later time than the
			// look, on the mock's clock too, which the suite holds still.
			b.WriteString("    And a moment passes\n")
		}
	}
	if note != "" {
		fmt.Fprintf(&b, "    # %s\n", note)
	}
	if len(checks) == 0 && note == "" {
		lacks := fmt.Sprintf("a step that checks %q", cause)
		missing = append(missing, lacks)
		fmt.Fprintf(&b, "    # missing step: %s\n", lacks)
	}
	for i, c := range checks {
		keyword := "Then"
		if i > 0 {
			keyword = "And"
		}
		fmt.Fprintf(&b, "    %s %s\n", keyword, c)
	}
	return b.String(), missing
}

// The checks of a cause named in words, matched by what it says, in
// order, so that the engine's words find their check.
var causeChecks = []struct {
	says  []string // any of these, in the cause in lower case
	steps []string
}{
	{[]string{"invalid request", "negative data", "id of nothing"}, []string{"the response is a problem with a 4xx status"}},
	{[]string{"server error", "5xx"}, []string{"the response is not a server error"}},
	{[]string{"valid request refused", "valid request rejected", "positive data"}, []string{"the response is a success"}},
	{[]string{"document", "schema"}, []string{"the response follows the document"}},
	{[]string{"time bound"}, []string{"every run listed matches the query", "the listed runs are in the order the query asks for"}},
	{[]string{"runs are listed"}, []string{"the listing shows none of the runs I created"}},
	{[]string{"changed the resource"}, []string{"the response is a success"}},
	{[]string{"skips"}, []string{"the walk holds every run I created that matches its query"}},
	{[]string{"filter"}, []string{"every run listed matches the query"}},
	{[]string{"order"}, []string{"the listed runs are in the order the query asks for"}},
	{[]string{"limit"}, []string{"the listing holds no more runs than the query's limit"}},
	{[]string{"agree"}, []string{"the runs agree with the last look at them before"}},
	{[]string{"team", "tenan"}, []string{`the response is a problem with status 403 and code "not_authorized", or 404 and "resource_not_found"`}},
	{[]string{"deleted", "use after"}, []string{"the response is a problem with a 4xx status"}},
}

// causeNotes are the causes the step that sends the call checks itself.
var causeNotes = map[string]string{
	"no answer": "the request above fails when no answer comes",
}

// ruleChecks are the checks of the rules of package rules that have one
// of their own; any other rule is checked by "the answers keep the rule".
var ruleChecks = map[string]string{
	rules.InvalidRequestRefused:   "the response is a problem with a 4xx status",
	rules.ResponseFollowsDocument: "the response follows the document",
	rules.ListingMatchesFilters:   "every run listed matches the query",
	rules.ListingOrdered:          "the listed runs are in the order the query asks for",
	rules.PageWithinLimit:         "the listing holds no more runs than the query's limit",
}

// heldOnEveryAnswer are the rules the suite holds every answer to as it
// comes: the step that sends the call fails on them by itself.
var heldOnEveryAnswer = map[string]bool{
	rules.EndedRunSaysWhy: true, rules.StartedAtFitsState: true, rules.TimestampsOrdered: true,
	rules.StatesMoveForward: true, rules.TerminalRunNeverChanges: true, rules.DerivedFieldsAgree: true,
	rules.EndedRunStopsCounting: true, rules.ProblemStatusMatches: true,
}

// checksFor is the steps that check the finding's cause at its last call,
// or a note where the sending step checks it itself. A cause is the name
// of a rule of package rules, or words.
func checksFor(f Finding) (steps []string, note string) {
	cause := strings.ToLower(strings.TrimSpace(f.Cause))
	if _, ok := rules.RuleByID(cause); ok {
		switch {
		case ruleChecks[cause] != "":
			return []string{ruleChecks[cause]}, ""
		case heldOnEveryAnswer[cause]:
			return nil, fmt.Sprintf("the suite holds every answer to %s: the request above fails on it", cause)
		}
		return []string{fmt.Sprintf("the answers keep the rule %q", cause)}, ""
	}
	if n, ok := causeNotes[cause]; ok {
		return nil, n
	}
	for _, c := range causeChecks {
		for _, s := range c.says {
			if strings.Contains(cause, s) {
				steps = c.steps
				break
			}
		}
		if steps != nil {
			break
		}
	}
	// A refused call that changed a run anyway: the run it cancelled.
	if strings.Contains(cause, "changed the resource") && len(f.Calls) > 0 {
		var run map[string]any
		if json.Unmarshal(f.Calls[len(f.Calls)-1].Answer, &run) == nil && run["state"] == "CANCELLED" {
			steps = append(steps[:len(steps):len(steps)], `the response field "state" is not "CANCELLED"`)
		}
	}
	return steps, ""
}

// changeCause tells whether a cause is a change to a resource that did
// not move what records its last change.
func changeCause(cause string) bool {
	c := strings.ToLower(cause)
	return strings.Contains(c, "last change") || strings.Contains(c, "updated_at")
}

// lastLookBeforeChange is the last call before a change (a call that is
// not a read, up to the last call) whose answer showed the resource the
// last call's answer shows, with its updated_at.
func lastLookBeforeChange(calls []Call) (int, bool) {
	if len(calls) < 2 {
		return 0, false
	}
	var now map[string]any
	if json.Unmarshal(calls[len(calls)-1].Answer, &now) != nil || now["updated_at"] == nil {
		return 0, false
	}
	ids := map[string]any{}
	for k, v := range now {
		if _, isString := v.(string); isString && serverChosen(k) && !strings.HasSuffix(k, "_at") {
			ids[k] = v
		}
	}
	changed := false
	for k := len(calls) - 1; k >= 0; k-- {
		if k < len(calls)-1 && changed {
			var then map[string]any
			if json.Unmarshal(calls[k].Answer, &then) == nil && then["updated_at"] != nil {
				for key, v := range ids {
					if then[key] == v {
						return k, true
					}
				}
			}
		}
		if m := calls[k].Method; calls[k].Clock == 0 && m != http.MethodGet && m != http.MethodHead {
			changed = true
		}
	}
	return 0, false
}

// lookBeforeRefused is the first team's last look (call k) at the
// resource the last call, the first team's read after the other team's
// refused call, shows, and the members that differ between the two: the
// ones a scenario can remember (a value, not nothing), the state of a
// run only when it is cancelled now (a run moves on its own otherwise).
func lookBeforeRefused(calls []Call) (k int, members []string) {
	last := len(calls) - 1
	var now map[string]any
	if last < 2 || calls[last].Team != MainTeam || json.Unmarshal(calls[last].Answer, &now) != nil {
		return 0, nil
	}
	for k = last - 2; k >= 0; k-- {
		var then map[string]any
		if calls[k].Team != MainTeam || json.Unmarshal(calls[k].Answer, &then) != nil || !sameResource(then, now) {
			continue
		}
		var times []string
		for _, m := range sortedKeys(now) {
			a, b := then[m], now[m]
			if a == nil || rules.Str(a) == "" || reflect.DeepEqual(a, b) || movesOnItsOwn[m] {
				continue
			}
			if strings.HasSuffix(m, "_at") {
				times = append(times, m) // checked only when nothing else tells
				continue
			}
			if _, object := a.(map[string]any); object || m == "state" {
				continue
			}
			if _, list := a.([]any); list {
				continue
			}
			members = append(members, m)
		}
		if len(members) == 0 {
			members = times
		}
		return k, members
	}
	return 0, nil
}

// firstShownOfListed is the first call of the first team's whose answer
// is a resource (its id in field) that the last call, the other team's
// listing, lists.
func firstShownOfListed(calls []Call) (k int, field string, ok bool) {
	last := calls[len(calls)-1]
	for k, c := range calls[:len(calls)-1] {
		var obj map[string]any
		if c.Team != MainTeam || json.Unmarshal(c.Answer, &obj) != nil {
			continue
		}
		for _, kind := range resourceKinds {
			if id := rules.Str(obj[kind.idMember]); id != "" && kind.idMember != "run_id" && bytes.Contains(last.Answer, []byte(`"`+id+`"`)) {
				return k, kind.idMember, true
			}
		}
	}
	return 0, "", false
}

// sameResource tells whether two answers show the same resource: the same
// run, schedule or identity id.
func sameResource(a, b map[string]any) bool {
	for _, k := range resourceKinds {
		if id := rules.Str(b[k.idMember]); id != "" && rules.Str(a[k.idMember]) == id {
			return true
		}
	}
	return false
}

// tagsOf are the tags of the scenario: @explored, for --tags to select the
// scenarios pasted from findings, then what it needs: what it changes, for
// a read-only run to leave it out; that it creates runs, for the run
// budget; that it uses the other team's key.
func tagsOf(calls []Call) []string {
	var writes, creates, two, clock bool
	for _, c := range calls {
		if c.Clock > 0 {
			clock = true
			continue
		}
		if c.Method != http.MethodGet && c.Method != http.MethodHead {
			writes = true
		}
		if p := strings.TrimSuffix(c.Path, "/"); c.Method == http.MethodPost && (p == "/agent/run" || p == "/agent/runs") {
			creates = true
		}
		if c.Team == OtherTeam {
			two = true
		}
	}
	tags := []string{ExploredTag}
	if creates {
		// The body is the one the exploration sent, not one the suite
		// marks as its own.
		tags = append(tags, "@creates-runs", "@runs-as-written")
	}
	if writes {
		tags = append(tags, "@writes")
	}
	if two {
		tags = append(tags, "@two-callers")
	}
	if clock {
		// The mock's clock moved: only where there is one to move.
		tags = append(tags, "@mock-control")
	}
	return tags
}

// carried is a value an answer gave and a later request sent again.
type carried struct {
	name  string // how the scenario remembers it: "run 1"
	field string // where the answer showed it: "runs.0.run_id"
	call  int    // the call whose answer showed it first
}

// printer writes the calls of one finding.
type printer struct {
	carried map[string]carried // by value
}

// remembered are the values call i's answer showed first that later
// calls send again, by name.
func (p *printer) remembered(i int) []carried {
	var out []carried
	for _, c := range p.carried {
		if c.call == i {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].name < out[b].name })
	return out
}

// operation names the last call, its ids by name.
func (p *printer) operation(calls []Call) string {
	if len(calls) == 0 {
		return "no call"
	}
	c := calls[len(calls)-1]
	return c.Method + " " + p.path(c.Path, len(calls)-1)
}

// send is the step that sends call i, and what is missing to say it.
func (p *printer) send(i int, c Call) (step, lacks string) {
	if c.Clock > 0 {
		return spelledDuration(c.Clock) + " on the mock's clock", ""
	}
	who := "I send"
	if c.Team == OtherTeam {
		who = "the other team sends"
	}
	target := p.path(c.Path, i)
	if q := p.query(c.Query, i); q != "" {
		target += "?" + q
	}
	step = fmt.Sprintf("%s the request \"%s %s\"", who, c.Method, target)
	if c.Body == nil {
		return step, ""
	}
	body, lacks := p.body(c.Body, i)
	return step + " with the body " + body, lacks
}

// path writes a path as it went, each segment the scenario carries by
// name as its placeholder.
func (p *printer) path(path string, i int) string {
	segs := strings.Split(path, "/")
	for j, seg := range segs {
		v, err := url.PathUnescape(seg)
		if err != nil {
			v = seg
		}
		if c, ok := p.carried[v]; ok && c.call < i {
			segs[j] = "{" + c.name + "}"
			continue
		}
		segs[j] = keepEscaped(seg)
	}
	return strings.Join(segs, "/")
}

// query writes a query escaped, its carried values by name.
func (p *printer) query(q url.Values, i int) string {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		for _, v := range q[k] {
			if c, ok := p.carried[v]; ok && c.call < i {
				parts = append(parts, escapeQuery(k)+"={"+c.name+"}")
				continue
			}
			parts = append(parts, escapeQuery(k)+"="+escapeQuery(v))
		}
	}
	return strings.Join(parts, "&")
}

// body writes a JSON body on one line, its carried values by name. A
// brace pair in a string, which the step would take for a placeholder, is
// written with its brace escaped as JSON allows.
func (p *printer) body(body []byte, i int) (string, string) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, body); err != nil {
		// Malformed on purpose: sent as it is, if the step can say it.
		text := string(body)
		switch {
		case strings.ContainsAny(text, "\r\n"):
			return text, "a step that sends a malformed body over several lines"
		case placeholderPattern.MatchString(text):
			return text, "a step that sends a malformed body holding a brace pair, which the step reads as a value to fill in"
		case text != strings.TrimSpace(text):
			return text, "a step that sends a malformed body beginning or ending with spaces"
		}
		return text, ""
	}
	text := placeholderPattern.ReplaceAllStringFunc(compact.String(), func(m string) string {
		return `\u007b` + m[1:]
	})
	names := make([]string, 0, len(p.carried))
	for v := range p.carried {
		names = append(names, v)
	}
	sort.Strings(names)
	for _, v := range names {
		c := p.carried[v]
		if c.call >= i {
			continue
		}
		quoted, _ := json.Marshal(v)
		text = strings.ReplaceAll(text, string(quoted), `"{`+c.name+`}"`)
	}
	return text, ""
}

// placeholderPattern is what the suite's steps fill in (steps/values.go).
var placeholderPattern = regexp.MustCompile(`\{([^{}"]+)\}`)

// carriedValues finds the values an answer showed that a later request
// sends again, and names them.
func carriedValues(calls []Call) map[string]carried {
	firstShown := map[string]carried{}
	out := map[string]carried{}
	counts := map[string]int{}
	for i, c := range calls {
		for _, v := range sentValues(c) {
			shown, ok := firstShown[v]
			if !ok || shown.call >= i {
				continue
			}
			if _, named := out[v]; !named {
				base := shown.name
				counts[base]++
				shown.name = fmt.Sprintf("%s %d", base, counts[base])
				out[v] = shown
			}
		}
		for _, s := range shownValues(c) {
			if _, ok := firstShown[s.value]; !ok {
				firstShown[s.value] = carried{name: s.kind, field: s.field, call: i}
			}
		}
	}
	return out
}

// uncarried says which values a request sends that an earlier answer
// gave where the suite cannot remember them from (an answer that is not
// a JSON object): they are written as they were, and a server that gives
// new ones on each run will not know them.
func uncarried(calls []Call, carried map[string]carried) []string {
	var out []string
	said := map[string]bool{}
	for i, c := range calls {
		for _, v := range sentValues(c) {
			if _, ok := carried[v]; ok || said[v] || len(v) < 8 || !strings.ContainsAny(v, "0123456789") {
				continue
			}
			quoted, _ := json.Marshal(v)
			for k := 0; k < i; k++ {
				if bytes.Contains(calls[k].Answer, quoted) {
					said[v] = true
					out = append(out, fmt.Sprintf("a step that remembers %s from the answer to %s %s, which is not a JSON object: it is written as it was", v, calls[k].Method, calls[k].Path))
					break
				}
			}
		}
	}
	return out
}

// sentValues are the values a request sends that an earlier answer may
// have given: its path segments, query values and body strings.
func sentValues(c Call) []string {
	var out []string
	for _, seg := range strings.Split(c.Path, "/") {
		if v, err := url.PathUnescape(seg); err == nil && v != "" {
			out = append(out, v)
		}
	}
	for _, vs := range c.Query {
		out = append(out, vs...)
	}
	var body any
	if c.Body != nil && json.Unmarshal(c.Body, &body) == nil {
		walkStrings(body, "", func(_, _, v string) { out = append(out, v) })
	}
	return out
}

// shown is a value an answer showed where ids, cursors and times are.
type shown struct {
	value, field, kind string
}

// shownValues are the values of an answer the server chose: ids, cursors
// and times, with where they are and what kind of thing they name.
func shownValues(c Call) []shown {
	var doc map[string]any
	if json.Unmarshal(c.Answer, &doc) != nil {
		return nil // only an object's fields can be remembered
	}
	var out []shown
	walkStrings(doc, "", func(field, key, v string) {
		// A short id may be a value a request sends for another reason
		// (limit=1); a cursor is always the server's.
		if !serverChosen(key) || len(v) < 6 && !strings.HasSuffix(key, "cursor") {
			return
		}
		out = append(out, shown{value: v, field: field, kind: kindOf(field, key, c.Path)})
	})
	return out
}

// serverChosen tells whether a field holds what a server chooses anew on
// each run: ids, cursors, times.
func serverChosen(key string) bool {
	return key == "id" || key == "uid" || strings.HasSuffix(key, "_id") || strings.HasSuffix(key, "_uid") ||
		strings.HasSuffix(key, "cursor") || strings.HasSuffix(key, "_at")
}

// kindOf names what a value is, for the name it is remembered by: "run",
// "schedule", "cursor", "created_at".
func kindOf(field, key, path string) string {
	switch {
	case strings.HasSuffix(key, "cursor"):
		return "cursor"
	case strings.HasSuffix(key, "_at"):
		return key
	case key == "task_id" || strings.HasSuffix(key, "run_id"):
		return "run"
	case strings.HasSuffix(key, "_id"):
		return strings.TrimSuffix(key, "_id")
	case strings.HasSuffix(key, "_uid"):
		return strings.TrimSuffix(key, "_uid")
	}
	// "id" or "uid": named after the list it is in, or the path asked.
	parts := strings.Split(field, ".")
	for j := len(parts) - 2; j >= 0; j-- {
		if !isIndex(parts[j]) {
			return singular(parts[j])
		}
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for j := len(segs) - 1; j >= 0; j-- {
		if s := segs[j]; s != "" && s != "agent" && !strings.ContainsAny(s, "0123456789") {
			return singular(s)
		}
	}
	return "value"
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func singular(s string) string {
	switch {
	case strings.HasSuffix(s, "ies"):
		return strings.TrimSuffix(s, "ies") + "y"
	case strings.HasSuffix(s, "s"):
		return strings.TrimSuffix(s, "s")
	}
	return s
}

// walkStrings calls fn for every string in v, with its dotted path (array
// elements by index, as the suite's "remember" step reads it) and its key.
func walkStrings(v any, path string, fn func(field, key, value string)) {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if s, ok := t[k].(string); ok {
				fn(join(k), k, s)
				continue
			}
			walkStrings(t[k], join(k), fn)
		}
	case []any:
		for j, e := range t {
			if s, ok := e.(string); ok {
				key := path[strings.LastIndex(path, ".")+1:]
				fn(join(fmt.Sprint(j)), key, s)
				continue
			}
			walkStrings(e, join(fmt.Sprint(j)), fn)
		}
	}
}

// keepEscaped writes a path segment as it went, escaping only what a
// step's quoted text cannot hold or would read as a placeholder.
func keepEscaped(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteByte(c)
		case c <= ' ' || c >= 0x7f || c == '"' || c == '{' || c == '}' || c == '%' || c == '?' || c == '#':
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// escapeQuery escapes a query key or value, leaving what reads plainly in
// a URL's query as it is.
func escapeQuery(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.~:,/@!$'()*;", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// oneLine is text on one line, for a name or a comment.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
