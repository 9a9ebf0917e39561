package steps

import (
	"context"
	"fmt"
	"net/http"
)

// A read-only run changes nothing on the server. The features keep the
// scenarios that would out of it (@creates-runs, @writes), and the suite
// holds itself to it where its requests leave it: the HTTP client of a
// read-only run refuses every method but GET and HEAD, naming the scenario
// that asked, so a scenario tagged wrongly fails instead of writing. The
// mock's control API, whose every use changes the mock, is not used.

// scenarioKey is the context key under which a request carries the name of
// the scenario that sends it.
type scenarioKey struct{}

// withScenario returns ctx carrying the scenario's name.
func withScenario(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, scenarioKey{}, name)
}

// scenarioName is the name of the scenario ctx carries, "" for none.
func scenarioName(ctx context.Context) string {
	name, _ := ctx.Value(scenarioKey{}).(string)
	return name
}

// readOnlyTransport refuses any request that could change something.
type readOnlyTransport struct {
	next http.RoundTripper
}

func (t readOnlyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet || req.Method == http.MethodHead {
		return t.next.RoundTrip(req)
	}
	if req.Body != nil {
		_ = req.Body.Close() // a RoundTripper closes the body, even on error
	}
	who := "the suite"
	if name, ok := req.Context().Value(scenarioKey{}).(string); ok {
		who = fmt.Sprintf("scenario %q", name)
	}
	return nil, fmt.Errorf("read-only: %s tried to send %s %s, and a read-only run sends only GET and HEAD (tag the scenario @writes or @creates-runs)",
		who, req.Method, req.URL.Path)
}

// readOnlyClient is hc whose requests go through readOnlyTransport.
func readOnlyClient(hc *http.Client) *http.Client {
	c := *hc
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = readOnlyTransport{next: next}
	return &c
}
