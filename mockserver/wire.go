package mockserver

import (
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/fixtures/undeclared"
)

// The wire helpers every answer shares: timestamps and durations as the
// API writes them, the principals and scopes answers name, and JSON
// written by hand (objects, strings, numbers, maps) into pooled buffers,
// byte for byte what encoding/json writes. The runs' answers
// (runs_json.go) are their main user.

type creatorInfo struct {
	Type        string `json:"type,omitempty"`
	UID         string `json:"uid,omitempty"`
	DisplayName string `json:"display_name,omitempty"`
	Email       string `json:"email,omitempty"`
	PhotoURL    string `json:"photo_url,omitempty"`
}

type runScope struct {
	Type string `json:"type"`
	UID  string `json:"uid,omitempty"`
}

// timeFormat has a fixed width, so timestamps also sort as strings.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

func formatTime(t time.Time) string { return string(appendTime(nil, t)) }

// appendTime appends what t.UTC().Format(timeFormat) gives, without parsing
// the layout each time: that is a good part of the cost of a page of runs.
func appendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, timeFormat)
	}
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / int(time.Millisecond) // Format truncates, too
	d := [24]byte{0: '0', 4: '-', 7: '-', 10: 'T', 13: ':', 16: ':', 19: '.', 23: 'Z'}
	put := func(at, v, width int) {
		for i := at + width - 1; i >= at; i-- {
			d[i] = byte('0' + v%10)
			v /= 10
		}
	}
	put(0, year, 4)
	put(5, int(month), 2)
	put(8, day, 2)
	put(11, hour, 2)
	put(14, minute, 2)
	put(17, sec, 2)
	put(20, ms, 3)
	return append(b, d[:]...)
}

// jsonAppender is a value that appends its own JSON encoding to b.
type jsonAppender interface {
	appendJSON(b []byte) []byte
}

// bodyBuffers keeps the buffers answers are encoded into: a page of 100
// runs is about 100 KB, and growing one each time costs more than the
// encoding.
var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// writeAppended answers status with v's JSON, as response.write does
// with json.Marshal's.
func writeAppended(w http.ResponseWriter, status int, v jsonAppender) {
	var bp *[]byte
	var body []byte
	if p, ok := v.(runPage); ok && p.pooled != nil {
		// fitPage wrote the runs into a buffer of its own: the page is
		// finished there rather than copied into another.
		bp, body = p.pooled, p.finish()
	} else {
		bp = bodyBuffers.Get().(*[]byte)
		body = v.appendJSON((*bp)[:0])
	}
	// Both headers in one allocation, set as they are (without Header.Set's
	// canonicalising); each slice is capped, so an append to one cannot
	// write over the other. Without a length net/http sends a body over
	// 2 KB (a page of runs) chunked, in more writes.
	vals := [2]string{"application/json", strconv.Itoa(len(body))}
	h := w.Header()
	h["Content-Type"], h["Content-Length"] = vals[0:1:1], vals[1:2:2]
	w.WriteHeader(status)
	_, _ = w.Write(body) // a Writer keeps no part of what it is given
	putBodyBuffer(bp, body)
}

// putBodyBuffer gives b, grown from *bp, back to bodyBuffers, unless it
// grew too big to keep.
func putBodyBuffer(bp *[]byte, b []byte) {
	if cap(b) <= 1<<20 {
		*bp = b[:0]
		bodyBuffers.Put(bp)
	}
}

// isoDuration writes d as an ISO 8601 duration to the millisecond:
// PT2M30S, PT1H0M0.25S, PT0S.
func isoDuration(d time.Duration) string { return string(appendISODuration(nil, d)) }

// appendISODuration appends isoDuration(d), which needs no escaping.
func appendISODuration(b []byte, d time.Duration) []byte {
	ms := d.Milliseconds()
	b = append(b, 'P', 'T')
	if h := ms / 3_600_000; h > 0 {
		b = strconv.AppendInt(b, h, 10)
		b = append(b, 'H')
	}
	if m := ms / 60_000 % 60; m > 0 || ms >= 3_600_000 {
		b = strconv.AppendInt(b, m, 10)
		b = append(b, 'M')
	}
	b = strconv.AppendInt(b, ms/1000%60, 10)
	if frac := ms % 1000; frac > 0 {
		// Three digits, without the trailing zeros: .25, not .250.
		digits := [3]byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
		n := 3
		for digits[n-1] == '0' {
			n--
		}
		b = append(append(b, '.'), digits[:n]...)
	}
	return append(b, 'S')
}

