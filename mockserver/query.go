package mockserver

import (
	"net/url"
	"strings"
)

// maxQueryParams bounds the parameters of one query. The API's richest
// query (listing runs) has about twenty; net/http would drop the whole
// query, silently, past 10,000.
const maxQueryParams = 100

// checkQuery refuses a query the mock cannot read completely: a handler
// reading r.URL.Query() would otherwise see a filter, a limit or a cursor
// vanish (a bad %-escape, a ';' separator, too many parameters drop the
// whole query) and answer an unfiltered 200.
func checkQuery(raw string) *apiError {
	if raw == "" {
		return nil
	}
	if n := strings.Count(raw, "&") + 1; n > maxQueryParams {
		return errorf(codeInvalidRequest, "the query has %d parameters; the mock reads at most %d", n, maxQueryParams)
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
	}
	return nil
}
