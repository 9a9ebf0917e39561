package mockserver_test

import (
	"bytes"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/mockserver/store"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func artifactTypes(run mockserver.RunItem) []string {
	var out []string
	for _, a := range run.Artifacts {
		out = append(out, a.Type)
	}
	return out
}

// How a run comes to show artifacts: the X-Mock-Fate header's or a fate
// rule's "artifacts" key, shown once the run has succeeded.
func TestFateChoosesArtifacts(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: time.Second})
	header := c.create(map[string]any{"prompt": "a"}, mockserver.FateHeader, "artifacts=PULL_REQUEST+PLAN").RunID
	r := c.do("POST", "/__mock/fates", map[string]any{"prompt_pattern": "screens", "artifacts": "PLAN"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	rule := c.create(map[string]any{"prompt": "the screens"}).RunID
	plain := c.create(map[string]any{"prompt": "plain"}).RunID
	failed := c.create(map[string]any{"prompt": "b"}, mockserver.FateHeader, "state=FAILED; artifacts=PLAN").RunID
	assert.Empty(t, c.get(header).Artifacts, "nothing before the run has ended")
	c.advance(time.Minute)
	assert.Equal(t, []string{"PULL_REQUEST", "PLAN"}, artifactTypes(c.get(header)))
	assert.Equal(t, []string{"PLAN"}, artifactTypes(c.get(rule)))
	assert.Empty(t, c.get(plain).Artifacts)
	assert.Empty(t, c.get(failed).Artifacts, "a run that did not succeed shows none")

	for _, bad := range []string{"artifacts=PHOTO", "artifacts=PLAN+PLAN", "artifacts=+"} {
		p := c.do("POST", "/agent/run", map[string]any{"prompt": "x"}, mockserver.FateHeader, bad).problem(t)
		assert.Equal(t, http.StatusBadRequest, p.Status, bad)
		assert.Contains(t, p.Detail, "artifacts", bad)
	}
	p := c.do("POST", "/__mock/fates", map[string]any{"artifacts": "VIDEO"})
	assert.Equal(t, http.StatusBadRequest, p.status, "%s", p.body)
	assert.Contains(t, string(p.body), "artifacts")
}

// The fixtures' rule gives artifacts of all four kinds to prompts that ask.
func TestFixtureRuleGivesArtifacts(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: time.Second})
	id := c.create(map[string]any{"prompt": "Refactor the parser [mock:artifacts]"}).RunID
	c.advance(time.Minute)
	assert.Equal(t, []string{"PLAN", "PULL_REQUEST", "SCREENSHOT", "FILE"}, artifactTypes(c.get(id)))
}

// fixtureRunWithAll is the fixtures' run of team Acme with one artifact of
// each kind; e31512… is team Globex's run with a plan.
const (
	fixtureRunWithAll = "f29d0da9-953f-48f1-a09f-76b5a170b338"
	globexRunWithPlan = "e3151288-62c3-4a4f-b774-eb5248db40af"
)

// uidOf is the artifact_uid of the run's artifact of this kind.
func uidOf(t *testing.T, run mockserver.RunItem, kind string) string {
	t.Helper()
	for _, a := range run.Artifacts {
		if a.Type == kind {
			uid, _ := a.Data["artifact_uid"].(string)
			require.NotEmpty(t, uid, "%s of run %s has an artifact_uid", kind, run.RunID)
			return uid
		}
	}
	t.Fatalf("run %s shows no %s", run.RunID, kind)
	return ""
}

func (c *client) artifact(uid string) mockserver.ArtifactResponse {
	c.t.Helper()
	r := c.do("GET", "/agent/artifacts/"+uid, nil)
	require.Equal(c.t, http.StatusOK, r.status, "artifact %s: %s", uid, r.body)
	var out mockserver.ArtifactResponse
	r.json(c.t, &out)
	return out
}

// download fetches a download URL as a browser would: no credentials, no
// mock session header.
func download(t *testing.T, link string) response {
	t.Helper()
	resp, err := http.Get(link)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{status: resp.StatusCode, header: resp.Header, body: body}
}

