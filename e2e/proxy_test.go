package e2e_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/proxy"
	"github.com/agentruns/agentruns/proxy/record"
	"github.com/agentruns/agentruns/refserver"
	"github.com/agentruns/agentruns/suiteconfig"
)

// The validating proxy (package proxy) must see nothing wrong in the traffic
// of a suite run against a server that follows the document: these tests
// put it in front of the reference server and of the bundled mock, run the
// suite through it, and read what it found; what it records of the
// reference server, the mock replays. (What it sees of each broken server
// is steps/proxy_test.go's, beside the broken servers.)

func TestProxySeesNoViolationInFrontOfTheReferenceServer(t *testing.T) {
	judgesServers(t)
	for _, tc := range []struct {
		name string
		opts refserver.Options
	}{
		{"runs that take a while", refserver.Options{Step: 100 * time.Millisecond, BlockedFor: 300 * time.Millisecond}},
		{"runs that end at once", refserver.Options{Step: time.Millisecond}},
		{"runs held in PENDING", refserver.Options{Step: 2 * time.Millisecond, PendingFor: 300 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, base := newProxy(t, newReferenceServer(t, tc.opts), proxy.Options{})
			res, out := runSuite(t, base, func(c *suiteconfig.Config) { oneCaller(c); runFeaturesOnly(c) })
			assertAllPassed(t, res, out)
			s := foundBy(t, p)
			assert.Zero(t, s.Violations, describe(s))
			assert.Empty(t, s.Unchecked, describe(s))
			assert.Greater(t, s.Checked, 200, "the suite's traffic went through the proxy")
			assert.Empty(t, s.Drift.Facts, "the reference server answers nothing the document does not declare")
			t.Logf("%d exchanges checked, %d requests off the document (the suite's deliberate bad requests), %d facts of drift", s.Checked, s.OffDocument, s.Drift.Distinct)
		})
	}
}

// The bundled mock follows the document and every rule too: with every
// feature run through the proxy, against the mock and its control API, the
// proxy finds nothing. (The reference server serves the run operations
// only; this covers schedules, identities, messages, conversations and
// artifacts as well.)
func TestProxySeesNoViolationInFrontOfTheMock(t *testing.T) {
	p, base := newProxy(t, newMock(t, mockserver.Options{}).URL, proxy.Options{})
	res, out := runSuite(t, base, nil)
	assertAllPassed(t, res, out)
	s := foundBy(t, p)
	assert.Zero(t, s.Violations, describe(s))
	assert.Empty(t, s.Unchecked, describe(s))
	assert.Empty(t, s.Drift.Facts, "the mock answers nothing the document does not declare, and takes nothing it does not")
	t.Logf("%d exchanges checked, %d facts of drift", s.Checked, s.Drift.Distinct)
}

// A suite run against the reference server, recorded through the proxy,
// becomes a fixtures folder the mock serves offline: the read-only suite
// passes against it, and a run seen moving replays its timeline on the
// mock's clock.
func TestARecordedSuiteRunReplaysOnTheMock(t *testing.T) {
	dir := t.TempDir()
	rec := record.New(dir, 0)
	p, base := newProxy(t, newReferenceServer(t, refserver.Options{Step: 100 * time.Millisecond, BlockedFor: 300 * time.Millisecond}), proxy.Options{Observer: rec})
	res, out := runSuite(t, base, func(c *suiteconfig.Config) { oneCaller(c); runFeaturesOnly(c) })
	assertAllPassed(t, res, out)
	foundBy(t, p)
	written, err := rec.Write()
	require.NoError(t, err)
	sum := written.(record.Summary)
	t.Logf("recorded %+v", sum)
	require.Greater(t, sum.Runs, 50)
	require.Positive(t, sum.Replayed, "some run was seen moving to its end")

	set, err := fixtures.Load(os.DirFS(dir))
	require.NoError(t, err)
	for _, name := range []string{"principals.json", "runs.json"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.NotContains(t, string(data), "wk-mock-alice", "%s holds the caller's key", name)
	}

	// Offline, as against any server: the read-only suite passes, every
	// feature of it. The replaying mock's plan is its own, not the recorded
	// server's: the recording names no plan, so the mock's default.
	replay := newMock(t, mockserver.Options{Fixtures: set, DisableControl: true})
	res, out = runSuite(t, replay.URL, func(c *suiteconfig.Config) {
		oneCaller(c)
		c.ReadOnly, c.IdentityPlan = true, fixtures.DefaultPlanLimit
	})
	assertAllPassed(t, res, out)
	assertOnlyMockScenariosSkipped(t, res)
	passed, _, _ := res.Count()
	assert.Greater(t, passed, 10)

	// A replayed run, on a mock whose clock only moves when told: the one
	// that began last. Every recorded run is timed from one moment, the
	// latest any of them was seen in the state it starts in; when that is
	// this run's, it enters its first state as the fixtures load (the
	// others are as far on as they were then).
	var replayed *fixtures.Run
	for i, r := range set.Runs {
		if r.Replay != nil && (replayed == nil || r.UpdatedAgo < replayed.UpdatedAgo) {
			replayed = &set.Runs[i]
		}
	}
	require.NotNil(t, replayed)
	clock := newMock(t, mockserver.Options{Fixtures: set, ClockMode: mockserver.VirtualClock})
	if first := stateOf(t, clock.URL, replayed.ID); replayed.UpdatedAgo == 0 {
		assert.Equal(t, replayed.State, first, "a replayed run starts in the first state it was seen in")
	}
	var total time.Duration
	for _, d := range replayed.Replay.Steps {
		total += time.Duration(d)
	}
	advance(t, clock.URL, total+time.Second)
	assert.Equal(t, replayed.Replay.Final, stateOf(t, clock.URL, replayed.ID), "it ends as it was seen to end")
}

func stateOf(t *testing.T, base, id string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/agent/runs/"+id, nil)
	req.Header.Set("Authorization", "Bearer any-key")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var run struct {
		State string `json:"state"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&run))
	return run.State
}

func advance(t *testing.T, base string, d time.Duration) {
	t.Helper()
	resp, err := http.Post(base+"/__mock/clock/advance", "application/json", strings.NewReader(`{"by":"`+d.String()+`"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}
