package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/cucumber/godog"
)

// Creating runs and looking at one run.

// trackedRun is a run this scenario created.
type trackedRun struct {
	nick    string
	id      string
	sent    map[string]any   // the create request's body
	details map[string]any   // as last fetched
	looks   []map[string]any // every fetch while watching it
}

// roster is the runs a scenario created, oldest first; runs created from a
// table have a nickname (alpha, beta, ...).
type roster struct {
	runs   []*trackedRun
	byNick map[string]*trackedRun
}

func (m *roster) add(r *trackedRun) {
	m.runs = append(m.runs, r)
	if r.nick != "" {
		if m.byNick == nil {
			m.byNick = map[string]*trackedRun{}
		}
		m.byNick[r.nick] = r
	}
}

func (m *roster) named(nick string) (*trackedRun, error) {
	if r, ok := m.byNick[nick]; ok {
		return r, nil
	}
	return nil, fmt.Errorf("no run called %q was created in this scenario", nick)
}

// pick turns "alpha and beta", "no runs" or "the runs I created" into runs.
func (m *roster) pick(names string) ([]*trackedRun, error) {
	if strings.TrimSpace(names) == "the runs I created" {
		return m.runs, nil
	}
	out := []*trackedRun{}
	for _, n := range parseNames(names) {
		r, err := m.named(n)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// nick names a run for messages: its nickname, or its id.
func (m *roster) nick(id string) string {
	for _, r := range m.runs {
		if r.id == id && r.nick != "" {
			return r.nick
		}
	}
	return id
}

func (m *roster) nameOf(r *trackedRun) string {
	if r.nick != "" {
		return fmt.Sprintf("%s (%s)", r.nick, r.id)
	}
	return r.id
}

func (m *roster) list(runs []*trackedRun) string {
	if len(runs) == 0 {
		return "no runs"
	}
	names := make([]string, len(runs))
	for i, r := range runs {
		names[i] = m.nameOf(r)
	}
	return strings.Join(names, ", ")
}

// describe names a listed run for a message, saying whose it is.
func (m *roster) describe(run map[string]any) string {
	id := str(run["run_id"])
	for _, r := range m.runs {
		if r.id == id {
			return "run " + m.nameOf(r)
		}
	}
	return fmt.Sprintf("run %s (not this scenario's: config name %s, model %s, state %s)", id,
		show(mustLookup(run, "agent_config.name")), show(mustLookup(run, "agent_config.model_id")), show(run["state"]))
}

// Steps that create runs.

func (s *scenario) createRunWithPrompt(ctx context.Context, prompt string) error {
	return s.create(ctx, "/agent/run", "", map[string]any{"prompt": prompt})
}

// createRunWithFailingPrompt creates a run with the prompt that the
// operator says the server fails (Config.FailingPrompt).
func (s *scenario) createRunWithFailingPrompt(ctx context.Context) error {
	return s.create(ctx, "/agent/run", "", map[string]any{"prompt": s.suite.cfg.FailingPrompt, "config": map[string]any{"name": s.label}})
}

func (s *scenario) createRunWithPromptAnd(ctx context.Context, prompt string, t *godog.Table) error {
	return s.createFromTable(ctx, "/agent/run", map[string]any{"prompt": prompt}, t)
}

func (s *scenario) createRunWith(ctx context.Context, t *godog.Table) error {
	return s.createFromTable(ctx, "/agent/run", map[string]any{}, t)
}

func (s *scenario) createRunThrough(ctx context.Context, path, prompt string, t *godog.Table) error {
	return s.createFromTable(ctx, path, map[string]any{"prompt": prompt}, t)
}

// createdRuns creates n runs named {label}, a moment apart.
func (s *scenario) createdRuns(ctx context.Context, n int) error {
	if shared, err := s.follower(ctx); err != nil || shared {
		return err // shared_runs.go
	}
	for i := 1; i <= n; i++ {
		body := map[string]any{
			"prompt": fmt.Sprintf("Contract suite run %d of %d: say hello", i, n),
			"config": map[string]any{"name": s.label},
		}
		if err := s.createSpaced(ctx, i, fmt.Sprintf("run %d", i), body); err != nil {
			return err
		}
	}
	return nil
}

// createdTheseRuns creates one run per table row, in order and a moment
// apart. The "run" column is the run's nickname; the other columns are
// request fields ("config.model_id"). Runs are named {label} unless the table
// says otherwise.
func (s *scenario) createdTheseRuns(ctx context.Context, t *godog.Table) error {
	if shared, err := s.follower(ctx); err != nil || shared {
		return err // shared_runs.go
	}
	if len(t.Rows) < 2 || t.Rows[0].Cells[0].Value != "run" {
		return fmt.Errorf(`the table needs a header row starting with "run", then one row per run`)
	}
	header := t.Rows[0].Cells
	for i, row := range t.Rows[1:] {
		nick := row.Cells[0].Value
		body := map[string]any{
			"prompt": "Contract suite run " + nick + ": say hello",
			"config": map[string]any{"name": s.label},
		}
		for j, cell := range row.Cells[1:] {
			if err := s.setField(ctx, body, header[j+1].Value, cell.Value); err != nil {
				return err
			}
		}
		if err := s.createSpaced(ctx, i+1, nick, body); err != nil {
			return err
		}
	}
	return nil
}

// createSpaced creates the i-th of several runs a moment after the one
// before, so that creation times differ and order them: a few milliseconds
// of the mock's clock, or Config.Spacing of real time elsewhere.
func (s *scenario) createSpaced(ctx context.Context, i int, nick string, body map[string]any) error {
	if i > 1 {
		if err := s.aMoment(ctx); err != nil {
			return err
		}
	}
	return s.create(ctx, "/agent/run", nick, body)
}

func (s *scenario) aMoment(ctx context.Context) error {
	if s.api.control != nil {
		return s.api.advanceClock(ctx, 10*time.Millisecond)
	}
	return s.suite.pause(ctx, s.suite.cfg.Spacing)
}

// createFromTable creates a run from body plus the rows of a two-column table
// of request fields and values.
func (s *scenario) createFromTable(ctx context.Context, path string, body map[string]any, t *godog.Table) error {
	for _, row := range t.Rows {
		if len(row.Cells) != 2 {
			return fmt.Errorf("each row needs a field and a value")
		}
		if err := s.setField(ctx, body, row.Cells[0].Value, row.Cells[1].Value); err != nil {
			return err
		}
	}
	return s.create(ctx, path, "", body)
}

// setField sets a dotted request field from a table cell.
func (s *scenario) setField(ctx context.Context, body map[string]any, field, cell string) error {
	text, err := s.resolve(ctx, cell)
	if err != nil {
		return err
	}
	v, err := tableValue(text)
	if err != nil {
		return err
	}
	setPath(body, field, v)
	return nil
}

// create posts body to path and expects a new run back; that run becomes
// "the run".
func (s *scenario) create(ctx context.Context, path, nick string, body map[string]any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	headers := http.Header{}
	if s.fate != "" {
		headers.Set("X-Mock-Fate", s.fate)
		s.fate = ""
	}
	resp, err := s.ask(ctx, call{method: http.MethodPost, path: path, body: data, headers: headers})
	s.leave(resp) // the create's answer is judged by the response steps too
	if err != nil {
		return err
	}
	if err := resp.ok("creating a run"); err != nil {
		return err
	}
	obj, err := resp.object()
	if err != nil {
		return err
	}
	id := str(obj["run_id"])
	if id == "" {
		return fmt.Errorf("%s: expected a run_id in the answer\n%s", resp.op, resp.excerpt())
	}
	s.current = &trackedRun{nick: nick, id: id, sent: body}
	s.mine.add(s.current)
	return nil
}

// Steps that fetch a run.

func (s *scenario) fetchTheRun(ctx context.Context) error {
	if s.current == nil {
		return errNoRun
	}
	_, resp, err := s.fetchAnswer(ctx, s.current)
	s.leave(resp) // "I fetch the run" is judged by the response steps too
	return err
}

func (s *scenario) fetchUnknownRun(ctx context.Context) error {
	return s.send(ctx, call{method: http.MethodGet, path: "/agent/runs/" + s.unknownID})
}

// fetch gets a run's details, expecting them to be there.
func (s *scenario) fetch(ctx context.Context, r *trackedRun) (map[string]any, error) {
	doc, _, err := s.fetchAnswer(ctx, r)
	return doc, err
}

// fetchAnswer is fetch, with the answer it got (nil when none came).
func (s *scenario) fetchAnswer(ctx context.Context, r *trackedRun) (map[string]any, *response, error) {
	resp, err := s.ask(ctx, call{method: http.MethodGet, path: "/agent/runs/" + pathEscape(r.id)})
	if err != nil {
		return nil, resp, err
	}
	if err := resp.ok("fetching run " + r.id); err != nil {
		return nil, resp, err
	}
	doc, err := resp.object()
	if err != nil {
		return nil, resp, err
	}
	if got := str(doc["run_id"]); got != r.id {
		return nil, resp, fmt.Errorf("%s: expected the run %s, got run_id %q", resp.op, r.id, got)
	}
	r.details = doc
	return doc, resp, nil
}

// ask makes a request and returns its answer; the last response stays as
// it was. Steps that judge their own answer ask.
func (s *scenario) ask(ctx context.Context, c call) (*response, error) {
	s.holdIdentitiesIfWriting(c)
	return s.api.do(ctx, c)
}

// send makes a request whose answer the generic "the response …" steps
// judge: it becomes the last response.
func (s *scenario) send(ctx context.Context, c call) error {
	resp, err := s.ask(ctx, c)
	s.leave(resp)
	return err
}

// leave makes resp, when an answer came, the last response, for the
// generic "the response …" steps to judge.
func (s *scenario) leave(resp *response) {
	if resp != nil {
		s.last = resp
	}
}

// details is the run's details as last fetched.
func (s *scenario) details() subject {
	switch {
	case s.current == nil:
		return subject{err: errNoRun}
	case s.current.details == nil:
		return subject{err: fmt.Errorf("the run's details have not been fetched")}
	}
	return subject{what: "run " + s.current.id, doc: s.current.details}
}

// history is every look taken at the run while watching it.
func (s *scenario) history() history {
	switch {
	case s.current == nil:
		return history{err: errNoRun}
	case len(s.current.looks) == 0:
		return history{err: errNotWatched}
	}
	return history{id: s.current.id, looks: s.current.looks}
}

// Steps that check the last response: one line each.

func (s *scenario) responseStatusIs(code int) error { return s.last.hasStatus(code) }

func (s *scenario) responseHasNonEmpty(field string) error {
	return s.last.subject().nonEmpty(field)
}

func (s *scenario) responseFieldIs(field, want string) error {
	return s.last.subject().fieldIs(field, s.expand(want))
}

func (s *scenario) responseFieldEqualsField(a, b string) error {
	return s.last.subject().fieldsEqual(a, b)
}

func (s *scenario) responseIsRunID() error { return s.last.isJSONString(s.currentID()) }

func (s *scenario) responseIsProblem(status int, code string) error {
	return s.last.isProblem(status, code)
}

// responseIsOneOfTwoProblems accepts either of two problems, where the
// document lets a server choose.
func (s *scenario) responseIsOneOfTwoProblems(status1 int, code1 string, status2 int, code2 string) error {
	return oneOfTwoProblems(s.last, status1, code1, status2, code2)
}

// oneOfTwoProblems accepts either of two problems as resp.
func oneOfTwoProblems(resp *response, status1 int, code1 string, status2 int, code2 string) error {
	if resp != nil && resp.status == status2 {
		return resp.isProblem(status2, code2)
	}
	if err := resp.isProblem(status1, code1); err != nil {
		return fmt.Errorf("%w (or %d %s)", err, status2, code2)
	}
	return nil
}

func (s *scenario) problemIsRetryable() error { return s.last.subject().isRetryable() }

// Steps that check the run's details: one line each.

func (s *scenario) runFieldIs(field, want string) error {
	return s.details().fieldIs(field, s.expand(want))
}

func (s *scenario) runFieldEqualsField(a, b string) error { return s.details().fieldsEqual(a, b) }

func (s *scenario) runHasNonEmpty(field string) error { return s.details().nonEmpty(field) }

func (s *scenario) runFieldIsUUID(field string) error { return s.details().isUUID(field) }

func (s *scenario) runFieldIsURL(field string) error { return s.details().isAbsoluteURL(field) }

func (s *scenario) runFieldIsTimestamp(field string) error { return s.details().isTimestamp(field) }

func (s *scenario) runFieldIsTimestampNotBefore(field, other string) error {
	return s.details().notBefore(field, other)
}

func (s *scenario) runConfigHoldsSent() error {
	return s.details().holds("agent_config", s.sentConfig())
}

func (s *scenario) runIsInState(state string) error {
	if state != "ERROR" {
		if err := s.inconclusiveIfErroredOnItsOwn(); err != nil {
			return err
		}
	}
	return s.details().fieldIs("state", state)
}

// inconclusiveIfErroredOnItsOwn makes the scenario inconclusive when the run
// ended in ERROR on a server the suite only polls: a transient platform
// error is legal, and the scenario needed another ending to judge. Against
// the mock's control API the suite chooses every ending, so an ERROR it did
// not ask for fails as any wrong state does.
func (s *scenario) inconclusiveIfErroredOnItsOwn() error {
	if s.api.control != nil || s.current == nil || str(s.current.details["state"]) != "ERROR" {
		return nil
	}
	return s.inconclusive(fmt.Sprintf("run %s ended in ERROR on its own (%s), a platform error the document allows, so the ending this scenario checks never came",
		s.current.id, show(s.current.details["status_message"])))
}

func (s *scenario) runHasStatusCode(code string) error { return s.details().hasStatusCode(code) }

// endedFailedWithStatus checks how the run ended: FAILED or ERROR, with a
// status message that says what went wrong and names its error code.
func (s *scenario) endedFailedWithStatus() error {
	if err := s.endedFailed(); err != nil {
		return err
	}
	end := subject{what: "run " + s.currentID(), doc: s.progress.ended}
	return errors.Join(end.nonEmpty("status_message.message"), end.nonEmpty("status_message.error_code"))
}

// endedFailed checks that the run watched to its end, created with the
// failing prompt, ended FAILED or ERROR: a scenario about what follows a
// failure proves nothing on a run that did not fail.
func (s *scenario) endedFailed() error {
	if s.progress.ended == nil {
		return errors.New("the run was not watched to its end")
	}
	if st := str(s.progress.ended["state"]); st != "FAILED" && st != "ERROR" {
		return fmt.Errorf("run %s, created with the failing prompt %q, ended in %s: expected FAILED or ERROR (is --failing-prompt one the server fails?)", s.currentID(), s.suite.cfg.FailingPrompt, st)
	}
	return nil
}

func (s *scenario) unchangedSinceEnded() error {
	return s.details().unchangedSince(s.progress.ended, "in a terminal state")
}

// currentID is the id of the run, "" before there is one.
func (s *scenario) currentID() string {
	if s.current == nil {
		return ""
	}
	return s.current.id
}

// sentConfig is the config the run was created with, nil if none.
func (s *scenario) sentConfig() any {
	if s.current == nil || s.current.sent["config"] == nil {
		return nil
	}
	return s.current.sent["config"]
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// registerRuns registers the steps of creating runs, reading one run and the last response.
func (s *scenario) registerRuns(sc stepContext) {
	sc.Step(`^I create a run with the prompt "([^"]*)"$`, s.createRunWithPrompt)
	sc.Step(`^I create a run with the prompt "([^"]*)" and:$`, s.createRunWithPromptAnd)
	sc.Step(`^I create a run with:$`, s.createRunWith)
	sc.Step(`^I create a run with the failing prompt$`, s.createRunWithFailingPrompt)
	sc.Step(`^I create a run through "POST (/agent/runs?)" with the prompt "([^"]*)" and:$`, s.createRunThrough)
	sc.Step(`^I created (\d+) runs?$`, s.createdRuns)
	sc.Step(`^I created these runs:$`, s.createdTheseRuns)

	sc.Step(`^the response status is (\d+)$`, s.responseStatusIs)
	sc.Step(`^the response has a non-empty "([^"]*)"$`, s.responseHasNonEmpty)
	sc.Step(`^the response field "([^"]*)" is "([^"]*)"$`, s.responseFieldIs)
	sc.Step(`^the response field "([^"]*)" equals the response field "([^"]*)"$`, s.responseFieldEqualsField)
	sc.Step(`^the response is the run's id as a JSON string$`, s.responseIsRunID)
	sc.Step(`^the response is a problem with status (\d+) and code "([^"]*)"$`, s.responseIsProblem)
	sc.Step(`^the response is a problem with status (\d+) and code "([^"]*)", or (\d+) and "([^"]*)"$`, s.responseIsOneOfTwoProblems)
	sc.Step(`^the problem says it is retryable$`, s.problemIsRetryable)

	sc.Step(`^I fetch the run$`, s.fetchTheRun)
	sc.Step(`^I fetch a run that does not exist$`, s.fetchUnknownRun)
	sc.Step(`^the run's "([^"]*)" is "([^"]*)"$`, s.runFieldIs)
	sc.Step(`^the run's "([^"]*)" equals its "([^"]*)"$`, s.runFieldEqualsField)
	sc.Step(`^the run has a non-empty "([^"]*)"$`, s.runHasNonEmpty)
	sc.Step(`^the run's "([^"]*)" is a UUID$`, s.runFieldIsUUID)
	sc.Step(`^the run's "([^"]*)" is an absolute URL$`, s.runFieldIsURL)
	sc.Step(`^the run's "([^"]*)" is a timestamp$`, s.runFieldIsTimestamp)
	sc.Step(`^the run's "([^"]*)" is a timestamp not before its "([^"]*)"$`, s.runFieldIsTimestampNotBefore)
	sc.Step(`^the run's agent configuration holds everything I sent$`, s.runConfigHoldsSent)
	sc.Step(`^the run is named after its skill$`, s.runNamedAfterItsSkill)
	sc.Step(`^the run is in state "([A-Z]+)"$`, s.runIsInState)
	sc.Step(`^the run has a status message with error code "([^"]*)"$`, s.runHasStatusCode)
	sc.Step(`^the run ended in FAILED or ERROR, with a status message carrying a message and an error code$`, s.endedFailedWithStatus)
	sc.Step(`^the run ended in FAILED or ERROR$`, s.endedFailed)
}
