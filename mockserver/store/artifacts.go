package store

import (
	"bytes"
	"hash/fnv"
	"image"
	"image/color"
	"image/png"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/google/uuid"
)

// Artifacts: what a run that has SUCCEEDED shows under `artifacts`, and what
// GET /agent/artifacts/{artifactUid} finds. Nothing of an artifact is
// stored apart from its run: its kind is one of the run's ArtifactTypes,
// its uid derives from the run's id (Run.ArtifactUID), its creation time is
// the run's end and its content is written from the run's title and prompt.
// So a mock session's artifacts are isolated, reset and saved with its runs,
// and the only thing kept for them is an index by uid, rebuilt by
// insertLocked.

// Errors of the artifacts resource.
var (
	// ErrArtifactNotFound: no artifact has this uid, or its run has not
	// (yet) succeeded, so the run does not show it.
	ErrArtifactNotFound = sentinel(NotFound, "no artifact with this uid: it is not one a finished run shows")
	// ErrArtifactNotRetrievable: the artifact is a pull request, which the
	// service does not hand out; its url in the run is all there is.
	ErrArtifactNotRetrievable = sentinel(NotFound, "pull request artifacts cannot be retrieved")
)

// artifactIndex is the artifacts resource's part of a mock session: an
// index by uid of the runs' artifacts, rebuilt from the runs on reset and
// restore and kept as runs are stored; nothing of it is saved.
type artifactIndex struct {
	byUID map[uuid.UUID]artifactRef
}

func (t *artifactIndex) reset(ms *Session, _ time.Time) {
	t.byUID = map[uuid.UUID]artifactRef{}
	for _, r := range ms.runs.list {
		t.index(r)
	}
}

func (t *artifactIndex) save(*savedSession) {}

func (t *artifactIndex) restore(ms *Session, _ *savedSession, _ *restorer) error {
	t.reset(ms, time.Time{})
	return nil
}

// The artifact types.
const (
	ArtifactPlan        = "PLAN"
	ArtifactPullRequest = "PULL_REQUEST"
	ArtifactScreenshot  = "SCREENSHOT"
	ArtifactFile        = "FILE"
	// ArtifactExternalReference is a link to something outside the
	// service (newer than the published document). The mock's runs show
	// none, so a listing by it is empty; it is a kind a listing may ask for.
	ArtifactExternalReference = "EXTERNAL_REFERENCE"
)

// What a run's artifacts show that does not depend on the run, in one
// place for the run's JSON and the artifact's.
const (
	PlanDocumentPrefix   = "doc-"   // + the run id's first 8 characters
	PlanNotebookPrefix   = "nb-"    // likewise
	PlanTitlePrefix      = "Plan: " // + the run's title
	PlanContentType      = "text/markdown"
	PullRequestBranch    = "agent/" // + the run id's first 8 characters
	PullRequestURL       = "https://git.example.com/pulls/"
	ScreenshotMIMEType   = "image/png"
	ScreenshotDesc       = "The result on screen when the run finished"
	FileArtifactName     = "summary.md"
	FileArtifactPath     = "outputs/summary.md"
	FileArtifactMIMEType = "text/markdown"
	FileArtifactDesc     = "What the run changed, and how it checked the change"
)

type artifactRef struct {
	run   *Run
	index int
}

// Artifact is one artifact of a run, as shown at one instant.
type Artifact struct {
	UID  uuid.UUID
	Type string
	// Run is the run that made the artifact, as shown at the same instant;
	// the artifact was created when the run succeeded (Run.Snap.UpdatedAt).
	Run View
}

// CreatedAt is when the artifact was made: when its run succeeded.
func (a Artifact) CreatedAt() time.Time { return a.Run.Snap.UpdatedAt }

// ShowsArtifacts reports whether the run shows its artifacts: it has some,
// and it has succeeded (or, a fixture run that names them, it has stopped
// FAILED, ERROR or BLOCKED: see Details.ArtifactsWhenStopped).
func (v View) ShowsArtifacts() bool {
	if len(v.Run.ArtifactTypes) == 0 {
		return false
	}
	switch v.Snap.State {
	case Succeeded:
		return true
	case Failed, Errored, Blocked:
		return v.Run.ArtifactsWhenStopped
	}
	return false
}

// index adds the run's artifacts to the index by uid.
func (t *artifactIndex) index(r *Run) {
	if t.byUID == nil {
		t.byUID = map[uuid.UUID]artifactRef{}
	}
	for i := range r.ArtifactTypes {
		t.byUID[r.ArtifactUID(i)] = artifactRef{r, i}
	}
}

