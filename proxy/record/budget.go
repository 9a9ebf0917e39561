package record

import "hash/fnv"

// HeldBytes bounds the schedules, environments, agents and models a
// Recorder keeps, as RunBytes bounds the runs: each counted as its JSON
// as answered plus heldOverhead, all of them together. Past it a new one
// is counted in its kind's dropped count, not kept; a later look too
// large to keep leaves the one before. An answer reaches the recorder
// whole (up to the 4 MiB the proxy checks), so without it a server
// listing new environments of a few MiB each would grow the proxy
// without end.
const HeldBytes = 16 << 20

// heldOverhead is what keeping one more thing costs beyond its JSON
// (its entry in the maps, its id again), so that many tiny ones are
// bounded too.
const heldOverhead = 256

// hold makes room for what key names, n bytes of JSON, in place of what
// it held: false, and nothing changed, when that would pass HeldBytes;
// r.mu is held.
func (r *Recorder) hold(key string, n int) bool {
	n += heldOverhead + len(key)
	had := r.held[key]
	if r.heldBytes-had+n > HeldBytes {
		return false
	}
	r.heldBytes += n - had
	r.held[key] = n
	return true
}

// release gives back what key held; r.mu is held.
func (r *Recorder) release(key string) {
	r.heldBytes -= r.held[key]
	delete(r.held, key)
}

// tally counts distinct ids (a run seen past the budget on every poll is
// one run left out), keeping an 8-byte digest of each rather than the id,
// which may be long; past tallyMax digests every sighting counts, so the
// count may then be over but is never under.
type tally struct {
	seen map[uint64]struct{}
	n    int
}

const tallyMax = 100_000

func (t *tally) add(id string) {
	h := fnv.New64a()
	h.Write([]byte(id))
	d := h.Sum64()
	if _, ok := t.seen[d]; ok {
		return
	}
	if t.seen == nil {
		t.seen = map[uint64]struct{}{}
	}
	if len(t.seen) < tallyMax {
		t.seen[d] = struct{}{}
	}
	t.n++
}