// Each kind a run shows is what GET /agent/artifacts/{uid} answers: the
// plan with its markdown, the screenshot and the file with a download URL
// the mock serves, with real bytes of the announced type and size.
func TestArtifactsAreRetrievable(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	run := c.get(fixtureRunWithAll)
	require.Equal(t, []string{"PULL_REQUEST", "PLAN", "SCREENSHOT", "FILE"}, artifactTypes(run))
	shown := map[string]map[string]any{}
	for _, a := range run.Artifacts {
		shown[a.Type] = a.Data
	}

	plan := c.artifact(uidOf(t, run, "PLAN"))
	assert.Equal(t, "PLAN", plan.ArtifactType)
	assert.Equal(t, uidOf(t, run, "PLAN"), plan.ArtifactUID)
	assert.Equal(t, run.Artifacts[1].CreatedAt, plan.CreatedAt, "created when the run succeeded, as the run shows")
	assert.Equal(t, shown["PLAN"]["document_uid"], plan.Data.DocumentUID)
	assert.Equal(t, shown["PLAN"]["notebook_uid"], plan.Data.NotebookUID)
	assert.Equal(t, shown["PLAN"]["title"], plan.Data.Title)
	assert.Equal(t, "text/markdown", plan.Data.ContentType)
	assert.Contains(t, plan.Data.Content, "# Plan: "+run.Title)
	assert.Contains(t, plan.Data.Content, "Find the race and fix it.", "the plan follows the prompt")

	shot := c.artifact(uidOf(t, run, "SCREENSHOT"))
	assert.Equal(t, "image/png", shot.Data.ContentType)
	assert.Equal(t, shown["SCREENSHOT"]["description"], shot.Data.Description)
	expires, err := time.Parse(time.RFC3339, shot.Data.ExpiresAt)
	require.NoError(t, err)
	assert.Equal(t, clockStart.Add(mockserver.DownloadTTL), expires, "valid for an hour on the mock session's clock")
	got := download(t, shot.Data.DownloadURL)
	require.Equal(t, http.StatusOK, got.status, "%s", got.body)
	assert.Equal(t, "image/png", got.header.Get("Content-Type"))
	img, err := png.Decode(bytes.NewReader(got.body))
	require.NoError(t, err, "a real PNG")
	assert.Positive(t, img.Bounds().Dx())

	file := c.artifact(uidOf(t, run, "FILE"))
	assert.Equal(t, shown["FILE"]["filename"], file.Data.Filename)
	assert.Equal(t, shown["FILE"]["filepath"], file.Data.Filepath)
	assert.Equal(t, shown["FILE"]["mime_type"], file.Data.ContentType)
	require.NotNil(t, file.Data.SizeBytes)
	assert.EqualValues(t, shown["FILE"]["size_bytes"], *file.Data.SizeBytes)
	got = download(t, file.Data.DownloadURL)
	require.Equal(t, http.StatusOK, got.status, "%s", got.body)
	assert.Equal(t, "text/markdown; charset=utf-8", got.header.Get("Content-Type"))
	assert.Len(t, got.body, int(*file.Data.SizeBytes), "size_bytes is the size of what downloads")
	assert.Contains(t, string(got.body), run.Title)
}

// A download URL works until it expires on the mock session's clock, then
// is refused with 403; the artifact hands out a new one. A URL changed in
// any part is refused.
func TestDownloadURLsExpireOnTheSessionClock(t *testing.T) {
	c := newMock(t, mockserver.Options{}).in("expiry")
	shot := c.artifact(uidOf(t, c.get(fixtureRunWithAll), "SCREENSHOT"))
	c.advance(mockserver.DownloadTTL - time.Second)
	assert.Equal(t, http.StatusOK, download(t, shot.Data.DownloadURL).status, "still valid a second before")
	c.advance(time.Second)
	got := download(t, shot.Data.DownloadURL)
	p := got.problem(t)
	assert.Equal(t, http.StatusForbidden, p.Status)
	assert.Contains(t, p.Detail, "expired")

	fresh := c.artifact(shot.ArtifactUID)
	assert.NotEqual(t, shot.Data.DownloadURL, fresh.Data.DownloadURL)
	assert.Equal(t, http.StatusOK, download(t, fresh.Data.DownloadURL).status)

	u, err := url.Parse(fresh.Data.DownloadURL)
	require.NoError(t, err)
	for name, change := range map[string]func(q url.Values){
		"signature": func(q url.Values) { q.Set("signature", strings.Repeat("0", 64)) },
		"expiry":    func(q url.Values) { q.Set("expires", q.Get("expires")+"0") },
		"session":   func(q url.Values) { q.Set("session", "another") },
		"unsigned":  func(q url.Values) { q.Del("signature") },
	} {
		q := u.Query()
		change(q)
		bad := *u
		bad.RawQuery = q.Encode()
		p := download(t, bad.String()).problem(t)
		assert.Equal(t, http.StatusForbidden, p.Status, name)
		assert.Contains(t, p.Detail, "not issued by this mock", name)
	}
	other := *u
	other.Path = strings.Replace(u.Path, shot.ArtifactUID, uidOf(t, c.get(fixtureRunWithAll), "FILE"), 1)
	assert.Equal(t, http.StatusForbidden, download(t, other.String()).status, "a signature is for one artifact")
}

