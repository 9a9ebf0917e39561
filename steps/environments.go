package steps

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentruns/agentruns/rules"
)

// Steps of features/environments_and_models.feature: the environments a
// run executes in and the models it thinks with.

// registerEnvironments registers the steps of environments and models.
func (s *scenario) registerEnvironments(sc stepContext) {
	sc.Step(`^I list the models$`, s.listModels)
	sc.Step(`^the default model is one of the listed models$`, s.defaultModelIsListed)
	sc.Step(`^the run's model is the default model$`, s.runHasDefaultModel)
	sc.Step(`^I list the environments$`, func(ctx context.Context) error { return s.listEnvironments(ctx, "") })
	sc.Step(`^I list the environments with "([^"]*)"$`, s.listEnvironments)
	sc.Step(`^the listed environments are ordered by (name|last update)$`, s.environmentsOrdered)
	sc.Step(`^I create a run in the first listed environment$`, s.createInFirstEnvironment)
	sc.Step(`^I create another run in that environment$`, s.createInThatEnvironment)
	sc.Step(`^that environment shows the run as its last task, in state "([A-Z]+)"$`, s.environmentShowsRun)
	sc.Step(`^that environment's last run started when the run did$`, s.environmentLastRanWhenRunStarted)
	sc.Step(`^that environment says its setup (failed|did not fail)$`, s.environmentSetupFailed)
	sc.Step(`^that environment shows the run, or a newer one, as its last task$`, s.environmentShowsNewest)
	sc.Step(`^I create a run with the failing prompt in the last listed environment$`, s.createFailingInLastEnvironment)
	sc.Step(`^that environment does not say its setup failed, the run having failed after it started$`, s.environmentSetupNotFailedAfterStart)
}

func (s *scenario) listModels(ctx context.Context) error {
	return s.send(ctx, call{method: http.MethodGet, path: "/agent/models"})
}

func (s *scenario) listEnvironments(ctx context.Context, query string) error {
	return s.send(ctx, call{method: http.MethodGet, path: "/agent/environments", query: parseQuery(query)})
}

func (s *scenario) defaultModelIsListed() error {
	if err := s.last.ok("listing models"); err != nil {
		return err
	}
	doc, err := s.last.object()
	if err != nil {
		return err
	}
	def := str(doc["default_model_id"])
	models, _ := doc["models"].([]any)
	for _, m := range models {
		if mm, ok := m.(map[string]any); ok && str(mm["id"]) == def {
			return nil
		}
	}
	return fmt.Errorf("default_model_id %q is not among the %d listed models\n%s", def, len(models), s.last.excerpt())
}

func (s *scenario) runHasDefaultModel(ctx context.Context) error {
	var doc struct {
		Default string `json:"default_model_id"`
	}
	if _, err := s.getJSON(ctx, "/agent/models", nil, &doc); err != nil {
		return err
	}
	return s.details().fieldIs("agent_config.model_id", doc.Default)
}

// environments lists the environments; the answer is returned, not kept as
// the last response.
func (s *scenario) environments(ctx context.Context, query url.Values) ([]map[string]any, *response, error) {
	var doc struct {
		Environments []map[string]any `json:"environments"`
	}
	resp, err := s.getJSON(ctx, "/agent/environments", query, &doc)
	return doc.Environments, resp, err
}

// environmentsOrdered checks the order of the last listing. Names are in
// alphabetical order as people read it: letters compared without regard
// to case ("backend, Data pipelines, web-app"), though a server comparing
// them as bytes is not refused either, the document saying no more than
// "alphabetical".
func (s *scenario) environmentsOrdered(by string) error {
	if err := s.last.ok("listing environments"); err != nil {
		return err
	}
	var doc struct {
		Environments []map[string]any `json:"environments"`
	}
	if err := s.last.json(&doc); err != nil {
		return err
	}
	keys := make([]string, 0, len(doc.Environments))
	for _, e := range doc.Environments {
		if by == "name" {
			keys = append(keys, str(mustLookup(e, "config.name")))
			continue
		}
		t, err := timestamp(e, "last_updated")
		if err != nil {
			return err
		}
		keys = append(keys, t.UTC().Format("2006-01-02T15:04:05.000000000Z"))
	}
	ordered := inNameOrder(keys)
	if by != "name" {
		ordered = descending(keys)
	}
	if !ordered {
		return fmt.Errorf("%s: environments are not ordered by %s: %s", s.last.op, by, strings.Join(keys, ", "))
	}
	return nil
}

