package store

import (
	"sort"
	"strings"
	"time"

	"github.com/agentruns/agentruns/fixtures"
)

// The skills GET /agent lists: the skills found in the repositories of
// a team's environments, from the fixtures, with when a run of the team
// last used each. Nothing is cached, so a refresh has nothing to discard.

// SkillQuery is a request of the skills list.
type SkillQuery struct {
	Repo             string // "owner/name": only this repository's skills
	SortBy           string // "name" (default) or "last_run"
	IncludeMalformed bool
}

// SkillVariant is one SKILL.md as the skills list shows it.
type SkillVariant struct {
	Skill        fixtures.Skill
	Environments []fixtures.Environment // the caller's environments that clone its repository
	LastRun      time.Time              // zero: no run of the caller's team used it
}

// SkillGroup is the variants sharing one skill name (an item of GET /agent).
type SkillGroup struct {
	Name     string
	Variants []SkillVariant
}

// teamEnvironments are the environments a team may use: its own and those
// other teams share with it (environments.json).
func (s *Store) teamEnvironments(team string) []fixtures.Environment {
	var out []fixtures.Environment
	for _, e := range s.opts.Fixtures.Environments {
		if e.VisibleTo(team) {
			out = append(out, e)
		}
	}
	return out
}

// Environment is the fixtures' environment with uid, if a team has it.
func (s *Store) Environment(team, uid string) (fixtures.Environment, bool) {
	for _, e := range s.teamEnvironments(team) {
		if e.UID == uid {
			return e, true
		}
	}
	return fixtures.Environment{}, false
}

// ResolveSkill finds the fixtures' skill a `skill` or `skill_spec` value
// names, as the service reads them: "owner/repo:name", "owner/repo:path",
// or without the owner ("repo:name", "repo:path"), a repository of one of
// the team's environments. Malformed skills resolve to nothing.
func (s *Store) ResolveSkill(team, spec string) (fixtures.Skill, bool) {
	repo, which, ok := strings.Cut(spec, ":")
	if !ok {
		return fixtures.Skill{}, false
	}
	repos := map[string]bool{}
	if strings.Contains(repo, "/") {
		repos[repo] = true
	} else {
		for _, e := range s.teamEnvironments(team) {
			for _, r := range e.Repos {
				if _, name, _ := strings.Cut(r, "/"); name == repo {
					repos[r] = true
				}
			}
		}
	}
	for _, sk := range s.opts.Fixtures.Skills {
		if sk.Error == "" && repos[sk.Repo] && (sk.Path == which || sk.Name == which) {
			return sk, true
		}
	}
	return fixtures.Skill{}, false
}

// Skills lists the skills of p's team's environments, grouped by name.
func (ms *Session) Skills(p *fixtures.Principal, q SkillQuery) []SkillGroup {
	envs := ms.st.teamEnvironments(p.Team)
	repoEnvs := map[string][]fixtures.Environment{}
	for _, e := range envs {
		for _, r := range e.Repos {
			repoEnvs[r] = append(repoEnvs[r], e)
		}
	}
	lastRun := ms.lastSkillRuns(p)
	byName := map[string]*SkillGroup{}
	var names []string
	for _, sk := range ms.st.opts.Fixtures.Skills {
		_, offered := repoEnvs[sk.Repo]
		switch {
		case q.Repo != "" && sk.Repo != q.Repo,
			q.Repo == "" && !offered,
			sk.Error != "" && !q.IncludeMalformed:
			continue
		}
		name := sk.Name
		if name == "" { // a malformed skill without a readable name: its folder
			name = pathName(sk.Path)
		}
		a, ok := byName[name]
		if !ok {
			a = &SkillGroup{Name: name}
			byName[name] = a
			names = append(names, name)
		}
		envs := append([]fixtures.Environment{}, repoEnvs[sk.Repo]...)
		a.Variants = append(a.Variants, SkillVariant{Skill: sk, Environments: envs, LastRun: lastRun[sk.ID()]})
	}
	out := make([]SkillGroup, 0, len(names))
	for _, n := range names {
		a := byName[n]
		sort.Slice(a.Variants, func(i, j int) bool { return a.Variants[i].Skill.ID() < a.Variants[j].Skill.ID() })
		out = append(out, *a)
	}
	latest := func(a SkillGroup) (t time.Time) {
		for _, v := range a.Variants {
			if v.LastRun.After(t) {
				t = v.LastRun
			}
		}
		return t
	}
	sort.SliceStable(out, func(i, j int) bool {
		if q.SortBy == "last_run" {
			if ti, tj := latest(out[i]), latest(out[j]); !ti.Equal(tj) {
				return ti.After(tj) // most recent first; never run last
			}
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// lastSkillRuns maps each skill id to the creation of the newest run of
// p's team started from it.
func (ms *Session) lastSkillRuns(p *fixtures.Principal) map[string]time.Time {
	ms.catchUp()
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	resolved := map[string]string{} // skill_spec -> skill id ("" when unknown)
	out := map[string]time.Time{}
	for _, r := range ms.runs.list {
		if r.Team != p.Team || r.Config == nil || r.Config.SkillSpec == "" {
			continue
		}
		id, ok := resolved[r.Config.SkillSpec]
		if !ok {
			if sk, found := ms.st.ResolveSkill(p.Team, r.Config.SkillSpec); found {
				id = sk.ID()
			}
			resolved[r.Config.SkillSpec] = id
		}
		if id != "" && r.CreatedAt.After(out[id]) {
			out[id] = r.CreatedAt
		}
	}
	return out
}

// pathName is the folder a SKILL.md is in: "skills/triage/SKILL.md" gives "triage".
func pathName(p string) string {
	parts := strings.Split(strings.TrimSuffix(p, "/SKILL.md"), "/")
	return parts[len(parts)-1]
}