// A new run's artifacts (chosen by its fate) appear once it has succeeded,
// and only then can be fetched.
func TestNewRunsArtifactsOnceSucceeded(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: time.Second})
	id := c.create(map[string]any{"prompt": "Redesign the settings page. Keep it accessible."}, mockserver.FateHeader, "artifacts=SCREENSHOT+PLAN+FILE").RunID
	early := (&store.Run{ID: id}).ArtifactUID(0).String() // the uid it will have
	assert.Equal(t, http.StatusNotFound, c.do("GET", "/agent/artifacts/"+early, nil).status, "not before the run has succeeded")
	c.advance(time.Minute)
	run := c.get(id)
	require.Equal(t, []string{"SCREENSHOT", "PLAN", "FILE"}, artifactTypes(run))
	assert.Equal(t, early, uidOf(t, run, "SCREENSHOT"))
	plan := c.artifact(uidOf(t, run, "PLAN"))
	assert.Contains(t, plan.Data.Content, "Keep it accessible.")
	assert.Equal(t, run.UpdatedAt, plan.CreatedAt)
	assert.Equal(t, http.StatusOK, download(t, c.artifact(uidOf(t, run, "FILE")).Data.DownloadURL).status)

	failed := c.create(map[string]any{"prompt": "x"}, mockserver.FateHeader, "state=FAILED; artifacts=PLAN").RunID
	c.advance(time.Minute)
	assert.Equal(t, http.StatusNotFound, c.do("GET", "/agent/artifacts/"+(&store.Run{ID: failed}).ArtifactUID(0).String(), nil).status,
		"a run that did not succeed shows no artifacts, so has none to fetch")
}

// The document's refusals: 401 before anything, 400 naming the field for
// a uid that is not one, 404 for none, 404 for a pull request (not
// retrievable), 403 for another team's.
func TestArtifactRefusals(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	acme, globex := c.get(fixtureRunWithAll), c.as("wk-mock-carol").get(globexRunWithPlan)

	for _, path := range []string{"/agent/artifacts/" + uidOf(t, acme, "PLAN"), "/agent/artifacts/not-a-uuid", "/agent/artifacts/"} {
		assert.Equal(t, http.StatusUnauthorized, c.as("").do("GET", path, nil).problem(t).Status, path)
	}
	for _, bad := range []string{"not-a-uuid", "", "1234", "f29d0da9-953f-48f1-a09f-76b5a170b33Z", "%2Fx"} {
		p := c.do("GET", "/agent/artifacts/"+bad, nil).problem(t)
		assert.Equal(t, http.StatusBadRequest, p.Status, bad)
		assert.Contains(t, p.Detail, "artifactUid", bad)
	}
	p := c.do("GET", "/agent/artifacts/"+uuid.NewString(), nil).problem(t)
	assert.Equal(t, http.StatusNotFound, p.Status)
	assert.True(t, strings.HasSuffix(p.Type, "/resource_not_found"), p.Type)

	pr := (&store.Run{ID: fixtureRunWithAll}).ArtifactUID(0).String() // the pull request's, which the run does not show
	p = c.do("GET", "/agent/artifacts/"+pr, nil).problem(t)
	assert.Equal(t, http.StatusNotFound, p.Status)
	assert.Contains(t, p.Detail, "pull request")

	p = c.as("wk-mock-carol").do("GET", "/agent/artifacts/"+uidOf(t, acme, "SCREENSHOT"), nil).problem(t)
	assert.Equal(t, http.StatusForbidden, p.Status)
	assert.True(t, strings.HasSuffix(p.Type, "/not_authorized"), p.Type)
	assert.Equal(t, http.StatusForbidden, c.do("GET", "/agent/artifacts/"+uidOf(t, globex, "PLAN"), nil).status)
	assert.Equal(t, http.StatusForbidden, c.as("wk-mock-carol").do("GET", "/agent/artifacts/"+pr, nil).status,
		"another team learns nothing of what kind the artifact is")
	assert.Equal(t, http.StatusOK, c.as("wk-mock-bob").do("GET", "/agent/artifacts/"+uidOf(t, acme, "PLAN"), nil).status, "the whole team sees it")
}