// inNameOrder says whether names are in alphabetical order, with or without
// regard to case (the rule the validating proxy holds too).
var inNameOrder = rules.InNameOrder

func descending(keys []string) bool {
	for i := 1; i < len(keys); i++ {
		if keys[i-1] < keys[i] {
			return false
		}
	}
	return true
}

func (s *scenario) createInFirstEnvironment(ctx context.Context) error {
	envs, resp, err := s.environments(ctx, nil)
	if err != nil {
		return err
	}
	if len(envs) == 0 {
		return fmt.Errorf("%s: the server lists no environments to run in", resp.op)
	}
	s.cache["environment"] = str(envs[0]["uid"])
	return s.createInThatEnvironment(ctx)
}

// createInThatEnvironment creates a run in the environment chosen before,
// a moment after the scenario's last run, so that it is the newer.
func (s *scenario) createInThatEnvironment(ctx context.Context) error {
	return s.createInEnvironment(ctx, "Check the environment")
}

// createFailingInLastEnvironment creates a run with the failing prompt in
// the last environment listed, away from the first, where the other
// scenarios start their runs: a newer run there would leave nothing to
// judge.
func (s *scenario) createFailingInLastEnvironment(ctx context.Context) error {
	envs, resp, err := s.environments(ctx, nil)
	if err != nil {
		return err
	}
	if len(envs) == 0 {
		return s.skip(resp.op + ": the server lists no environments to run in")
	}
	s.cache["environment"] = str(envs[len(envs)-1]["uid"])
	return s.createInEnvironment(ctx, s.suite.cfg.FailingPrompt)
}

func (s *scenario) createInEnvironment(ctx context.Context, prompt string) error {
	env, ok := s.cache["environment"]
	if !ok {
		return fmt.Errorf("no environment chosen yet")
	}
	if s.current != nil {
		if err := s.aMoment(ctx); err != nil {
			return err
		}
	}
	return s.create(ctx, "/agent/run", "", map[string]any{"prompt": prompt, "config": map[string]any{"environment_id": env}})
}

func (s *scenario) thatEnvironment(ctx context.Context) (subject, error) {
	uid, ok := s.cache["environment"]
	if !ok {
		return subject{}, fmt.Errorf("no environment chosen yet")
	}
	envs, resp, err := s.environments(ctx, nil)
	if err != nil {
		return subject{}, err
	}
	for _, e := range envs {
		if str(e["uid"]) == uid {
			return subject{what: "environment " + uid, doc: e}, nil
		}
	}
	return subject{}, fmt.Errorf("environment %s is no longer listed\n%s", uid, resp.excerpt())
}

func (s *scenario) environmentShowsRun(ctx context.Context, state string) error {
	env, err := s.thatEnvironment(ctx)
	if err != nil {
		return err
	}
	if err := env.fieldIs("last_task_created.id", s.currentID()); err != nil {
		return err
	}
	return env.fieldIs("last_task_created.state", state)
}

