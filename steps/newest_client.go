package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/cucumber/godog"

	"github.com/agentruns/agentruns/htmlreport"
	"github.com/agentruns/agentruns/rules"
)

// Steps for what the newest official client (oz-agent-sdk 1.4.0-alpha.6)
// calls beyond the published document: follow-ups, handoff attachments, an
// identity by uid, the public redirects, the newer filters. Their
// scenarios are tagged newestClientTag.

// newestClientTag marks the scenarios of operations and fields newer than
// the published document, so that a server built to that document can
// leave them out.
const newestClientTag = "@newest-client"

func (s *scenario) registerNewestClient(sc stepContext) {
	tagged := false
	sc.Before(func(ctx context.Context, sc *godog.Scenario) (context.Context, error) {
		tagged = hasTag(sc, newestClientTag)
		return ctx, nil
	})
	sc.StepContext().After(func(ctx context.Context, _ *godog.Step, status godog.StepResultStatus, err error) (context.Context, error) {
		if !tagged || status != godog.StepFailed {
			return ctx, nil
		}
		return ctx, newestClientHint(err)
	})
	sc.Step(`^I send the follow-up "([^"]*)"$`, s.sendFollowup)
	sc.Step(`^the follow-up was accepted$`, s.followupAccepted)
	sc.Step(`^the run was started again by the follow-up$`, s.startedAgainByFollowup)
	sc.Step(`^the run's "([^"]*)" is still the remembered "([^"]*)"$`, s.runFieldIsRemembered)

	sc.Step(`^I list the run's handoff attachments(?: again)?$`, s.listHandoffAttachments)
	sc.Step(`^the run has no handoff attachments$`, s.noHandoffAttachments)
	sc.Step(`^every handoff attachment has an id, a file name and an absolute download URL$`, s.handoffAttachmentsWellFormed)
	sc.Step(`^the handoff attachments are the same files as before$`, s.handoffSameAsBefore)
	sc.Step(`^the mock will end my next run with the handoff files "([^"]*)" and "([^"]*)"$`, s.mockWillLeaveHandoffFiles)
	sc.Step(`^the run's handoff attachments are "([^"]*)" and "([^"]*)"$`, s.handoffAttachmentsAre)
	sc.Step(`^each handoff download URL, fetched without my API key, gives the file$`, s.downloadHandoffFiles)

	sc.Step(`^the answer has the identity fields the newest client needs$`, s.identityHasRequiredFields)
	sc.Step(`^the response has no field "([^"]*)"$`, s.responseHasNoField)

	sc.Step(`^the run's session and conversation redirects answer without an API key$`, s.redirectsArePublic)
	sc.Step(`^the run's conversation redirects to its session, without an API key$`, func(ctx context.Context) error { return s.conversationRedirect(ctx, true) })
	sc.Step(`^the run's conversation redirects nowhere, without an API key$`, func(ctx context.Context) error { return s.conversationRedirect(ctx, false) })
	sc.Step(`^the run's session redirects to its conversation, without an API key$`, s.sessionRedirectsPublicly)

	sc.Step(`^I list runs by the executor of the run$`, s.listByExecutor)
	s.registerNewestRules(sc)
}

// NewestClientNote is what every failure of a scenario tagged
// newestClientTag says, in these words and no others: such a scenario
// holds a server to more than the published document, and a server built
// to that document is not wrong to fail it.
const NewestClientNote = "[" + newestClientTag + ": this scenario checks what the official client oz-agent-sdk 1.4.0-alpha.6 calls, " +
	"beyond the published API document of May 2026; a server built to that document leaves such scenarios out with --tags 'not " + newestClientTag + "']"

// newestClientHint is the note a failed step of a scenario tagged
// newestClientTag adds to its error (godog puts it before the step's
// own message), whatever the failure: a 404 from a missing operation, a
// value refused, a field not kept. It returns nil when err is nil.
func newestClientHint(err error) error {
	if err == nil {
		return nil
	}
	return errors.New(NewestClientNote)
}

// Follow-ups.

