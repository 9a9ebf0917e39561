package refserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"time"
)

// presenter holds an answer back so that it can be shown as the server's
// switches say: timestamps at a coarser precision than the server keeps
// (Options.Precision), problems without their detail (Options.TerseErrors).
type presenter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (p *presenter) Header() http.Header { return p.header }
func (p *presenter) WriteHeader(status int) {
	if p.status == 0 {
		p.status = status
	}
}
func (p *presenter) Write(b []byte) (int, error) {
	p.WriteHeader(http.StatusOK)
	return p.body.Write(b)
}

var timestampRE = regexp.MustCompile(`"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)"`)

func (p *presenter) present(w http.ResponseWriter, opts Options) {
	body := p.body.Bytes()
	if opts.Precision > 0 {
		body = timestampRE.ReplaceAllFunc(body, func(m []byte) []byte {
			t, err := time.Parse(time.RFC3339Nano, string(m[1:len(m)-1]))
			if err != nil {
				return m
			}
			return []byte(`"` + t.Truncate(opts.Precision).Format(time.RFC3339Nano) + `"`)
		})
	}
	if opts.TerseErrors && p.status >= 400 {
		var problem map[string]any
		if json.Unmarshal(body, &problem) == nil {
			delete(problem, "detail")
			problem["error"] = problem["title"]
			body, _ = json.Marshal(problem)
		}
	}
	for k, vs := range p.header {
		w.Header()[k] = vs
	}
	w.Header().Del("Content-Length")
	if p.status == 0 {
		p.status = http.StatusOK
	}
	w.WriteHeader(p.status)
	_, _ = w.Write(body)
}
