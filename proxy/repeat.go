package proxy

import (
	"strconv"
	"sync"

	"github.com/agentruns/agentruns/drift"
)

// A busy client asks the same thing again and again (a run polled until
// it changes, the first page of a listing), and gets the same bytes back.
// The checker remembers the latest such exchanges by everything their
// decoding and drift depend on (repeatKey): the same exchange again takes
// its decoded answer and its drift sightings from memory instead of
// decoding and walking it again. Both are functions of those bytes alone,
// and nothing that reads a decoded answer changes it. The rules, which
// depend on what came before, see every exchange.

// repeatsBytes bounds the keys remembered (the decoded values cost a few
// times as much); past it the memory starts over. An exchange of more
// than repeatMaxBytes is not remembered.
const (
	repeatsBytes    = 4 << 20
	repeatMaxBytes  = 64 << 10
	repeatsMaxCount = 1024
)

type repeats struct {
	mu    sync.Mutex
	seen  map[string]*repeat
	bytes int
}

// repeat is what one exchange's bytes gave.
type repeat struct {
	answer   any
	answerOK bool
	// sightings are what drift saw in it, once walked.
	walked    sync.Once
	sightings []drift.Sighting
}

// repeatKey names an exchange by everything its decoding and drift depend
// on, NUL-separated; ok is false for one too large to remember.
func repeatKey(x *pending, body []byte) (string, bool) {
	req := x.reqBody.bytes()
	if len(body)+len(req) > repeatMaxBytes {
		return "", false
	}
	var b []byte
	for _, part := range []string{x.method, x.apiPath, x.rawQuery, x.header.Get("Content-Type"), strconv.Itoa(x.status), x.respHeader.Get("Content-Type")} {
		b = append(append(b, part...), 0)
	}
	b = append(append(b, req...), 0)
	return string(append(b, body...)), true
}

// get is what the exchange named key gave before, nil the first time.
func (r *repeats) get(key string) *repeat {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[key]
}

// put remembers what the exchange named key gave.
func (r *repeats) put(key string, rp *repeat) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil || r.bytes+len(key) > repeatsBytes || len(r.seen) >= repeatsMaxCount {
		r.seen, r.bytes = map[string]*repeat{}, 0
	}
	if _, ok := r.seen[key]; !ok {
		r.seen[key] = rp
		r.bytes += len(key)
	}
}
