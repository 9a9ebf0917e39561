package proxy

import (
	"strconv"
	"strings"

	"github.com/agentruns/agentruns/clientcheck"
	"github.com/agentruns/agentruns/internal/scrub"
	"github.com/agentruns/agentruns/report"
)

// Beside the document and the rules, the proxy judges every success answer
// of the live traffic as each released official client version reads it
// (package clientcheck), as the contract suite does: the dashboard's
// client versions panel, GET /__mock/proxy's "clients" and both reports
// show, per version, the answers checked, those that break it and the
// first breaks. A break is told, never a failure: the document is the
// contract. Every checking worker feeds the one tally (checker.prepare).

// newClientTally makes the tally of the known client versions.
func newClientTally() (*clientcheck.Tally, error) {
	versions, err := clientcheck.Load()
	if err != nil {
		return nil, err
	}
	return clientcheck.NewTally(versions), nil
}

// judgeForClients counts what each client version makes of the exchange's
// decoded answer, judged once for the same exchange again (repeat.go).
func (c *checker) judgeForClients(e *exchange, value any) {
	x := e.x
	if e.repeat == nil {
		c.clients.Count(c.clients.Judge(x.method, x.apiPath, x.status, value))
		return
	}
	e.repeat.clientsJudged.Do(func() {
		e.repeat.clients = c.clients.Judge(x.method, x.apiPath, x.status, value)
	})
	c.clients.Count(e.repeat.clients)
}

// clientVersions are the tally's counts as the reports show them.
func clientVersions(counts []clientcheck.Count) []report.ClientVersion {
	out := make([]report.ClientVersion, 0, len(counts))
	for _, c := range counts {
		row := report.ClientVersion{Name: c.Version, Checked: c.Checked, Broken: c.Broken}
		for _, b := range c.First {
			row.First = append(row.First, report.ClientBreak{Operation: b.Operation, Field: b.Field, Expected: b.Expected, Got: b.Got})
		}
		out = append(out, row)
	}
	return out
}

// cleanCounts are the tally's counts as the proxy shows them: a break's
// field cut at keptText, and the string it quotes replaced when the field
// lies under a secret name (a credential_strategy of "hunter2" is shown
// as a string, not as itself).
func cleanCounts(counts []clientcheck.Count) []clientcheck.Count {
	for i := range counts {
		for j, b := range counts[i].First {
			if q, ok := strings.CutPrefix(b.Got, "string "); ok {
				if v, err := strconv.Unquote(q); err == nil && scrub.At(v, scrub.Location(b.Field)...) != any(v) {
					b.Got = "string " + strconv.Quote(scrub.Redacted)
				}
			}
			b.Field, b.Expected, b.Got = cut(b.Field, keptText), redactText(b.Expected), redactText(b.Got)
			counts[i].First[j] = b
		}
	}
	return counts
}
