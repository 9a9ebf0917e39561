package steps

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/cucumber/godog"
	"github.com/cucumber/godog/formatters"

	"github.com/agentruns/agentruns/htmlreport"
)

func init() {
	godog.Format("html", "a self-contained HTML page: the features as a spec, each scenario with its outcome and reason", newHTMLFormatter)
}

// htmlRuns finds the Suite of a run writing an HTML report by the godog
// suite name it ran under: godog builds formatters from a name alone, and the
// page needs what only the Suite knows (the server, why a scenario was
// skipped). Each such run has its own name, so runs at once do not mix.
var (
	htmlRuns   sync.Map // suite name -> *htmlRun
	htmlRunSeq atomic.Int64
)

type htmlRun struct {
	su   *Suite
	seed int64
}

// godogName names a run for godog; a run writing HTML gets a name of its
// own, to be released with done when the run is over.
func (su *Suite) godogName(seed int64) (name string, done func()) {
	name = "agentruns-contract"
	if su.cfg.Format != "html" {
		return name, func() {}
	}
	name = fmt.Sprintf("%s #%d", name, htmlRunSeq.Add(1))
	htmlRuns.Store(name, &htmlRun{su: su, seed: seed})
	return name, func() { htmlRuns.Delete(name) }
}

func newHTMLFormatter(suiteName string, out io.Writer) formatters.Formatter {
	v, ok := htmlRuns.Load(suiteName)
	if !ok { // godog driven by another program: only what its events tell
		return htmlreport.New(out, nil)
	}
	run := v.(*htmlRun)
	return htmlreport.New(out, run.info)
}

// info is what the page says beyond godog's events.
func (r *htmlRun) info() htmlreport.RunInfo {
	su := r.su
	mode := "polling the server"
	if su.Control() {
		mode = "driving the mock's control API"
	}
	su.mu.Lock()
	reasons := map[string]string{}
	for _, res := range su.results {
		if res.Status == Skipped {
			reasons[res.pickleID] = res.Message
		}
	}
	su.mu.Unlock()
	return htmlreport.RunInfo{
		Title:      "Contract report",
		Server:     su.cfg.BaseURL,
		Mode:       mode,
		Tags:       su.cfg.tagExpression(),
		Seed:       r.seed,
		Features:   su.cfg.Features,
		SkipReason: func(id string) string { return reasons[id] },
	}
}
