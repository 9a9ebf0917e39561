package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The mock's control API (see the README) lets the suite freeze and move a
// server's clock and choose how runs end. The suite only uses it when the
// server says it has it; against any other server it polls.

// detectControl returns the base of the mock's control API, or nil when the
// server does not offer one. It looks next to the API ({base}/__mock) and at
// the root of the host ({origin}/__mock), since the mock serves the API under
// both "/" and "/api/v1".
func detectControl(ctx context.Context, hc *http.Client, base *url.URL) *url.URL {
	candidates := []string{base.Path + "/__mock", "/__mock"}
	for i, p := range candidates {
		if i > 0 && p == candidates[0] {
			continue
		}
		u := &url.URL{Scheme: base.Scheme, Host: base.Host, User: base.User, Path: p}
		if isControlAPI(ctx, hc, u) {
			return u
		}
	}
	return nil
}

// isControlAPI asks GET {u}/info for {"mock": "agentruns"}.
func isControlAPI(ctx context.Context, hc *http.Client, u *url.URL) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String()+"/info", nil)
	if err != nil {
		return false
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	var info struct {
		Mock string `json:"mock"`
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return err == nil && json.Unmarshal(data, &info) == nil && info.Mock == "agentruns"
}

// freezeClock makes the scenario's session clock move only when advanced.
func (a *apiClient) freezeClock(ctx context.Context) error {
	_, err := a.controlCall(ctx, http.MethodPut, "/clock", map[string]string{"mode": "virtual"})
	return err
}

// closeSession frees the scenario's session, so a long-running mock that
// many suite runs share does not fill up with them.
func (a *apiClient) closeSession(ctx context.Context) error {
	_, err := a.controlCall(ctx, http.MethodDelete, "/session", nil)
	return err
}

// advanceClock moves the scenario's session clock forward by d.
func (a *apiClient) advanceClock(ctx context.Context, d time.Duration) error {
	_, err := a.controlCall(ctx, http.MethodPost, "/clock/advance", map[string]string{"by": d.String()})
	return err
}

// forceState puts a run into state now, through the control API.
func (a *apiClient) forceState(ctx context.Context, runID, state, errorCode string) error {
	body := map[string]any{"state": state}
	if errorCode != "" {
		body["error_code"] = errorCode
		body["message"] = "Set by the contract suite: " + errorCode
	}
	_, err := a.controlCall(ctx, http.MethodPost, "/runs/"+url.PathEscape(runID)+"/state", body)
	if a.runs != nil {
		a.runs.forget(a.session, runID) // a state set by fiat need not follow the last one seen
	}
	return err
}

// fateHeader is the X-Mock-Fate value choosing how the next run ends and,
// when step is not 0, how long it stays in each state before.
func fateHeader(state, errorCode string, step time.Duration) string {
	parts := []string{"state=" + state}
	if errorCode != "" {
		parts = append(parts, "error_code="+errorCode, "message="+fmt.Sprintf("Chosen by the contract suite (%s)", errorCode))
	}
	if step > 0 {
		parts = append(parts, "step="+step.String())
	}
	return strings.Join(parts, "; ")
}
