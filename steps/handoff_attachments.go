package steps

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
)

// Steps of a run's handoff attachments (features/handoff_attachments.feature,
// tagged newestClientTag): the files a run's latest ended execution left,
// each with a download link that needs no API key. handoff_watch.go lists
// them while watching a run.

type handoffAttachment struct {
	ID          string `json:"attachment_id"`
	DownloadURL string `json:"download_url"`
	Filename    string `json:"filename"`
	MimeType    string `json:"mime_type"`
}

// handoffsRoom is what the handoff steps keep.
type handoffsRoom struct {
	listings [][]handoffAttachment // every listing of the run's handoff files
	looks    []handoffLook         // listings while watching, each with the look after it (handoff_watch.go)
}

func (s *scenario) registerHandoffAttachments(sc stepContext) {
	sc.Step(`^I list the run's handoff attachments(?: again)?$`, s.listHandoffAttachments)
	sc.Step(`^the run has no handoff attachments$`, s.noHandoffAttachments)
	sc.Step(`^every handoff attachment has an id, a file name and an absolute download URL$`, s.handoffAttachmentsWellFormed)
	sc.Step(`^the handoff attachments are the same files as before$`, s.handoffSameAsBefore)
	sc.Step(`^the mock will end my next run with the handoff files "([^"]*)" and "([^"]*)"$`, s.mockWillLeaveHandoffFiles)
	sc.Step(`^the run's handoff attachments are "([^"]*)" and "([^"]*)"$`, s.handoffAttachmentsAre)
	sc.Step(`^each handoff download URL, fetched without my API key, gives the file$`, s.downloadHandoffFiles)
}

func (s *scenario) listHandoffAttachments(ctx context.Context) error {
	if s.current == nil {
		return errNoRun
	}
	resp, err := s.ask(ctx, call{method: http.MethodGet, path: "/agent/runs/" + pathEscape(s.current.id) + "/handoff/attachments"})
	if err != nil {
		return err
	}
	if err := resp.ok("listing the run's handoff attachments"); err != nil {
		return err
	}
	var body struct {
		Attachments *[]handoffAttachment `json:"attachments"`
	}
	if err := resp.json(&body); err != nil {
		return err
	}
	if body.Attachments == nil {
		return fmt.Errorf("%s: expected a list of attachments\n%s", resp.op, resp.excerpt())
	}
	s.handoffs.listings = append(s.handoffs.listings, *body.Attachments)
	return nil
}

func (s *scenario) lastHandoffs(n int) ([][]handoffAttachment, error) {
	if len(s.handoffs.listings) < n {
		return nil, fmt.Errorf("%d handoff listings so far, this step needs %d", len(s.handoffs.listings), n)
	}
	return s.handoffs.listings[len(s.handoffs.listings)-n:], nil
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