// appendFloat writes a float64 as encoding/json does: the shortest form
// that reads back the same, in exponent form only below 1e-6 or from 1e21
// on, with a two-digit exponent shortened to one ("1e-7", not "1e-07").
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// hexUUID writes u in its canonical 36-character form, as u.String() does.
func hexUUID(dst *[36]byte, u [16]byte) {
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst[j] = '-'
			j++
		}
		dst[j], dst[j+1] = hexDigits[c>>4], hexDigits[c&0xF]
		j += 2
	}
}

// object appends the members of one JSON object, minding the commas.
type object struct {
	b     []byte
	first bool
}

func openObject(b []byte) object { return object{b: append(b, '{'), first: true} }

func (o *object) key(k string) {
	if !o.first {
		o.b = append(o.b, ',')
	}
	o.first = false
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':')
}

// anyKey is a key that may need escaping (a map's).
func (o *object) anyKey(k string) {
	if !o.first {
		o.b = append(o.b, ',')
	}
	o.first = false
	o.b = appendJSONString(o.b, k)
	o.b = append(o.b, ':')
}

func (o *object) str(k, v string) {
	o.key(k)
	o.b = appendJSONString(o.b, v)
}

// strOmit is a string field with omitempty.
func (o *object) strOmit(k, v string) {
	if v != "" {
		o.str(k, v)
	}
}

func (o *object) boolPtrOmit(k string, v *bool) {
	if v != nil {
		o.key(k)
		o.b = strconv.AppendBool(o.b, *v)
	}
}

// prefixed is a string field of value prefix+v, without building it;
// prefix needs no escaping.
func (o *object) prefixed(k, prefix, v string) {
	o.key(k)
	o.b = append(appendEscaped(append(append(o.b, '"'), prefix...), v), '"')
}

// time is a timestamp field; timestamps need no escaping.
func (o *object) time(k string, t time.Time) {
	o.key(k)
	o.b = append(appendTime(append(o.b, '"'), t), '"')
}

func (o *object) close() []byte { return append(o.b, '}') }

// appendStringMap is a map[string]string as encoding/json writes it: null
// when nil, keys sorted.
func appendStringMap(b []byte, m map[string]string) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, m[k])
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// plain8 reports whether all eight bytes of s are ASCII that a JSON string
// holds as they are (jsonSafe), testing them at once: a byte below 0x20 or
// with its top bit set, or equal to one of the five escaped characters, makes
// it false. The tests are the classic "has a zero byte" bit trick, which is
// exact about whether some byte matches.
func plain8(s string) bool {
	_ = s[7]
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	has := func(c uint64) uint64 { y := x ^ (ones * c); return (y - ones) &^ y }
	below := (x - ones*0x20) &^ x // some byte < 0x20, for bytes without the top bit
	return (x|below|has('"')|has('\\')|has('<')|has('>')|has('&'))&highs == 0
}

// jsonSafe marks the ASCII bytes a JSON string holds as they are: not the
// control characters, '"', '\\', nor the HTML-significant '<', '>' and '&'.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// appendJSONString is encoding/json's string encoding with HTML escaping,
// as json.Marshal does it: <, > and & as \u003c, \u003e and \u0026, invalid
// UTF-8 as \ufffd, and U+2028 and U+2029 escaped.
func appendJSONString(dst []byte, src string) []byte {
	return append(appendEscaped(append(dst, '"'), src), '"')
}

// appendEscaped is appendJSONString without the quotes.
func appendEscaped(dst []byte, src string) []byte {
	start := 0
	for i := 0; i < len(src); {
		// Most text needs no escaping: skip it eight bytes at a time.
		if i+8 <= len(src) && plain8(src[i:i+8]) {
			i += 8
			continue
		}
		if b := src[i]; b < utf8.RuneSelf {
			if jsonSafe[b] {
				i++
				continue
			}
			dst = append(dst, src[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(src[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, src[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, src[start:]...)
}

// marshalWithExtra is v's JSON with a fixture's extra members, those a
// real server showed beyond the document, put in where their parents are
// (fixtures/undeclared); v's own members are never replaced.
func marshalWithExtra(v any, extra fixtures.Extra) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || len(extra) == 0 {
		return b, err
	}
	return undeclared.Insert(nil, b, extra), nil
}
