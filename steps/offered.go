package steps

import (
	"context"
	"fmt"
	"strings"

	"github.com/cucumber/godog"
)

// A run's configuration names a model, an environment and a skill, and the
// published document lets a server refuse any it did not offer (400 for an
// invalid config, 403 for a resource the caller may not use; models are
// those listed as available). So a scenario never invents them: it asks the
// server what it offers (GET /agent/models, GET /agent/environments, GET
// /agent) and names those, as "{a model}", "{another model}",
// "{an environment}", "{another environment}", "{a skill}" and
// "{another skill}". A server that offers too few has the scenario skipped,
// saying so.

// offeredKinds maps each placeholder to the kind of reference and which of
// those offered it takes.
var offeredKinds = map[string]struct {
	kind  string
	index int
}{
	"a model": {"models", 0}, "another model": {"models", 1},
	"an environment": {"environments", 0}, "another environment": {"environments", 1},
	"a skill": {"skills", 0}, "another skill": {"skills", 1},
}

// offersRoom is what the server offers, read once per scenario.
type offersRoom struct {
	byKind map[string][]string // the ids the server offers, by kind
}

// offered resolves one of the placeholders of offeredKinds; ok is false
// for any other key.
func (s *scenario) offered(ctx context.Context, key string) (value string, ok bool, err error) {
	k, ok := offeredKinds[key]
	if !ok {
		return "", false, nil
	}
	if s.offers.byKind == nil {
		s.offers.byKind = map[string][]string{}
	}
	ids, read := s.offers.byKind[k.kind]
	if !read {
		if ids, err = s.readOffers(ctx, k.kind); err != nil {
			return "", true, err
		}
		s.offers.byKind[k.kind] = ids
	}
	if k.index >= len(ids) {
		return "", true, s.skip(fmt.Sprintf("needs %d %s the server offers, and it offers %d (%s)",
			k.index+1, k.kind, len(ids), strings.Join(ids, ", ")))
	}
	return ids[k.index], true, nil
}

// readOffers lists the ids of one kind of reference the server offers.
// Models that say why they are disabled are not offered; the default model
// comes last, as a server may resolve it to another.
func (s *scenario) readOffers(ctx context.Context, kind string) ([]string, error) {
	var ids []string
	switch kind {
	case "models":
		var doc struct {
			Default string `json:"default_model_id"`
			Models  []struct {
				ID            string `json:"id"`
				DisableReason string `json:"disable_reason"`
			} `json:"models"`
		}
		if _, err := s.getJSON(ctx, "/agent/models", nil, &doc); err != nil {
			return nil, err
		}
		var def []string
		for _, m := range doc.Models {
			switch {
			case m.DisableReason != "" || m.ID == "":
			case m.ID == doc.Default:
				def = append(def, m.ID)
			default:
				ids = append(ids, m.ID)
			}
		}
		ids = append(ids, def...)
	case "environments":
		envs, _, err := s.environments(ctx, nil)
		if err != nil {
			return nil, err
		}
		for _, e := range envs {
			if id := str(e["uid"]); id != "" {
				ids = append(ids, id)
			}
		}
	case "skills":
		var doc struct {
			Agents []struct {
				Name     string `json:"name"`
				Variants []struct {
					ID string `json:"id"`
				} `json:"variants"`
			} `json:"agents"`
		}
		if _, err := s.getJSON(ctx, "/agent", nil, &doc); err != nil {
			return nil, err
		}
		for _, a := range doc.Agents {
			for _, v := range a.Variants {
				if v.ID != "" {
					ids = append(ids, v.ID)
					s.cache["name of skill "+v.ID] = a.Name
				}
			}
		}
	}
	return ids, nil
}

// skip ends the scenario as skipped, saying why: it cannot apply to this
// server.
func (s *scenario) skip(reason string) error {
	s.skipReason = reason
	fmt.Fprintf(s.suite.cfg.Log, "skipped: %s\n", reason)
	return godog.ErrSkip
}

// inconclusive ends the scenario as skipped when the server made it
// impossible to judge (a run that ended in ERROR on its own, a legal
// transient platform error, when the scenario needed another ending): it is
// reported with the reason, and does not fail.
func (s *scenario) inconclusive(reason string) error {
	return s.skip("inconclusive: " + reason)
}

// runNamedAfterItsSkill checks that a run started from a skill alone is
// named as GET /agent names that skill.
func (s *scenario) runNamedAfterItsSkill() error {
	if s.current == nil {
		return errNoRun
	}
	skill := str(s.current.sent["skill"])
	name, ok := s.cache["name of skill "+skill]
	if !ok {
		return fmt.Errorf("the run was not started from a skill the server offers (skill %q)", skill)
	}
	return s.details().fieldIs("agent_config.name", name)
}
