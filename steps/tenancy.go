package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Two callers: the scenario's own key, and a key of another team
// (Config.OtherAPIKey). A run belongs to its team: another team's caller
// gets 403 on it, and never sees it in a listing.

// other is a client of the same server and mock session as the scenario's,
// with the other team's key.
func (s *scenario) other() *apiClient {
	c := *s.api
	c.key = s.suite.cfg.OtherAPIKey
	c.runs = nil // their runs are another caller's view; ours are checked as we see them
	return &c
}

// anotherTeamCreatedARun creates a run with the other team's key, named
// {label} like this scenario's own runs, so that a listing filtered by the
// label would show it if the server let it through.
func (s *scenario) anotherTeamCreatedARun(ctx context.Context) error {
	if shared, err := s.follower(ctx); err != nil || shared {
		return err // shared_runs.go
	}
	body, err := json.Marshal(map[string]any{
		"prompt": "Contract suite run of another team: say hello",
		"config": map[string]any{"name": s.label},
	})
	if err != nil {
		return err
	}
	resp, err := s.other().do(ctx, call{method: http.MethodPost, path: "/agent/run", body: body})
	if err != nil {
		return fmt.Errorf("creating a run with the other team's key: %w", err)
	}
	if err := resp.ok("creating a run with the other team's key"); err != nil {
		return err
	}
	obj, err := resp.object()
	if err != nil {
		return err
	}
	if id := str(obj["run_id"]); id != "" {
		s.tenancy.theirs = &trackedRun{nick: "the other team's run", id: id}
		return nil
	}
	return fmt.Errorf("%s: expected a run_id in the answer\n%s", resp.op, resp.excerpt())
}

func (s *scenario) fetchTheirRun(ctx context.Context) error {
	if s.tenancy.theirs == nil {
		return errNoTheirs
	}
	return s.send(ctx, call{method: http.MethodGet, path: "/agent/runs/" + pathEscape(s.tenancy.theirs.id)})
}

func (s *scenario) cancelTheirRun(ctx context.Context) error {
	if s.tenancy.theirs == nil {
		return errNoTheirs
	}
	return s.send(ctx, call{method: http.MethodPost, path: "/agent/runs/" + pathEscape(s.tenancy.theirs.id) + "/cancel"})
}

// walkNeverSawTheirRun checks every page of the last walk.
func (s *scenario) walkNeverSawTheirRun() error {
	if s.tenancy.theirs == nil {
		return errNoTheirs
	}
	if s.listings.walk == nil {
		return errors.New("no walk through the pages was made")
	}
	if s.listings.walk.err != nil {
		return s.listings.walk.err
	}
	for i, page := range s.listings.walk.pages {
		for _, run := range page.runs {
			if str(run["run_id"]) == s.tenancy.theirs.id {
				return fmt.Errorf("page %d (%s): expected only the caller's team's runs, got run %s, created with another team's key", i+1, page.op, s.tenancy.theirs.id)
			}
		}
	}
	return nil
}

var errNoTheirs = errors.New("no run of another team yet: use \"another team has created a run\" first")

// tenancyRoom is what the steps of two teams keep.
type tenancyRoom struct {
	theirs *trackedRun // a run another team created (@two-callers)
	// polled is the answer to the last poll of their run's events.
	polled *response
	// answers are the answers the other team got (tenancy_resources.go).
	answers []*response
	// theirEnvironment is an environment the other team lists and the
	// suite's team does not, as the other team sees it; inTheirs is the
	// answer to a create in it (tenancy_resources.go).
	theirEnvironment map[string]any
	inTheirs         *response
}

// registerTenancy registers the steps of two callers of different teams.
func (s *scenario) registerTenancy(sc stepContext) {
	sc.Step(`^another team has created a run$`, s.anotherTeamCreatedARun)
	sc.Step(`^I fetch the other team's run$`, s.fetchTheirRun)
	sc.Step(`^I cancel the other team's run$`, s.cancelTheirRun)
	sc.Step(`^the walk never saw the other team's run$`, s.walkNeverSawTheirRun)
	sc.Step(`^the other team's run has ended$`, s.theirRunEnded)
	sc.Step(`^I poll the other team's run's events$`, s.pollTheirEvents)
	sc.Step(`^no event of the other team's run is shown$`, s.noEventOfTheirs)
}

// theirRun is the other team's run as its own team sees it (their key).
func (s *scenario) theirRun(ctx context.Context) (map[string]any, error) {
	resp, err := s.other().do(ctx, call{method: http.MethodGet, path: "/agent/runs/" + pathEscape(s.tenancy.theirs.id)})
	if err != nil {
		return nil, err
	}
	if err := resp.ok("the other team fetching its run"); err != nil {
		return nil, err
	}
	return resp.object()
}

// theirRunEnded watches the other team's run, with their key, until it is
// in a terminal state: with the suite's patience (Config.Timeout), moving the
// mock's clock when the suite drives it.
func (s *scenario) theirRunEnded(ctx context.Context) error {
	if s.tenancy.theirs == nil {
		return errNoTheirs
	}
	deadline := time.Now().Add(s.suite.cfg.Timeout)
	for waited := time.Duration(0); ; {
		doc, err := s.theirRun(ctx)
		if err != nil {
			return err
		}
		switch state := str(doc["state"]); {
		case isTerminal(state):
			return nil
		case waited >= s.suite.cfg.Timeout || time.Now().After(deadline):
			return fmt.Errorf("the other team's run %s was still %s after %s", s.tenancy.theirs.id, state, s.suite.cfg.Timeout)
		}
		d, err := s.tick(ctx)
		if err != nil {
			return err
		}
		waited += d
	}
}

func (s *scenario) pollTheirEvents(ctx context.Context) error {
	if s.tenancy.theirs == nil {
		return errNoTheirs
	}
	resp, err := s.ask(ctx, call{method: http.MethodGet, path: "/agent/events", query: url.Values{"run_ids": {s.tenancy.theirs.id}}})
	if resp != nil {
		s.tenancy.polled = resp
	}
	return err
}

// noEventOfTheirs accepts a refusal (403 or 404) or a list without any
// event of the other team's run.
func (s *scenario) noEventOfTheirs() error {
	polled := s.tenancy.polled
	if polled == nil {
		return errNoRequest
	}
	if polled.status != http.StatusOK {
		return refusedOrHidden(polled)
	}
	var evs []runEvent
	if err := polled.json(&evs); err != nil {
		return err
	}
	for _, e := range evs {
		if e.RunID == s.tenancy.theirs.id {
			return fmt.Errorf("%s shows the other team's event %s\n%s", polled.op, e, polled.excerpt())
		}
	}
	return nil
}

// refusedOrHidden checks that resp refused a resource of another team:
// 403 not_authorized, or 404 resource_not_found.
func refusedOrHidden(resp *response) error {
	return oneOfTwoProblems(resp, http.StatusForbidden, "not_authorized", http.StatusNotFound, "resource_not_found")
}
