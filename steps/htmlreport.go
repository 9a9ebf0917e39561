package steps

import (
	"io"
	"sync"

	"github.com/cucumber/godog"
	"github.com/cucumber/godog/formatters"

	"github.com/agentruns/agentruns/htmlreport"
)

func init() {
	godog.Format("html", "a self-contained HTML page: the features as a spec, each scenario with its outcome and reason", newHTMLFormatter)
}

// htmlRuns finds what the HTML page needs beyond godog's events (the server,
// why a scenario was skipped) by the godog suite name of its run, as the
// collector is found (events.go): godog builds formatters from a name alone.
var htmlRuns sync.Map // suite name -> *htmlRun

type htmlRun struct {
	su   *Suite
	seed int64
	ev   *collector
}

// htmlReport makes the run named suiteName known to the HTML formatter;
// the returned func forgets it.
func (su *Suite) htmlReport(suiteName string, seed int64, ev *collector) func() {
	htmlRuns.Store(suiteName, &htmlRun{su: su, seed: seed, ev: ev})
	return func() { htmlRuns.Delete(suiteName) }
}

func newHTMLFormatter(suiteName string, out io.Writer) formatters.Formatter {
	v, ok := htmlRuns.Load(suiteName)
	if !ok { // godog driven by another program: only what its events tell
		return htmlreport.New(out, nil)
	}
	return htmlreport.New(out, v.(*htmlRun).info)
}

// info is what the page says beyond godog's events.
func (r *htmlRun) info() htmlreport.RunInfo {
	r.ev.mu.Lock()
	reasons := make(map[string]string, len(r.ev.skips))
	for id, why := range r.ev.skips {
		reasons[id] = why
	}
	r.ev.mu.Unlock()
	return htmlreport.RunInfo{
		Title:      "Contract report",
		Server:     r.su.cfg.BaseURL,
		Mode:       r.su.mode(),
		Tags:       r.su.cfg.Tags,
		Seed:       r.seed,
		Features:   r.su.cfg.Features,
		SkipReason: func(id string) string { return reasons[id] },
	}
}
