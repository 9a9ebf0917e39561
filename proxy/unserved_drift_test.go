package proxy_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/proxy"
)

// unservedUpstream is a server of the published document: the newest
// client's operations it does not have answer 404 (an unknown path) or 405
// (a known path, another method).
func unservedUpstream(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		switch r.URL.Path {
		case "/agent/identities/agent-1":
			w.Header().Set("Allow", "PUT, DELETE")
			w.WriteHeader(http.StatusMethodNotAllowed)
			_, _ = w.Write([]byte(`{"type":"about:blank","title":"Method Not Allowed","status":405}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"type":"about:blank","title":"Not Found","status":404}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// The suite probing the newest client's operations on a server judged by
// the published document (named, or served before the newest surface is
// seen) finds them not served: that is what the judging document says,
// so no drift fact, and no overlay action, comes of it. Held to the newest
// client's document, the same answers are drift.
func TestAnUnservedOperationOfTheNewestClientIsNoDrift(t *testing.T) {
	probe := func(doc proxy.Document) []string {
		p, err := proxy.New(proxy.Options{Upstream: unservedUpstream(t), Document: doc})
		require.NoError(t, err)
		srv := httptest.NewServer(p)
		t.Cleanup(func() { srv.Close(); p.Close() })
		readAll(t, srv.URL+"/agent/conversations/conv-1/redirect")
		readAll(t, srv.URL+"/agent/identities/agent-1")
		require.NoError(t, p.Drain(context.Background()))
		var facts []string
		for _, f := range p.Drift().Facts {
			facts = append(facts, string(f.Kind)+" "+f.Operation+" "+f.Location)
		}
		return facts
	}
	for _, doc := range []proxy.Document{proxy.PublishedDocument, proxy.ServedSurface} {
		assert.Empty(t, probe(doc), "judged by %s", doc)
	}
	assert.NotEmpty(t, probe(proxy.NewestDocument), "held to the newest client's document, a 404 there is drift")
}
