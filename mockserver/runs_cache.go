package mockserver

import (
	"hash/maphash"
	"sync/atomic"

	"github.com/agentruns/agentruns/mockserver/store"
)

// The JSON of runs recently shown, kept so that showing one again is a
// copy. Writing a run's JSON (runJSON.appendJSON: escaping, timestamps, the
// usage figures) was most of the CPU a page of runs cost, and the same runs
// are shown again and again: a client polling a run, a dashboard or a suite
// listing the same pages.
//
// An entry can never be stale because its key is everything the JSON is
// written from that may change once a run is stored (runKey): a View's
// snapshot and status message, and the one field of the timeline appendJSON
// reads itself. The rest of a store.Run never changes once stored (see
// store.Run; a follow-up, a cancel or a forced state changes the timeline
// and the messages only), and the key holds the *store.Run, so while an
// entry lives its run cannot be freed and another run take its address.
// TestRunCacheIsFresh holds cached output to fresh output across random
// changes.
//
// The cache is bounded whatever the store holds: runCacheSlots entries, each
// at most runCacheMaxJSON bytes of JSON, about 9.5 MiB at most and 3 MiB
// for runs of a typical size. Its entries keep their runs alive, so a
// reset or a closed mock session empties it (clear): otherwise the runs it
// dropped would outlive it until their slots were reused. A session the
// store evicts when idle is left to that bound: at most runCacheSlots runs.
const (
	runCacheSlots   = 2048 // a power of two, at least 2
	runCacheMaxJSON = 4 << 10
)

// runCache is a two-way cache: a run goes to one of a pair of slots,
// chosen by its address, replacing its own older JSON, else an empty slot,
// else either. Entries are never changed once stored, so readers need no
// lock.
type runCache struct {
	seed  maphash.Seed
	slots []atomic.Pointer[cachedRun] // len is a power of two
	turn  atomic.Uint32               // picks the slot a full pair gives up
}

type cachedRun struct {
	key  runKey
	json []byte
}

// runKey is what a run's JSON depends on beyond the run's unchanging
// fields. It is compared with ==, so a field that cannot be compared fails
// to compile rather than being skipped.
type runKey struct {
	run      *store.Run
	snap     store.Snapshot
	msg      msgKey
	linkBase string
	// execution is the run's count of earlier executions, which decides
	// whether run_time is shown (runTime reads it from the timeline).
	execution int32
}

// msgKey is a status message by value: the pointer alone could be reused
// with other contents.
type msgKey struct {
	present                 bool
	message, errorCode      string
	retryable, hasRetryable bool
}

func newRunCache(slots int) *runCache {
	return &runCache{seed: maphash.MakeSeed(), slots: make([]atomic.Pointer[cachedRun], slots)}
}

func keyOf(v store.View, linkBase string) runKey {
	k := runKey{run: v.Run, snap: v.Snap, linkBase: linkBase, execution: v.Run.Timeline.Execution}
	if m := v.Msg; m != nil {
		k.msg = msgKey{present: true, message: m.Message, errorCode: m.ErrorCode}
		if m.Retryable != nil {
			k.msg.hasRetryable, k.msg.retryable = true, *m.Retryable
		}
	}
	return k
}

// appendRun appends runJSON{v, linkBase}.appendJSON's output to b, from
// the cache when it holds it.
func (c *runCache) appendRun(b []byte, v store.View, linkBase string) []byte {
	k := keyOf(v, linkBase)
	pair := c.slots[maphash.Comparable(c.seed, v.Run)&uint64(len(c.slots)-2):][:2]
	a, z := pair[0].Load(), pair[1].Load()
	if a != nil && a.key == k {
		return append(b, a.json...)
	}
	if z != nil && z.key == k {
		return append(b, z.json...)
	}
	start := len(b)
	b = runJSON{v, linkBase}.appendJSON(b)
	n := len(b) - start
	if n > runCacheMaxJSON {
		return b
	}
	slot := &pair[c.turn.Add(1)&1]
	switch {
	case a == nil || a.key.run == v.Run:
		slot = &pair[0]
	case z == nil || z.key.run == v.Run:
		slot = &pair[1]
	}
	js := make([]byte, n)
	copy(js, b[start:])
	slot.Store(&cachedRun{key: k, json: js})
	return b
}

// cachedRunJSON is a run's JSON written through the cache.
type cachedRunJSON struct {
	runJSON
	cache *runCache
}

func (v cachedRunJSON) appendJSON(b []byte) []byte {
	return v.cache.appendRun(b, v.View, v.linkBase)
}

// clear empties the cache, so that it keeps no run a reset or a closed
// mock session has dropped. Other sessions' runs are written afresh on
// their next showing.
func (c *runCache) clear() {
	if c == nil {
		return
	}
	for i := range c.slots {
		c.slots[i].Store(nil)
	}
}
