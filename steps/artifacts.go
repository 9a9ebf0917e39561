package steps

import (
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/png" // screenshots announced as image/png are decoded as such
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Steps of artifacts: what a finished run shows under "artifacts", what
// GET /agent/artifacts/{artifactUid} answers for each, and the download URL
// of a screenshot or a file.

// artifactsRoom is what the artifact steps keep.
type artifactsRoom struct {
	fetched []fetchedArtifact // the artifacts last fetched
}

func (s *scenario) registerArtifacts(sc stepContext) {
	sc.Step(`^the mock will give my next run the artifacts ([A-Z_]+(?:(?:, | and )[A-Z_]+)*)$`, s.mockWillGiveArtifacts)
	sc.Step(`^the run shows the artifacts ([A-Z_]+(?:(?:, | and )[A-Z_]+)*), in that order$`, s.runShowsArtifacts)
	sc.Step(`^I fetch each artifact the run shows$`, s.fetchRunsArtifacts)
	sc.Step(`^I fetch up to (\d+) artifacts of each kind that the runs I can see show$`, s.fetchListedArtifacts)
	sc.Step(`^each fetched artifact is the one its run shows$`, s.fetchedMatchShown)
	sc.Step(`^each fetched plan has its markdown content$`, s.plansHaveContent)
	sc.Step(`^the fetched plan's content says "([^"]*)"$`, s.planSays)
	sc.Step(`^each fetched screenshot and file downloads from its URL as announced$`, s.downloadsAsAnnounced)
	sc.Step(`^I fetch the run's ([A-Z_]+) artifact$`, s.fetchRunsArtifactOfKind)
	sc.Step(`^its download URL (works|is refused with status (\d+))$`, s.downloadURLWorks)
	sc.Step(`^once their expires_at has passed, each fetched screenshot and file's download URL is refused$`, s.downloadsRefusedOnceExpired)
}

// fetchedArtifact is one artifact as a run showed it and as GET
// /agent/artifacts/{artifactUid} answered.
type fetchedArtifact struct {
	runID  string
	shown  map[string]any // the item of the run's "artifacts"
	got    map[string]any // the answer
	answer *response      // the answer as it came, for its Date
}

func (f fetchedArtifact) String() string {
	return fmt.Sprintf("the %s artifact %s of run %s", str(f.shown["artifact_type"]), str(mustLookup(f.shown, "data.artifact_uid")), f.runID)
}

// artifactKinds reads "PLAN, SCREENSHOT and FILE".
func artifactKinds(list string) []string {
	return strings.FieldsFunc(strings.ReplaceAll(list, " and ", ","), func(r rune) bool { return r == ',' || r == ' ' })
}

func (s *scenario) mockWillGiveArtifacts(list string) error {
	if s.api.control == nil {
		return errNoControl
	}
	if s.fate == "" {
		s.fate = "state=SUCCEEDED"
	}
	s.fate += "; artifacts=" + strings.Join(artifactKinds(list), "+")
	return nil
}

// shownArtifacts are the items of a run's "artifacts".
func shownArtifacts(run map[string]any) []map[string]any {
	raw, _ := run["artifacts"].([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, a := range raw {
		if m, ok := a.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func (s *scenario) runShowsArtifacts(list string) error {
	sub := s.details()
	if sub.err != nil {
		return sub.err
	}
	var got []string
	for _, a := range shownArtifacts(sub.doc) {
		got = append(got, str(a["artifact_type"]))
	}
	if want := artifactKinds(list); strings.Join(got, ",") != strings.Join(want, ",") {
		return fmt.Errorf("%s: expected the artifacts %v, got %v", sub.what, want, got)
	}
	return nil
}

// fetchArtifact gets the artifact a run shows, expecting it to be there.
func (s *scenario) fetchArtifact(ctx context.Context, runID string, shown map[string]any) (fetchedArtifact, error) {
	f := fetchedArtifact{runID: runID, shown: shown}
	uid := str(mustLookup(shown, "data.artifact_uid"))
	resp, err := s.ask(ctx, call{method: http.MethodGet, path: "/agent/artifacts/" + pathEscape(uid)})
	if err != nil {
		return f, err
	}
	if err := resp.ok("fetching " + f.String()); err != nil {
		return f, err
	}
	got, err := resp.object()
	f.got, f.answer = got, resp
	return f, err
}

// fetchable reports whether the run's artifact can be fetched: it carries
// an artifact_uid (a pull request has none; its url is all there is).
func fetchable(a map[string]any) bool {
	return str(a["artifact_type"]) != "PULL_REQUEST" && str(mustLookup(a, "data.artifact_uid")) != ""
}

func (s *scenario) fetchRunsArtifacts(ctx context.Context) error {
	sub := s.details()
	if sub.err != nil {
		return sub.err
	}
	s.artifacts.fetched = nil
	for _, a := range shownArtifacts(sub.doc) {
		if !fetchable(a) {
			continue
		}
		f, err := s.fetchArtifact(ctx, s.current.id, a)
		if err != nil {
			return err
		}
		s.artifacts.fetched = append(s.artifacts.fetched, f)
	}
	if len(s.artifacts.fetched) == 0 {
		return fmt.Errorf("%s shows no artifact with an artifact_uid to fetch", sub.what)
	}
	return nil
}

// fetchListedArtifacts fetches artifacts of runs the caller can see,
// whoever made them: up to n of each kind the runs listed with that
// artifact_type show. A server whose runs show none has nothing to check.
func (s *scenario) fetchListedArtifacts(ctx context.Context, n int) error {
	s.artifacts.fetched = nil
	for _, kind := range []string{"PLAN", "SCREENSHOT", "FILE"} {
		q := url.Values{"artifact_type": {kind}, "limit": {"20"}}
		resp, err := s.ask(ctx, call{method: http.MethodGet, path: "/agent/runs", query: q})
		if err != nil {
			return err
		}
		if err := resp.ok("listing runs with " + kind + " artifacts"); err != nil {
			return err
		}
		doc, err := resp.object()
		if err != nil {
			return err
		}
		runs, _ := doc["runs"].([]any)
		count := 0
		for _, r := range runs {
			run, _ := r.(map[string]any)
			for _, a := range shownArtifacts(run) {
				if count == n || str(a["artifact_type"]) != kind || !fetchable(a) {
					continue
				}
				f, err := s.fetchArtifact(ctx, str(run["run_id"]), a)
				if err != nil {
					return err
				}
				s.artifacts.fetched = append(s.artifacts.fetched, f)
				count++
			}
		}
	}
	if len(s.artifacts.fetched) == 0 {
		fmt.Fprintf(s.suite.cfg.Log, "no run of the caller shows a plan, screenshot or file artifact: nothing to fetch\n")
	}
	return nil
}

// fetchedMatchShown: an artifact's answer is the artifact the run shows:
// its uid and type, and what identifies it (a plan's document, a file's
// path and name, the media type, the size).
func (s *scenario) fetchedMatchShown() error {
	var errs []string
	for _, f := range s.artifacts.fetched {
		want := func(field, shownField string) {
			got, shown := mustLookup(f.got, field), mustLookup(f.shown, shownField)
			if shown != nil && fmt.Sprint(got) != fmt.Sprint(shown) {
				errs = append(errs, fmt.Sprintf("%s: the answer's %q is %s, the run shows %s %s", f, field, show(got), shownField, show(shown)))
			}
		}
		want("artifact_uid", "data.artifact_uid")
		want("artifact_type", "artifact_type")
		switch str(f.shown["artifact_type"]) {
		case "PLAN":
			want("data.document_uid", "data.document_uid")
		case "SCREENSHOT":
			want("data.content_type", "data.mime_type")
		case "FILE":
			want("data.content_type", "data.mime_type")
			want("data.filepath", "data.filepath")
			want("data.filename", "data.filename")
			want("data.size_bytes", "data.size_bytes")
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

func (s *scenario) fetchedOfKind(kind string) []fetchedArtifact {
	var out []fetchedArtifact
	for _, f := range s.artifacts.fetched {
		if str(f.got["artifact_type"]) == kind {
			out = append(out, f)
		}
	}
	return out
}

func (s *scenario) plansHaveContent() error {
	for _, f := range s.fetchedOfKind("PLAN") {
		if strings.TrimSpace(str(mustLookup(f.got, "data.content"))) == "" {
			return fmt.Errorf("%s: expected the plan's markdown in data.content, got %s", f, show(mustLookup(f.got, "data.content")))
		}
		if ct := str(mustLookup(f.got, "data.content_type")); ct == "" {
			return fmt.Errorf("%s: expected a data.content_type", f)
		}
	}
	return nil
}

func (s *scenario) planSays(text string) error {
	plans := s.fetchedOfKind("PLAN")
	if len(plans) == 0 {
		return fmt.Errorf("no plan was fetched")
	}
	for _, f := range plans {
		if content := str(mustLookup(f.got, "data.content")); !strings.Contains(content, text) {
			return fmt.Errorf("%s: expected the plan's content to say %q, got %q", f, text, content)
		}
	}
	return nil
}

// download fetches a download URL as a browser would: without the API's
// credentials (they are not the storage's to see).
func (s *scenario) download(ctx context.Context, link string) (*response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
	if err != nil {
		return nil, fmt.Errorf("download URL %q: %w", link, err)
	}
	hr, err := s.api.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", link, err)
	}
	defer hr.Body.Close()
	body, err := io.ReadAll(io.LimitReader(hr.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("GET %s: reading the body: %w", link, err)
	}
	return &response{op: "GET " + link, status: hr.StatusCode, header: hr.Header, body: body, received: time.Now()}, nil
}

// downloadsAsAnnounced: each screenshot and file downloads, before it
// expires, as bytes of the media type the artifact announces and, for a
// file that gives one, of its size.
func (s *scenario) downloadsAsAnnounced(ctx context.Context) error {
	for _, f := range s.artifacts.fetched {
		kind := str(f.got["artifact_type"])
		if kind != "SCREENSHOT" && kind != "FILE" {
			continue
		}
		expires, err := time.Parse(time.RFC3339, str(mustLookup(f.got, "data.expires_at")))
		if err != nil {
			return fmt.Errorf("%s: data.expires_at: %v", f, err)
		}
		if created, err := time.Parse(time.RFC3339, str(f.got["created_at"])); err == nil && !expires.After(created) {
			return fmt.Errorf("%s: the download URL expires at %s, not after the artifact was created (%s)", f, expires, created)
		}
		got, err := s.download(ctx, str(mustLookup(f.got, "data.download_url")))
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if got.status != http.StatusOK {
			return fmt.Errorf("%s: the download answered %d, expected 200\n%s", f, got.status, got.excerpt())
		}
		want := str(mustLookup(f.got, "data.content_type"))
		if mt, _, err := mime.ParseMediaType(got.header.Get("Content-Type")); err != nil || !strings.EqualFold(mt, want) {
			return fmt.Errorf("%s: the download's Content-Type is %q, the artifact announces %q", f, got.header.Get("Content-Type"), want)
		}
		if size, ok := mustLookup(f.got, "data.size_bytes").(float64); ok && int64(size) != int64(len(got.body)) {
			return fmt.Errorf("%s: size_bytes is %d, the download has %d bytes", f, int64(size), len(got.body))
		}
		if strings.HasPrefix(want, "image/") {
			if _, format, err := image.DecodeConfig(bytes.NewReader(got.body)); err != nil || "image/"+format != want {
				return fmt.Errorf("%s: the download is not a %s image (%v)", f, want, err)
			}
		}
	}
	return nil
}

// runsArtifact is the item of the run's "artifacts" of this kind.
func (s *scenario) runsArtifact(kind string) (map[string]any, error) {
	sub := s.details()
	if sub.err != nil {
		return nil, sub.err
	}
	for _, a := range shownArtifacts(sub.doc) {
		if str(a["artifact_type"]) == kind {
			return a, nil
		}
	}
	return nil, fmt.Errorf("%s shows no %s artifact", sub.what, kind)
}

func (s *scenario) fetchRunsArtifactOfKind(ctx context.Context, kind string) error {
	a, err := s.runsArtifact(kind)
	if err != nil {
		return err
	}
	f, err := s.fetchArtifact(ctx, s.current.id, a)
	if err != nil {
		return err
	}
	s.artifacts.fetched = []fetchedArtifact{f}
	return nil
}

// downloadURLWorks downloads the last fetched artifact's URL.
func (s *scenario) downloadURLWorks(ctx context.Context, outcome, status string) error {
	if len(s.artifacts.fetched) == 0 {
		return fmt.Errorf("no artifact was fetched")
	}
	f := s.artifacts.fetched[len(s.artifacts.fetched)-1]
	got, err := s.download(ctx, str(mustLookup(f.got, "data.download_url")))
	if err != nil {
		return err
	}
	if outcome == "works" {
		if got.status != http.StatusOK {
			return fmt.Errorf("%s: the download answered %d, expected 200\n%s", f, got.status, got.excerpt())
		}
		return nil
	}
	if want := status; fmt.Sprint(got.status) != want {
		return fmt.Errorf("%s: the download answered %d, expected %s\n%s", f, got.status, want, got.excerpt())
	}
	return nil
}

// downloadsRefusedOnceExpired lets the server's clock pass the latest
// expires_at of the screenshots and files fetched (waiting for it when
// polling, within the suite's patience), then expects each download URL
// to be refused with a 4xx: the document says a URL works until
// expires_at, not how a storage service refuses it afterwards.
func (s *scenario) downloadsRefusedOnceExpired(ctx context.Context) error {
	var (
		links  []fetchedArtifact
		latest time.Time
		seen   *response
	)
	for _, f := range s.artifacts.fetched {
		if kind := str(f.got["artifact_type"]); kind != "SCREENSHOT" && kind != "FILE" {
			continue
		}
		expires, err := time.Parse(time.RFC3339, str(mustLookup(f.got, "data.expires_at")))
		if err != nil {
			return fmt.Errorf("%s: data.expires_at: %v", f, err)
		}
		if expires.After(latest) {
			latest, seen = expires, f.answer
		}
		links = append(links, f)
	}
	if len(links) == 0 {
		return s.inconclusive("no screenshot nor file was fetched: no download URL to watch expire")
	}
	if err := s.letServerClockPass(ctx, latest, seen, "the latest expires_at of the download URLs fetched"); err != nil {
		return err
	}
	for _, f := range links {
		got, err := s.download(ctx, str(mustLookup(f.got, "data.download_url")))
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if got.status/100 != 4 {
			return fmt.Errorf("%s: the download URL still answers %d after its expires_at %s\n%s", f, got.status, str(mustLookup(f.got, "data.expires_at")), got.excerpt())
		}
	}
	return nil
}
