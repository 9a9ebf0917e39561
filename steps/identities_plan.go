package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// The plan's edge (features/identities.feature, @plan-edge). The document
// says a create beyond the plan's number of agents is a 403, not what that
// number is: the operator gives it (Config.IdentityPlan). The scenario
// fills the plan to that number and expects the next create refused. It
// needs the team's identities to hold still meanwhile: when polling, it
// holds Suite.identityWrites alone, and every other scenario that writes an
// identity holds it shared from its first write to its end.

// holdIdentitiesIfWriting takes the shared hold before the scenario's first
// write of an identity, when polling.
func (s *scenario) holdIdentitiesIfWriting(c call) {
	if s.api.control != nil || s.identities.held != "" || c.method == http.MethodGet || !strings.HasPrefix(c.path, "/agent/identities") {
		return
	}
	s.suite.identityWrites.RLock()
	s.identities.held = "shared"
}

// releaseIdentities lets go of the scenario's hold, if any.
func (s *scenario) releaseIdentities() {
	switch s.identities.held {
	case "alone":
		s.suite.identityWrites.Unlock()
	case "shared":
		s.suite.identityWrites.RUnlock()
	}
	s.identities.held = ""
}

// fillIdentityPlan creates identities until the team has as many as its
// plan allows. Each create must succeed: the team is below its plan.
func (s *scenario) fillIdentityPlan(ctx context.Context) error {
	plan := s.suite.cfg.IdentityPlan
	listed, _, err := s.teamIdentities(ctx)
	if err != nil {
		return err
	}
	if len(listed) >= plan {
		return s.inconclusive(fmt.Sprintf("the team already has %d agent identities and its plan allows %d (--identity-plan): there is no room left to find the plan's edge by creating one", len(listed), plan))
	}
	for have := len(listed); have < plan; have++ {
		body, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("Plan edge %d %s", have+1, s.label)})
		resp, err := s.ask(ctx, call{method: http.MethodPost, path: "/agent/identities", body: body})
		if err != nil {
			return err
		}
		if resp.status != http.StatusCreated {
			return fmt.Errorf("the team had %d agent identities and its plan allows %d (--identity-plan), yet creating one more answered %d: the plan allows fewer than it says\n%s",
				have, plan, resp.status, resp.excerpt())
		}
		var made struct {
			UID string `json:"uid"`
		}
		if err := resp.json(&made); err != nil {
			return err
		}
		s.identities.madeForPlan = append(s.identities.madeForPlan, made.UID)
	}
	return nil
}

// oneMoreIdentityRefused creates one identity beyond the plan and expects a
// 403 problem.
func (s *scenario) oneMoreIdentityRefused(ctx context.Context) error {
	body, _ := json.Marshal(map[string]any{"name": "One too many " + s.label})
	resp, err := s.ask(ctx, call{method: http.MethodPost, path: "/agent/identities", body: body})
	if err != nil {
		return err
	}
	if resp.status == http.StatusCreated {
		var made struct {
			UID string `json:"uid"`
		}
		if resp.json(&made) == nil {
			s.identities.madeForPlan = append(s.identities.madeForPlan, made.UID)
		}
		return fmt.Errorf("the team has as many agent identities as its plan allows (%d, --identity-plan), yet one more was created", s.suite.cfg.IdentityPlan)
	}
	return resp.hasStatus(http.StatusForbidden)
}

// deleteIdentitiesMade deletes the identities the scenario created to fill
// the plan; each delete must answer 204.
func (s *scenario) deleteIdentitiesMade(ctx context.Context) error {
	for len(s.identities.madeForPlan) > 0 {
		uid := s.identities.madeForPlan[0]
		resp, err := s.ask(ctx, call{method: http.MethodDelete, path: "/agent/identities/" + pathEscape(uid)})
		if err != nil {
			return err
		}
		if err := resp.hasStatus(http.StatusNoContent); err != nil {
			return err
		}
		s.identities.madeForPlan = s.identities.madeForPlan[1:]
		s.identities.deletedForPlan = append(s.identities.deletedForPlan, uid)
	}
	return nil
}

// identitiesMadeAreGone checks that the team no longer lists any identity
// deleteIdentitiesMade deleted.
func (s *scenario) identitiesMadeAreGone(ctx context.Context) error {
	listed, resp, err := s.teamIdentities(ctx)
	if err != nil {
		return err
	}
	for _, a := range listed {
		if uid := str(a["uid"]); slices.Contains(s.identities.deletedForPlan, uid) {
			return fmt.Errorf("identity %s was deleted (204), yet the team still lists it\n%s", uid, resp.excerpt())
		}
	}
	return nil
}
