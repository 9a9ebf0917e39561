package store

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestArtifactsAreFoundByUID(t *testing.T) {
	st := newTestStore(t)
	ms := open(t, st, "")
	r := fixtureRun(t, ms, "team-acme", Succeeded, "API")
	require.NotEmpty(t, r.ArtifactTypes)
	for i, typ := range r.ArtifactTypes {
		a, err := ms.Artifact(alice(st), r.ArtifactUID(i))
		if typ == ArtifactPullRequest {
			failsWith(t, err, ErrArtifactNotRetrievable, NotFound)
			continue
		}
		require.NoError(t, err, typ)
		assert.Equal(t, typ, a.Type)
		assert.Equal(t, r.ID, a.Run.Run.ID)
	}
	_, err := ms.Artifact(carol(st), r.ArtifactUID(1))
	failsWith(t, err, ErrOtherTeam, Forbidden)
	_, err = ms.Artifact(alice(st), uuid.New())
	failsWith(t, err, ErrArtifactNotFound, NotFound)

	// A new run shows its artifacts once it has succeeded, not before.
	n := newRun(ms, "Draw the plan")
	n.Fate.Artifacts = []string{ArtifactPlan}
	v, err := ms.Create(alice(st), n)
	require.NoError(t, err)
	_, err = ms.Artifact(alice(st), v.Run.ArtifactUID(0))
	failsWith(t, err, ErrArtifactNotFound, NotFound)
	_, err = ms.Advance(testSteps[0] + testSteps[1] + testSteps[2] + testSteps[3])
	require.NoError(t, err)
	a, err := ms.Artifact(alice(st), v.Run.ArtifactUID(0))
	require.NoError(t, err)
	assert.Contains(t, PlanContent(a.Run.Run), "Draw the plan")
}

func TestEnvironmentsShowTheirTeamsUse(t *testing.T) {
	st := newTestStore(t)
	ms := open(t, st, "")
	envs := ms.Environments(alice(st))
	require.NotEmpty(t, envs)
	env := envs[0].Env
	failsWith(t, st.CheckEnvironment(carol(st), "env-nope"), ErrEnvironmentNotFound, NotFound)
	for _, e := range st.opts.Fixtures.Environments {
		if !e.VisibleTo("team-globex") {
			failsWith(t, st.CheckEnvironment(carol(st), e.UID), ErrEnvironmentHidden, Forbidden)
		}
	}
	require.NoError(t, st.CheckEnvironment(alice(st), env.UID))
	n := newRun(ms, "Build it there")
	n.Config.EnvironmentID = env.UID
	v, err := ms.Create(alice(st), n)
	require.NoError(t, err)
	for _, e := range ms.Environments(alice(st)) {
		if e.Env.UID == env.UID {
			require.NotNil(t, e.LastTask)
			assert.Equal(t, v.Run.ID, e.LastTask.Run.ID, "the newest run there")
		}
	}
}

// The ids and the file's size are derived without the library's
// allocations; they must stay what the plain forms give, or an artifact
// shown in a run would not be found by its id, or its size would lie.
func TestArtifactUIDAndFileSizeMatchTheirPlainForms(t *testing.T) {
	for _, r := range []*Run{
		{ID: "f29d0da9-953f-48f1-a09f-76b5a170b338", Title: "Fix flaky login test", Prompt: "  Find the race.\n"},
		{ID: "a", Title: "", Prompt: ""},
		{ID: strings.Repeat("x", 128), Title: "Ünïcode <&>", Prompt: strings.Repeat("long prompt ", 500)},
		{ID: strings.Repeat("y", 300), Title: "an id over the usual bound still hashes right"},
	} {
		for i := range 12 {
			want := uuid.NewSHA1(artifactNamespace, []byte(r.ID+"/"+strconv.Itoa(i)))
			assert.Equal(t, want, r.ArtifactUID(i), "ArtifactUID(%d) of %.20s", i, r.ID)
		}
		plain := "# Summary: " + r.Title + "\n\nRun: " + r.ID + "\n\n## Task\n\n" +
			strings.TrimSpace(r.Prompt) + "\n\n## Outcome\n\n" +
			"The task is done. Every step of the plan was carried out and the tests pass.\n"
		assert.Equal(t, plain, FileContent(r))
		assert.Equal(t, len(plain), FileContentLen(r))
	}
}