// Artifact finds the artifact uid as p sees it now: ErrArtifactNotFound
// for none (or one whose run has not succeeded), ErrOtherTeam for one of
// a run of another team, ErrArtifactNotRetrievable for a pull request.
func (ms *Session) Artifact(p *fixtures.Principal, uid uuid.UUID) (Artifact, error) {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	ref, ok := ms.artifacts.byUID[uid]
	var v View
	if ok {
		v = ref.run.view(ms.clock.Now())
	}
	if !ok || !v.ShowsArtifacts() {
		return Artifact{}, ErrArtifactNotFound.because("no artifact with uid %s: it is not one a finished run shows", uid)
	}
	if p != nil && ref.run.Team != p.Team {
		return Artifact{}, ErrOtherTeam.because("the artifact belongs to a run of another team")
	}
	a := Artifact{UID: uid, Type: ref.run.ArtifactTypes[ref.index], Run: v}
	if a.Type == ArtifactPullRequest {
		return a, ErrArtifactNotRetrievable.because("artifact %s is a pull request, which cannot be retrieved here: its url in the run's artifacts is where it lives", uid)
	}
	return a, nil
}

// Short is the part of the run's id its artifacts are named after: its
// first 8 bytes, fewer for a shorter id (a fixture's may be any string)
// and never half a character.
func (r *Run) Short() string {
	n := min(8, len(r.ID))
	for n < len(r.ID) && n > 0 && !utf8.RuneStart(r.ID[n]) {
		n--
	}
	return r.ID[:n]
}

// PlanContent is the markdown of the run's plan: the task, then a step for
// each sentence of the prompt, between looking and checking.
func PlanContent(r *Run) string {
	var b strings.Builder
	b.WriteString("# " + PlanTitlePrefix + r.Title + "\n\n## Goal\n\n")
	b.WriteString(strings.TrimSpace(r.Prompt) + "\n\n## Steps\n\n")
	steps := []string{"Read the code and the tests the task touches."}
	steps = append(steps, sentences(r.Prompt, 5)...)
	steps = append(steps, "Run the tests, then summarise the change for review.")
	for i, s := range steps {
		b.WriteString(strconv.Itoa(i+1) + ". " + s + "\n")
	}
	return b.String()
}

// FileContent is the text of the run's FILE artifact, a summary in
// markdown; its size is the size_bytes the run shows.
func FileContent(r *Run) string {
	var b strings.Builder
	b.Grow(FileContentLen(r))
	for _, part := range fileContentParts(r) {
		b.WriteString(part)
	}
	return b.String()
}

// FileContentLen is len(FileContent(r)), without building it: the FILE
// artifact's size_bytes, shown with every run that has one.
func FileContentLen(r *Run) int {
	n := 0
	for _, part := range fileContentParts(r) {
		n += len(part)
	}
	return n
}

// fileContentParts are the pieces of FileContent, in order.
func fileContentParts(r *Run) [7]string {
	return [7]string{"# Summary: ", r.Title, "\n\nRun: ", r.ID, "\n\n## Task\n\n", strings.TrimSpace(r.Prompt),
		"\n\n## Outcome\n\nThe task is done. Every step of the plan was carried out and the tests pass.\n"}
}

// ScreenshotPNG is the run's screenshot: a small window, its colours taken
// from the run's id, so each run's picture differs and stays the same.
func ScreenshotPNG(r *Run) []byte {
	h := fnv.New32a()
	_, _ = h.Write([]byte(r.ID))
	sum := h.Sum32()
	accent := color.RGBA{R: uint8(sum), G: uint8(sum >> 8), B: uint8(sum >> 16), A: 255}
	const w, ht = 64, 40
	img := image.NewRGBA(image.Rect(0, 0, w, ht))
	for y := 0; y < ht; y++ {
		for x := 0; x < w; x++ {
			c := color.RGBA{R: 245, G: 245, B: 245, A: 255} // the page
			switch {
			case y < 6: // the title bar
				c = accent
			case y > 12 && y < 16 && x > 4 && x < 44, y > 20 && y < 24 && x > 4 && x < 56: // lines of text
				c = color.RGBA{R: 90, G: 90, B: 90, A: 255}
			}
			img.SetRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img) // writing to memory does not fail
	return buf.Bytes()
}

// sentences are up to max sentences of s, each on one line.
func sentences(s string, max int) []string {
	var out []string
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == '!' || r == '?' || r == '\n' }) {
		if part = strings.Join(strings.Fields(part), " "); part != "" {
			out = append(out, part+".")
			if len(out) == max {
				break
			}
		}
	}
	return out
}
