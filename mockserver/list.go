package mockserver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentruns/agentruns/fixtures"
)

// ListRunsResponse is one page of runs.
type ListRunsResponse struct {
	Runs     []RunItem `json:"runs"`
	PageInfo PageInfo  `json:"page_info"`
}

// PageInfo says whether another page follows and how to ask for it.
type PageInfo struct {
	HasNextPage bool   `json:"has_next_page"`
	NextCursor  string `json:"next_cursor,omitempty"`
}

// Limits of a page, as the real service has them.
const (
	defaultLimit = 20
	maxLimit     = 500
)

// listQuery is a parsed and checked GET /agent/runs query.
type listQuery struct {
	limit  int
	cursor *cursor
	// filters
	states                                    map[State]bool
	name, modelID, creator, source            string
	environmentID, scheduleID, skillSpec      string
	artifactType                              string
	createdAfter, createdBefore, updatedAfter time.Time
	terms                                     []string // of q, lower case; all must appear
	// order
	sortBy string
	desc   bool
	// hash identifies the filters and order, so a cursor is only used with
	// the query that issued it.
	hash uint64
}

// queryError names the parameter that is wrong.
func queryError(param, format string, args ...any) *apiError {
	return errorf(codeInvalidRequest, "query parameter %s: %s", param, fmt.Sprintf(format, args...))
}

// single returns a parameter that may be given once, under either of its
// names; the same value twice is harmless, two different values are not.
func single(v url.Values, names ...string) (string, error) {
	var got, from string
	for _, n := range names {
		for _, s := range v[n] {
			if from != "" && s != got {
				return "", queryError(n, "conflicts with %s=%q given before", from, got)
			}
			got, from = s, n
		}
	}
	return got, nil
}

func parseListQuery(v url.Values, secret []byte) (listQuery, error) {
	q := listQuery{limit: defaultLimit, sortBy: "created_at", desc: true}
	for name, vals := range v {
		for _, s := range vals {
			if !utf8.ValidString(s) {
				return q, queryError(name, "is not valid UTF-8")
			}
		}
	}
	var err error
	str := func(dst *string, names ...string) {
		if err == nil {
			*dst, err = single(v, names...)
		}
	}
	var limit, rawCursor, q1, sortBy, sortOrder, after, before, updAfter string
	str(&limit, "limit")
	str(&rawCursor, "cursor")
	str(&q.name, "name", "config_name")
	str(&q.modelID, "model_id")
	str(&q.creator, "creator")
	str(&q.source, "source")
	str(&q.environmentID, "environment_id")
	str(&q.scheduleID, "schedule_id")
	str(&q.skillSpec, "skill_spec", "skill")
	str(&q.artifactType, "artifact_type")
	str(&q1, "q")
	str(&sortBy, "sort_by")
	str(&sortOrder, "sort_order")
	str(&after, "created_after")
	str(&before, "created_before")
	str(&updAfter, "updated_after")
	if err != nil {
		return q, err
	}
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 || n > maxLimit {
			return q, queryError("limit", "must be a whole number from 1 to %d, not %q", maxLimit, limit)
		}
		q.limit = n
	}
	for _, s := range v["state"] {
		for _, one := range strings.Split(s, ",") {
			st := State(strings.TrimSpace(one))
			if !st.valid() {
				return q, queryError("state", "%q is not a run state", one)
			}
			if q.states == nil {
				q.states = map[State]bool{}
			}
			q.states[st] = true
		}
	}
	if q.source != "" && !validSource(q.source) {
		return q, queryError("source", "%q is not a run source", q.source)
	}
	if q.artifactType != "" && q.artifactType != "PLAN" && q.artifactType != "PULL_REQUEST" {
		return q, queryError("artifact_type", "must be PLAN or PULL_REQUEST, not %q", q.artifactType)
	}
	for _, d := range []struct {
		name, raw string
		dst       *time.Time
	}{{"created_after", after, &q.createdAfter}, {"created_before", before, &q.createdBefore}, {"updated_after", updAfter, &q.updatedAfter}} {
		if d.raw == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, d.raw)
		if err != nil {
			return q, queryError(d.name, "must be an RFC 3339 date-time such as 2026-01-02T15:04:05Z, not %q", d.raw)
		}
		*d.dst = t
	}
	switch sortBy {
	case "", "created_at":
	case "updated_at", "title", "agent":
		q.sortBy = sortBy
	default:
		return q, queryError("sort_by", "must be created_at, updated_at, title or agent, not %q", sortBy)
	}
	switch sortOrder {
	case "", "desc":
	case "asc":
		q.desc = false
	default:
		return q, queryError("sort_order", "must be asc or desc, not %q", sortOrder)
	}
	q.terms = strings.Fields(strings.ToLower(q1))
	q.hash = q.fingerprint()
	if rawCursor != "" {
		c, err := decodeCursor(rawCursor, secret)
		if err != nil {
			return q, queryError("cursor", "%v", err)
		}
		if c.Hash != q.hash {
			return q, queryError("cursor", "it was issued for a different query; keep the filters and order the same while paging")
		}
		q.cursor = &c
	}
	return q, nil
}

