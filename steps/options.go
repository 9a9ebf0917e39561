package steps

import (
	"slices"

	"github.com/agentruns/agentruns/report"
	"github.com/agentruns/agentruns/suiteconfig"
)

// options are the scenarios that run only when the suite is given an
// option: without it they are skipped, saying which flag would run them.
var options = []struct {
	tag     string
	need    report.Need
	missing func(suiteconfig.Config) bool
}{
	{"@two-callers", report.Need{Flag: "--other-api-key", What: "one team never sees, fetches nor cancels another team's runs, schedules, conversations or artifacts, nor uses its environments"},
		func(c suiteconfig.Config) bool { return c.OtherAPIKey == "" }},
	{"@failing-prompt", report.Need{Flag: "--failing-prompt", What: "a run that fails says why, with an error code, and its last event reports the failure"},
		func(c suiteconfig.Config) bool { return c.FailingPrompt == "" }},
	{"@plan-edge", report.Need{Flag: "--identity-plan", What: "the team's plan allows exactly as many agent identities as it says"},
		func(c suiteconfig.Config) bool { return c.IdentityPlan <= 0 }},
	{"@schedule-ticks", report.Need{Flag: "--wait-for-ticks", What: "a schedule fires on its cron as the server's clock runs: a replaced cron, a paused schedule"},
		func(c suiteconfig.Config) bool { return !c.WaitForTicks }},
}

// Avoidable names the option that would have run a skipped scenario with
// these tags; nil when none would, because the server itself rules the
// scenario out (it needs the mock's control API, which the server lacks).
func (su *Suite) Avoidable(tags []string) *report.Need {
	if su.control == nil && (slices.Contains(tags, "@mock-control") || slices.Contains(tags, "@mock-only")) {
		return nil
	}
	for _, o := range options {
		if slices.Contains(tags, o.tag) && o.missing(su.cfg) {
			need := o.need
			return &need
		}
	}
	if slices.Contains(tags, newestClientTag) && !su.newest.Judged {
		return &report.Need{Flag: "--newest-client", What: "what the newest official client (" + newestClientName + ") calls beyond the published document"}
	}
	return nil
}
