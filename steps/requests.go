package steps

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Steps that send a request as written: requests a server must refuse
// (no key, a bad key, a body it cannot take), and any request of a
// feature that names the operation itself, with "{name}" placeholders.

func (s *scenario) sendWithoutAuth(ctx context.Context, method, path string) error {
	return s.sendAs(ctx, method, path, auth{omit: true})
}

func (s *scenario) sendWithAuthHeader(ctx context.Context, method, path, header string) error {
	return s.sendAs(ctx, method, path, auth{header: header})
}

// sendAs sends an otherwise valid request with the given credentials.
func (s *scenario) sendAs(ctx context.Context, method, path string, a auth) error {
	path, err := s.resolve(ctx, path)
	if err != nil {
		return err
	}
	c := call{method: method, path: path, auth: a}
	if method == http.MethodPost && !strings.HasSuffix(path, "/cancel") {
		c.body = []byte(`{"prompt": "Fix the flaky login test"}`)
	}
	return s.send(ctx, c)
}

// postRawBody posts body exactly as written.
func (s *scenario) postRawBody(ctx context.Context, path, body string) error {
	return s.send(ctx, call{method: http.MethodPost, path: path, body: []byte(body)})
}

// registerRequests registers the steps that send a request as written, and remember what it answered.
func (s *scenario) registerRequests(sc stepContext) {
	sc.Step(`^I send "(GET|POST) ([^"]*)" with no Authorization header$`, s.sendWithoutAuth)
	sc.Step(`^I send "(GET|POST) ([^"]*)" with the Authorization header "([^"]*)"$`, s.sendWithAuthHeader)
	sc.Step(`^I post to "([^"]*)" the body (.*)$`, s.postRawBody)
	sc.Step(`^I send "(GET|POST|PUT|DELETE) ([^"]*)"$`, s.sendPlain)
	sc.Step(`^I send "(POST|PUT) ([^"]*)" with the body (.*)$`, s.sendWithBody)
	sc.Step(`^I remember the response field "([^"]*)" as "([^"]*)"$`, s.rememberField)
	sc.Step(`^the response field "([^"]*)" is null or absent$`, s.responseFieldIsNull)
	sc.Step(`^the response has no field "([^"]*)"$`, s.responseHasNoField)
	sc.Step(`^the run's "([^"]*)" is still the remembered "([^"]*)"$`, s.runFieldIsRemembered)
}

// Requests as written, and the values a scenario remembers from their
// answers.

func (s *scenario) sendPlain(ctx context.Context, method, path string) error {
	path, err := s.resolve(ctx, path)
	if err != nil {
		return err
	}
	path, query, _ := strings.Cut(path, "?")
	return s.send(ctx, call{method: method, path: path, query: parseQuery(query)})
}

func (s *scenario) sendWithBody(ctx context.Context, method, path, body string) error {
	path, err := s.resolve(ctx, path)
	if err != nil {
		return err
	}
	if body, err = s.resolve(ctx, body); err != nil {
		return err
	}
	return s.send(ctx, call{method: method, path: path, body: []byte(body)})
}

func (s *scenario) rememberField(field, name string) error {
	if s.last == nil {
		return errNoRequest
	}
	doc, err := s.last.object()
	if err != nil {
		return err
	}
	v := str(mustLookup(doc, field))
	if v == "" {
		return fmt.Errorf("%s: expected a non-empty %q to remember\n%s", s.last.op, field, s.last.excerpt())
	}
	s.cache[name] = v
	return nil
}

func (s *scenario) responseFieldIsNull(field string) error {
	sub := s.last.subject()
	if sub.err != nil {
		return sub.err
	}
	if v, _ := lookup(sub.doc, field); v != nil {
		return fmt.Errorf("expected %s's %q to be null or absent, got %s", sub.what, field, show(v))
	}
	return nil
}

// getJSON reads path and decodes a 200's body into v. The answer is
// returned, for messages, and not kept as the scenario's last response:
// a step that reads something to judge it leaves the response the
// scenario's steps talk about alone.
func (s *scenario) getJSON(ctx context.Context, path string, query url.Values, v any) (*response, error) {
	resp, err := s.api.do(ctx, call{method: http.MethodGet, path: path, query: query})
	if err != nil {
		return resp, err
	}
	if err := resp.ok("GET " + path); err != nil {
		return resp, err
	}
	return resp, resp.json(v)
}

func (s *scenario) responseHasNoField(field string) error {
	doc, err := s.last.object()
	if err != nil {
		return err
	}
	if v, ok := lookup(doc, field); ok && v != nil {
		return fmt.Errorf("%s: expected no %q, got %s", s.last.op, field, show(v))
	}
	return nil
}

func (s *scenario) runFieldIsRemembered(field, name string) error {
	want, ok := s.cache[name]
	if !ok {
		return fmt.Errorf("nothing remembered as %q", name)
	}
	return s.details().fieldIs(field, want)
}
