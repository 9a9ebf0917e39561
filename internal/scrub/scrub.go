// Package scrub takes the secrets out of what the API answered, for what
// the proxy keeps and shows and what its recorder writes, without changing
// the answer's form: whatever is scrubbed still decodes as the API's types
// and still follows the document.
//
// It holds the project's one list of what is secret (names.go): every
// place that writes traffic down (drift and its overlay, the profile, the
// proxy's summary, journal and reports, the runs the dashboard shows, a
// recording) asks it, so a name added here is kept out of all of them.
package scrub

import (
	"net/url"
	"regexp"
	"strings"
)

// Redacted stands in for a secret string.
const Redacted = "REDACTED"

// Value copies a JSON value without its secrets, keeping every value's
// type, so that what is written decodes as the API's types and replays as
// the document says: under a name that says secret (SecretName), at any
// depth, an object keeps its keys and a list its length, and every string
// in them becomes Redacted; numbers, booleans and null stay (no credential
// is one), and so does a string the document lists among the values of a
// field of that name (a published constant such as credential_strategy's
// CREATOR is no secret). Anywhere else a string loses what Text takes out
// of free text: a URL's query, a bearer token.
func Value(v any) any { return under(v, "", false) }

// At is Value for v found under the members names, outermost first (the
// location of a member deep in an answer): everything under a secret
// name is secret, however deep.
func At(v any, names ...string) any {
	secret := false
	for _, n := range names {
		secret = secret || SecretName(n)
	}
	last := ""
	if len(names) > 0 {
		last = names[len(names)-1]
	}
	return under(v, last, secret || SecretName(last))
}

// Location splits a location as drift and the validator name one,
// "body.runs[].agent_config.harness_auth_secrets.raw", "body.runs[2].state"
// or "query.token", into its member names, for At. A name with a dot in
// it comes out as two, each asked on its own: a secret word in either
// still counts.
func Location(loc string) []string {
	loc = index.ReplaceAllString(loc, ".")
	var out []string
	for _, p := range strings.Split(loc, ".") {
		if p != "" && p != "*" {
			out = append(out, p)
		}
	}
	return out
}

var index = regexp.MustCompile(`\[[^\]]*\]`)

func under(v any, name string, secret bool) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, val := range v {
			out[k] = under(val, k, secret || SecretName(k))
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
			return Text(v)
		case published(name, v):
			return v
		}
		return Redacted
	}
	return v
}

// URL drops the query, fragment and user of a URL (a signature, a token),
// absolute or a path ("/downloads/a?token=…"); anything else is returned
// as it is.
func URL(s string) string {
	if !strings.Contains(s, "://") {
		if strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//") {
			path, _, _ := strings.Cut(s, "?")
			path, _, _ = strings.Cut(path, "#")
			return path
		}
		return s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return s
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	u.ForceQuery = false
	return u.String()
}

var (
	// a URL in text, absolute or a path, with a query or a fragment
	queryInText = regexp.MustCompile(`((?:[a-zA-Z][a-zA-Z0-9+.-]*://|(?:^|[\s"'(<=,])/)[^\s"'<>?#]*)[?#][^\s"'<>]*`)
	// credentials written into a URL: scheme://user:password@host
	userInText = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^\s/@"'<>]+@`)
	// a Bearer credential quoted in text, or a Basic one (base64, long
	// enough that no word of prose is taken for one)
	schemeInText = regexp.MustCompile(`\b((?i:bearer)\s+)[A-Za-z0-9\-._~+/]{6,}=*|\b(Basic\s+)[A-Za-z0-9+/]{16,}=*`)
)

// Text takes the secrets out of free text (a message, a prompt, a quoted
// error): every URL in it, absolute or a path, loses its query and
// fragment (a whole-string URL loses them without a trace, so that it is
// still a URL; one in text keeps "?REDACTED" to say something was there),
// credentials written into a URL go, and so does the credential after
// "Bearer" or "Basic".
func Text(s string) string {
	if !strings.ContainsAny(s, "?#@") && !strings.Contains(s, "Basic") && !strings.Contains(strings.ToLower(s), "bearer") {
		return s
	}
	if !strings.ContainsAny(s, " \t\n\"'<>") {
		if u := URL(s); u != s {
			return userInText.ReplaceAllString(u, "$1")
		}
	}
	s = userInText.ReplaceAllString(s, "$1")
	s = queryInText.ReplaceAllString(s, "${1}?"+Redacted)
	return schemeInText.ReplaceAllString(s, "${1}${2}"+Redacted)
}
