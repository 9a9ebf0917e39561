package mockserver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentruns/agentruns/mockserver/store"
)

// Limits of a page, as the real service has them.
const (
	defaultLimit = 20
	maxLimit     = 500
)

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

// The parameters of a listing that take one value, each under its names
// (listParamNames), in the order a conflict among them is reported.
const (
	pLimit = iota
	pCursor
	pName
	pModelID
	pCreator
	pSource
	pEnvironmentID
	pScheduleID
	pSkillSpec
	pArtifactType
	pExecutionLocation
	pAncestorID
	pAutomationID
	pExecutor
	pFactoryUID
	pQ
	pSortBy
	pSortOrder
	pCreatedAfter
	pCreatedBefore
	pUpdatedAfter
	listParamCount
)

var listParamNames = [listParamCount][]string{
	pLimit: {"limit"}, pCursor: {"cursor"}, pName: {"name", "config_name"}, pModelID: {"model_id"},
	pCreator: {"creator"}, pSource: {"source"}, pEnvironmentID: {"environment_id"}, pScheduleID: {"schedule_id"},
	pSkillSpec: {"skill_spec", "skill"}, pArtifactType: {"artifact_type"}, pExecutionLocation: {"execution_location"},
	pAncestorID: {"ancestor_run_id"}, pAutomationID: {"automation_id"}, pExecutor: {"executor"},
	pFactoryUID: {"factory_uid"}, pQ: {"q"}, pSortBy: {"sort_by"}, pSortOrder: {"sort_order"},
	pCreatedAfter: {"created_after"}, pCreatedBefore: {"created_before"}, pUpdatedAfter: {"updated_after"},
}

// listParamOf is the index of each name of listParamNames.
var listParamOf = func() map[string]int {
	m := map[string]int{}
	for i, names := range listParamNames {
		for _, n := range names {
			m[n] = i
		}
	}
	return m
}()

// instantParam reads the date-time a listing bounds its runs by; zero when
// none is given. (A helper rather than a loop over the three bounds' fields:
// a loop holding their addresses made every listing's query escape to the
// heap, 384 bytes a page.)
func instantParam(name, raw string) (time.Time, error) {
	if raw == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, raw)
	if err != nil {
		return time.Time{}, queryError(name, "must be an RFC 3339 date-time such as 2026-01-02T15:04:05Z, not %q", raw)
	}
	return t, nil
}

// listParams reads the single-valued parameters of a listing in one pass
// over the names the query gives (a page asks with one or two), rather than
// looking each of them up under every name, and refuses a value of any
// parameter that is not UTF-8. A conflict (two values under one name or its
// other name) is reported by single, in listParamNames' order, so the
// first conflict named does not depend on the map's order.
func listParams(v url.Values) (got [listParamCount]string, err error) {
	var from [listParamCount]string
	conflict := false
	for name, vals := range v {
		for _, s := range vals {
			if !utf8.ValidString(s) {
				return got, queryError(name, "is not valid UTF-8")
			}
		}
		i, ok := listParamOf[name]
		if !ok {
			continue
		}
		for _, s := range vals {
			if from[i] != "" && s != got[i] {
				conflict = true
			}
			got[i], from[i] = s, name
		}
	}
	if conflict {
		for _, names := range listParamNames {
			if _, err := single(v, names...); err != nil {
				return got, err
			}
		}
	}
	return got, nil
}

