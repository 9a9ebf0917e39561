package proxy

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentruns/agentruns/drift"
	"github.com/agentruns/agentruns/htmlreport"
	"github.com/agentruns/agentruns/report"
	"github.com/agentruns/agentruns/rules"
)

// The reports read as the suite's do: each rule is a scenario, passed when
// no answer broke it and failed otherwise, its message listing the
// violations; the rules of one area make a feature. CI fails on a failed
// scenario in the JUnit report exactly as it does on the suite's.

// shownPerRule is how many violations a rule's message lists.
const shownPerRule = 20

// clientArea names the feature of the requests off the document: the
// client's to fix, so reported as skipped, never as failed.
const clientArea = "requests"

type ruleOutcome struct {
	rule    rules.Rule
	count   int
	message string
}

func outcomes(s Summary) []ruleOutcome {
	byRule := map[string][]Finding{}
	for _, f := range s.Latest {
		byRule[f.Rule] = append(byRule[f.Rule], f)
	}
	var out []ruleOutcome
	for _, rc := range s.Rules {
		o := ruleOutcome{rule: rc.Rule, count: rc.Violations}
		if rc.Violations > 0 {
			var b strings.Builder
			fmt.Fprintf(&b, "%d violation(s)", rc.Violations)
			list := byRule[rc.ID]
			if len(list) > shownPerRule {
				list = list[len(list)-shownPerRule:]
			}
			if len(list) < rc.Violations {
				fmt.Fprintf(&b, "; the latest %d:", len(list))
			}
			for _, f := range list {
				fmt.Fprintf(&b, "\n%s %s (%d): %s: expected %s, got %s", f.At, f.Request, f.Status, f.Field, f.Expected, f.Got)
				if f.RunID != "" {
					fmt.Fprintf(&b, " [run %s]", f.RunID)
				}
			}
			o.message = b.String()
		}
		out = append(out, o)
	}
	if s.OffDocument > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "%d request(s) the document does not allow; the client's to fix, and the server's to refuse (rule %s)", s.OffDocument, rules.InvalidRequestRefused)
		list := s.LatestOffDocument
		if len(list) > shownPerRule {
			list = list[len(list)-shownPerRule:]
		}
		for _, o := range list {
			fmt.Fprintf(&b, "\n%s %s (%d): %s", o.At, o.Request, o.Status, strings.Join(o.Issues, "; "))
		}
		out = append(out, ruleOutcome{rule: rules.Rule{ID: "requests-follow-document", Title: "The clients' requests follow the OpenAPI document", Area: clientArea}, count: s.OffDocument, message: b.String()})
	}
	return out
}

func (o ruleOutcome) status() report.Status {
	switch {
	case o.count == 0:
		return report.Passed
	case o.rule.Area == clientArea:
		return report.Skipped
	}
	return report.Failed
}

func featureName(area string) string {
	if area == clientArea {
		return "Live traffic: the clients' requests"
	}
	return "Live traffic: " + area
}

// run turns a summary into the suite's report.Run.
func reportRun(s Summary, now time.Time) report.Run {
	since, _ := time.Parse(time.RFC3339Nano, s.Since)
	r := report.Run{Name: "agentruns-proxy", Target: s.Upstream, Mode: "validating proxy", Start: since, Duration: now.Sub(since),
		Clients: clientVersions(s.Clients)}
	for i, o := range outcomes(s) {
		st := o.status()
		sc := report.Scenario{
			Feature: featureName(o.rule.Area), URI: "proxy/" + o.rule.Area, Line: i + 1,
			Name: o.rule.Title + " [" + o.rule.ID + "]", Status: st, Message: o.message, Start: since,
			Steps: []report.Step{{Keyword: "Then ", Text: o.rule.Title, Line: i + 1, Status: st, Message: o.message}},
		}
		r.Scenarios = append(r.Scenarios, sc)
	}
	return r
}

// WriteJUnit writes what was found as a JUnit report.
func (p *Proxy) WriteJUnit(w io.Writer) error {
	return report.NewJUnit(w, report.Options{}).Close(reportRun(p.Summary(), time.Now()))
}

