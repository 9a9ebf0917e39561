package rules

// bounded is a map that forgets its oldest keys beyond a limit, so that a
// memory watching a server for days keeps constant size. Not safe for
// concurrent use; Memory locks around it.
type bounded[V any] struct {
	limit int
	m     map[string]V
	order []string // insertion order, a ring once full
	next  int
}

func newBounded[V any](limit int) *bounded[V] {
	return &bounded[V]{limit: limit, m: map[string]V{}}
}

func (b *bounded[V]) get(k string) (V, bool) {
	v, ok := b.m[k]
	return v, ok
}

func (b *bounded[V]) put(k string, v V) {
	if _, ok := b.m[k]; ok {
		b.m[k] = v
		return
	}
	if len(b.order) < b.limit {
		b.order = append(b.order, k)
	} else {
		delete(b.m, b.order[b.next])
		b.order[b.next] = k
		b.next = (b.next + 1) % b.limit
	}
	b.m[k] = v
}

// del forgets k; its slot in the ring is reused when it comes round.
func (b *bounded[V]) del(k string) { delete(b.m, k) }
