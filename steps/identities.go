package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Steps of features/identities.feature: the team's agent identities under
// /agent/identities, which team-owned runs act as. ("Agents", in the
// suite's words, are the skills of GET /agent; see skills.go.)

// identityRef is the identity a scenario created last, and the API key
// the mock issued for it.
type identityRef struct {
	uid, name, key string
}

// identitiesRoom is what the identity steps keep.
type identitiesRoom struct {
	current identityRef // the identity created last
	// held is how the scenario holds Suite.identityWrites: "", "shared" or
	// "alone" (identities_plan.go).
	held           string
	madeForPlan    []string // identities created to fill the plan, deleted at the end
	deletedForPlan []string // of those, the ones the scenario deleted
}

// registerIdentities registers the steps of agent identities.
func (s *scenario) registerIdentities(sc stepContext) {
	sc.Step(`^I list the team's identities$`, s.listIdentities)
	sc.Step(`^the team's identities are listed$`, s.identitiesListed)
	sc.Step(`^I create an identity named "([^"]*)"$`, s.createIdentity)
	sc.Step(`^I create agent identities until the team has as many as its plan allows$`, s.fillIdentityPlan)
	sc.Step(`^creating one more identity is refused with 403$`, s.oneMoreIdentityRefused)
	sc.Step(`^I delete the identities made to fill the plan$`, s.deleteIdentitiesMade)
	sc.Step(`^the team's identities no longer include them$`, s.identitiesMadeAreGone)
	sc.Step(`^the identity is created, available, with the name "([^"]*)"$`, s.identityCreated)
	sc.Step(`^the team's identities (include|no longer include) it$`, s.identitiesInclude)
	sc.Step(`^I rename the identity "([^"]*)"$`, s.renameIdentity)
	sc.Step(`^the identity is now named "([^"]*)"$`, s.identityRenamed)
	sc.Step(`^I delete the identity$`, s.deleteIdentity)
	sc.Step(`^the identity is deleted$`, s.identityDeleted)
	sc.Step(`^I delete the team's default identity$`, s.deleteDefaultIdentity)
	sc.Step(`^I create a team-owned run acting as the identity, with the prompt "([^"]*)"$`, s.createRunAsIdentity)
	sc.Step(`^I create a team-owned run acting as an identity that does not exist$`, s.createRunAsUnknownIdentity)
	sc.Step(`^the run was created by the identity$`, s.runCreatedByIdentity)
	sc.Step(`^the mock issues an API key for the identity$`, s.issueIdentityKey)
	sc.Step(`^the identity's API key (reads|no longer reads) the team's runs$`, s.identityKeyReads)
	sc.Step(`^the answer has the identity fields the newest client needs$`, s.identityHasRequiredFields)
}

// teamIdentities lists the team's identities; the answer is returned, not kept
// as the last response.
func (s *scenario) teamIdentities(ctx context.Context) ([]map[string]any, *response, error) {
	var doc struct {
		Agents []map[string]any `json:"agents"`
	}
	resp, err := s.getJSON(ctx, "/agent/identities", nil, &doc)
	return doc.Agents, resp, err
}

func (s *scenario) listIdentities(ctx context.Context) error {
	return s.send(ctx, call{method: http.MethodGet, path: "/agent/identities"})
}

func (s *scenario) identitiesListed() error {
	if err := s.last.ok("listing identities"); err != nil {
		return err
	}
	var doc struct {
		Agents []map[string]any `json:"agents"`
	}
	return s.last.json(&doc)
}

func (s *scenario) createIdentity(ctx context.Context, name string) error {
	name = s.expand(name)
	body, _ := json.Marshal(map[string]any{"name": name})
	resp, err := s.ask(ctx, call{method: http.MethodPost, path: "/agent/identities", body: body})
	s.leave(resp) // judged by the response steps too
	if err != nil {
		return err
	}
	if resp.status == http.StatusCreated {
		var made struct {
			UID string `json:"uid"`
		}
		if err := resp.json(&made); err != nil {
			return err
		}
		s.identities.current = identityRef{uid: made.UID, name: name}
	}
	return nil
}

// identityCreated checks a new identity. The document lets a server refuse
// a create with 403 (the plan is full, or the key may not manage
// identities) and says nothing of the plan's size: on a server other than
// the mock such a refusal leaves the scenario skipped, saying so.
func (s *scenario) identityCreated(name string) error {
	if s.last.status == http.StatusForbidden && s.api.control == nil {
		return s.skip(fmt.Sprintf("%s answered 403: the server does not let this key create an identity now (its plan may be full), which the document allows", s.last.op))
	}
	if err := s.last.hasStatus(http.StatusCreated); err != nil {
		return err
	}
	sub := s.last.subject()
	if err := sub.fieldIs("name", s.expand(name)); err != nil {
		return err
	}
	if err := sub.fieldIs("available", "true"); err != nil {
		return err
	}
	return sub.nonEmpty("uid")
}

func (s *scenario) theIdentity() (identityRef, error) {
	if s.identities.current.uid == "" {
		return identityRef{}, fmt.Errorf("no identity was created in this scenario")
	}
	return s.identities.current, nil
}

