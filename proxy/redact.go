package proxy

import (
	"net/url"
	"strings"

	"github.com/agentruns/agentruns/internal/scrub"
)

// What the proxy keeps and shows never holds a credential or a signature:
// no header is kept at all, a query parameter whose name says it carries a
// secret keeps its name only (package scrub holds the one list), a path
// outside the API (a signed download) keeps its first segments only, a
// URL quoted in a message loses its query and a bearer token its value.
// Names and messages are cut at keptText bytes: a 60 KB path is kept as
// its first bytes, not whole in every line that names it.

// keptText is the longest path, request name or message kept.
const keptText = 512

// redactPath keeps an API or control path (cut at keptText); any other
// path (a download whose path is its signature) keeps its first two
// segments.
func redactPath(p string) string {
	if strings.HasPrefix(p, "/agent") || strings.HasPrefix(p, "/__mock/") || p == "/openapi.yaml" {
		return cut(p, keptText)
	}
	parts := strings.SplitN(strings.TrimPrefix(p, "/"), "/", 3)
	if len(parts) < 3 {
		return cut(p, keptText)
	}
	return cut("/"+parts[0]+"/"+parts[1]+"/REDACTED", keptText)
}

// requestName is how a request is named in what the proxy keeps.
func requestName(method, apiPath string, q url.Values) string {
	s := cut(method, 32) + " " + redactPath(apiPath)
	if rq := scrub.Query(q); rq != "" {
		s += "?" + rq
	}
	return cut(s, keptText)
}

// redactText takes the secrets out of a message (scrub.Text) and cuts it
// at keptText.
func redactText(s string) string {
	return cut(scrub.Text(s), keptText)
}

// cut is s cut at n bytes, never inside a character, "…" saying so.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
