package store

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Reading a state file's runs. A start with a large state file spends most
// of its time decoding runs, and the general decoder pays for its
// generality on each field of each run (a look-up of the field's name and
// of the arshaler for its type). Save writes every run in one shape, so
// quickRun reads that shape itself: the names exactly as Save writes them,
// each once, strings, plain integers, UTC times as Save formats them. The
// rare parts of a run (a schedule, metadata, follow-ups, messages) are
// handed to the general decoder one field at a time.
//
// Anything else in a run (a field it does not know, a name in another
// case, a null, a number such as 1e3, a time in another zone, bad UTF-8)
// sends the whole run to the general decoder, which decides as it always
// has. So this reader changes how fast a file loads, never what it loads:
// TestRunReaderEqualsTheGeneralDecoder and FuzzRunReader hold the two equal.

// readRuns reads a mock session's runs. The runs are independent of each
// other, so they are read in chunks, one worker per core, while the
// document's decoder goes on checking the rest of the array: on two cores
// a large file loads in little more than the time of that check. The runs
// keep the file's order, and an error is that of the first bad run in it.
func (rs *restorer) readRuns(dec *jsontext.Decoder, runs *[]*Run) error {
	if dec.PeekKind() != '[' {
		return jsonv2.SkipFunc // null, or not an array: the general decoder's answer
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	workers := runtime.GOMAXPROCS(0)
	chunks := make(chan *runChunk, workers) // a bounded number of chunks read ahead
	// The chunks' JSON buffers go round: a chunk's is handed back once its
	// runs are read, so a load holds a few, whatever the file's size.
	buffers := make(chan []byte, 2*workers+2)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := rs.worker()
			for c := range chunks {
				c.read(w)
				select {
				case buffers <- c.raw[:0]:
				default:
				}
				c.raw = nil
			}
		}()
	}
	newChunk := func() *runChunk {
		select {
		case b := <-buffers:
			return &runChunk{raw: b}
		default:
			return &runChunk{raw: make([]byte, 0, 1<<18)}
		}
	}
	var all []*runChunk
	c := newChunk()
	var err error
	for dec.PeekKind() != ']' && err == nil {
		if dec.PeekKind() == 'n' { // a null run, refused later by the runs table
			_, err = dec.ReadToken()
			c.ends = append(c.ends, -1)
		} else {
			var v jsontext.Value
			if v, err = dec.ReadValue(); err == nil {
				c.raw = append(c.raw, v...) // v is the decoder's until its next read
				c.ends = append(c.ends, len(c.raw))
			}
		}
		if len(c.ends) == runsPerChunk {
			all = append(all, c)
			chunks <- c
			c = newChunk()
		}
	}
	if err == nil {
		_, err = dec.ReadToken() // ]
	}
	all = append(all, c)
	chunks <- c
	close(chunks)
	wg.Wait()
	if err != nil {
		return err
	}
	n := 0
	for i, c := range all {
		if c.err != nil {
			return fmt.Errorf("run %d: %w", i*runsPerChunk+c.bad, c.err)
		}
		n += len(c.runs)
	}
	*runs = make([]*Run, 0, n)
	for _, c := range all {
		*runs = append(*runs, c.runs...)
	}
	return nil
}

// runsPerChunk is how many runs a worker reads at a time: enough that
// handing a chunk over costs nothing next to reading it.
const runsPerChunk = 256

// runChunk is consecutive runs of the file, as JSON, then as records.
type runChunk struct {
	raw  []byte
	ends []int // where each run's JSON ends in raw; -1 for a null
	runs []*Run
	err  error
	bad  int // the run of the chunk that err is about
}

func (c *runChunk) read(w *restorer) {
	c.runs = make([]*Run, len(c.ends))
	start := 0
	for i, end := range c.ends {
		if end < 0 {
			continue
		}
		raw := c.raw[start:end]
		start = end
		r := new(Run)
		if !w.quickRun(raw, r) {
			*r = Run{}
			if err := jsonv2.Unmarshal(raw, r, w.general); err != nil {
				c.err, c.bad = err, i
				break
			}
		}
		c.runs[i] = r
	}
}

