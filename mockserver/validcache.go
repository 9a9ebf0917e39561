package mockserver

import (
	"strings"
	"sync"
)

// acceptedGETsMax bounds the verdict cache of a Server (Server.acceptedGETs),
// which remembers GET requests the OpenAPI validator has accepted, so the
// same request again (a client polling a run, a test suite listing the same
// page) skips the validator, which costs more than answering. Only
// acceptances are kept: a rejected request is validated every time, so its
// problem reads as before.
const acceptedGETsMax = 4096

// verdictCache is a bounded set of keys; when full it starts over.
type verdictCache struct {
	max  int
	mu   sync.RWMutex
	keys map[string]struct{}
}

func (c *verdictCache) has(key []byte) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.keys[string(key)] // looked up without making a string
	return ok
}

func (c *verdictCache) add(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys == nil || len(c.keys) >= c.max {
		c.keys = make(map[string]struct{}, 64)
	}
	c.keys[key] = struct{}{}
}

// getVerdictKey names everything the validator's verdict on a GET (or HEAD,
// validated as GET) request depends on: the operation and the raw query. The
// document declares no header parameters, security is checked elsewhere and
// a GET's body is never read. ok is false for requests not to remember.
// fixedPath says the route has no {…} segment, so the path names the
// operation whole (an events poll, a schedules listing).
//
// Two values are left out of the key because the document accepts any value
// of them that gets this far:
//   - the run id of GET /agent/runs/{runId}, a non-empty string in the
//     document, when it passes the stricter isRunID (as the pipeline also
//     checks before it validates);
//   - the value of a cursor of GET /agent/runs made of the characters of the
//     cursors this server issues, any string in the document.
func getVerdictKey(path, rawQuery string, fixedPath bool) (key string, ok bool) {
	b, ok := appendVerdictKey(nil, path, rawQuery, fixedPath)
	return string(b), ok
}

// appendVerdictKey appends getVerdictKey's key to b.
func appendVerdictKey(b []byte, path, rawQuery string, fixedPath bool) ([]byte, bool) {
	if len(rawQuery) > 1024 {
		return b, false
	}
	switch {
	case path == "/agent/runs":
		return append(append(b, "list?"...), withoutCursorValues(rawQuery)...), true
	case strings.HasPrefix(path, "/agent/runs/") && isRunID(path[len("/agent/runs/"):]):
		return append(append(b, "get?"...), rawQuery...), true
	case fixedPath:
		return append(append(append(append(b, "GET "...), path...), '?'), rawQuery...), true
	}
	return b, false
}

// withoutCursorValues blanks the values of cursor parameters that look like a
// cursor this server issues, keeping every other byte of the query.
func withoutCursorValues(rawQuery string) string {
	if !strings.Contains(rawQuery, "cursor=") {
		return rawQuery
	}
	parts := strings.Split(rawQuery, "&")
	for i, p := range parts {
		if v, ok := strings.CutPrefix(p, "cursor="); ok && cursorChars(v) {
			parts[i] = "cursor="
		}
	}
	return strings.Join(parts, "&")
}

// cursorChars reports whether s uses only the characters of an issued cursor
// (unpadded base64url and the dot between payload and signature).
func cursorChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
