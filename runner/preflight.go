package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/agentruns/agentruns/internal/probe"
	"github.com/agentruns/agentruns/suiteconfig"
)

// The pre-flight: before it builds the suite, Run asks the server whether
// it is one the suite can test at all, so that a wrong target gives one
// clear sentence instead of a failure per scenario.

// PreflightError means the server is not one the suite can test: nothing
// answers, it does not speak the API's JSON, or it refuses the key. Its
// message is one sentence saying what to check; no scenario has run.
type PreflightError struct {
	Sentence string
}

func (e *PreflightError) Error() string { return e.Sentence }

// Preflight asks the server the suite's pre-flight questions (checkServer)
// on their own, for a mode that runs no feature (an exploration): nil, or
// a *suiteconfig.ConfigError, or a *PreflightError saying in one sentence
// why the server or its keys cannot be tested.
func Preflight(ctx context.Context, cfg suiteconfig.Config) error {
	checked, err := cfg.WithDefaults()
	if err != nil {
		return err
	}
	return checkServer(ctx, checked)
}

// checkServer is the pre-flight of cfg, its defaults filled in: the two
// questions of preflight, then, given another team's key, preflightTeams.
// Its requests are GETs but for the run preflightTeams may create and
// cancel, which a read-only run never does.
func checkServer(ctx context.Context, cfg suiteconfig.Config) error {
	if err := preflight(ctx, cfg.HTTPClient, cfg.BaseURL, cfg.APIKey); err != nil {
		return err
	}
	if cfg.OtherAPIKey != "" {
		return preflightTeams(ctx, cfg.HTTPClient, cfg.BaseURL, cfg.APIKey, cfg.OtherAPIKey, cfg.ReadOnly)
	}
	return nil
}

// preflight asks the server two questions before any scenario runs:
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

	status, ctype, err := probe.Get(ctx, hc, target, "Bearer "+key)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return err
		}
		return fail("cannot reach %s: %s; is the server running, and is the base URL right?", base, probe.Reason(err))
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fail("%s refused the API key (GET /agent/runs answered %d); check --api-key or WARP_API_KEY", base, status)
	case !isJSON(ctype):
		return fail("GET %s answered %d with %s, not JSON: is %s the API's base URL, with its version prefix such as /api/v1?", target, status, describe(ctype), base)
	case status == http.StatusNotFound:
		return fail("GET %s answered 404: there is no runs endpoint under %s; is the version prefix (such as /api/v1) right?", target, base)
	}

	status, ctype, err = probe.Get(ctx, hc, target, "")
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return err
		}
		return fail("cannot reach %s a second time: %s", base, probe.Reason(err))
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
	if err := probe.JSON(ctx, hc, http.MethodGet, base+"/agent/runs?limit=1", key, nil, &list); err != nil {
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
		if err := probe.JSON(ctx, hc, http.MethodPost, base+"/agent/run", key, body, &created); err != nil {
			return nil // the scenarios will say what is wrong with creating
		}
		id, made = created.RunID, true
	}
	if id == "" {
		return nil
	}
	if made {
		defer func() {
			_ = probe.JSON(context.WithoutCancel(ctx), hc, http.MethodPost, base+"/agent/runs/"+url.PathEscape(id)+"/cancel", key, nil, nil)
		}()
	}
	status, _, err := probe.Get(ctx, hc, base+"/agent/runs/"+url.PathEscape(id), "Bearer "+otherKey)
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
		if probe.JSON(ctx, hc, http.MethodGet, base+"/agent/identities", k, nil, &list) != nil || len(list.Agents) == 0 {
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