// quickRun reads raw, a run as Save writes it, into r and reports whether
// it could. raw is a whole JSON value the decoder has already checked.
func (rs *restorer) quickRun(raw []byte, r *Run) bool {
	s := scanner{b: raw}
	var seen uint64
	// The Details are read aside and kept as newDetails keeps a new run's:
	// most runs share a record with every run of their source.
	var d Details
	ok := s.object(func(name []byte) bool {
		f, known := quickRunFields[string(name)]
		if !known || seen&(1<<f) != 0 {
			return false
		}
		seen |= 1 << f
		if f < len(runReaders) {
			return runReaders[f].read(rs, &s, r)
		}
		return detailsReaders[f-len(runReaders)].read(rs, &s, &d)
	})
	if !ok || !s.end() {
		return false
	}
	if seen>>len(runReaders) != 0 {
		r.Details = newDetails(d)
	}
	return true
}

// fieldReader is how quickRun reads one field of a T, by its JSON name as
// Save writes it (the field's tag). runReaders, detailsReaders and
// timelineReaders (runs_fields.go) are generated from the fields of Run,
// Details and Timeline, in their order: a field is read by the scanner's
// reader for its type (a string, a bool, an integer, a time, a state, a
// creator), by the general decoder when it has none (a pointer, a map, a
// slice), or by the function its load tag names, one of those below.
// TestRunFieldsAreGenerated fails when runs_fields.go is not what the
// fields make; `go generate ./mockserver/store/` writes it again.
type fieldReader[T any] struct {
	name string
	read func(rs *restorer, s *scanner, into *T) bool
}

//go:generate go test -run TestRunFieldsAreGenerated -args -generate

// readTeam: the creator's team, mostly, so one string for both.
func readTeam(_ *restorer, s *scanner, r *Run) bool {
	if r.Creator.Principal != nil {
		return s.known(&r.Team, r.Creator.Team)
	}
	return s.str(&r.Team)
}

// readConfig: a config equal to one read before is that one (rs.config).
func readConfig(rs *restorer, s *scanner, r *Run) bool {
	v, ok := s.object0()
	if !ok {
		return false
	}
	cfg, err := rs.config(v)
	r.Config = cfg
	return err == nil
}

func readTimeline(_ *restorer, s *scanner, r *Run) bool { return quickTimeline(s, &r.Timeline) }

// readSource: a source of a shared record is that record's string.
func readSource(_ *restorer, s *scanner, d *Details) bool {
	if shared, ok := sharedDetails[string(s.peekPlain())]; ok {
		return s.known(&d.Source, shared.Source)
	}
	return s.str(&d.Source)
}

// readArtifactTypes: one string per kind, not one per run.
func readArtifactTypes(_ *restorer, s *scanner, d *Details) bool {
	return s.strings(&d.ArtifactTypes)
}

func readSteps(_ *restorer, s *scanner, tl *Timeline) bool { return s.steps(&tl.Steps) }

// indexOf numbers names, so that quickRun reads each field once (a bit
// per number): a run's fields and its Details' are numbered together, the
// Details' after the run's.
func indexOf(names ...string) map[string]int {
	index := make(map[string]int, len(names))
	for i, n := range names {
		index[n] = i
	}
	return index
}

func namesOf[T any](readers []fieldReader[T]) []string {
	names := make([]string, len(readers))
	for i, r := range readers {
		names[i] = r.name
	}
	return names
}

var (
	quickRunFields      = indexOf(append(namesOf(runReaders), namesOf(detailsReaders)...)...)
	quickTimelineFields = indexOf(namesOf(timelineReaders)...)
)

// generalInto is general1 for a field of the Details quickRun keeps on its
// stack: the general decoder gets a variable of its own, so they stay there.
func generalInto[T any](rs *restorer, s *scanner, dst *T) bool {
	var v T
	ok := rs.general1(s, &v)
	*dst = v
	return ok
}

