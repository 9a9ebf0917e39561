package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/cucumber/godog"
)

// Steps of the catalogue (environments, models), agent identities and
// run-to-run messages. Values a scenario needs later are remembered under
// a name and written back as "{name}" in paths and bodies.

func (s *scenario) registerCatalogue(sc *godog.ScenarioContext) {
	// Any request, and remembering what it answered.
	sc.Step(`^I send "(GET|POST|PUT|DELETE) ([^"]*)"$`, s.sendPlain)
	sc.Step(`^I send "(POST|PUT) ([^"]*)" with the body (.*)$`, s.sendWithBody)
	sc.Step(`^I remember the response field "([^"]*)" as "([^"]*)"$`, s.rememberField)
	sc.Step(`^I remember the run as "([^"]*)"$`, s.rememberRun)
	sc.Step(`^the response field "([^"]*)" is the remembered "([^"]*)"$`, s.responseFieldIsRemembered)
	sc.Step(`^the response field "([^"]*)" is null or absent$`, s.responseFieldIsNull)
	sc.Step(`^the response is a list of (\d+) items?$`, s.responseIsListOf)
	sc.Step(`^item (\d+) of the response has "([^"]*)" (null|set)$`, s.itemFieldNullOrSet)

	// Environments and models.
	sc.Step(`^the default model is one of the listed models$`, s.defaultModelIsListed)
	sc.Step(`^the run's model is the default model$`, s.runHasDefaultModel)
	sc.Step(`^the listed environments are ordered by (name|last update)$`, s.environmentsOrdered)
	sc.Step(`^I create a run in the first listed environment$`, s.createInFirstEnvironment)
	sc.Step(`^I create a run in an environment my team cannot see$`, s.createInHiddenEnvironment)
	sc.Step(`^that environment shows the run as its last task, in state "([A-Z]+)"$`, s.environmentShowsRun)
	sc.Step(`^that environment's last run started when the run did$`, s.environmentLastRanWhenRunStarted)
	sc.Step(`^that environment says its setup (failed|did not fail)$`, s.environmentSetupFailed)

	// Agent identities.
	sc.Step(`^the listing of agents (holds|does not hold) the remembered "([^"]*)"$`, s.agentsHold)
	sc.Step(`^the mock issues an API key for the remembered agent "([^"]*)"$`, s.issueAgentKey)
	sc.Step(`^I send "GET ([^"]*)" with the agent's API key$`, s.sendWithAgentKey)
}

func (s *scenario) sendPlain(ctx context.Context, method, path string) error {
	path, err := s.resolve(ctx, path)
	if err != nil {
		return err
	}
	path, query, _ := strings.Cut(path, "?")
	return s.send(ctx, call{method: method, path: path, query: parseQuery(query)})
}

func (s *scenario) sendWithBody(ctx context.Context, method, path, body string) error {
	path, err := s.resolve(ctx, path)
	if err != nil {
		return err
	}
	if body, err = s.resolve(ctx, body); err != nil {
		return err
	}
	return s.send(ctx, call{method: method, path: path, body: []byte(body)})
}

func (s *scenario) rememberField(field, name string) error {
	if s.last == nil {
		return fmt.Errorf("no response yet")
	}
	doc, err := s.last.object()
	if err != nil {
		return err
	}
	v := str(mustLookup(doc, field))
	if v == "" {
		return fmt.Errorf("%s: expected a non-empty %q to remember\n%s", s.last.op, field, s.last.excerpt())
	}
	s.cache[name] = v
	return nil
}

func (s *scenario) rememberRun(name string) error {
	if s.current == nil {
		return errNoRun
	}
	s.cache[name] = s.current.id
	return nil
}

func (s *scenario) responseFieldIsRemembered(field, name string) error {
	want, ok := s.cache[name]
	if !ok {
		return fmt.Errorf("nothing remembered as %q", name)
	}
	return s.last.subject().fieldIs(field, want)
}

