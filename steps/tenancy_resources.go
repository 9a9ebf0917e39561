package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
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
	sc.Step(`^the run was refused, or ended in FAILED or ERROR before a worker claimed it there, showing nothing of that environment$`, s.theirEnvironmentUnused)
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
			s.tenancy.theirEnvironment = e
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
	s.tenancy.inTheirs = resp
	if resp.status == http.StatusOK {
		// Tracked, so that it is watched, and cancelled at the end if it
		// has not ended.
		if doc, err := resp.object(); err == nil && str(doc["run_id"]) != "" {
			r := &trackedRun{nick: "the run in another team's environment", id: str(doc["run_id"]), sent: map[string]any{}}
			s.mine.add(r)
			s.current = r
		}
	}
	return nil
}

// theirEnvironmentUnused judges a create in another team's environment by
// what the contract promises: the run never runs there. The document
// lists 400 and 403 for a create, and does not say a reference must be
// refused then; so a server may refuse it (403 not_authorized, or 400
// invalid_request for an environment it does not let the caller know),
// or accept it and end it in FAILED or ERROR before any worker claims it,
// showing the caller nothing of that environment but the id it sent.
// Anything else (the run claimed, started, succeeded, or its answers
// telling what the environment holds) fails.
func (s *scenario) theirEnvironmentUnused(ctx context.Context) error {
	created := s.tenancy.inTheirs
	if created == nil {
		return fmt.Errorf("no run was created in the other team's environment")
	}
	if created.status != http.StatusOK {
		return oneOfTwoProblems(created, http.StatusForbidden, "not_authorized", http.StatusBadRequest, "invalid_request")
	}
	r := s.current
	if r == nil || r.nick != "the run in another team's environment" {
		return fmt.Errorf("%s answered 200 without a run id\n%s", created.op, created.excerpt())
	}
	env := s.cache["their environment"]
	if err := s.watchUntilTerminal(ctx); err != nil {
		return fmt.Errorf("the server accepted a run in environment %s, of another team: %w", env, err)
	}
	for i, look := range r.looks {
		st := str(look["state"])
		if rank[st] >= rank["CLAIMED"] && !isTerminal(st) || st == "SUCCEEDED" || st == "CANCELLED" || look["started_at"] != nil {
			return fmt.Errorf("run %s, accepted in environment %s of another team, was claimed there: look %d shows it %s%s; "+
				"it should have been refused (403 or 400), or ended FAILED or ERROR before a worker claimed it (states seen: %s)",
				r.id, env, i+1, st, startedNote(look), s.history().seen())
		}
	}
	if st := str(r.looks[len(r.looks)-1]["state"]); st != "FAILED" && st != "ERROR" {
		return fmt.Errorf("run %s, accepted in environment %s of another team, ended %s, not FAILED or ERROR", r.id, env, st)
	}
	if err := s.pollEvents(ctx, 0); err != nil {
		return err
	}
	for _, e := range s.events.last() {
		if st := eventStates[e.EventType]; st != "" && st != "FAILED" && st != "ERROR" {
			return fmt.Errorf("run %s, accepted in environment %s of another team, has the event %s: it ran there", r.id, env, e.EventType)
		}
	}
	final := r.looks[len(r.looks)-1]
	if shown := theirDetailsShown(s.tenancy.theirEnvironment, final); len(shown) > 0 {
		return fmt.Errorf("run %s, in environment %s of another team, shows what that team's environment holds: %s\n%s",
			r.id, env, strings.Join(shown, ", "), excerptOf(final))
	}
	return nil
}

// startedNote says when a look shows a start.
func startedNote(look map[string]any) string {
	if look["started_at"] == nil {
		return ""
	}
	return ", started at " + str(look["started_at"])
}

// theirDetailsShown lists the values of another team's environment (as
// that team lists it, its id aside: the caller sent that) which a run
// shows: its name, image, repositories, commands... Values too short to
// tell apart from any other word are not looked for.
func theirDetailsShown(env, run map[string]any) []string {
	shown := map[string]bool{}
	var seen []string
	var runText strings.Builder
	walkStrings(run, func(v string) { runText.WriteString(v + "\n") })
	walkStrings(env, func(v string) {
		if len(v) < 6 || v == str(env["uid"]) || shown[v] {
			return
		}
		if strings.Contains(runText.String(), v) {
			shown[v] = true
			seen = append(seen, fmt.Sprintf("%q", v))
		}
	})
	slices.Sort(seen) // a map's walk has no order
	return seen
}

// walkStrings calls f with every string value inside v.
func walkStrings(v any, f func(string)) {
	switch v := v.(type) {
	case string:
		f(v)
	case map[string]any:
		for _, x := range v {
			walkStrings(x, f)
		}
	case []any:
		for _, x := range v {
			walkStrings(x, f)
		}
	}
}

// excerptOf is a run as JSON, cut short.
func excerptOf(doc map[string]any) string {
	data, _ := json.Marshal(doc)
	const most = 600
	if len(data) > most {
		return string(data[:most]) + "…"
	}
	return string(data)
}
