package record_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/internal/schemagen"
	"github.com/agentruns/agentruns/mockserver"
)

// The recorder holds what it wrote to fixtures.Check rather than start a
// mock on it: as good a guarantee only if whatever fixtures.Check accepts,
// the mock loads. Runs and schedules with drawn agent configurations
// (members of every kind the document declares, of the types it allows),
// crons, steps and states, each accepted by the check, must start a mock;
// some drawn are refused, so that the check is seen to judge.
func TestWhatTheFixturesCheckAcceptsTheMockLoads(t *testing.T) {
	doc := embeddedModel(t)
	base, err := fixtures.Load(fixtures.Embedded())
	require.NoError(t, err)
	rng := rand.New(rand.NewSource(7))
	gen, err := schemagen.New(doc, rng)
	require.NoError(t, err)
	crons := []string{"0 3 * * *", "*/5 * * * *", "0 3 * * 9", "TZ=UTC 0 3 * * *", "0 3 * *"}
	states := []string{"QUEUED", "INPROGRESS", "SUCCEEDED", "CANCELLED", "SLEEPING"}
	steps := []time.Duration{time.Minute, fixtures.MaxStep, fixtures.MaxStep + time.Hour}
	accepted, refused := 0, 0
	rounds := 40
	if testing.Short() {
		rounds = 12
	}
	for i := range rounds {
		gen.Optional = []float64{1, 0.5, 0.1}[i%3]
		cfg, err := json.Marshal(gen.Component("AmbientAgentConfig"))
		require.NoError(t, err)
		set := *base
		run := base.Runs[0]
		run.Replay, run.Extra, run.StatusMessage = nil, nil, nil
		run.Config, run.State, run.Step = cfg, states[rng.Intn(len(states))], fixtures.Duration(steps[rng.Intn(len(steps))])
		set.Runs = []fixtures.Run{run}
		set.Schedules = []fixtures.Schedule{{ID: "s1", Name: "n", Cron: crons[rng.Intn(len(crons))], Prompt: "p", Enabled: true,
			Owner: base.DefaultPrincipal.UID, Config: cfg}}
		name := fmt.Sprintf("draw %d: state %s, step %s, cron %q, agent_config %s", i, run.State, time.Duration(run.Step), set.Schedules[0].Cron, cfg)
		if err := fixtures.Check(&set, doc); err != nil {
			refused++
			continue
		}
		accepted++
		_, err = mockserver.New(mockserver.Options{Fixtures: &set})
		require.NoError(t, err, "%s: fixtures.Check accepts it, the mock does not", name)
	}
	t.Logf("the check accepted %d drawn folders and refused %d", accepted, refused)
	require.NotZero(t, accepted, "the check accepted nothing drawn")
	require.NotZero(t, refused, "the check refused nothing drawn")
}
