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
}

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
	byParent := map[string][]member{}
	ptrs := make([]string, 0, len(extra))
	for p := range extra {
		ptrs = append(ptrs, p)
	}
	slices.Sort(ptrs)
	for _, p := range ptrs {
		ptr := jsontext.Pointer(p)
		parent := string(ptr.Parent())
		byParent[parent] = append(byParent[parent], member{ptr.LastToken(), extra[p]})
	}
	// Where each member goes: the offset of its parent's closing brace,
	// and whether the object already has members (so a comma comes first).
	type insertion struct {
		at      int64
		comma   bool
		members []member
	}
	var at []insertion
	dec := jsontext.NewDecoder(bytes.NewReader(obj))
	// Each open object or array: its pointer, whether it is an object, the
	// names seen in it (only for an object with extras to put in), and
	// the name or index of the value being read.
	type frame struct {
		ptr     string
		obj     bool
		names   map[string]bool
		pending []member
		count   int // members or items read
		name    string
	}
	var stack []frame
	// needed reports whether an extra's parent lies at or under ptr.
	needed := func(ptr string) bool {
		for parent := range byParent {
			if parent == ptr || strings.HasPrefix(parent, ptr+"/") {
				return true
			}
		}
		return false
	}
	for {
		kind := dec.PeekKind()
		if kind == 0 {
			break
		}
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			if kind == '}' || kind == ']' {
				if top.obj && len(top.pending) > 0 {
					var missing []member
					for _, m := range top.pending {
						if !top.names[m.name] {
							missing = append(missing, m)
						}
					}
					if len(missing) > 0 {
						// The closing brace is the next non-space byte.
						off := dec.InputOffset()
						for off < int64(len(obj)) && obj[off] != '}' {
							off++
						}
						at = append(at, insertion{at: off, comma: top.count > 0, members: missing})
					}
				}
				if _, err := dec.ReadToken(); err != nil {
					return append(dst, obj...)
				}
				stack = stack[:len(stack)-1]
				continue
			}
			if top.obj && top.count%2 == 0 { // a member's name
				tok, err := dec.ReadToken()
				if err != nil {
					return append(dst, obj...)
				}
				top.name = tok.String()
				if top.names != nil {
					top.names[top.name] = true
				}
				top.count++
				continue
			}
		}
		// A value: the whole answer, a member's or an item's.
		ptr := ""
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.obj {
				ptr = string(jsontext.Pointer(top.ptr).AppendToken(top.name))
			} else {
				ptr = string(jsontext.Pointer(top.ptr).AppendToken(strconv.Itoa(top.count)))
			}
			top.count++
		}
		if (kind == '{' || kind == '[') && needed(ptr) {
			if _, err := dec.ReadToken(); err != nil {
				return append(dst, obj...)
			}
			f := frame{ptr: ptr, obj: kind == '{'}
			if f.obj {
				f.pending = byParent[ptr]
				if len(f.pending) > 0 {
					f.names = map[string]bool{}
				}
			}
			stack = append(stack, f)
			continue
		}
		if err := dec.SkipValue(); err != nil {
			return append(dst, obj...)
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
			name, _ := jsontext.AppendQuote(nil, m.name)
			dst = append(append(append(dst, name...), ':'), m.value...)
		}
		prev = ins.at
	}
	return append(dst, obj[prev:]...)
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
