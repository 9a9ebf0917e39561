package runner

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/agentruns/agentruns/report"
	"github.com/agentruns/agentruns/suiteconfig"
)

// The summary is what a run of the command agentruns-contract prints last,
// on stderr, whatever the report's format: the counts, the causes of the
// failures, what the runs cost, what was not checked and which option
// would check it, what was skipped and what failed, and the client
// versions' table.

// Summarise tells people what ran, what was not checked and why, and what
// failed; scenarios skipped or failed with the same message are told once.
func Summarise(w io.Writer, res Result, cfg suiteconfig.Config) {
	if len(res.Scenarios) == 0 {
		return
	}
	passed, failed, skipped := res.Count()
	interrupted := ""
	if n := len(res.Interrupted()); n > 0 {
		interrupted = fmt.Sprintf(", %d interrupted", n)
	}
	fmt.Fprintf(w, "\n%d scenarios: %d passed, %d failed, %d skipped%s in %s (%s, seed %d)\n",
		len(res.Scenarios), passed, failed, skipped, interrupted, res.Duration.Round(time.Millisecond), res.Report.Mode, res.Seed)
	newest := res.NewestClient.Lines()
	if !res.NewestClient.Judged {
		// What the server does not serve, and whom that breaks, comes
		// first: the verdict below is the published document's.
		for _, line := range newest {
			fmt.Fprintln(w, line)
		}
		newest = nil
	}
	failures := res.Report.FailureGroups()
	for _, g := range failures {
		if g.Cause == nil {
			break // the groups with a cause come first
		}
		fmt.Fprintf(w, "CAUSE   %s failed from %s\n        %s\n        %s\n", plural(len(g.Scenarios), "scenario"), g.Cause,
			reportNames(g.Scenarios), strings.ReplaceAll(g.Example(), "\n", "\n        "))
	}
	for _, line := range newest { // served or promised: after the causes, which lead
		fmt.Fprintln(w, line)
	}
	if cfg.ReadOnly {
		fmt.Fprintln(w, "read-only: only GET and HEAD were sent; scenarios tagged @creates-runs or @writes were left out")
	} else {
		runsSummary(w, res.Report.Runs)
	}
	unchecked := res.Report.Unchecked()
	var flags []string
	for _, u := range unchecked {
		if u.Flag == "--max-runs" && res.Report.Runs.Budget > 0 {
			flags = append(flags, fmt.Sprintf("a --max-runs larger than %d", res.Report.Runs.Budget))
		} else if u.Flag != "--newest-client" { // the first lines said why: not the server's contract unless it promises it
			flags = append(flags, u.Flag)
		}
		fmt.Fprintf(w, "NOT CHECKED %s (%s skipped): pass %s %s to check it\n",
			u.What, plural(len(u.Scenarios), "scenario"), u.Flag, flagArgument[u.Flag])
	}
	var others []ScenarioResult // skipped because of the server
	for _, s := range res.Skipped() {
		if s.Needs == nil {
			others = append(others, s)
		}
	}
	for _, g := range byMessage(others) {
		if len(g) == 1 {
			fmt.Fprintf(w, "SKIPPED %s: %s (%s)\n", g[0].Feature, g[0].Name, g[0].Message)
			continue
		}
		fmt.Fprintf(w, "SKIPPED %s: %s\n        %s\n", plural(len(g), "scenario"), g[0].Message, names(g))
	}
	for _, g := range failures {
		if g.Cause != nil {
			continue // told first
		}
		msg := strings.ReplaceAll(g.Example(), "\n", "\n        ")
		if len(g.Scenarios) == 1 {
			fmt.Fprintf(w, "FAILED  %s: %s\n        %s\n", g.Scenarios[0].URI, g.Scenarios[0].Name, msg)
			continue
		}
		fmt.Fprintf(w, "FAILED  %s with the same failure: %s\n        %s\n", plural(len(g.Scenarios), "scenario"), reportNames(g.Scenarios), msg)
	}
	if len(res.Report.Clients) > 0 {
		fmt.Fprintln(w, "\nClient versions: each success answer as each released official client reads it")
		_ = report.WriteClientTable(w, res.Report.Clients)
		if names := res.ClientsFailing(); len(names) > 0 {
			fmt.Fprintf(w, "FAILED  answers break %s, which --fail-on-client promised\n", strings.Join(names, ", "))
		}
	}
	if failed == 0 && len(res.Interrupted()) == 0 && len(unchecked) > 0 {
		switch {
		case passed == 0:
			var all []string
			for _, u := range unchecked {
				all = append(all, u.Flag)
			}
			fmt.Fprintf(w, "Nothing was checked: add %s to check the rest.\n", strings.Join(all, " and "))
		case len(flags) > 0:
			fmt.Fprintf(w, "Passed, but not all checked: add %s to check the rest.\n", strings.Join(flags, " and "))
		}
	}
}

// runsSummary tells what the pass cost the team: runs created, by which
// scenarios (the five that made most), their run time and request_usage,
// and how they are marked.
func runsSummary(w io.Writer, runs report.Runs) {
	fmt.Fprintf(w, "RUNS    %s\n", runs.Cost())
	for i, s := range runs.ByScenario {
		if i == 5 {
			fmt.Fprintf(w, "        and %d more scenarios (the JUnit and HTML reports list each)\n", len(runs.ByScenario)-i)
			break
		}
		fmt.Fprintf(w, "        %3d by %s\n", s.Runs, s.Scenario)
	}
	if runs.Created > 0 && runs.Marker != "" {
		fmt.Fprintf(w, "        marked: %s\n", runs.Marker)
	}
}

// plural is "1 scenario", "2 scenarios".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// flagArgument is what each option of report.Need takes, for the summary.
var flagArgument = map[string]string{
	"--other-api-key":  "KEY (of another team)",
	"--failing-prompt": "PROMPT (one the server ends in FAILED or ERROR)",
	"--wait-for-ticks": "(minutes of waiting for schedules to fire)",
	"--identity-plan":  "N (the agent identities the team's plan allows)",
	"--newest-client":  "(if the server promises that client)",
	"--max-runs":       "N (a larger budget of runs)",
}

// byMessage groups scenarios by their message, in the order of first sight.
func byMessage(scs []ScenarioResult) [][]ScenarioResult {
	return groupBy(scs, func(s ScenarioResult) string { return s.Message })
}

// groupBy groups scenarios by key, in the order of first sight.
func groupBy(scs []ScenarioResult, key func(ScenarioResult) string) [][]ScenarioResult {
	var groups [][]ScenarioResult
	at := map[string]int{}
	for _, s := range scs {
		i, ok := at[key(s)]
		if !ok {
			i = len(groups)
			at[key(s)] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], s)
	}
	return groups
}

// names names the first few scenarios of a group, and how many more.
func names(g []ScenarioResult) string {
	var labels []string
	for _, s := range g {
		labels = append(labels, s.Feature+": "+s.Name)
	}
	return firstFew(labels)
}

// reportNames is names for the scenarios of a report.
func reportNames(g []report.Scenario) string {
	var labels []string
	for _, s := range g {
		labels = append(labels, s.URI+": "+s.Name)
	}
	return firstFew(labels)
}

// firstFew joins the first few labels, and says how many more.
func firstFew(g []string) string {
	const shown = 3
	out := slices.Clone(g[:min(len(g), shown)])
	if len(g) > shown {
		out = append(out, fmt.Sprintf("and %d more", len(g)-shown))
	}
	return strings.Join(out, "; ")
}