func (s *scenario) responseFieldIsNull(field string) error {
	sub := s.last.subject()
	if sub.err != nil {
		return sub.err
	}
	if v, _ := lookup(sub.doc, field); v != nil {
		return fmt.Errorf("expected %s's %q to be null or absent, got %s", sub.what, field, show(v))
	}
	return nil
}

// list is the last response as a JSON array.
func (s *scenario) list() ([]any, error) {
	if s.last == nil {
		return nil, fmt.Errorf("no response yet")
	}
	if err := s.last.ok("listing"); err != nil {
		return nil, err
	}
	var items []any
	if err := json.Unmarshal(s.last.body, &items); err != nil {
		return nil, fmt.Errorf("%s: expected a JSON array: %v\n%s", s.last.op, err, s.last.excerpt())
	}
	return items, nil
}

func (s *scenario) responseIsListOf(n int) error {
	items, err := s.list()
	if err != nil {
		return err
	}
	if len(items) != n {
		return fmt.Errorf("%s: expected %d items, got %d\n%s", s.last.op, n, len(items), s.last.excerpt())
	}
	return nil
}

func (s *scenario) itemFieldNullOrSet(i int, field, want string) error {
	items, err := s.list()
	if err != nil {
		return err
	}
	if i >= len(items) {
		return fmt.Errorf("%s: no item %d among %d", s.last.op, i, len(items))
	}
	m, _ := items[i].(map[string]any)
	v := m[field]
	if (v == nil) != (want == "null") {
		return fmt.Errorf("%s: expected item %d's %q to be %s, got %s", s.last.op, i, field, want, show(v))
	}
	return nil
}

// getObject sends a GET and returns the answer as an object.
func (s *scenario) getObject(ctx context.Context, path string, query string) (map[string]any, error) {
	if err := s.send(ctx, call{method: http.MethodGet, path: path, query: parseQuery(query)}); err != nil {
		return nil, err
	}
	if err := s.last.ok("GET " + path); err != nil {
		return nil, err
	}
	return s.last.object()
}

func (s *scenario) defaultModelIsListed() error {
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
	doc, err := s.getObject(ctx, "/agent/models", "")
	if err != nil {
		return err
	}
	return s.details().fieldIs("agent_config.model_id", str(doc["default_model_id"]))
}