// fingerprint hashes every parameter but the page position and size.
func (q listQuery) fingerprint() uint64 {
	states := make([]string, 0, len(q.states))
	for s := range q.states {
		states = append(states, string(s))
	}
	sort.Strings(states)
	// Every value goes in with its length first, so no two different queries
	// feed the hash the same bytes; one buffer and one Write keep it cheap
	// on every page.
	b := make([]byte, 0, 256)
	str := func(s string) []byte { return append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	b = binary.AppendUvarint(b, uint64(len(states)))
	for _, s := range states {
		b = str(s)
	}
	for _, s := range []string{q.name, q.modelID, q.creator, q.source, q.environmentID, q.scheduleID, q.skillSpec, q.artifactType, q.sortBy} {
		b = str(s)
	}
	for _, t := range []time.Time{q.createdAfter, q.createdBefore, q.updatedAfter} {
		b = binary.AppendVarint(b, t.Unix())
		b = binary.AppendVarint(b, int64(t.Nanosecond()))
	}
	b = binary.AppendUvarint(b, uint64(len(q.terms)))
	for _, s := range q.terms {
		b = str(s)
	}
	if q.desc {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}

var sources = map[string]bool{"LINEAR": true, "API": true, "SLACK": true, "LOCAL": true, "SCHEDULED_AGENT": true,
	"WEB_APP": true, "GITHUB_ACTION": true, "CLOUD_MODE": true, "CLI": true}

func validSource(s string) bool { return sources[s] }

// cursor is a position in one query's ordering: after the run with Seq (and
// Key, for orders other than creation time). Generation ties it to the
// world's contents since the last reset.
type cursor struct {
	Generation int64  `json:"g"`
	Hash       uint64 `json:"h"`
	Key        string `json:"k,omitempty"`
	Seq        int64  `json:"s"`
}

// Cursors are signed so a client cannot forge positions; the signature is
// shortened because a cursor only needs to resist accidents and tampering,
// not long-term attack.
const macLen = 12

func encodeCursor(c cursor, secret []byte) string {
	payload, _ := json.Marshal(c) // a struct of strings and integers always marshals
	m := hmac.New(sha256.New, secret)
	m.Write(payload)
	return base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:macLen])
}

var errBadCursor = errors.New("not a cursor this server issued; use page_info.next_cursor unchanged")