// quickCreator reads a creator or executor as the principal it names.
func (rs *restorer) quickCreator(s *scanner, c *Creator) bool {
	v, ok := s.object0()
	if !ok {
		return false
	}
	p, err := rs.creator(v)
	c.Principal = p
	return err == nil
}

// general1 hands the next value to the general decoder for v. A value it
// refuses sends the run to the general decoder too, so the error is the
// one it has always given.
func (rs *restorer) general1(s *scanner, v any) bool {
	raw, ok := s.value()
	return ok && jsonv2.Unmarshal(raw, v, rs.general) == nil
}

func quickTimeline(s *scanner, tl *Timeline) bool {
	var seen uint16
	return s.object(func(name []byte) bool {
		f, known := quickTimelineFields[string(name)]
		if !known || seen&(1<<f) != 0 {
			return false
		}
		seen |= 1 << f
		return timelineReaders[f].read(nil, s, tl)
	})
}

// scanner reads a JSON value the decoder has checked already, so it
// never meets bad syntax; it reports false for what it does not read
// itself. Whitespace is skipped, as Save writes none but a person may.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) skipSpace() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// next skips space and consumes c if it comes next.
func (s *scanner) next(c byte) bool {
	s.skipSpace()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) end() bool {
	s.skipSpace()
	return s.i == len(s.b)
}

// object reads an object, calling field for each member with the
// scanner at its value. A name with an escape is not read here.
func (s *scanner) object(field func(name []byte) bool) bool {
	if !s.next('{') {
		return false
	}
	if s.next('}') {
		return true
	}
	for {
		name, ok := s.plainString()
		if !ok || !s.next(':') || !field(name) {
			return false
		}
		if s.next('}') {
			return true
		}
		if !s.next(',') {
			return false
		}
	}
}

// object0 is the next value if it is an object, as it is in the file.
func (s *scanner) object0() ([]byte, bool) {
	s.skipSpace()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return nil, false
	}
	return s.value()
}

// value is the next value as it is in the file, whatever it is.
func (s *scanner) value() ([]byte, bool) {
	s.skipSpace()
	start := s.i
	depth := 0
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case '"':
			if _, ok := s.rawString(); !ok {
				return nil, false
			}
			if depth == 0 {
				return s.b[start:s.i], true
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 { // the end of what holds the value
				return s.b[start:s.i], start < s.i
			}
			depth--
			if depth == 0 {
				s.i++
				return s.b[start:s.i], true
			}
		case ',', ':', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return s.b[start:s.i], start < s.i
			}
		}
		s.i++
	}
	return s.b[start:s.i], depth == 0 && start < s.i
}

// rawString consumes a string and returns its content between the quotes,
// escapes as written.
func (s *scanner) rawString() ([]byte, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	start := s.i + 1
	for i := start; ; {
		q := bytes.IndexByte(s.b[i:], '"')
		if q < 0 {
			return nil, false
		}
		i += q
		// The quote ends the string unless an odd number of backslashes
		// escapes it.
		n := 0
		for n < i-start && s.b[i-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			s.i = i + 1
			return s.b[start:i], true
		}
		i++
	}
}

// plainString is the next string if it has no escape and is valid UTF-8,
// which is all a name or a time needs to be read here.
func (s *scanner) plainString() ([]byte, bool) {
	s.skipSpace()
	v, ok := s.rawString()
	if !ok || bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
		return nil, false
	}
	return v, true
}

// str reads a string. Escapes are undone; invalid UTF-8 is left to the
// general decoder, whose rule for it (v1's: replace it) is its own.
func (s *scanner) str(dst *string) bool {
	s.skipSpace()
	at := s.i
	v, ok := s.rawString()
	if !ok || !utf8.Valid(v) {
		return false
	}
	if bytes.IndexByte(v, '\\') < 0 {
		*dst = string(v)
		return true
	}
	u, err := jsontext.AppendUnquote(nil, s.b[at:s.i])
	if err != nil {
		return false
	}
	*dst = string(u)
	return true
}

// known reads a string that is likely to equal known, keeping known's
// copy when it does.
func (s *scanner) known(dst *string, known string) bool {
	if v := s.peekPlain(); v != nil && string(v) == known {
		*dst = known
		_, ok := s.rawString()
		return ok
	}
	return s.str(dst)
}

