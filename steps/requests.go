package steps

import (
	"context"
	"net/http"
	"strings"
)

// Steps that send requests a server must refuse.

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