func decodeCursor(s string, secret []byte) (cursor, error) {
	var c cursor
	p, sig, ok := strings.Cut(s, ".")
	if !ok || len(s) > 512 {
		return c, errBadCursor
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(p)
	mac, err2 := base64.RawURLEncoding.DecodeString(sig)
	if err1 != nil || err2 != nil {
		return c, errBadCursor
	}
	m := hmac.New(sha256.New, secret)
	m.Write(payload)
	if !hmac.Equal(mac, m.Sum(nil)[:macLen]) {
		return c, errBadCursor
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return c, errBadCursor
	}
	return c, nil
}

// matches reports whether a run passes every filter of q at the given snapshot.
func (q *listQuery) matches(r *run, snap snapshot) bool {
	cfg := r.config
	if cfg == nil {
		cfg = &AgentConfig{}
	}
	switch {
	case q.states != nil && !q.states[snap.state],
		q.name != "" && cfg.Name != q.name,
		q.modelID != "" && cfg.ModelID != q.modelID,
		q.creator != "" && r.creator.UID != q.creator,
		q.source != "" && r.source != q.source,
		q.environmentID != "" && cfg.EnvironmentID != q.environmentID,
		q.skillSpec != "" && cfg.SkillSpec != q.skillSpec,
		q.scheduleID != "" && (r.schedule == nil || r.schedule.ID != q.scheduleID),
		!q.createdAfter.IsZero() && !r.createdAt.After(q.createdAfter),
		!q.createdBefore.IsZero() && !r.createdAt.Before(q.createdBefore),
		!q.updatedAfter.IsZero() && !snap.updatedAt.After(q.updatedAfter):
		return false
	}
	if q.artifactType != "" && (snap.state != Succeeded || !contains(r.artifactTypes, q.artifactType)) {
		return false
	}
	if len(q.terms) > 0 {
		text := strings.ToLower(r.title + "\n" + r.prompt + "\n" + cfg.SkillSpec)
		for _, t := range q.terms {
			if !strings.Contains(text, t) {
				return false
			}
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// list answers one page. In creation order, the default, it walks the runs
// (or the name index) from the cursor and stops once the page is full, so a
// page costs what it holds rather than what the store holds; runs created
// meanwhile sort before the first page and never shift later ones. Other
// orders depend on derived values and sort every match.
func (w *world) list(p *fixtures.Principal, q listQuery, secret []byte) (runPage, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if q.cursor != nil && q.cursor.Generation != w.generation {
		return runPage{}, queryError("cursor", "the mock was reset after this cursor was issued")
	}
	now := w.clock.Now()
	candidates := w.runs
	if q.name != "" {
		candidates = w.byName[q.name]
	}
	var page []*run
	if q.sortBy == "created_at" {
		page = q.walkCreated(p, candidates, now)
	} else {
		page = q.sortAll(p, candidates, now)
	}
	resp := runPage{runs: make([]runView, 0, min(len(page), q.limit))}
	for i, r := range page {
		if i == q.limit {
			last := page[i-1]
			resp.info = PageInfo{HasNextPage: true, NextCursor: encodeCursor(cursor{
				Generation: w.generation, Hash: q.hash, Key: q.sortKey(last, now), Seq: last.seq}, secret)}
			break
		}
		resp.runs = append(resp.runs, r.view(now, w.cfg.sessionLinkBase))
	}
	return resp, nil
}

// walkCreated collects up to limit+1 matches in creation order.
func (q *listQuery) walkCreated(p *fixtures.Principal, runs []*run, now time.Time) []*run {
	out := make([]*run, 0, min(q.limit+1, 64))
	step, i := 1, 0
	if q.desc {
		step, i = -1, len(runs)-1
	}
	if c := q.cursor; c != nil {
		// runs are in seq order: find the first one past the cursor.
		i = sort.Search(len(runs), func(k int) bool { return runs[k].seq > c.Seq })
		if q.desc {
			i = sort.Search(len(runs), func(k int) bool { return runs[k].seq >= c.Seq }) - 1
		}
	}
	for ; i >= 0 && i < len(runs) && len(out) <= q.limit; i += step {
		r := runs[i]
		// Creation times only grow with seq, so the time bounds end the walk.
		if q.desc && !q.createdAfter.IsZero() && !r.createdAt.After(q.createdAfter) ||
			!q.desc && !q.createdBefore.IsZero() && !r.createdAt.Before(q.createdBefore) {
			break
		}
		if r.team == p.Team && q.matches(r, r.tl.at(now)) {
			out = append(out, r)
		}
	}
	return out
}

func (q *listQuery) sortKey(r *run, now time.Time) string {
	switch q.sortBy {
	case "updated_at":
		return formatTime(r.tl.at(now).updatedAt)
	case "title":
		return strings.ToLower(r.title)
	case "agent":
		if r.config != nil {
			return r.config.Name
		}
		return ""
	}
	return ""
}

// sortAll collects every match, sorts by the key and then by seq, and keeps
// up to limit+1 after the cursor.
func (q *listQuery) sortAll(p *fixtures.Principal, runs []*run, now time.Time) []*run {
	type keyed struct {
		key string
		r   *run
	}
	var all []keyed
	for _, r := range runs {
		if r.team == p.Team && q.matches(r, r.tl.at(now)) {
			all = append(all, keyed{q.sortKey(r, now), r})
		}
	}
	// less is the page order; equal keys fall back to seq, so it is total.
	less := func(ak string, as int64, bk string, bs int64) bool {
		switch {
		case ak != bk:
			return ak < bk != q.desc
		case as != bs:
			return as < bs != q.desc
		}
		return false
	}
	sort.Slice(all, func(i, j int) bool { return less(all[i].key, all[i].r.seq, all[j].key, all[j].r.seq) })
	start := 0
	if c := q.cursor; c != nil {
		start = sort.Search(len(all), func(i int) bool { return less(c.Key, c.Seq, all[i].key, all[i].r.seq) })
	}
	out := make([]*run, 0, q.limit+1)
	for i := start; i < len(all) && len(out) <= q.limit; i++ {
		out = append(out, all[i].r)
	}
	return out
}