func (s *scenario) sendFollowup(ctx context.Context, message string) error {
	if s.current == nil {
		return errNoRun
	}
	body, err := json.Marshal(map[string]string{"message": s.expand(message)})
	if err != nil {
		return err
	}
	// What the run looked like before, to tell later what the follow-up did.
	before, err := s.fetch(ctx, s.current)
	if err != nil {
		return err
	}
	s.cache["\x00before follow-up"] = str(before["updated_at"]) + " " + str(before["state"])
	if data, err := json.Marshal(before); err == nil {
		s.cache[beforeFollowupDoc] = string(data)
	}
	s.api.runs.followUp(s.api.session, s.current.id)
	err = s.send(ctx, call{method: http.MethodPost, path: "/agent/runs/" + pathEscape(s.current.id) + "/followups", body: body})
	s.api.runs.followUpAnswered(s.api.session, s.current.id, time.Now())
	return err
}

func (s *scenario) followupAccepted() error {
	if err := s.last.ok("sending a follow-up"); err != nil {
		return err
	}
	if _, err := s.last.object(); err != nil {
		return fmt.Errorf("%s: expected a JSON object: %w", s.last.op, err)
	}
	return nil
}

// startedAgainByFollowup: after a follow-up to an ended run, the run is
// going again, or, on a fast server, has ended again since: either way it
// changed after the moment it was last seen ended.
func (s *scenario) startedAgainByFollowup(ctx context.Context) error {
	updatedBefore, stateBefore, _ := strings.Cut(s.cache["\x00before follow-up"], " ")
	if !isTerminal(stateBefore) {
		return fmt.Errorf("the run had not ended before the follow-up (it was %s)", stateBefore)
	}
	doc, err := s.fetch(ctx, s.current)
	if err != nil {
		return err
	}
	if !isTerminal(str(doc["state"])) {
		return nil
	}
	before, err1 := time.Parse(time.RFC3339Nano, updatedBefore)
	after, err2 := timestamp(doc, "updated_at")
	if err1 == nil && err2 == nil && after.After(before) {
		return nil
	}
	if !rules.RestartShows(str(doc["updated_at"])) {
		return s.inconclusive(fmt.Sprintf("the run is %s at updated_at %s as before the follow-up: shown to that precision, a run that started again and ended again within it looks the same",
			str(doc["state"]), str(doc["updated_at"])))
	}
	return fmt.Errorf("after a follow-up to the ended run, it is still %s and unchanged since %s: the follow-up did not start it again", str(doc["state"]), updatedBefore)
}

func (s *scenario) runFieldIsRemembered(field, name string) error {
	want, ok := s.cache[name]
	if !ok {
		return fmt.Errorf("nothing remembered as %q", name)
	}
	return s.details().fieldIs(field, want)
}

// Handoff attachments.

type handoffAttachment struct {
	ID          string `json:"attachment_id"`
	DownloadURL string `json:"download_url"`
	Filename    string `json:"filename"`
	MimeType    string `json:"mime_type"`
}

func (s *scenario) listHandoffAttachments(ctx context.Context) error {
	if s.current == nil {
		return errNoRun
	}
	if err := s.send(ctx, call{method: http.MethodGet, path: "/agent/runs/" + pathEscape(s.current.id) + "/handoff/attachments"}); err != nil {
		return err
	}
	if err := s.last.ok("listing the run's handoff attachments"); err != nil {
		return err
	}
	var body struct {
		Attachments *[]handoffAttachment `json:"attachments"`
	}
	if err := s.last.json(&body); err != nil {
		return err
	}
	if body.Attachments == nil {
		return fmt.Errorf("%s: expected a list of attachments\n%s", s.last.op, s.last.excerpt())
	}
	s.handoffs = append(s.handoffs, *body.Attachments)
	return nil
}

func (s *scenario) lastHandoffs(n int) ([][]handoffAttachment, error) {
	if len(s.handoffs) < n {
		return nil, fmt.Errorf("%d handoff listings so far, this step needs %d", len(s.handoffs), n)
	}
	return s.handoffs[len(s.handoffs)-n:], nil
}