// parseListQuery reads and checks a GET /agent/runs query whose cursor, if
// any, sg signed: the store's ListQuery, and the hash of its filters and
// order that a cursor carries.
func parseListQuery(v url.Values, secret cursorSigner) (store.ListQuery, uint64, error) {
	// The service's default order: the runs updated last first.
	q := store.ListQuery{Limit: defaultLimit, SortBy: "updated_at", Desc: true}
	got, err := listParams(v)
	if err != nil {
		return q, 0, err
	}
	limit, rawCursor, q1 := got[pLimit], got[pCursor], got[pQ]
	sortBy, sortOrder := got[pSortBy], got[pSortOrder]
	after, before, updAfter := got[pCreatedAfter], got[pCreatedBefore], got[pUpdatedAfter]
	q.Name, q.ModelID, q.Creator, q.Source = got[pName], got[pModelID], got[pCreator], got[pSource]
	q.EnvironmentID, q.ScheduleID, q.SkillSpec = got[pEnvironmentID], got[pScheduleID], got[pSkillSpec]
	q.ArtifactType, q.ExecutionLocation, q.AncestorID = got[pArtifactType], got[pExecutionLocation], got[pAncestorID]
	q.AutomationID, q.Executor, q.FactoryUID = got[pAutomationID], got[pExecutor], got[pFactoryUID]
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 || n > maxLimit {
			return q, 0, queryError("limit", "must be a whole number from 1 to %d, not %q", maxLimit, limit)
		}
		q.Limit = n
	}
	for _, s := range v["state"] {
		for _, one := range strings.Split(s, ",") {
			st := State(strings.TrimSpace(one))
			if !st.Valid() {
				return q, 0, queryError("state", "%q is not a run state", one)
			}
			if q.States == nil {
				q.States = map[State]bool{}
			}
			q.States[st] = true
		}
	}
	if q.Source != "" && !validSource(q.Source) {
		return q, 0, queryError("source", "%q is not a run source", q.Source)
	}
	if q.ArtifactType != "" && !store.ArtifactTypes[q.ArtifactType] && q.ArtifactType != store.ArtifactExternalReference {
		return q, 0, queryError("artifact_type", "must be PLAN, PULL_REQUEST, SCREENSHOT, FILE or EXTERNAL_REFERENCE, not %q", q.ArtifactType)
	}
	if q.Metadata, err = metadataFilter(v); err != nil {
		return q, 0, err
	}
	if l := q.ExecutionLocation; l != "" && l != "LOCAL" && l != "REMOTE" {
		return q, 0, queryError("execution_location", "must be LOCAL or REMOTE, not %q", l)
	}
	if q.CreatedAfter, err = instantParam("created_after", after); err != nil {
		return q, 0, err
	}
	if q.CreatedBefore, err = instantParam("created_before", before); err != nil {
		return q, 0, err
	}
	if q.UpdatedAfter, err = instantParam("updated_after", updAfter); err != nil {
		return q, 0, err
	}
	switch sortBy {
	case "", "updated_at":
	case "created_at", "title", "agent":
		q.SortBy = sortBy
	default:
		return q, 0, queryError("sort_by", "must be updated_at, created_at, title or agent, not %q", sortBy)
	}
	switch sortOrder {
	case "", "desc":
	case "asc":
		q.Desc = false
	default:
		return q, 0, queryError("sort_order", "must be asc or desc, not %q", sortOrder)
	}
	q.Terms = strings.Fields(strings.ToLower(q1))
	hash := fingerprint(&q)
	if rawCursor != "" {
		c, err := decodeCursor(rawCursor, secret)
		if err != nil {
			return q, 0, queryError("cursor", "%v", err)
		}
		if c.Hash != hash {
			return q, 0, queryError("cursor", "it was issued for a different query; keep the filters and order the same while paging")
		}
		q.After = &store.Position{Generation: c.Generation, Key: c.Key, Seq: c.Seq}
	}
	return q, hash, nil
}