// Artifacts live in their mock session: another session does not have a
// new run's, and a reset takes them away, download URLs included.
func TestArtifactsAreIsolatedAndReset(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: time.Second})
	job := c.in("job-a")
	id := job.create(map[string]any{"prompt": "p"}, mockserver.FateHeader, "artifacts=FILE").RunID
	job.advance(time.Minute)
	uid := uidOf(t, job.get(id), "FILE")
	link := job.artifact(uid).Data.DownloadURL
	assert.Equal(t, http.StatusNotFound, c.do("GET", "/agent/artifacts/"+uid, nil).status, "not in the default session")
	assert.Equal(t, http.StatusNotFound, c.in("job-b").do("GET", "/agent/artifacts/"+uid, nil).status)
	assert.Equal(t, http.StatusOK, download(t, link).status)

	require.Equal(t, http.StatusOK, job.do("POST", "/__mock/reset", nil).status)
	assert.Equal(t, http.StatusNotFound, job.do("GET", "/agent/artifacts/"+uid, nil).status)
	assert.Equal(t, http.StatusNotFound, download(t, link).status, "the reset took the file away")
	assert.Equal(t, http.StatusOK, job.do("GET", "/agent/artifacts/"+uidOf(t, job.get(fixtureRunWithAll), "PLAN"), nil).status,
		"the fixtures' artifacts come back with their runs")
}

// Artifacts come back after a restart with --state-file: nothing of them is
// saved but their runs. Download URLs of the old process are refused; the
// artifact gives new ones.
func TestArtifactsSurviveARestart(t *testing.T) {
	opts := mockserver.Options{ClockMode: mockserver.VirtualClock, ClockStart: clockStart, Step: time.Second}
	s1 := newServer(t, opts)
	c1 := serve(t, s1).in("job-a")
	id := c1.create(map[string]any{"prompt": "Write the release notes."}, mockserver.FateHeader, "artifacts=PLAN+PULL_REQUEST+SCREENSHOT+FILE").RunID
	c1.advance(time.Minute)
	run := c1.get(id)
	before := map[string]mockserver.ArtifactResponse{}
	for _, kind := range []string{"PLAN", "SCREENSHOT", "FILE"} {
		before[kind] = c1.artifact(uidOf(t, run, kind))
	}
	state := saved(t, s1)

	s2 := newServer(t, opts)
	require.NoError(t, s2.Load(bytes.NewReader(state)))
	c2 := serve(t, s2).in("job-a")
	assert.Equal(t, run, c2.get(id))
	assert.Equal(t, before["PLAN"], c2.artifact(uidOf(t, run, "PLAN")), "the same plan")
	for _, kind := range []string{"SCREENSHOT", "FILE"} {
		after := c2.artifact(uidOf(t, run, kind))
		old := download(t, strings.Replace(before[kind].Data.DownloadURL, c1.base, c2.base, 1))
		assert.Equal(t, http.StatusForbidden, old.status, "%s: a URL of the old process", kind)
		assert.Equal(t, before[kind].Data.ExpiresAt, after.Data.ExpiresAt, "the virtual clock came back where it was")
		assert.Equal(t, download(t, before[kind].Data.DownloadURL).body, download(t, after.Data.DownloadURL).body, "%s: the same bytes", kind)
	}
}
