package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/agentruns/agentruns/rules"
)

// The JSON helpers are the rules package's, so that the suite and the
// validating proxy read a JSON answer the same way.
var (
	// lookup follows a dotted path ("agent_config.model_id") into a JSON
	// object; a number steps into an array ("message_ids.0").
	lookup = rules.Lookup
	// str is a JSON value as a string: strings as they are, null and
	// absent as "", anything else in JSON.
	str = rules.Str
	// show is a JSON value for messages: absent values say so.
	show = rules.Show
)

// setPath sets a dotted path in a JSON object, making objects on the way.
func setPath(doc map[string]any, path string, v any) {
	keys := strings.Split(path, ".")
	for _, k := range keys[:len(keys)-1] {
		next, ok := doc[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			doc[k] = next
		}
		doc = next
	}
	doc[keys[len(keys)-1]] = v
}

// tableValue turns a table cell into a JSON value: a cell written as a JSON
// object or array is that value, anything else is a string.
func tableValue(cell string) (any, error) {
	t := strings.TrimSpace(cell)
	if strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		var v any
		if err := json.Unmarshal([]byte(t), &v); err != nil {
			return nil, fmt.Errorf("table value %s is not valid JSON: %w", t, err)
		}
		return v, nil
	}
	return cell, nil
}

// contains reports whether got holds everything in want: every key of an
// object (recursively), every element of an array, any other value equal.
// The path of the first difference is returned.
func contains(want, got any, path string) (string, bool) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path, false
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, ok := contains(w[k], g[k], path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path, false
		}
		for i := range w {
			if p, ok := contains(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return "", true
	default:
		return path, reflect.DeepEqual(want, got)
	}
}

// parseQuery reads "a=b&c=d" as written in a feature, without unescaping, so
// that values such as timestamps can be written as they are.
func parseQuery(q string) url.Values {
	v := url.Values{}
	for _, part := range strings.Split(q, "&") {
		if part == "" {
			continue
		}
		k, val, _ := strings.Cut(part, "=")
		v.Add(k, val)
	}
	return v
}

// parseNames reads "alpha", "alpha and beta", "alpha, beta and gamma" or
// "no runs".
func parseNames(s string) []string {
	s = strings.TrimSpace(s)
	if s == "no runs" {
		return []string{}
	}
	var names []string
	for _, part := range strings.Split(strings.ReplaceAll(s, " and ", ", "), ",") {
		if p := strings.Trim(strings.TrimSpace(part), `"`); p != "" {
			names = append(names, p)
		}
	}
	return names
}

var placeholder = regexp.MustCompile(`\{([^{}"]+)\}`)

// resolve replaces the placeholders of a feature's text:
//
//	{label}                a config name unique to the scenario
//	{unknown}              a run id no server has
//	{their run}            the run another team created (tenancy.go)
//	{creator of alpha}     the creator uid of run alpha
//	{state of alpha}       the terminal state run alpha was seen ended in
//	{between alpha and beta}  an instant between the creation of alpha and beta
//	{created_at of alpha}  alpha's created_at, exactly as the server wrote it
//	{an hour after the creation of alpha}  that instant
//	{a model}, {another model}, {an environment}, {another environment},
//	{a skill}, {another skill}  references the server offers (offered.go)
//	{updated_at of the run}  the run's updated_at as last fetched, exactly as
//	                       the server wrote it
func (s *scenario) resolve(ctx context.Context, text string) (string, error) {
	var firstErr error
	out := placeholder.ReplaceAllStringFunc(text, func(m string) string {
		key := m[1 : len(m)-1]
		if v, ok := s.cache[key]; ok {
			return v
		}
		v, err := s.placeholderValue(ctx, key)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("working out %s: %w", m, err)
			}
			return m
		}
		s.cache[key] = v
		return v
	})
	return out, firstErr
}