func (s *scenario) noHandoffAttachments() error {
	l, err := s.lastHandoffs(1)
	if err != nil {
		return err
	}
	if len(l[0]) != 0 {
		return fmt.Errorf("expected no handoff attachments before the run ended, got %d: %+v", len(l[0]), l[0])
	}
	return nil
}

func (s *scenario) handoffAttachmentsWellFormed() error {
	l, err := s.lastHandoffs(1)
	if err != nil {
		return err
	}
	ids := map[string]bool{}
	for _, a := range l[0] {
		if a.ID == "" || a.Filename == "" {
			return fmt.Errorf("a handoff attachment lacks its id or file name: %+v", a)
		}
		if ids[a.ID] {
			return fmt.Errorf("two handoff attachments have the id %q", a.ID)
		}
		ids[a.ID] = true
		if u, err := url.Parse(a.DownloadURL); err != nil || !u.IsAbs() || u.Host == "" {
			return fmt.Errorf("handoff attachment %q: expected an absolute download URL, got %q", a.ID, a.DownloadURL)
		}
	}
	return nil
}

func (s *scenario) handoffSameAsBefore() error {
	l, err := s.lastHandoffs(2)
	if err != nil {
		return err
	}
	files := func(list []handoffAttachment) []string {
		var out []string
		for _, a := range list {
			out = append(out, a.ID+" "+a.Filename)
		}
		slices.Sort(out)
		return out
	}
	if a, b := files(l[0]), files(l[1]); !reflect.DeepEqual(a, b) {
		return fmt.Errorf("the run's handoff attachments changed between two listings without a new execution: %v, then %v", a, b)
	}
	return nil
}

func (s *scenario) mockWillLeaveHandoffFiles(a, b string) error {
	if s.api.control == nil {
		return errNoControl
	}
	s.fate = `state=SUCCEEDED; handoff="` + a + "," + b + `"`
	return nil
}

func (s *scenario) handoffAttachmentsAre(a, b string) error {
	l, err := s.lastHandoffs(1)
	if err != nil {
		return err
	}
	var got []string
	for _, att := range l[0] {
		got = append(got, att.Filename)
	}
	if want := []string{a, b}; !reflect.DeepEqual(got, want) {
		return fmt.Errorf("expected the handoff attachments %q, got %q", want, got)
	}
	return nil
}

func (s *scenario) downloadHandoffFiles(ctx context.Context) error {
	l, err := s.lastHandoffs(1)
	if err != nil {
		return err
	}
	for _, a := range l[0] {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.DownloadURL, nil)
		if err != nil {
			return err
		}
		resp, err := s.api.http.Do(req)
		if err != nil {
			return fmt.Errorf("downloading handoff attachment %q: %w", a.Filename, err)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("downloading handoff attachment %q: %w", a.Filename, err)
		}
		if resp.StatusCode != http.StatusOK || len(body) == 0 {
			return fmt.Errorf("downloading handoff attachment %q without the API key answered %d with %d bytes", a.Filename, resp.StatusCode, len(body))
		}
	}
	return nil
}

// Identities.

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

func (s *scenario) responseHasNoField(field string) error {
	doc, err := s.last.object()
	if err != nil {
		return err
	}
	if v, ok := lookup(doc, field); ok && v != nil {
		return fmt.Errorf("%s: expected no %q, got %s", s.last.op, field, show(v))
	}
	return nil
}

// Redirects.

// redirect asks a redirect without a key and returns the one field of its
// answer ("" when the answer is an empty object).
func (s *scenario) redirect(ctx context.Context, path, field string) (string, error) {
	if err := s.send(ctx, call{method: http.MethodGet, path: path, auth: auth{omit: true}}); err != nil {
		return "", err
	}
	if err := s.last.ok("asking a redirect without an API key"); err != nil {
		return "", err
	}
	doc, err := s.last.object()
	if err != nil {
		return "", err
	}
	return str(doc[field]), nil
}

func (s *scenario) runIDs() (session, conversation string, err error) {
	if s.current == nil {
		return "", "", errNoRun
	}
	if s.current.details == nil {
		return "", "", fmt.Errorf("the run's details have not been fetched")
	}
	return str(s.current.details["session_id"]), str(s.current.details["conversation_id"]), nil
}

