package steps

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// PreflightError means the server is not one the suite can test: nothing
// answers, it does not speak the API's JSON, or it refuses the key. Its
// message is one sentence saying what to check; no scenario has run.
type PreflightError struct {
	Sentence string
}

func (e *PreflightError) Error() string { return e.Sentence }

// preflight asks the server two questions before any scenario runs, so that
// a wrong target gives one clear sentence instead of a failure per scenario:
// GET {base}/agent/runs?limit=1 with the key must answer JSON and not refuse
// the key, and the same request without a key must answer a JSON error (the
// scenarios then check that it is a well-formed problem).
func preflight(ctx context.Context, hc *http.Client, base, key string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	target := base + "/agent/runs?limit=1"
	fail := func(format string, args ...any) error {
		return &PreflightError{Sentence: fmt.Sprintf(format, args...)}
	}

	status, ctype, err := ask(ctx, hc, target, "Bearer "+key)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return err
		}
		return fail("cannot reach %s: %s; is the server running, and is the base URL right?", base, reason(err))
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fail("%s refused the API key (GET /agent/runs answered %d); check --api-key or WARP_API_KEY", base, status)
	case !isJSON(ctype):
		return fail("GET %s answered %d with %s, not JSON: is %s the API's base URL, with its version prefix such as /api/v1?", target, status, describe(ctype), base)
	case status == http.StatusNotFound:
		return fail("GET %s answered 404: there is no runs endpoint under %s; is the version prefix (such as /api/v1) right?", target, base)
	}

	status, ctype, err = ask(ctx, hc, target, "")
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return err
		}
		return fail("cannot reach %s a second time: %s", base, reason(err))
	}
	if status >= 400 && !isJSON(ctype) {
		return fail("GET %s without a key answered %d with %s, not a JSON problem: the server does not speak the API's errors", target, status, describe(ctype))
	}
	return nil
}

// sameTeamPrompt names the run the pre-flight creates when the suite's key
// sees none, to ask the other key about.
const sameTeamPrompt = "Contract suite pre-flight: do the two keys belong to different teams? (cancelled at once)"

// preflightTeams asks whether the key given as another team's belongs to
// the suite key's own team, which would fail every tenancy scenario with
// "expected status 403, got 200" as if the server leaked runs: it fetches,
// with the other key, a run the suite's key sees. With no run to ask
// about, it creates one (and cancels it) unless the run is read-only, in
// which case the tenancy scenarios, which create runs, are left out anyway.
func preflightTeams(ctx context.Context, hc *http.Client, base, key, otherKey string, readOnly bool) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var list struct {
		Runs []struct {
			RunID string `json:"run_id"`
		} `json:"runs"`
	}
	if err := askJSON(ctx, hc, http.MethodGet, base+"/agent/runs?limit=1", key, nil, &list); err != nil {
		return nil // the scenarios will say what is wrong with listing
	}
	id, made := "", false
	if len(list.Runs) > 0 {
		id = list.Runs[0].RunID
	} else if !readOnly {
		var created struct {
			RunID string `json:"run_id"`
		}
		body, _ := json.Marshal(map[string]string{"prompt": sameTeamPrompt})
		if err := askJSON(ctx, hc, http.MethodPost, base+"/agent/run", key, body, &created); err != nil {
			return nil // the scenarios will say what is wrong with creating
		}
		id, made = created.RunID, true
	}
	if id == "" {
		return nil
	}
	if made {
		defer func() {
			_ = askJSON(context.WithoutCancel(ctx), hc, http.MethodPost, base+"/agent/runs/"+url.PathEscape(id)+"/cancel", key, nil, nil)
		}()
	}
	status, _, err := ask(ctx, hc, base+"/agent/runs/"+url.PathEscape(id), "Bearer "+otherKey)
	if err == nil && status == http.StatusOK && !seesAnotherTeam(ctx, hc, base, key, otherKey) {
		return &PreflightError{Sentence: fmt.Sprintf("the --other-api-key sees run %s that the --api-key's team made, so the two keys belong to one team; "+
			"the tenancy scenarios need a key of another team (or leave --other-api-key out to skip them)", id)}
	}
	return nil
}

// seesAnotherTeam tells a server that shows one team's run to another (a
// tenancy bug the scenarios must report) from two keys of one team by a
// resource that belongs to a team: its agent identities. Two keys that
// list different identities are of two teams. When either listing cannot
// be read the keys are taken as one team.
func seesAnotherTeam(ctx context.Context, hc *http.Client, base, key, otherKey string) bool {
	identities := func(k string) (string, bool) {
		var list struct {
			Agents []struct {
				UID string `json:"uid"`
			} `json:"agents"`
		}
		if askJSON(ctx, hc, http.MethodGet, base+"/agent/identities", k, nil, &list) != nil || len(list.Agents) == 0 {
			return "", false
		}
		uids := make([]string, 0, len(list.Agents))
		for _, a := range list.Agents {
			uids = append(uids, a.UID)
		}
		slices.Sort(uids)
		return strings.Join(uids, ","), true
	}
	mine, ok1 := identities(key)
	theirs, ok2 := identities(otherKey)
	return ok1 && ok2 && mine != theirs
}

// askJSON sends a request with the key and decodes a 2xx JSON answer into
// out (when not nil).
func askJSON(ctx context.Context, hc *http.Client, method, u, key string, body []byte, out any) error {
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

// ask sends GET u with the Authorization header auth (none when empty) and
// returns the status and content type, reading at most 1 MiB of the body.
func ask(ctx context.Context, hc *http.Client, u, auth string) (int, string, error) {
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

// isJSON accepts application/json and any application/*+json.
func isJSON(ctype string) bool {
	mt, _, err := mime.ParseMediaType(ctype)
	return err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

func describe(ctype string) string {
	if ctype == "" {
		return "no content type"
	}
	mt, _, err := mime.ParseMediaType(ctype)
	if err != nil {
		return fmt.Sprintf("content type %q", ctype)
	}
	return mt
}

// reason is the innermost cause of a transport error, such as
// "connect: connection refused", without the repeated method and URL.
func reason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}