// WriteHTML writes what was found as an HTML page in the look of the
// suite's report.
func (p *Proxy) WriteHTML(w io.Writer) error {
	s := p.Summary()
	run := reportRun(s, time.Now())
	page := &htmlreport.Page{Title: "Contract check of live traffic", Run: &htmlreport.Run{
		Server: s.Upstream, Mode: fmt.Sprintf("validating proxy: %d exchanges, %d checked", s.Exchanges, s.Checked),
		Started: run.Start, Duration: run.Duration, Clients: run.Clients, Drift: driftSection(s.Drift),
	}}
	byArea := map[string]*htmlreport.Feature{}
	for _, sc := range run.Scenarios {
		area := strings.TrimPrefix(sc.URI, "proxy/")
		f := byArea[area]
		if f == nil {
			f = &htmlreport.Feature{Anchor: "area-" + area, URI: sc.URI, Keyword: "Feature", Name: sc.Feature,
				Description: areaDescription(area)}
			byArea[area] = f
			page.Features = append(page.Features, f)
		}
		status := sc.Status
		res := htmlreport.Result{Status: status, Message: sc.Message}
		if sc.Status == report.Failed {
			res.FailedStep = sc.Steps[0].Text
		}
		id := strings.TrimSuffix(sc.Name[strings.LastIndex(sc.Name, "[")+1:], "]")
		f.Scenarios = append(f.Scenarios, &htmlreport.Scenario{
			Anchor: "rule-" + id, Keyword: "Rule", Name: sc.Name, Line: int64(sc.Line),
			Steps:  []*htmlreport.Step{{Keyword: "Then ", Text: sc.Steps[0].Text, Status: status, Message: sc.Message}},
			Result: res,
		})
		switch sc.Status {
		case report.Passed:
			page.Run.Counts.Passed++
		case report.Failed:
			page.Run.Counts.Failed++
		default:
			page.Run.Counts.Skipped++
		}
	}
	return htmlreport.Write(w, page)
}

// driftSection is the drift as the HTML report lists it, beside the rules
// and never among them: undocumented is not a violation.
func driftSection(r drift.Report) *htmlreport.Drift {
	out := &htmlreport.Drift{Distinct: r.Distinct, Dropped: r.Dropped, Facts: make([]htmlreport.DriftFact, 0, len(r.Facts))}
	for _, f := range r.Facts {
		out.Facts = append(out.Facts, htmlreport.DriftFact{
			Kind: string(f.Kind), Operation: f.Operation, Status: f.Status, ContentType: f.ContentType,
			Location: f.Location, Value: f.Value, Types: f.Types, Count: f.Count,
			FirstSeen: f.FirstSeen, LastSeen: f.LastSeen, Example: f.Example,
		})
	}
	return out
}

func areaDescription(area string) string {
	switch area {
	case "document":
		return "Every answer follows the OpenAPI document, and a request it does not allow is refused."
	case "runs":
		return "What the published document promises of every run, in every look and from look to look."
	case "listings":
		return "Listings honour their filters and order, and a walk over their pages shows each run once."
	case "errors":
		return "Problem documents agree with the HTTP status they come with."
	case "cancels":
		return "A cancel does what its answer says."
	case "visibility":
		return "Team visibility, as far as one caller can see it: what it was refused it is never shown."
	case "events":
		return "The event log only grows, in sequence order, and never rewrites an event."
	case "schedules":
		return "The runs a schedule starts, as its listings show them."
	case "catalogue":
		return "Models, environments and skills: the default model is listed, listings keep their order, an environment follows its runs."
	case "artifacts":
		return "An artifact carries what its type promises."
	case "identities":
		return "Agent identities: what was deleted is gone."
	case "messages":
		return "Run-to-run messages: their times are set once, and a finished run takes none."
	case "conversations":
		return "Conversations keep time order and hold every run that ended in them."
	case clientArea:
		return "Requests the document does not allow. They are the clients' to fix; they fail nothing here."
	}
	return ""
}
