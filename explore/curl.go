package explore

import (
	"net/http"
	"strings"
)

// Curl is a curl command line that sends c again to the server at
// baseURL (the API's base, e.g. https://app.warp.dev/api/v1), every part
// shell-quoted. The key is read from the environment ($WARP_API_KEY, or
// $OTHER_API_KEY for the other team's calls), never written out.
func Curl(c Call, baseURL string) string {
	key := "$WARP_API_KEY"
	if c.Team == OtherTeam {
		key = "$OTHER_API_KEY"
	}
	target := strings.TrimRight(baseURL, "/") + c.Path
	if len(c.Query) > 0 {
		target += "?" + c.Query.Encode()
	}
	// --globoff: brackets and braces in a URL are sent, not expanded.
	args := []string{"curl", "-sS", "--globoff"}
	switch c.Method {
	case http.MethodGet:
	case http.MethodHead:
		args = append(args, "--head")
	default:
		args = append(args, "-X", c.Method)
	}
	args = append(args, shellQuote(target),
		"-H", `"Authorization: Bearer `+key+`"`, // double quotes: the shell fills in the key
		"-H", shellQuote("Accept: application/json"))
	if c.Body != nil {
		args = append(args, "-H", shellQuote("Content-Type: application/json"), "--data-binary", shellQuote(string(c.Body)))
	}
	return strings.Join(args, " ")
}

// shellQuote quotes s for a POSIX shell: in single quotes, nothing is
// expanded, and a single quote ends the quoting, is escaped, and opens
// it again.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