func (s *scenario) redirectsArePublic(ctx context.Context) error {
	session, conv, err := s.runIDs()
	if err != nil {
		return err
	}
	if session == "" && conv == "" {
		// A run may end (an ERROR of the platform's, a cancel) before any
		// worker took it: nothing is wrong, but nothing can be checked.
		return s.inconclusive(fmt.Sprintf("run %s shows neither a session nor a conversation (it is %v), so there is no redirect to ask", s.current.id, s.current.details["state"]))
	}
	if session != "" {
		got, err := s.redirect(ctx, "/agent/sessions/"+pathEscape(session)+"/redirect", "conversation_id")
		if err != nil {
			return err
		}
		if got != "" && conv != "" && got != conv {
			return fmt.Errorf("the run's session redirects to conversation %q, but the run's conversation is %q", got, conv)
		}
	}
	if conv != "" {
		got, err := s.redirect(ctx, "/agent/conversations/"+pathEscape(conv)+"/redirect", "session_id")
		if err != nil {
			return err
		}
		if got != "" && session != "" && got != session {
			return fmt.Errorf("the run's conversation redirects to session %q, but the run's session is %q", got, session)
		}
	}
	return nil
}

func (s *scenario) conversationRedirect(ctx context.Context, toSession bool) error {
	session, conv, err := s.runIDs()
	if err != nil {
		return err
	}
	if conv == "" {
		return fmt.Errorf("the run shows no conversation_id")
	}
	got, err := s.redirect(ctx, "/agent/conversations/"+pathEscape(conv)+"/redirect", "session_id")
	if err != nil {
		return err
	}
	switch {
	case toSession && (session == "" || got != session):
		return fmt.Errorf("expected the live run's conversation to redirect to its session %q, got %q\n%s", session, got, s.last.excerpt())
	case !toSession && got != "":
		return fmt.Errorf("expected the ended run's conversation to redirect nowhere, got session %q", got)
	}
	return nil
}

func (s *scenario) sessionRedirectsPublicly(ctx context.Context) error {
	session, conv, err := s.runIDs()
	if err != nil {
		return err
	}
	if session == "" || conv == "" {
		return fmt.Errorf("the run shows no session_id or conversation_id")
	}
	got, err := s.redirect(ctx, "/agent/sessions/"+pathEscape(session)+"/redirect", "conversation_id")
	if err != nil {
		return err
	}
	if got != conv {
		return fmt.Errorf("expected the finished run's session to redirect to its conversation %q, got %q", conv, got)
	}
	return nil
}

// Filters.

func (s *scenario) listByExecutor(ctx context.Context) error {
	if s.current == nil || s.current.details == nil {
		return fmt.Errorf("the run's details have not been fetched")
	}
	// A run that shows no executor was executed by its creator.
	uid := str(mustLookup(s.current.details, "executor.uid"))
	if uid == "" && mustLookup(s.current.details, "executor") == nil {
		uid = str(mustLookup(s.current.details, "creator.uid"))
	}
	if uid == "" {
		return fmt.Errorf("the run reports no executor.uid, nor a creator.uid; got executor %s", show(mustLookup(s.current.details, "executor")))
	}
	return s.listRuns(ctx, "name={label}&executor="+url.QueryEscape(uid))
}

// selectsNewestClient tells whether the run selects any scenario tagged
// newestClientTag. When it selects none, nothing of the newest client's
// surface is judged: not in a step, not in the document's validation.
func (c Config) selectsNewestClient() (bool, error) {
	x, err := c.tags()
	if err != nil {
		return false, err
	}
	spec, err := htmlreport.Parse(c.Features)
	if err != nil {
		return false, fmt.Errorf("reading the features: %w", err)
	}
	for _, f := range spec {
		for _, sc := range f.Scenarios {
			if slices.Contains(sc.AllTags, newestClientTag) && x.Match(sc.AllTags) {
				return true, nil
			}
		}
	}
	return false, nil
}
