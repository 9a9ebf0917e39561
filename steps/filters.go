package steps

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/agentruns/agentruns/rules"
)

// Every run a filtered listing shows must match every filter of the query
// (they combine with AND). Like the rules of invariants.go, this is checked
// on every page the suite lists, in every mode, so that a server that drops
// a filter fails on its own runs too, not only on the runs a scenario made
// for the purpose.
//
// The rule is the rules package's (rules.ListingMatchesQuery), which the
// validating proxy holds live traffic to as well: which filters are held,
// that time bounds are strict, and the tolerance for a timestamp shown to
// fewer digits than the server keeps. (The scenarios tagged
// @exact-timestamps test the bounds at the very instant; see
// list_rules.feature.)

// shownUnit is the unit of the last digit a timestamp shows.
var shownUnit = rules.ShownUnit

// matchesFilters checks one listed run against the filters of q.
func matchesFilters(q url.Values, run map[string]any) error {
	return violations("run "+str(run["run_id"]), rules.ListingMatchesQuery(q, []map[string]any{run}))
}

// violations turns the rules a subject broke into the suite's error, one
// line a rule.
func violations(what string, vs []rules.Violation) error {
	errs := make([]error, 0, len(vs))
	for _, v := range vs {
		errs = append(errs, violationError(what, v))
	}
	return errors.Join(errs...)
}

// violationError says what a subject did against a rule in the suite's
// words: "run X has agent_config.model_id "gpt-5", but the listing asked for
// model_id=claude-4-sonnet".
func violationError(what string, v rules.Violation) error {
	field := v.Field
	if i := strings.Index(field, "]."); i >= 0 {
		field = field[i+2:] // body.runs[3].state -> state
	} else {
		field = strings.TrimPrefix(field, "body.")
	}
	switch v.Rule {
	case rules.ListingMatchesFilters:
		return fmt.Errorf("%s has %s %s, but the listing asked for %s", what, field, v.Got, v.Expected)
	case rules.StatesMoveForward:
		return fmt.Errorf("%s moved backwards: expected %s, got %s", what, v.Expected, v.Got)
	case rules.TerminalRunNeverChanges:
		return fmt.Errorf("%s changed after it ended: expected %s to stay %s, got %s", what, field, v.Expected, v.Got)
	}
	return fmt.Errorf("%s: expected %s %s, got %s [%s]", what, field, v.Expected, v.Got, v.Rule)
}