func (s *scenario) identitiesInclude(ctx context.Context, which string) error {
	id, err := s.theIdentity()
	if err != nil {
		return err
	}
	listed, resp, err := s.teamIdentities(ctx)
	if err != nil {
		return err
	}
	found := false
	for _, a := range listed {
		found = found || str(a["uid"]) == id.uid
	}
	if want := which == "include"; found != want {
		return fmt.Errorf("expected the team's identities to %s identity %s\n%s", which, id.uid, resp.excerpt())
	}
	return nil
}

func (s *scenario) renameIdentity(ctx context.Context, name string) error {
	id, err := s.theIdentity()
	if err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]any{"name": name})
	return s.send(ctx, call{method: http.MethodPut, path: "/agent/identities/" + pathEscape(id.uid), body: body})
}

func (s *scenario) identityRenamed(name string) error {
	id, err := s.theIdentity()
	if err != nil {
		return err
	}
	if err := s.last.hasStatus(http.StatusOK); err != nil {
		return err
	}
	sub := s.last.subject()
	if err := sub.fieldIs("name", name); err != nil {
		return err
	}
	return sub.fieldIs("uid", id.uid)
}

func (s *scenario) deleteIdentity(ctx context.Context) error {
	id, err := s.theIdentity()
	if err != nil {
		return err
	}
	return s.send(ctx, call{method: http.MethodDelete, path: "/agent/identities/" + pathEscape(id.uid)})
}

func (s *scenario) identityDeleted() error { return s.last.hasStatus(http.StatusNoContent) }

// deleteDefaultIdentity deletes the identity the team lists first, its
// default.
func (s *scenario) deleteDefaultIdentity(ctx context.Context) error {
	listed, resp, err := s.teamIdentities(ctx)
	if err != nil {
		return err
	}
	if len(listed) == 0 {
		return fmt.Errorf("the team lists no identities\n%s", resp.excerpt())
	}
	return s.send(ctx, call{method: http.MethodDelete, path: "/agent/identities/" + pathEscape(str(listed[0]["uid"]))})
}

// createRunAsIdentity creates a team-owned run: without "team", a caller
// on one team starts a run of that team.
func (s *scenario) createRunAsIdentity(ctx context.Context, prompt string) error {
	id, err := s.theIdentity()
	if err != nil {
		return err
	}
	return s.create(ctx, "/agent/run", "", map[string]any{"prompt": prompt, "agent_identity_uid": id.uid})
}

func (s *scenario) createRunAsUnknownIdentity(ctx context.Context) error {
	body, _ := json.Marshal(map[string]any{"prompt": "Tag the release", "team": true, "agent_identity_uid": "agent-" + s.unknownID})
	return s.send(ctx, call{method: http.MethodPost, path: "/agent/run", body: body})
}

func (s *scenario) runCreatedByIdentity(ctx context.Context) error {
	id, err := s.theIdentity()
	if err != nil {
		return err
	}
	if s.current == nil {
		return errNoRun
	}
	if _, err := s.fetch(ctx, s.current); err != nil {
		return err
	}
	return s.details().fieldIs("creator.display_name", id.name)
}

func (s *scenario) issueIdentityKey(ctx context.Context) error {
	id, err := s.theIdentity()
	if err != nil {
		return err
	}
	m, err := s.api.controlCall(ctx, http.MethodPost, "/identities/"+pathEscape(id.uid)+"/keys", nil)
	if err != nil {
		return err
	}
	s.identities.current.key = str(m["api_key"])
	return nil
}

// identityKeyReads lists the team's runs with the identity's key: a 200
// while the identity lives, a 401 once it is deleted.
func (s *scenario) identityKeyReads(ctx context.Context, which string) error {
	if s.identities.current.key == "" {
		return fmt.Errorf("no API key was issued for the identity")
	}
	resp, err := s.api.do(ctx, call{method: http.MethodGet, path: "/agent/runs", auth: auth{header: "Bearer " + s.identities.current.key}})
	if err != nil {
		return err
	}
	if which == "reads" {
		return resp.hasStatus(http.StatusOK)
	}
	return resp.isProblem(http.StatusUnauthorized, "authentication_required")
}

// identityHasRequiredFields checks the fields oz-agent-sdk 1.4.0-alpha.6
// declares required on an identity, with their types: code reading
// agent.skills.length must not break.
func (s *scenario) identityHasRequiredFields() error {
	doc, err := s.last.object()
	if err != nil {
		return err
	}
	var missing []string
	check := func(field string, ok func(any) bool) {
		if v, present := lookup(doc, field); !present || !ok(v) {
			missing = append(missing, fmt.Sprintf("%s (got %s)", field, show(v)))
		}
	}
	isString := func(v any) bool { _, ok := v.(string); return ok }
	isBool := func(v any) bool { _, ok := v.(bool); return ok }
	isList := func(v any) bool { _, ok := v.([]any); return ok }
	for _, f := range []string{"uid", "name", "created_at", "updated_at", "default_runner_uid"} {
		check(f, isString)
	}
	check("available", isBool)
	check("skills", isList)
	check("secrets", isList)
	check("memory.attached_stores", isList)
	check("memory.auto_memory.enabled", isBool)
	if len(missing) > 0 {
		return fmt.Errorf("%s: the identity lacks fields the newest client needs: %s\n%s", s.last.op, strings.Join(missing, ", "), s.last.excerpt())
	}
	return nil
}
