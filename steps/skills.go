package steps

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Steps of features/agents.feature: the agents (skills) a
// caller can run, GET /agent. (The team's agent identities, which runs act
// as, are identities.go's.)

// registerAgents registers the steps of GET /agent's agents (skills).
func (s *scenario) registerAgents(sc stepContext) {
	sc.Step(`^I list the agents$`, s.listAgents)
	sc.Step(`^I list the agents with "([^"]*)"$`, s.listAgentsWith)
	sc.Step(`^the agents are ordered by name and every variant says where it lives$`, s.agentsWellFormed)
}

func (s *scenario) listAgents(ctx context.Context) error { return s.listAgentsWith(ctx, "") }

func (s *scenario) listAgentsWith(ctx context.Context, q string) error {
	query, err := url.ParseQuery(q)
	if err != nil {
		return err
	}
	return s.send(ctx, call{method: http.MethodGet, path: "/agent", query: query})
}

func (s *scenario) agentsWellFormed() error {
	if err := s.last.expectStatus(http.StatusOK); err != nil {
		return err
	}
	var doc struct {
		Agents []struct {
			Name     string `json:"name"`
			Variants []struct {
				ID     string            `json:"id"`
				Source map[string]string `json:"source"`
			} `json:"variants"`
		} `json:"agents"`
	}
	if err := s.last.json(&doc); err != nil {
		return err
	}
	names := make([]string, len(doc.Agents))
	for i, a := range doc.Agents {
		names[i] = a.Name
	}
	if !inNameOrder(names) {
		return fmt.Errorf("%s: agents are not ordered by name: %s", s.last.op, strings.Join(names, ", "))
	}
	for _, a := range doc.Agents {
		for _, v := range a.Variants {
			if want := v.Source["owner"] + "/" + v.Source["name"] + ":" + v.Source["skill_path"]; v.ID != want {
				return fmt.Errorf("agent %q: variant id %q, but its source says %q", a.Name, v.ID, want)
			}
		}
	}
	return nil
}