func (s *scenario) listedEnvironments(ctx context.Context, query string) ([]map[string]any, error) {
	doc, err := s.getObject(ctx, "/agent/environments", query)
	if err != nil {
		return nil, err
	}
	raw, _ := doc["environments"].([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, e := range raw {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out, nil
}

func (s *scenario) environmentsOrdered(ctx context.Context, by string) error {
	doc, err := s.last.object()
	if err != nil {
		return err
	}
	raw, _ := doc["environments"].([]any)
	keys := make([]string, 0, len(raw))
	for _, e := range raw {
		m, _ := e.(map[string]any)
		if by == "name" {
			keys = append(keys, str(mustLookup(m, "config.name")))
		} else {
			t, err := timestamp(m, "last_updated")
			if err != nil {
				return err
			}
			keys = append(keys, t.UTC().Format("2006-01-02T15:04:05.000000000Z"))
		}
	}
	ordered := sort.SliceIsSorted(keys, func(i, j int) bool { return keys[i] < keys[j] })
	if by != "name" {
		ordered = sort.SliceIsSorted(keys, func(i, j int) bool { return keys[i] > keys[j] })
	}
	if !ordered {
		return fmt.Errorf("%s: environments are not ordered by %s: %s", s.last.op, by, strings.Join(keys, ", "))
	}
	return nil
}

func (s *scenario) createInFirstEnvironment(ctx context.Context) error {
	envs, err := s.listedEnvironments(ctx, "")
	if err != nil {
		return err
	}
	if len(envs) == 0 {
		return fmt.Errorf("the server lists no environments to run in")
	}
	s.cache["environment"] = str(envs[0]["uid"])
	return s.create(ctx, "/agent/run", "", map[string]any{"prompt": "Check the environment", "config": map[string]any{"environment_id": s.cache["environment"]}})
}

// hiddenEnvironments are fixture environments of the bundled mock that
// only one team sees; whichever the caller's team does not list is used.
var hiddenEnvironments = []string{"env-globex-ml", "env-acme-data"}

func (s *scenario) createInHiddenEnvironment(ctx context.Context) error {
	envs, err := s.listedEnvironments(ctx, "")
	if err != nil {
		return err
	}
	listed := map[string]bool{}
	for _, e := range envs {
		listed[str(e["uid"])] = true
	}
	for _, id := range hiddenEnvironments {
		if !listed[id] {
			body, _ := json.Marshal(map[string]any{"prompt": "x", "config": map[string]any{"environment_id": id}})
			return s.send(ctx, call{method: http.MethodPost, path: "/agent/run", body: body})
		}
	}
	return fmt.Errorf("the caller's team sees every environment of the mock's fixtures")
}

func (s *scenario) thatEnvironment(ctx context.Context) (map[string]any, error) {
	uid, ok := s.cache["environment"]
	if !ok {
		return nil, fmt.Errorf("no environment chosen yet")
	}
	envs, err := s.listedEnvironments(ctx, "")
	if err != nil {
		return nil, err
	}
	for _, e := range envs {
		if str(e["uid"]) == uid {
			return e, nil
		}
	}
	return nil, fmt.Errorf("environment %s is no longer listed\n%s", uid, s.last.excerpt())
}

func (s *scenario) environmentShowsRun(ctx context.Context, state string) error {
	e, err := s.thatEnvironment(ctx)
	if err != nil {
		return err
	}
	sub := subject{what: "environment " + s.cache["environment"], doc: e}
	if err := sub.fieldIs("last_task_created.id", s.currentID()); err != nil {
		return err
	}
	return sub.fieldIs("last_task_created.state", state)
}

func (s *scenario) environmentLastRanWhenRunStarted(ctx context.Context) error {
	e, err := s.thatEnvironment(ctx)
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
	last, err := timestamp(e, "last_task_run_timestamp")
	if err != nil {
		return err
	}
	if !last.Equal(started) {
		return fmt.Errorf("environment %s: last_task_run_timestamp %s, but the run started at %s", s.cache["environment"], last, started)
	}
	return nil
}

func (s *scenario) environmentSetupFailed(ctx context.Context, which string) error {
	e, err := s.thatEnvironment(ctx)
	if err != nil {
		return err
	}
	return subject{what: "environment " + s.cache["environment"], doc: e}.fieldIs("setup_failed", fmt.Sprint(which == "failed"))
}

func (s *scenario) agentsHold(ctx context.Context, which, name string) error {
	doc, err := s.getObject(ctx, "/agent/identities", "")
	if err != nil {
		return err
	}
	agents, _ := doc["agents"].([]any)
	found := false
	for _, a := range agents {
		if m, ok := a.(map[string]any); ok && str(m["uid"]) == s.cache[name] {
			found = true
		}
	}
	if found != (which == "holds") {
		return fmt.Errorf("expected the listing of agents to %s agent %s\n%s", strings.TrimSuffix(which, "s")+"", s.cache[name], s.last.excerpt())
	}
	return nil
}

func (s *scenario) issueAgentKey(ctx context.Context, name string) error {
	m, err := s.api.controlCall(ctx, http.MethodPost, "/identities/"+pathEscape(s.cache[name])+"/keys", nil)
	if err != nil {
		return err
	}
	s.cache["agent key"] = str(m["api_key"])
	return nil
}

func (s *scenario) sendWithAgentKey(ctx context.Context, path string) error {
	return s.sendAs(ctx, http.MethodGet, path, auth{header: "Bearer " + s.cache["agent key"]})
}
