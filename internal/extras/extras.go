// Package extras puts back into an answer the members a real server sent
// that the API's document does not declare. A recording keeps them by JSON
// Pointer (RFC 6901) relative to the object they were seen in, e.g.
// "/rollout_ring" or "/status_message/hint", with their JSON values; the
// mock writes each one into the object's JSON wherever the member's parent
// is an object of that JSON that lacks it. The mock's own members always
// stay as the mock wrote them.
package extras

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// Check says what is wrong with ptr as the place of an extra member: it is
// not an RFC 6901 pointer, or it points at the whole object rather than a
// member of it. The error reads after the pointer ("/a~2" is not ...).
func Check(ptr string) error {
	switch {
	case ptr == "":
		return errors.New("points at the whole object, not a member of it")
	case !jsontext.Pointer(ptr).IsValid():
		return errors.New("is not a JSON Pointer (RFC 6901): one starts with '/' and writes '~' as ~0 and '/' inside a name as ~1")
	}
	return nil
}

// Nested is the first pointer of ptrs that lies inside another of them, and
// that other; "" when none does. A member inside another extra is part of
// that extra's value.
func Nested(ptrs []string) (inner, outer string) {
	sorted := slices.Clone(ptrs)
	slices.Sort(sorted)
	for i := 1; i < len(sorted); i++ {
		// Sorted, a pointer's descendants follow it, possibly after
		// siblings whose names extend its last token ("/a" < "/ab" < "/a/b").
		for j := i - 1; j >= 0; j-- {
			if strings.HasPrefix(sorted[i], sorted[j]+"/") {
				return sorted[i], sorted[j]
			}
		}
	}
	return "", ""
}

// Tokens are ptr's reference tokens, unescaped.
func Tokens(ptr string) []string {
	return slices.Collect(jsontext.Pointer(ptr).Tokens())
}

// Skeleton is the smallest value in which ptr names value: objects down to
// it, an array where a token is an index (the earlier items empty objects).
// It lets a document tell whether it declares the member ptr names.
func Skeleton(ptr string, value json.RawMessage) any {
	var v any
	if err := json.Unmarshal(value, &v); err != nil {
		v = nil
	}
	toks := Tokens(ptr)
	for i := len(toks) - 1; i >= 0; i-- {
		if n, err := strconv.Atoi(toks[i]); err == nil && n >= 0 && n < 64 && i > 0 {
			items := make([]any, n+1)
			for k := range n {
				items[k] = map[string]any{}
			}
			items[n] = v
			v = items
			continue
		}
		v = map[string]any{toks[i]: v}
	}
	return v
}

// member is one extra to put into the object at its parent pointer.
type member struct {
	name  string
	value json.RawMessage
	seen  bool // the object has a member of this name already
}

// insertion is where members go: before the closing brace at offset at,
// after a comma when the object already has members.
type insertion struct {
	at      int64
	comma   bool
	members []member
}

// frame is an open object or array of the JSON being read: where its
// pointer ends in the path, whether it is an object, the extras to put in
// it, how many names and values (or items) were read, and the name of the
// member being read.
type frame struct {
	pathLen int
	obj     bool
	pending []member
	count   int
	name    []byte
}

// reader is what Insert reads with, kept between calls: a run's JSON is
// written often, and a fresh decoder for each would cost more than the
// reading.
type reader struct {
	src   bytes.Reader
	dec   *jsontext.Decoder
	stack []frame
	path  []byte
}

var readers = sync.Pool{New: func() any {
	r := new(reader)
	r.dec = jsontext.NewDecoder(&r.src)
	return r
}}

