package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Tenancy beyond runs, judged on any server from what the suite's key and
// another team's key (Config.OtherAPIKey) each see: another team's
// schedules, conversations and artifacts are refused, and a run cannot be
// started in an environment another team lists and the caller's does not.

// registerTenancyResources registers the steps of two callers that touch
// the resources other than runs.
func (s *scenario) registerTenancyResources(sc stepContext) {
	sc.Step(`^another team (fetches|pauses|deletes) schedule "([^"]*)"$`, s.otherTeamActsOnSchedule)
	sc.Step(`^another team's schedule listing does not show "([^"]*)"$`, s.otherTeamDoesNotList)
	sc.Step(`^I fetch the other team's run's conversation by its id$`, s.fetchTheirConversation)
	sc.Step(`^another team fetches each of those artifacts$`, s.otherTeamFetchesTheArtifacts)
	sc.Step(`^each was refused to the other team with status 403 and code "not_authorized", or 404 and "resource_not_found"$`, s.eachRefusedToThem)
	sc.Step(`^an environment the other team lists and my team does not$`, s.theirEnvironment)
	sc.Step(`^I create a run in that environment$`, s.createInTheirEnvironment)
}

// otherAuth is the Authorization of the other team's key.
func (s *scenario) otherAuth() auth { return auth{header: "Bearer " + s.suite.cfg.OtherAPIKey} }

func (s *scenario) otherTeamActsOnSchedule(ctx context.Context, action, nick string) error {
	id, err := s.scheduleID(nick)
	if err != nil {
		return err
	}
	c := call{method: http.MethodGet, path: "/agent/schedules/" + url.PathEscape(id), auth: s.otherAuth()}
	switch action {
	case "pauses":
		c.method, c.path = http.MethodPost, c.path+"/pause"
	case "deletes":
		c.method = http.MethodDelete
	}
	return s.send(ctx, c)
}

func (s *scenario) otherTeamDoesNotList(ctx context.Context, nick string) error {
	id, err := s.scheduleID(nick)
	if err != nil {
		return err
	}
	listed, err := s.schedulesListed(ctx, s.otherAuth())
	if err != nil {
		return err
	}
	for _, sc := range listed {
		if sc["id"] == id {
			return fmt.Errorf("another team's listing of schedules shows schedule %s (%s), of the suite's team", nick, id)
		}
	}
	return nil
}

// fetchTheirConversation asks, with the suite's key, for the conversation
// the other team's run shows to its own team. A run that shows none (it
// ended before a worker claimed it) leaves nothing to ask for.
func (s *scenario) fetchTheirConversation(ctx context.Context) error {
	if s.tenancy.theirs == nil {
		return errNoTheirs
	}
	doc, err := s.theirRun(ctx)
	if err != nil {
		return err
	}
	conv := str(doc["conversation_id"])
	if conv == "" {
		return s.inconclusive(fmt.Sprintf("the other team's run %s (%s) shows no conversation_id to its team: no conversation to ask for", s.tenancy.theirs.id, str(doc["state"])))
	}
	return s.send(ctx, call{method: http.MethodGet, path: "/agent/conversations/" + pathEscape(conv)})
}

// otherTeamFetchesTheArtifacts fetches, with the other team's key, each
// artifact the suite's key last fetched; their answers are kept in
// s.tenancy.answers.
func (s *scenario) otherTeamFetchesTheArtifacts(ctx context.Context) error {
	if len(s.artifacts.fetched) == 0 {
		return s.inconclusive("no run the suite's key can see shows a plan, screenshot or file artifact: nothing for the other team to ask for")
	}
	s.tenancy.answers = nil
	for _, f := range s.artifacts.fetched {
		uid := str(mustLookup(f.shown, "data.artifact_uid"))
		resp, err := s.api.do(ctx, call{method: http.MethodGet, path: "/agent/artifacts/" + pathEscape(uid), auth: s.otherAuth()})
		if err != nil {
			return err
		}
		s.tenancy.answers = append(s.tenancy.answers, resp)
	}
	return nil
}

// eachRefusedToThem checks every answer the other team got.
func (s *scenario) eachRefusedToThem() error {
	if len(s.tenancy.answers) == 0 {
		return fmt.Errorf("the other team asked for nothing")
	}
	var errs []string
	for _, resp := range s.tenancy.answers {
		if err := refusedOrHidden(resp); err != nil {
			errs = append(errs, "asked with another team's key: "+err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// theirEnvironment finds an environment the other team lists and the
// suite's team does not. A server whose teams see the same environments
// leaves nothing to judge.
func (s *scenario) theirEnvironment(ctx context.Context) error {
	mine, _, err := s.environments(ctx, nil)
	if err != nil {
		return err
	}
	listed := map[string]bool{}
	for _, e := range mine {
		listed[str(e["uid"])] = true
	}
	resp, err := s.api.do(ctx, call{method: http.MethodGet, path: "/agent/environments", auth: s.otherAuth()})
	if err != nil {
		return err
	}
	if err := resp.ok("listing environments with the other team's key"); err != nil {
		return err
	}
	var doc struct {
		Environments []map[string]any `json:"environments"`
	}
	if err := resp.json(&doc); err != nil {
		return err
	}
	for _, e := range doc.Environments {
		if uid := str(e["uid"]); uid != "" && !listed[uid] {
			s.cache["their environment"] = uid
			return nil
		}
	}
	return s.inconclusive("every environment the other team lists, the suite's team lists too: no environment of theirs alone to ask for")
}

func (s *scenario) createInTheirEnvironment(ctx context.Context) error {
	env, ok := s.cache["their environment"]
	if !ok {
		return fmt.Errorf("no environment of the other team chosen yet")
	}
	body, _ := json.Marshal(map[string]any{"prompt": "Contract suite run in another team's environment: say hello",
		"config": map[string]any{"name": s.label, "environment_id": env}})
	resp, err := s.ask(ctx, call{method: http.MethodPost, path: "/agent/run", body: body})
	s.leave(resp) // judged by the response steps too
	if err != nil {
		return err
	}
	if resp.status == http.StatusOK {
		// A run the server should not have started: track it so that it is
		// cancelled at the end.
		if doc, err := resp.object(); err == nil && str(doc["run_id"]) != "" {
			s.mine.add(&trackedRun{nick: "the run in another team's environment", id: str(doc["run_id"])})
		}
	}
	return nil
}
