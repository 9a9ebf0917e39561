package proxy

import (
	"net/url"
	"regexp"
	"strings"
)

// What the proxy keeps and shows never holds a credential or a signature:
// no header is kept at all, a query parameter whose name says it carries a
// secret keeps its name only, a path outside the API (a signed download)
// keeps its first segments only, and a URL quoted in a message loses its
// query.

var secretParam = regexp.MustCompile(`(?i)sig|token|key|secret|credential|auth|password|expires`)

// redactQuery is q with the values of secret-looking parameters replaced.
func redactQuery(q url.Values) string {
	if len(q) == 0 {
		return ""
	}
	out := url.Values{}
	for k, vs := range q {
		if secretParam.MatchString(k) {
			out[k] = []string{"REDACTED"}
			continue
		}
		out[k] = vs
	}
	return out.Encode()
}

// redactPath keeps an API or control path whole; any other path (a
// download whose path is its signature) keeps its first two segments.
func redactPath(p string) string {
	if strings.HasPrefix(p, "/agent") || strings.HasPrefix(p, "/__mock/") || p == "/openapi.yaml" {
		return p
	}
	parts := strings.SplitN(strings.TrimPrefix(p, "/"), "/", 3)
	if len(parts) < 3 {
		return p
	}
	return "/" + parts[0] + "/" + parts[1] + "/REDACTED"
}

// requestName is how a request is named in what the proxy keeps.
func requestName(method, apiPath string, q url.Values) string {
	s := method + " " + redactPath(apiPath)
	if rq := redactQuery(q); rq != "" {
		s += "?" + rq
	}
	return s
}

var urlQuery = regexp.MustCompile(`(https?://[^\s"'?]+)\?[^\s"']*`)

// redactText removes the query of every URL in a message: a signed
// download URL quoted by a finding keeps its address, not its signature.
func redactText(s string) string {
	return urlQuery.ReplaceAllString(s, "$1?REDACTED")
}