// fingerprint hashes every parameter but the page position and size.
func fingerprint(q *store.ListQuery) uint64 {
	states := make([]string, 0, len(q.States))
	for s := range q.States {
		states = append(states, string(s))
	}
	sort.Strings(states)
	// Every value goes in with its length first, so no two different queries
	// feed the hash the same bytes; one buffer and one Write keep it cheap
	// on every page.
	var buf [256]byte // most queries fit: no allocation
	b := buf[:0]
	str := func(b []byte, s string) []byte { return append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	b = binary.AppendUvarint(b, uint64(len(states)))
	for _, s := range states {
		b = str(b, s)
	}
	for _, s := range []string{q.Name, q.ModelID, q.Creator, q.Source, q.EnvironmentID, q.ScheduleID, q.SkillSpec, q.ArtifactType,
		q.ExecutionLocation, q.AncestorID, q.SortBy, q.AutomationID, q.Executor, q.FactoryUID} {
		b = str(b, s)
	}
	keys := make([]string, 0, len(q.Metadata))
	for k := range q.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = str(b, k)
		b = str(b, q.Metadata[k])
	}
	for _, t := range []time.Time{q.CreatedAfter, q.CreatedBefore, q.UpdatedAfter} {
		b = binary.AppendVarint(b, t.Unix())
		b = binary.AppendVarint(b, int64(t.Nanosecond()))
	}
	b = binary.AppendUvarint(b, uint64(len(q.Terms)))
	for _, s := range q.Terms {
		b = str(b, s)
	}
	if q.Desc {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	// FNV-1a, 64 bits (hash/fnv's New64a, without its allocation): the
	// same value for the same query across versions, so a cursor saved in
	// a state file stays good.
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// maxMetadataFilters is how many metadata[key]=value pairs one listing
// may give.
const maxMetadataFilters = 5

// metadataKeyPattern is what a metadata key may be.
var metadataKeyPattern = regexp.MustCompile(`^[a-zA-Z0-9._-]{1,64}$`)

// metadataFilter reads the metadata[key]=value pairs of a listing.
func metadataFilter(v url.Values) (map[string]string, error) {
	var out map[string]string
	for name, vals := range v {
		if name == "metadata" {
			return nil, queryError("metadata", "give each pair as metadata[key]=value")
		}
		key, ok := strings.CutPrefix(name, "metadata[")
		if !ok {
			continue
		}
		key, ok = strings.CutSuffix(key, "]")
		if !ok || !metadataKeyPattern.MatchString(key) {
			return nil, queryError(name, "a metadata key is 1 to 64 characters of a-z, A-Z, 0-9, '.', '_' and '-', written metadata[key]=value")
		}
		val, err := single(v, name)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = map[string]string{}
		}
		out[key] = val
		_ = vals
	}
	if len(out) > maxMetadataFilters {
		return nil, queryError("metadata", "%d pairs; at most %d may be given", len(out), maxMetadataFilters)
	}
	return out, nil
}

// sources are the RunSourceType values: the published document's, then
// those of oz-agent-sdk 1.4.0-alpha.6.
var sources = map[string]bool{"LINEAR": true, "API": true, "SLACK": true, "LOCAL": true, "SCHEDULED_AGENT": true,
	"WEB_APP": true, "GITHUB_ACTION": true, "CLOUD_MODE": true, "CLI": true,
	"JIRA": true, "SELF_IMPROVEMENT": true, "GITHUB_WEBHOOK": true, "GITLAB_WEBHOOK": true, "AUTOFIX": true, "RUN_SCORER": true, "ORCHESTRATION": true}

func validSource(s string) bool { return sources[s] }

// cursor is how a client carries a store.Position: the position, with the
// hash of the query that issued it, signed with the key of the mock
// session's incarnation that issued it (store.Session.CursorKey). So a
// cursor is good only in the mock session that issued it, until that mock
// session is reset or closed; the key is saved with the state file, so a
// cursor outlives a restart with --state-file.
type cursor struct {
	Generation int64  `json:"g"`
	Hash       uint64 `json:"h"`
	Key        string `json:"k,omitempty"`
	Seq        int64  `json:"s"`
	// Session and Incarnation name, without giving them away, the mock
	// session and the key that issued the cursor, so a cursor that does
	// not check out is refused for what it is rather than as altered.
	Session     string `json:"m,omitempty"`
	Incarnation string `json:"i,omitempty"`
}

// cursorSigner signs and checks the cursors of one mock session.
type cursorSigner struct {
	key         []byte
	sessionName string
}

// Cursors are signed so a client cannot forge positions; the signature is
// shortened because a cursor only needs to resist accidents and tampering,
// not long-term attack.
const macLen = 12

func cursorOf(p store.Position, hash uint64, sg cursorSigner) cursor {
	return cursor{Generation: p.Generation, Hash: hash, Key: p.Key, Seq: p.Seq,
		Session: tag("session:", []byte(sg.sessionName)), Incarnation: tag("key:", sg.key)}
}

// tag names a value without giving it away: the first bytes of its digest.
func tag(kind string, v []byte) string { return string(appendTag(nil, kind, v)) }

// appendTag appends tag(kind, v), hashing from a buffer on the stack.
func appendTag(b []byte, kind string, v []byte) []byte {
	var buf [128]byte
	sum := sha256.Sum256(append(append(buf[:0], kind...), v...))
	return base64.RawURLEncoding.AppendEncode(b, sum[:6])
}

// encodeCursor is the cursor as page_info.next_cursor shows it: its JSON
// and its signature, each in unpadded URL-safe base64, joined by a dot.
// Every page that has a next one makes one, so it is written without
// encoding/json or crypto/hmac's allocations; the bytes are the same
// (runs_query_internal_test.go holds it to json.Marshal and hmac).
func encodeCursor(c cursor, sg cursorSigner) string {
	var buf [512]byte
	payload := appendCursorJSON(buf[:0], c)
	var out [1024]byte
	b := base64.RawURLEncoding.AppendEncode(out[:0], payload)
	mac := cursorMAC(sg.key, payload)
	b = base64.RawURLEncoding.AppendEncode(append(b, '.'), mac[:macLen])
	return string(b)
}

// appendCursorJSON appends what json.Marshal gives for c.
func appendCursorJSON(b []byte, c cursor) []byte {
	o := openObject(b)
	o.key("g")
	o.b = strconv.AppendInt(o.b, c.Generation, 10)
	o.key("h")
	o.b = strconv.AppendUint(o.b, c.Hash, 10)
	o.strOmit("k", c.Key)
	o.key("s")
	o.b = strconv.AppendInt(o.b, c.Seq, 10)
	o.strOmit("m", c.Session)
	o.strOmit("i", c.Incarnation)
	return o.close()
}

// cursorMAC is HMAC-SHA256 (RFC 2104) of payload under key, computed
// from buffers on the stack.
func cursorMAC(key, payload []byte) [sha256.Size]byte {
	const block = 64
	if len(key) > block {
		k := sha256.Sum256(key)
		key = k[:]
	}
	var pad [block]byte
	copy(pad[:], key)
	var inner [block + 512]byte
	msg := inner[:0]
	for _, k := range pad {
		msg = append(msg, k^0x36)
	}
	innerSum := sha256.Sum256(append(msg, payload...))
	var outer [block + sha256.Size]byte
	for i, k := range pad {
		outer[i] = k ^ 0x5c
	}
	copy(outer[block:], innerSum[:])
	return sha256.Sum256(outer[:])
}

var (
	errBadCursor          = errors.New("not a cursor this server issued; use page_info.next_cursor unchanged")
	errCursorOtherSession = errors.New("the cursor was issued in another mock session (" + SessionHeader + "); page with the session header you listed with")
	errCursorIncarnation  = errors.New("the cursor was issued before this mock session was reset or closed (or before a restart without --state-file); start again from the first page")
)

func decodeCursor(s string, sg cursorSigner) (cursor, error) {
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
	want := cursorMAC(sg.key, payload)
	if !hmac.Equal(mac, want[:macLen]) {
		// Signed with another key: a well-formed cursor of another mock
		// session, or of this one before it was reset or closed.
		var other cursor
		if json.Unmarshal(payload, &other) == nil && other.Session != "" && other.Incarnation != "" &&
			other.Incarnation != tag("key:", sg.key) { // this key's own cursor, altered, is just bad
			if other.Session != tag("session:", []byte(sg.sessionName)) {
				return c, errCursorOtherSession
			}
			return c, errCursorIncarnation
		}
		return c, errBadCursor
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return c, errBadCursor
	}
	return c, nil
}