// Insert appends to dst obj, the JSON of one object, with each member of
// extra put in at its pointer: as the last member of the object its parent
// pointer names, when obj has that object and it lacks the member. A
// member whose parent obj does not have (an optional object absent at the
// moment) or is not an object is left out. Extras are put in in the order
// of their pointers, so one answer is always written the same way.
//
// obj must be valid JSON (the mock's own); if it is not, it is appended
// unchanged.
func Insert(dst, obj []byte, extra map[string]json.RawMessage) []byte {
	if len(extra) == 0 {
		return append(dst, obj...)
	}
	ptrs := make([]string, 0, len(extra))
	for p := range extra {
		ptrs = append(ptrs, p)
	}
	slices.Sort(ptrs)
	// byParent holds the extras of each parent; open, every pointer an
	// extra's parent lies at or under, the only containers worth opening.
	byParent := make(map[string][]member, len(ptrs))
	open := make(map[string]bool, len(ptrs))
	for _, p := range ptrs {
		ptr := jsontext.Pointer(p)
		parent := ptr.Parent()
		byParent[string(parent)] = append(byParent[string(parent)], member{name: ptr.LastToken(), value: extra[p]})
		for q := parent; ; q = q.Parent() {
			open[string(q)] = true
			if q == "" {
				break
			}
		}
	}
	r := readers.Get().(*reader)
	defer readers.Put(r)
	r.src.Reset(obj)
	r.dec.Reset(&r.src)
	stack, path := r.stack[:0], r.path[:0]
	defer func() { r.stack, r.path = stack[:0], path[:0] }()
	var at []insertion
	fail := func() []byte { return append(dst, obj...) }
	for {
		kind := r.dec.PeekKind()
		if kind == 0 {
			break
		}
		if n := len(stack); n > 0 {
			top := &stack[n-1]
			if kind == '}' || kind == ']' {
				if ins, ok := missing(top, r.dec.InputOffset(), obj); ok {
					at = append(at, ins)
				}
				if _, err := r.dec.ReadToken(); err != nil {
					return fail()
				}
				stack = stack[:n-1]
				continue
			}
			if top.obj && top.count%2 == 0 { // a member's name
				raw, err := r.dec.ReadValue()
				if err != nil {
					return fail()
				}
				top.name = appendName(top.name[:0], raw)
				for i := range top.pending {
					if top.pending[i].name == string(top.name) {
						top.pending[i].seen = true
					}
				}
				top.count++
				continue
			}
		}
		// A value: the whole answer, a member's or an item's. Only an
		// object or array an extra lies in is opened; the rest is skipped.
		pathLen := len(path)
		if n := len(stack); n > 0 {
			top := &stack[n-1]
			path = append(path[:top.pathLen], '/')
			if top.obj {
				path = appendEscaped(path, top.name)
			} else {
				path = strconv.AppendInt(path, int64(top.count), 10)
			}
			pathLen = len(path)
			top.count++
		}
		if (kind == '{' || kind == '[') && open[string(path[:pathLen])] {
			if _, err := r.dec.ReadToken(); err != nil {
				return fail()
			}
			f := frame{pathLen: pathLen, obj: kind == '{'}
			if f.obj {
				f.pending = slices.Clone(byParent[string(path[:pathLen])])
			}
			stack = append(stack, f)
			continue
		}
		if err := r.dec.SkipValue(); err != nil {
			return fail()
		}
		if len(stack) == 0 {
			break
		}
	}
	prev := int64(0)
	for _, ins := range at {
		dst = append(dst, obj[prev:ins.at]...)
		for i, m := range ins.members {
			if i > 0 || ins.comma {
				dst = append(dst, ',')
			}
			dst, _ = jsontext.AppendQuote(dst, m.name)
			dst = append(append(dst, ':'), m.value...)
		}
		prev = ins.at
	}
	return append(dst, obj[prev:]...)
}

// missing is where the members of top that the object lacks go, its
// closing brace the next byte from off that is one.
func missing(top *frame, off int64, obj []byte) (insertion, bool) {
	if !top.obj {
		return insertion{}, false
	}
	var ms []member
	for _, m := range top.pending {
		if !m.seen {
			ms = append(ms, m)
		}
	}
	if len(ms) == 0 {
		return insertion{}, false
	}
	for off < int64(len(obj)) && obj[off] != '}' {
		off++
	}
	return insertion{at: off, comma: top.count > 0, members: ms}, true
}

// appendName appends the name a JSON string raw spells.
func appendName(b, raw []byte) []byte {
	if bytes.IndexByte(raw, '\\') < 0 {
		return append(b, raw[1:len(raw)-1]...)
	}
	var s string
	_ = json.Unmarshal(raw, &s) // the decoder has checked it
	return append(b, s...)
}

// appendEscaped appends name as a pointer token: '~' as ~0, '/' as ~1.
func appendEscaped(b, name []byte) []byte {
	for _, c := range name {
		switch c {
		case '~':
			b = append(b, '~', '0')
		case '/':
			b = append(b, '~', '1')
		default:
			b = append(b, c)
		}
	}
	return b
}

// At is the value ptr names in v (a decoded JSON value), nil if there is
// none.
func At(v any, ptr string) any {
	for _, tok := range Tokens(ptr) {
		switch x := v.(type) {
		case map[string]any:
			v = x[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}
