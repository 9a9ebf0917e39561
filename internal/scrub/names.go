package scrub

import (
	"net/url"
	"regexp"
	"strings"
)

// The one list of what is secret. A name is read as words (split at "_",
// "-", "." and a change to upper case: "harness_auth_secrets",
// "awsAccessKeyId", "X-Api-Key"), so that a secret word anywhere in a
// name makes it secret and a word that merely contains one (author,
// monkey, design) does not.

// secretWords: a member or a query parameter with one of these words in
// its name holds a secret.
var secretWords = set(
	"token", "tokens", "secret", "secrets", "password", "passwords", "passwd", "pwd", "passphrase", "passcode",
	"credential", "credentials", "creds", "authorization", "auth", "bearer", "jwt", "cookie", "cookies",
	"signature", "apikey", "privatekey", "accesskey", "secretkey", "sessionkey", "otp", "pin",
)

// secretPairs: two words that together name a secret ("access key"), one
// of them being harmless alone.
var secretPairs = set(
	"api key", "access key", "private key", "secret key", "session key", "signing key", "encryption key",
	"client key", "ssh key", "deploy key", "master key", "account key", "storage key", "shared key",
	"env vars", "environment variables",
)

// secretWholeNames: names secret only as a whole: a map of headers sent to
// an MCP server, environment variables, a bare key.
var secretWholeNames = set("key", "keys", "headers", "env", "environment", "environment_variables", "env_vars", "envs", "vars")

// paramWords: a query parameter is secret with any member word, or one of
// these (a signed URL's signature and expiry, an OAuth code).
var paramWords = set("sig", "key", "code", "expires", "expiry", "nonce", "hmac")

// SecretName reports whether a member's name says its value is secret.
func SecretName(name string) bool {
	if name == "" {
		return false
	}
	if secretWholeNames[strings.ToLower(name)] {
		return true
	}
	words := wordsOf(name)
	for i, w := range words {
		if secretWords[w] {
			return true
		}
		if i > 0 && secretPairs[words[i-1]+" "+w] {
			return true
		}
	}
	return false
}

// SecretParam reports whether a URL query parameter's name says its value
// is secret.
func SecretParam(name string) bool {
	if SecretName(name) {
		return true
	}
	for _, w := range wordsOf(name) {
		if paramWords[w] {
			return true
		}
	}
	return false
}

// Query is q encoded with the value of every secret parameter replaced by
// Redacted, its name kept.
func Query(q url.Values) string {
	if len(q) == 0 {
		return ""
	}
	out := make(url.Values, len(q))
	for k, vs := range q {
		if SecretParam(k) {
			out[k] = []string{Redacted}
			continue
		}
		clean := make([]string, len(vs))
		for i, v := range vs {
			clean[i] = Text(v)
		}
		out[k] = clean
	}
	return out.Encode()
}

var wordBreak = regexp.MustCompile(`[a-z0-9][A-Z]|[A-Z][A-Z][a-z]`)

// wordsOf splits a name into lower-case words.
func wordsOf(name string) []string {
	// A change to upper case starts a word: awsAccessKeyId, HTTPToken.
	name = wordBreak.ReplaceAllStringFunc(name, func(m string) string { return m[:1] + "_" + m[1:] })
	return strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
