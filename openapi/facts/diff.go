package facts

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Difference is one fact that two documents state differently.
type Difference struct {
	// Path names the fact, e.g.
	// `operations["GET /agent/runs"].parameters["query sort_by"].schema.default`.
	Path string
	// Want is the fact in the reference document, Got in the compared one,
	// each as JSON; empty when the fact is absent from that side.
	Want, Got string
}

func (d Difference) String() string {
	switch {
	case d.Want == "":
		return fmt.Sprintf("%s: only ours has it (%s)", d.Path, d.Got)
	case d.Got == "":
		return fmt.Sprintf("%s: missing, published has %s", d.Path, d.Want)
	}
	return fmt.Sprintf("%s: published has %s, ours %s", d.Path, d.Want, d.Got)
}

// Diff lists every fact that want (the reference) and got state
// differently, sorted by path. A whole object present on one side only is
// one difference at its path, not one per leaf.
func Diff(want, got *Facts) ([]Difference, error) {
	w, err := generic(want)
	if err != nil {
		return nil, err
	}
	g, err := generic(got)
	if err != nil {
		return nil, err
	}
	var out []Difference
	compare("", w, g, &out)
	for i := range out {
		out[i].Path = strings.TrimPrefix(out[i].Path, ".")
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func generic(f *Facts) (any, error) {
	b, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	var v any
	return v, json.Unmarshal(b, &v)
}

// compare walks two JSON values. Objects are compared key by key and lists
// of objects (oneOf branches) item by item; lists of scalars (enum,
// required, security) and scalars are compared whole.
func compare(path string, want, got any, out *[]Difference) {
	wm, wIsMap := want.(map[string]any)
	gm, gIsMap := got.(map[string]any)
	if wIsMap && gIsMap {
		keys := map[string]bool{}
		for k := range wm {
			keys[k] = true
		}
		for k := range gm {
			keys[k] = true
		}
		for k := range keys {
			wv, inWant := wm[k]
			gv, inGot := gm[k]
			p := path + segment(k)
			switch {
			case !inWant:
				*out = append(*out, Difference{Path: p, Got: render(gv)})
			case !inGot:
				*out = append(*out, Difference{Path: p, Want: render(wv)})
			default:
				compare(p, wv, gv, out)
			}
		}
		return
	}
	wl, wIsList := want.([]any)
	gl, gIsList := got.([]any)
	if wIsList && gIsList && objects(wl) && objects(gl) {
		for i := 0; i < max(len(wl), len(gl)); i++ {
			p := path + "[" + strconv.Itoa(i) + "]"
			switch {
			case i >= len(wl):
				*out = append(*out, Difference{Path: p, Got: render(gl[i])})
			case i >= len(gl):
				*out = append(*out, Difference{Path: p, Want: render(wl[i])})
			default:
				compare(p, wl[i], gl[i], out)
			}
		}
		return
	}
	if w, g := render(want), render(got); w != g {
		*out = append(*out, Difference{Path: path, Want: w, Got: g})
	}
}

func objects(list []any) bool {
	for _, e := range list {
		if _, ok := e.(map[string]any); !ok {
			return false
		}
	}
	return len(list) > 0
}

var plainKey = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// segment renders one key of a path: `.name`, or `["GET /agent"]` when the
// key is not a plain identifier.
func segment(key string) string {
	if plainKey.MatchString(key) {
		return "." + key
	}
	return "[" + strconv.Quote(key) + "]"
}

func render(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Allowance accepts the differences at and under the paths its pattern
// matches. In a pattern, "*" stands for any run of characters.
type Allowance struct {
	Pattern string
	// Added limits the allowance to facts only our document states, so
	// that an entry for an addition (a status the mock answers) cannot
	// hide a fact missing from our document at the same place.
	Added bool
	// Why says why our document may differ there; required.
	Why string
}

// Allows reports whether a accepts d.
func (a Allowance) Allows(d Difference) bool {
	if a.Added && d.Want != "" {
		return false
	}
	return a.Covers(d.Path)
}

// Covers reports whether a's pattern covers the fact at path: it matches
// path itself or one of its ancestors.
func (a Allowance) Covers(path string) bool {
	parts := strings.Split(a.Pattern, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	re := regexp.MustCompile(`^` + strings.Join(parts, `.*`) + `(?:[.\[].*)?$`)
	return re.MatchString(path)
}

// Filter splits differences into those no allowance covers and reports the
// allowances that covered nothing (stale entries of an allow-list).
func Filter(diffs []Difference, allowed []Allowance) (unexplained []Difference, unused []Allowance) {
	used := make([]bool, len(allowed))
	for _, d := range diffs {
		covered := false
		for i, a := range allowed {
			if a.Allows(d) {
				used[i], covered = true, true
			}
		}
		if !covered {
			unexplained = append(unexplained, d)
		}
	}
	for i, a := range allowed {
		if !used[i] {
			unused = append(unused, a)
		}
	}
	return unexplained, unused
}
