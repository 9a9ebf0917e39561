// Package jsonfill puts a JSON value that was decoded once into generic Go
// values (maps, slices, float64, string, bool, nil, as encoding/json
// decodes into an any) into a struct, as encoding/json would have put the
// text of that value. A server that decodes a request body once, to check
// it against a schema, fills its request types from that value instead of
// decoding the bytes a second time.
//
// Fill only ever answers what encoding/json would. Where it cannot be sure
// from the decoded value alone, it says so, and the caller decodes the
// bytes with encoding/json, which then gives the answer and any error:
//   - a number into an integer field: the value 1 and the text 1.0 decode
//     alike, but encoding/json refuses 1.0 for an int;
//   - a name that is no field's but matches one regardless of case, or is
//     not ASCII: encoding/json folds case, by Unicode's rules;
//   - a value of the wrong type, a null inside an array or a map, and any
//     type it does not handle (one with its own UnmarshalJSON or
//     UnmarshalText, []byte, an embedded struct, a ",string" field).
package jsonfill

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// Fill sets *dst, a struct that is still its zero value, from v, a JSON
// object decoded into generic values in which no name appears twice. It
// reports whether it could; when it could not, *dst may be partly set, and
// the caller starts again with encoding/json.
func Fill(dst any, v any) bool {
	p := reflect.ValueOf(dst)
	if p.Kind() != reflect.Pointer || p.IsNil() || p.Elem().Kind() != reflect.Struct {
		return false
	}
	if _, ok := v.(map[string]any); !ok {
		return false
	}
	return set(p.Elem(), v)
}

// set stores v in dst, which holds its zero value.
func set(dst reflect.Value, v any) bool {
	if custom(dst.Type()) {
		return false
	}
	if v == nil {
		// encoding/json sets a pointer, map, slice or interface to nil on a
		// null and leaves anything else as it is: both are the zero value
		// dst already holds.
		return true
	}
	switch dst.Kind() {
	case reflect.String:
		s, ok := v.(string)
		if ok {
			dst.SetString(s)
		}
		return ok
	case reflect.Bool:
		b, ok := v.(bool)
		if ok {
			dst.SetBool(b)
		}
		return ok
	case reflect.Float64:
		f, ok := v.(float64)
		if ok {
			dst.SetFloat(f)
		}
		return ok
	case reflect.Interface:
		if dst.NumMethod() != 0 {
			return false
		}
		dst.Set(reflect.ValueOf(v))
		return true
	case reflect.Pointer:
		elem := reflect.New(dst.Type().Elem())
		if !set(elem.Elem(), v) {
			return false
		}
		dst.Set(elem)
		return true
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		return ok && setStruct(dst, obj)
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok || dst.Type().Elem().Kind() == reflect.Uint8 { // []byte is base64 text
			return false
		}
		out := reflect.MakeSlice(dst.Type(), len(arr), len(arr))
		for i, e := range arr {
			if e == nil || !set(out.Index(i), e) {
				return false
			}
		}
		dst.Set(out)
		return true
	case reflect.Map:
		obj, ok := v.(map[string]any)
		t := dst.Type()
		if !ok || t.Key().Kind() != reflect.String || custom(t.Key()) {
			return false
		}
		out := reflect.MakeMapWithSize(t, len(obj))
		for k, e := range obj {
			elem := reflect.New(t.Elem()).Elem()
			if e == nil || !set(elem, e) {
				return false
			}
			out.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), elem)
		}
		dst.Set(out)
		return true
	}
	return false // integers (see the package comment), and kinds JSON has no value for
}

// setStruct stores an object's members in the fields they name.
func setStruct(dst reflect.Value, obj map[string]any) bool {
	fs := fieldsOf(dst.Type())
	if fs == nil {
		return false
	}
	for name, v := range obj {
		i, ok := fs.index[name]
		if !ok {
			if !fs.ignores(name) {
				return false
			}
			continue
		}
		if !set(dst.Field(i), v) {
			return false
		}
	}
	return true
}

// fields are a struct type's JSON names and the fields they fill.
type fields struct {
	index map[string]int
}

// ignores reports whether encoding/json surely skips a member of this
// name: it is ASCII and no field's name even regardless of case.
func (fs *fields) ignores(name string) bool {
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 {
			return false
		}
	}
	for n := range fs.index {
		if strings.EqualFold(n, name) {
			return false
		}
	}
	return true
}

var fieldCache sync.Map // reflect.Type → *fields, or a nil *fields for a struct Fill leaves alone

// fieldsOf reads a struct type's fields as encoding/json names them; nil
// when the type has a field Fill does not handle.
func fieldsOf(t reflect.Type) *fields {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.(*fields)
	}
	fs := &fields{index: map[string]int{}}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			fs = nil // embedded structs' fields are promoted by rules of their own
			break
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",string,") {
			fs = nil
			break
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := fs.index[name]; dup {
			fs = nil // encoding/json drops both, or picks by depth
			break
		}
		fs.index[name] = i
	}
	fieldCache.Store(t, fs)
	return fs
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// custom reports whether t, or a pointer to it, decodes itself.
func custom(t reflect.Type) bool {
	if t.Kind() == reflect.Interface {
		return false
	}
	pt := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshaler) || t.Implements(textUnmarshaler) ||
		pt.Implements(jsonUnmarshaler) || pt.Implements(textUnmarshaler)
}