// peekPlain is the next value's text if it is a string without escapes,
// nil otherwise; it consumes nothing but space.
func (s *scanner) peekPlain() []byte {
	s.skipSpace()
	at := s.i
	v, ok := s.rawString()
	s.i = at
	if !ok || bytes.IndexByte(v, '\\') >= 0 {
		return nil
	}
	return v
}

func (s *scanner) strings(dst *[]string) bool {
	if !s.next('[') {
		return false
	}
	out := []string{}
	if !s.next(']') {
		for {
			var v string
			if !s.str(&v) {
				return false
			}
			if known, ok := artifactTypeNames[v]; ok {
				v = known // one string per kind, not one per run
			}
			out = append(out, v)
			if s.next(']') {
				break
			}
			if !s.next(',') {
				return false
			}
		}
	}
	*dst = out
	return true
}

var artifactTypeNames = func() map[string]string {
	m := map[string]string{}
	for k := range ArtifactTypes {
		m[k] = k
	}
	return m
}()

// int reads an integer written as digits with an optional minus, as Save
// writes every number; bits is the field's size.
func (s *scanner) int(dst *int64, bits int) bool {
	s.skipSpace()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return false
	}
	n, err := strconv.ParseInt(string(s.b[start:s.i]), 10, bits)
	*dst = n
	return err == nil
}

func (s *scanner) bool(dst *bool) bool {
	s.skipSpace()
	switch {
	case bytes.HasPrefix(s.b[s.i:], []byte("true")):
		*dst, s.i = true, s.i+4
	case bytes.HasPrefix(s.b[s.i:], []byte("false")):
		*dst, s.i = false, s.i+5
	default:
		return false
	}
	return true
}

// time reads a UTC time as Save writes it (RFC 3339 with nanoseconds,
// trailing zeros dropped): exactly that form, so the value is the one the
// general decoder would give. It is read by hand, as a run has three or
// four and time.Parse allocates for each.
func (s *scanner) time(dst *time.Time) bool {
	v, ok := s.plainString()
	// 2006-01-02T15:04:05Z, then an optional fraction before the Z.
	if !ok || len(v) < 20 || v[4] != '-' || v[7] != '-' || v[10] != 'T' || v[13] != ':' || v[16] != ':' || v[len(v)-1] != 'Z' {
		return false
	}
	num := func(b []byte) int {
		n := 0
		for _, c := range b {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	year, month, day, hour, minute, sec := num(v[0:4]), num(v[5:7]), num(v[8:10]), num(v[11:13]), num(v[14:16]), num(v[17:19])
	nsec := 0
	if frac := v[19 : len(v)-1]; len(frac) > 0 {
		if frac[0] != '.' || len(frac) < 2 || len(frac) > 10 {
			return false
		}
		nsec = num(frac[1:])
		for range 10 - len(frac) {
			nsec *= 10
		}
	}
	if year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || sec < 0 || nsec < 0 {
		return false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	// time.Date accepts February 30th and 25 o'clock by moving on; the
	// formatted time is the same text only if every field was in range
	// and the fraction had no trailing zero, as Save writes it.
	var buf [40]byte
	if !bytes.Equal(t.AppendFormat(buf[:0], time.RFC3339Nano), v) {
		return false
	}
	*dst = t
	return true
}

// state reads a run state as the constant it names.
func (s *scanner) state(dst *State) bool {
	s.skipSpace()
	at := s.i
	if _, ok := s.rawString(); !ok {
		return false
	}
	known, ok := statesByJSON[string(s.b[at:s.i])]
	*dst = known
	return ok
}

// steps reads a timeline's steps: exactly one integer per step.
func (s *scanner) steps(dst *Steps) bool {
	if !s.next('[') {
		return false
	}
	for i := range dst {
		if i > 0 && !s.next(',') {
			return false
		}
		var n int64
		if !s.int(&n, 64) {
			return false
		}
		dst[i] = time.Duration(n)
	}
	return s.next(']')
}
