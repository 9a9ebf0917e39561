package mockserver

import (
	"net/url"
	"strings"
)

// A query is bounded by the names it uses and by its parameters in all.
// The API's richest query (listing runs) has about twenty names; an events
// poll repeats run_ids for up to 500 runs, so repeats of a name count
// towards the total only. net/http would drop the whole query, silently,
// past 10,000 parameters.
const (
	maxQueryNames  = 100
	maxQueryParams = 1000
)

// parseQuery reads a request's query once, for the whole request: the
// pipeline hands the values to the handler (call.query), and no handler
// reads r.URL.Query() again. It refuses a query the mock cannot read
// completely, where url.ParseQuery would see a filter, a limit or a cursor
// vanish (a bad %-escape, a ';' separator, too many parameters drop the
// whole query) and the handler answer an unfiltered 200. What it returns
// for a query it accepts is what url.ParseQuery returns, without an error;
// an empty query is nil, which reads as empty.
func parseQuery(raw string) (url.Values, *apiError) {
	if raw == "" {
		return nil, nil
	}
	n := strings.Count(raw, "&") + 1
	if n > maxQueryParams {
		return nil, errorf(codeInvalidRequest, "the query has %d parameters; the mock reads at most %d", n, maxQueryParams)
	}
	values := make(url.Values, min(n, maxQueryNames+1))
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		key, value, _ := strings.Cut(part, "=")
		name, err := url.QueryUnescape(key)
		if err != nil {
			return nil, errorf(codeInvalidRequest, "query parameter %q: its name is not valid percent-encoding", truncate(key, 80))
		}
		if strings.Contains(key, ";") {
			return nil, errorf(codeInvalidRequest, "query parameter %q: ';' does not separate parameters, '&' does", truncate(key, 80))
		}
		if strings.Contains(value, ";") {
			return nil, errorf(codeInvalidRequest, "query parameter %s: ';' does not separate parameters, '&' does (encode it as %%3B in a value)", truncate(name, 80))
		}
		unescaped, err := url.QueryUnescape(value)
		if err != nil {
			return nil, errorf(codeInvalidRequest, "query parameter %s: its value %q is not valid percent-encoding", truncate(name, 80), truncate(value, 80))
		}
		values[name] = append(values[name], unescaped)
	}
	if len(values) > maxQueryNames {
		return nil, errorf(codeInvalidRequest, "the query has %d names; the mock reads at most %d (a name repeated counts once)", len(values), maxQueryNames)
	}
	return values, nil
}
