// Package scrub takes the secrets out of what the API answered, for what
// the proxy keeps and shows and what its recorder writes, without changing
// the answer's form: whatever is scrubbed still decodes as the API's types
// and still follows the document.
package scrub

import (
	"net/url"
	"regexp"
	"strings"
)

// secretName is a field whose value is a secret, whatever it looks like,
// or holds secrets: a map of headers sent to an MCP server, environment
// variables, the secrets a harness logs in with.
var secretName = regexp.MustCompile(`(?i)token|secret|passw|api[_-]?key|^key$|private[_-]?key|authorization|credential|signature|cookie|^(headers|env|environment|environment_variables)$`)

// Redacted stands in for a secret string.
const Redacted = "REDACTED"

// Value copies a JSON value without its secrets, keeping every value's
// type, so that what is written decodes as the API's types and replays as
// the document says: under a name that says secret, an object keeps its
// keys and a list its length, and every string in them becomes Redacted;
// numbers, booleans and null stay (no credential is one), and so does a
// string the document lists among the values of a field of that name (a
// published constant such as credential_strategy's CREATOR is no secret).
// Anywhere else, a URL loses its query.
func Value(v any) any { return under(v, "", false) }

func under(v any, name string, secret bool) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, val := range v {
			out[k] = under(val, k, secret || secretName.MatchString(k))
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = under(e, name, secret)
		}
		return out
	case string:
		switch {
		case !secret:
			return URL(v)
		case published(name, v):
			return v
		}
		return Redacted
	}
	return v
}

// URL drops the query and fragment of a URL (a signature, a token);
// anything else is returned as it is.
func URL(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return s
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String()
}