// expand replaces the placeholders that need no request: {label} and
// {unknown}.
func (s *scenario) expand(text string) string {
	return placeholder.ReplaceAllStringFunc(text, func(m string) string {
		if v, ok := s.localValue(m[1 : len(m)-1]); ok {
			return v
		}
		return m
	})
}

func (s *scenario) localValue(key string) (string, bool) {
	switch key {
	case "label":
		return s.label, true
	case "unknown":
		return s.unknownID, true
	case "their run":
		if s.tenancy.theirs != nil {
			return s.tenancy.theirs.id, true
		}
	}
	if v, ok := s.cache[key]; ok { // a value remembered by an earlier step
		return v, true
	}
	return "", false
}

func (s *scenario) placeholderValue(ctx context.Context, key string) (string, error) {
	if v, ok := s.localValue(key); ok {
		return v, nil
	}
	if v, ok, err := s.offered(ctx, key); ok {
		return v, err
	}
	switch {
	case strings.HasPrefix(key, "creator of "):
		doc, err := s.detailsOf(ctx, strings.TrimPrefix(key, "creator of "))
		if err != nil {
			return "", err
		}
		uid := str(mustLookup(doc, "creator.uid"))
		if uid == "" {
			return "", fmt.Errorf("the run reports no creator.uid; got creator %s", show(mustLookup(doc, "creator")))
		}
		return uid, nil
	case strings.HasPrefix(key, "state of "):
		return s.endedState(strings.TrimPrefix(key, "state of "))
	case strings.HasPrefix(key, "created_at of "):
		doc, err := s.detailsOf(ctx, strings.TrimPrefix(key, "created_at of "))
		if err != nil {
			return "", err
		}
		if _, err := timestamp(doc, "created_at"); err != nil {
			return "", err
		}
		return str(doc["created_at"]), nil
	case key == "updated_at of the run":
		if s.current == nil || s.current.details == nil {
			return "", errors.New("the run has not been fetched yet")
		}
		if _, err := timestamp(s.current.details, "updated_at"); err != nil {
			return "", err
		}
		return str(s.current.details["updated_at"]), nil
	case strings.HasPrefix(key, "an hour after the creation of "):
		t, err := s.createdAt(ctx, strings.TrimPrefix(key, "an hour after the creation of "))
		if err != nil {
			return "", err
		}
		return t.Add(time.Hour).UTC().Format(time.RFC3339Nano), nil
	case strings.HasPrefix(key, "between "):
		a, b, ok := strings.Cut(strings.TrimPrefix(key, "between "), " and ")
		if !ok {
			return "", fmt.Errorf("want {between <run> and <run>}")
		}
		return s.instantBetween(ctx, a, b) // precision.go
	}
	return "", fmt.Errorf("unknown placeholder")
}

func mustLookup(doc map[string]any, path string) any {
	v, _ := lookup(doc, path)
	return v
}

// detailsOf fetches the details of the run with this nickname once.
func (s *scenario) detailsOf(ctx context.Context, nick string) (map[string]any, error) {
	r, err := s.mine.named(nick)
	if err != nil {
		return nil, err
	}
	if r.details != nil {
		return r.details, nil
	}
	return s.fetch(ctx, r)
}

// createdAt is the creation time of the run with this nickname.
func (s *scenario) createdAt(ctx context.Context, nick string) (time.Time, error) {
	doc, err := s.detailsOf(ctx, nick)
	if err != nil {
		return time.Time{}, err
	}
	return timestamp(doc, "created_at")
}

// timestamp reads an RFC 3339 field of a run.
func timestamp(doc map[string]any, path string) (time.Time, error) {
	v, ok := lookup(doc, path)
	s, isString := v.(string)
	if !ok || !isString {
		return time.Time{}, fmt.Errorf("expected %q to be an RFC 3339 timestamp, got %s", path, show(v))
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("expected %q to be an RFC 3339 timestamp, got %q", path, s)
	}
	return t, nil
}

func pathEscape(s string) string { return url.PathEscape(s) }
