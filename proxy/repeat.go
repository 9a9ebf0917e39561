package proxy

import (
	"hash/maphash"
	"strconv"
	"strings"
	"sync"

	"github.com/agentruns/agentruns/clientcheck"
	"github.com/agentruns/agentruns/drift"
	"github.com/agentruns/agentruns/openapi"
	"github.com/agentruns/agentruns/rules"
)

// A busy client asks the same thing again and again (a run polled until
// it changes, the first page of a listing), and gets the same bytes back.
// The checker remembers the latest such exchanges by everything their
// decoding, the document's verdict and drift depend on (keyParts): the
// same exchange again takes its decoded answer, the document's findings
// and its drift sightings from memory instead of decoding, validating and
// walking it again. All three are functions of those bytes alone, and
// nothing that reads them changes them. The rules, which depend on what
// came before, see every exchange.
//
// An exchange is found by a hash of its parts, then compared with the
// parts remembered, byte for byte: a page's key is tens of kilobytes, and
// building it as one string for every exchange cost more than the rest of
// the lookup.

// repeatsBytes bounds the keys remembered (the decoded values cost a few
// times as much); past it the memory starts over. An exchange of more
// than repeatMaxBytes is not remembered.
const (
	repeatsBytes    = 4 << 20
	repeatMaxBytes  = 64 << 10
	repeatsMaxCount = 1024
)

type repeats struct {
	seedOnce sync.Once
	seed     maphash.Seed
	mu       sync.Mutex
	seen     map[uint64]*repeat
	bytes    int
}

// repeat is what one exchange's bytes gave.
type repeat struct {
	key []byte // the parts it is remembered by, NUL-separated
	// hash is key's (repeats.hash), taken before the exchange's own
	// work, kept to remember the exchange once it is built.
	hash            uint64
	answer          any
	answerOK        bool
	answerAsWritten any
	// sightings are what drift saw in it, once walked; profiled is the
	// profile's mark that they are all in it (drift.Profile.AddAgain).
	walked    sync.Once
	sightings []drift.Sighting
	profiled  drift.ProfileMark
	// clients is what the client versions made of it, once judged.
	clientsJudged sync.Once
	clients       clientcheck.Judgement
	// verdicts are the document's findings, by the validator that judged.
	mu       sync.Mutex
	verdicts map[*openapi.Validator]*documentVerdict
}

// documentVerdict is what one document found in an exchange: the
// request's issues, whether the document routes it, and the answer's
// findings (none when it does not, or the operation is not served).
// Shared by every exchange that repeats it: never changed.
type documentVerdict struct {
	issues []string
	routed bool
	answer []rules.Violation
}

// keyParts calls part with each thing an exchange is remembered by, in
// order: the request line, the request's Content-Type and body, what the
// document's security check reads of its Authorization header (whether
// it has one, its scheme, whether a token follows: never the token), the
// status, the answer's Content-Type and body. It stops at the first part
// for which part returns false.
func keyParts(x *pending, body []byte, part func(string, []byte) bool) {
	auth := "none"
	if h, ok := x.header["Authorization"]; ok {
		scheme, token, _ := strings.Cut(strings.TrimSpace(strings.Join(h, ",")), " ")
		auth = scheme + "/" + strconv.FormatBool(strings.TrimSpace(token) != "") + "/" + strconv.Itoa(len(h))
	}
	for _, s := range []string{x.method, x.apiPath, x.rawQuery, x.header.Get("Content-Type"), auth, strconv.Itoa(x.status), x.respHeader.Get("Content-Type")} {
		if !part(s, nil) {
			return
		}
	}
	if part("", x.reqBody.bytes()) {
		part("", body)
	}
}

// lookup is what the exchange x answered with body gave before, or, the
// first time, a new repeat to fill and remember (fresh true); nil for an
// exchange too large to remember.
func (r *repeats) lookup(x *pending, body []byte) (rp *repeat, fresh bool) {
	if len(body)+len(x.reqBody.bytes()) > repeatMaxBytes {
		return nil, false
	}
	r.seedOnce.Do(func() { r.seed = maphash.MakeSeed() })
	var h maphash.Hash
	h.SetSeed(r.seed)
	keyParts(x, body, func(s string, b []byte) bool {
		h.WriteString(s)
		h.Write(b)
		h.WriteByte(0)
		return true
	})
	sum := h.Sum64()
	r.mu.Lock()
	rp = r.seen[sum]
	r.mu.Unlock()
	if rp != nil && rp.is(x, body) {
		return rp, false
	}
	return &repeat{hash: sum}, true
}

// is reports whether rp was remembered by x's parts.
func (rp *repeat) is(x *pending, body []byte) bool {
	rest, same := rp.key, true
	keyParts(x, body, func(s string, b []byte) bool {
		n := len(s) + len(b)
		if len(rest) <= n || rest[n] != 0 || string(rest[:len(s)]) != s || string(rest[len(s):n]) != string(b) {
			same = false
			return false
		}
		rest = rest[n+1:]
		return true
	})
	return same && len(rest) == 0
}

// remember keeps rp, once filled, as what x answered with body gives.
func (r *repeats) remember(rp *repeat, x *pending, body []byte) {
	keyParts(x, body, func(s string, b []byte) bool {
		rp.key = append(append(append(rp.key, s...), b...), 0)
		return true
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil || r.bytes+len(rp.key) > repeatsBytes || len(r.seen) >= repeatsMaxCount {
		r.seen, r.bytes = map[uint64]*repeat{}, 0
	}
	if _, ok := r.seen[rp.hash]; !ok {
		r.seen[rp.hash] = rp
		r.bytes += len(rp.key)
	}
}

// verdict is what validator v found in the exchange before; nil the
// first time.
func (rp *repeat) verdict(v *openapi.Validator) *documentVerdict {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return rp.verdicts[v]
}

// keepVerdict remembers what validator v found.
func (rp *repeat) keepVerdict(v *openapi.Validator, d *documentVerdict) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if rp.verdicts == nil {
		rp.verdicts = map[*openapi.Validator]*documentVerdict{}
	}
	rp.verdicts[v] = d
}
