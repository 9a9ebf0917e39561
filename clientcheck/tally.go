package clientcheck

import (
	"encoding/json"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// FirstBreaks is how many breaks a Tally keeps per version: enough to
// show what breaks, not a log of every answer.
const FirstBreaks = 5

// Tally judges every answer it is shown against each client version and
// counts, per version, the answers it read and those that break it. It is
// safe for concurrent use: the suite's scenarios and the proxy's requests
// report to one Tally at once.
type Tally struct {
	versions []*Version
	mu       sync.Mutex
	counts   []Count
}

// verdict is what one version made of one answer.
type verdict struct {
	version int
	breaks  []Break
}

// Count is what a Tally found for one client version.
type Count struct {
	Version string `json:"version"`
	// Checked is how many answers the version reads were judged; Broken
	// how many of them break it.
	Checked int `json:"checked"`
	Broken  int `json:"broken"`
	// First holds the first distinct breaks, at most FirstBreaks, in the
	// order they were seen: the same field broken the same way by many
	// answers is listed once.
	First []Break `json:"first"`
}

// NewTally makes a Tally judging against versions.
func NewTally(versions []*Version) *Tally {
	t := &Tally{versions: versions, counts: make([]Count, len(versions))}
	for i, v := range versions {
		t.counts[i].Version = v.Name
	}
	return t
}

// Versions returns the versions the Tally judges against.
func (t *Tally) Versions() []*Version { return t.versions }

// Answer judges one answer: the request's method and path (relative to
// the API's base, unescaped), the status, the response header and body.
// A body that is not JSON is not judged: the document's check reports it.
func (t *Tally) Answer(method, path string, status int, header http.Header, body []byte) {
	if !isJSON(header) {
		return
	}
	t.AnswerBody(method, path, status, body)
}

// AnswerBody judges one answer known by its body alone (the proxy's
// exchanges keep no header): a body that does not parse as JSON is not
// judged.
func (t *Tally) AnswerBody(method, path string, status int, body []byte) {
	t.answer(method, path, status, func() (any, bool) {
		var decoded any
		return decoded, json.Unmarshal(body, &decoded) == nil
	})
}

// AnswerValue is AnswerBody for a body decoded already (as encoding/json
// decodes into any), for a caller that reads it for more than this.
func (t *Tally) AnswerValue(method, path string, status int, decoded any) {
	t.answer(method, path, status, func() (any, bool) { return decoded, true })
}

// Judgement is what the client versions made of one answer: counted
// with Count, as many times as the same answer comes (judging is a
// function of the answer alone).
type Judgement struct{ verdicts []verdict }

// Judge judges an answer decoded already (as encoding/json decodes into
// any) without counting it, for a caller that meets the same answer again
// and again (the proxy, a client polling a run that has not changed).
func (t *Tally) Judge(method, path string, status int, decoded any) Judgement {
	if t == nil || status < 200 || status > 299 {
		return Judgement{}
	}
	return Judgement{t.judge(method, path, status, decoded)}
}

// Count counts an answer as Judge judged it: Count(Judge(...)) is
// AnswerValue(...).
func (t *Tally) Count(j Judgement) {
	if t != nil {
		t.count(j.verdicts)
	}
}

// judge is what each version that calls the operation and reads the
// answer makes of it.
func (t *Tally) judge(method, path string, status int, decoded any) []verdict {
	var out []verdict
	for i, v := range t.versions {
		if _, calls := v.Calls(method, path); !calls {
			continue
		}
		if checked, breaks := v.Judge(method, path, status, decoded); checked {
			out = append(out, verdict{version: i, breaks: breaks})
		}
	}
	return out
}

// count counts verdicts.
func (t *Tally) count(vs []verdict) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, v := range vs {
		c := &t.counts[v.version]
		c.Checked++
		if len(v.breaks) > 0 {
			c.Broken++
			for _, b := range v.breaks {
				if len(c.First) < FirstBreaks && !slices.Contains(c.First, b) {
					c.First = append(c.First, b)
				}
			}
		}
	}
}

// answer judges an answer for each version that calls its operation,
// asking for the body only if one does.
func (t *Tally) answer(method, path string, status int, body func() (any, bool)) {
	if t == nil || status < 200 || status > 299 {
		return
	}
	var decoded any
	parsed := false
	for i, v := range t.versions {
		if _, calls := v.Calls(method, path); !calls {
			continue
		}
		if !parsed {
			var ok bool
			if decoded, ok = body(); !ok {
				return
			}
			parsed = true
		}
		checked, breaks := v.Judge(method, path, status, decoded)
		if !checked {
			continue
		}
		t.mu.Lock()
		c := &t.counts[i]
		c.Checked++
		if len(breaks) > 0 {
			c.Broken++
			for _, b := range breaks {
				if len(c.First) < FirstBreaks && !slices.Contains(c.First, b) {
					c.First = append(c.First, b)
				}
			}
		}
		t.mu.Unlock()
	}
}

// Reset forgets what the Tally found.
func (t *Tally) Reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range t.counts {
		t.counts[i] = Count{Version: t.counts[i].Version}
	}
}

// Counts returns a copy of what the Tally found so far, one Count per
// version in the order of its versions.
func (t *Tally) Counts() []Count {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Count, len(t.counts))
	for i, c := range t.counts {
		c.First = append([]Break{}, c.First...)
		out[i] = c
	}
	return out
}

func isJSON(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}
