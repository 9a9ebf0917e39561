package mockserver

import "strings"

// acceptedGETsMax bounds the verdict cache of a Server (Server.acceptedGETs,
// an openapi.Accepted), which remembers GET requests the OpenAPI validator
// has accepted, by appendVerdictKey's key.
const acceptedGETsMax = 4096

// appendVerdictKey appends to b the key that names everything the
// validator's verdict on a GET (or HEAD, validated as GET) request depends
// on: the operation and the raw query. The document declares no header
// parameters, security is checked elsewhere and a GET's body is never read.
// ok is false for requests not to remember.
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
