// Package probe sends the few plain requests the contract suite makes
// outside any scenario: the runner's pre-flight (is the server one the
// suite can test?) and the steps' survey of the newest client's surface
// (does the server serve it?). Their answers are not judged against the
// document; only their status, content type or JSON body is read.
package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// JSON sends a request with the key and decodes a 2xx JSON answer into
// out (when not nil).
func JSON(ctx context.Context, hc *http.Client, method, u, key string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s answered %d", method, u, resp.StatusCode)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(out)
}

// Get sends GET u with the Authorization header auth (none when empty) and
// returns the status and content type, reading at most 1 MiB of the body.
func Get(ctx context.Context, hc *http.Client, u, auth string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Accept", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, resp.Header.Get("Content-Type"), nil
}

// Reason is the innermost cause of a transport error, such as
// "connect: connection refused", without the repeated method and URL.
func Reason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}
