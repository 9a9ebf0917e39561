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

// checkQuery refuses a query the mock cannot read completely: a handler
// reading r.URL.Query() would otherwise see a filter, a limit or a cursor
// vanish (a bad %-escape, a ';' separator, too many parameters drop the
// whole query) and answer an unfiltered 200.
func checkQuery(raw string) *apiError {
	if raw == "" {
		return nil
	}
	n := strings.Count(raw, "&") + 1
	if n > maxQueryParams {
		return errorf(codeInvalidRequest, "the query has %d parameters; the mock reads at most %d", n, maxQueryParams)
	}
	var names map[string]struct{} // counted only when there may be too many
	if n > maxQueryNames {
		names = make(map[string]struct{}, maxQueryNames+1)
	}
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		key, value, _ := strings.Cut(part, "=")
		name, err := url.QueryUnescape(key)
		if err != nil {
			return errorf(codeInvalidRequest, "query parameter %q: its name is not valid percent-encoding", truncate(key, 80))
		}
		if strings.Contains(key, ";") {
			return errorf(codeInvalidRequest, "query parameter %q: ';' does not separate parameters, '&' does", truncate(key, 80))
		}
		if strings.Contains(value, ";") {
			return errorf(codeInvalidRequest, "query parameter %s: ';' does not separate parameters, '&' does (encode it as %%3B in a value)", truncate(name, 80))
		}
		if _, err := url.QueryUnescape(value); err != nil {
			return errorf(codeInvalidRequest, "query parameter %s: its value %q is not valid percent-encoding", truncate(name, 80), truncate(value, 80))
		}
		if names != nil {
			names[name] = struct{}{}
		}
	}
	if len(names) > maxQueryNames {
		return errorf(codeInvalidRequest, "the query has %d names; the mock reads at most %d (a name repeated counts once)", len(names), maxQueryNames)
	}
	return nil
}