func (s *scenario) environmentLastRanWhenRunStarted(ctx context.Context) error {
	env, err := s.thatEnvironment(ctx)
	if err != nil {
		return err
	}
	if s.current == nil {
		return errNoRun
	}
	run, err := s.fetch(ctx, s.current)
	if err != nil {
		return err
	}
	started, err := timestamp(run, "started_at")
	if err != nil {
		return err
	}
	last, err := timestamp(env.doc, "last_task_run_timestamp")
	if err != nil {
		return err
	}
	if !last.Equal(started) {
		return fmt.Errorf("%s: last_task_run_timestamp %s, but the run started at %s", env.what, last.Format(time.RFC3339Nano), started.Format(time.RFC3339Nano))
	}
	return nil
}

func (s *scenario) environmentSetupFailed(ctx context.Context, which string) error {
	env, err := s.thatEnvironment(ctx)
	if err != nil {
		return err
	}
	return env.fieldIs("setup_failed", fmt.Sprint(which == "failed"))
}

// lastTask is what an environment shows of its newest run. The document
// shows last_task_created only if available: a server that leaves it out
// leaves nothing to judge, and the scenario is skipped, saying so.
func (s *scenario) lastTask(ctx context.Context) (subject, map[string]any, error) {
	env, err := s.thatEnvironment(ctx)
	if err != nil {
		return subject{}, nil, err
	}
	last, ok := env.doc["last_task_created"].(map[string]any)
	if !ok {
		return subject{}, nil, s.skip(env.what + " shows no last_task_created, which the document shows only if available, so its newest run cannot be judged")
	}
	return env, last, nil
}

// environmentShowsNewest checks that an environment names the scenario's
// newest run as its last task, or a run created no earlier (on a shared
// server another caller may start one in between), never one of the runs
// the scenario created before it.
func (s *scenario) environmentShowsNewest(ctx context.Context) error {
	if s.current == nil {
		return errNoRun
	}
	env, last, err := s.lastTask(ctx)
	if err != nil {
		return err
	}
	id := str(last["id"])
	if id == s.current.id {
		return nil
	}
	for _, r := range s.mine.runs {
		if r.id == id {
			return fmt.Errorf("%s shows run %s as its last task, an older run than %s, created after it in the same environment", env.what, id, s.current.id)
		}
	}
	run, err := s.fetch(ctx, s.current)
	if err != nil {
		return err
	}
	mine, err := timestamp(run, "created_at")
	if err != nil {
		return err
	}
	shown, err := timestamp(last, "created_at")
	if err != nil {
		return fmt.Errorf("%s: last_task_created: %w", env.what, err)
	}
	if shown.Before(mine) {
		return fmt.Errorf("%s shows run %s, created at %s, as its last task; run %s was created later, at %s", env.what, id,
			shown.Format(time.RFC3339Nano), s.current.id, mine.Format(time.RFC3339Nano))
	}
	return nil
}

// environmentSetupNotFailedAfterStart judges setup_failed by the document's
// words, "true when its latest run failed while setting up, before the
// agent began": a run that failed after it started (it shows started_at)
// did not fail in its setup. A run that failed before it started, or an
// environment that now shows a newer run, leaves nothing to judge.
func (s *scenario) environmentSetupNotFailedAfterStart(ctx context.Context) error {
	if s.current == nil {
		return errNoRun
	}
	run, err := s.fetch(ctx, s.current)
	if err != nil {
		return err
	}
	if st := str(run["state"]); st != "FAILED" && st != "ERROR" {
		return fmt.Errorf("run %s, created with the failing prompt %q, ended in %s: expected FAILED or ERROR (is --failing-prompt one the server fails?)", s.current.id, s.suite.cfg.FailingPrompt, st)
	}
	if _, started := run["started_at"].(string); !started {
		return s.inconclusive(fmt.Sprintf("run %s failed before it started, so its environment's setup may well have failed", s.current.id))
	}
	env, last, err := s.lastTask(ctx)
	if err != nil {
		return err
	}
	if str(last["id"]) != s.current.id {
		return s.inconclusive(fmt.Sprintf("%s now shows run %s as its last task, a newer run than %s", env.what, str(last["id"]), s.current.id))
	}
	return env.fieldIs("setup_failed", "false")
}
