package proxy

import (
	"github.com/agentruns/agentruns/clientcheck"
	"github.com/agentruns/agentruns/report"
)

// Beside the document and the rules, the proxy judges every success answer
// of the live traffic as each released official client version reads it
// (package clientcheck), as the contract suite does: the dashboard's
// client versions panel, GET /__mock/proxy's "clients" and both reports
// show, per version, the answers checked, those that break it and the
// first breaks. A break is told, never a failure: the document is the
// contract. Every checking worker feeds the one tally (checker.checkOne).

// newClientTally makes the tally of the known client versions.
func newClientTally() (*clientcheck.Tally, error) {
	versions, err := clientcheck.Load()
	if err != nil {
		return nil, err
	}
	return clientcheck.NewTally(versions), nil
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
