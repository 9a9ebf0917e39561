package explore

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Curl is a curl command line that sends c again to the server at
// baseURL (the API's base, e.g. https://app.warp.dev/api/v1), every part
// shell-quoted. The key is read from the environment ($WARP_API_KEY, or
// $OTHER_API_KEY for the other team's calls), never written out.
func Curl(c Call, baseURL string) string {
	if c.Clock > 0 {
		return "# then " + spelledDuration(c.Clock) + " on the mock's clock (POST /__mock/clock/advance in the exploration's session)"
	}
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

// spelledDuration is d as a scenario's step says it passes: "1 second
// passes", "30 seconds pass", "1 millisecond passes".
func spelledDuration(d time.Duration) string {
	n, unit := int64(d/time.Millisecond), "millisecond"
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"}} {
		if d >= u.d && d%u.d == 0 {
			n, unit = int64(d/u.d), u.name
			break
		}
	}
	if n == 1 {
		return "1 " + unit + " passes"
	}
	return fmt.Sprintf("%d %ss pass", n, unit)
}

// shellQuote quotes s for a POSIX shell: in single quotes, nothing is
// expanded, and a single quote ends the quoting, is escaped, and opens
// it again.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
