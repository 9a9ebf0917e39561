//go:build !race

// The mutation test runs without the race detector: it exercises the suite,
// not concurrent code of its own, and the detector would make it several
// times slower. `make test` runs it as `make mutants`.

package steps_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/suiteconfig"
)

// The mutation test measures the suite against mistakes a server team could
// plausibly ship: each mutant is the mock with one small thing wrong, made by
// an http.Handler around it (the mock itself is untouched). The whole suite
// runs against every mutant twice: driving the mock's control API, and
// polling it as a real server, and every mutant must be killed (some
// scenario fails) in both modes. `make mutants` shows the kill rates;
// `go test ./steps/ -run TestMutants -v -args -mutants-full` runs the whole
// suite against each mutant rather than the features of its area, and
// `-args -mutants-run 'expires|schedule'` only the mutants so named.
//
// Unlike the broken servers of broken_servers_test.go, which pin down which
// scenario catches which breakage and with what message, this test only
// asks whether anything catches it, so that a new mutant costs one line.

// mutant is one broken variant of the mock. wrap is called afresh for each
// run of the suite, so that a mutant that remembers what it answered starts
// with a clean memory.
type mutant struct {
	name string
	wrap func() func(http.Handler) http.Handler
	// area is where the mutant is counted, and the feature files it is run
	// against, to keep the test quick; -mutants-full runs the whole suite
	// against each.
	area area
	// outOfPolling, when set, says why the suite cannot catch the mutant
	// when it polls a server, as the flag it would need (that the
	// polling mode does not pass) or "mock-only: " and the fact only the
	// mock's control API gives. Such a mutant runs in control mode only and
	// is listed, not counted, in polling mode.
	outOfPolling string
	// clockSpeed, when set, is how many times faster than the wall the
	// mock's clock runs in polling mode (speedUp): for bugs that show only
	// at a schedule's tick.
	clockSpeed int
}

// area is a part of the API the kill rates are given for, with the
// feature files its mutants are run against.
type area struct {
	name     string
	features []string
}

// The areas of the suite that mutants are run against.
var (
	listingArea   = area{"listing", []string{"list_runs.feature", "list_rules.feature", "tenancy.feature"}}
	answersArea   = area{"answers", []string{"errors.feature", "get_run.feature", "create_run.feature", "state_progression.feature", "tenancy.feature"}}
	runsArea      = area{"runs", []string{"get_run.feature", "create_run.feature", "state_progression.feature", "events.feature"}}
	artifactsArea = area{"artifacts", []string{"artifacts.feature"}}
)

var (
	fullSuite = flag.Bool("mutants-full", false, "run the whole suite against each mutant, not only the features of its area")
	onlyNamed = flag.String("mutants-run", "", "run only the mutants whose name matches this regular expression, and the unbroken mock only on their areas")
)

var mutants = slices.Concat(inArea(listingArea, []breakage{
	// Listing: filters.
	{"the model_id filter is ignored", dropParam("model_id")},
	{"the creator filter is ignored", dropParam("creator")},
	{"the environment_id filter is ignored", dropParam("environment_id")},
	{"the state filter is ignored", dropParam("state")},
	{"the source filter is ignored", dropParam("source")},
	{"created_before is ignored", dropParam("created_before")},
	{"updated_after is ignored", dropParam("updated_after")},
	{"only the first filter given is applied", onListQuery(func(q url.Values) {
		kept := false
		for _, name := range []string{"name", "model_id", "environment_id", "skill_spec", "creator", "source", "created_after", "created_before", "updated_after", "state"} {
			if q.Has(name) && kept {
				q.Del(name)
			}
			kept = kept || q.Has(name)
		}
	})},
	{"created_after is inclusive", shiftTime("created_after", -time.Millisecond)},
	{"created_before is inclusive", shiftTime("created_before", time.Millisecond)},
	{"updated_after is inclusive", shiftTime("updated_after", -time.Millisecond)},

	// Listing: pages.
	{"the default limit is 50", onListQuery(func(q url.Values) {
		if !q.Has("limit") {
			q.Set("limit", "50")
		}
	})},
	{"the largest limit is 100", onListQuery(func(q url.Values) {
		if n, _ := strconv.Atoi(q.Get("limit")); n > 100 {
			q.Set("limit", "0") // the mock refuses it as it would refuse 501
		}
	})},
	{"a page holds one run more than the limit", onListQuery(func(q url.Values) {
		if n, err := strconv.Atoi(q.Get("limit")); err == nil && n < 500 {
			q.Set("limit", strconv.Itoa(n+1))
		}
	})},
	{"the next page skips its first run", onPage(func(r *http.Request, runs []any, _ map[string]any) []any {
		if r.URL.Query().Get("cursor") != "" && len(runs) > 0 {
			return runs[1:]
		}
		return runs
	})},
	{"has_next_page is true on an exactly full last page", fullLastPageHasNext},
	{"has_next_page is always false", onPage(func(_ *http.Request, runs []any, info map[string]any) []any {
		info["has_next_page"] = false
		delete(info, "next_cursor")
		return runs
	})},
	{"sort_order is ignored", dropParam("sort_order")},
	{"the default order is by creation", onListQuery(func(q url.Values) {
		if !q.Has("sort_by") {
			q.Set("sort_by", "created_at")
		}
	})},

	// Tenancy.
	{"another team's runs are listed", stateless(listsOtherTeamsRuns)},
	{"another team's run can be read", stateless(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			if rec.Code == http.StatusForbidden && isGetRun(r) {
				rec = asOtherTeam(next, r)
			}
			copyAnswer(w, rec)
		})
	})},
	// (Another team's run answered 404 rather than 403 is no mutant: the
	// published document lists both.)
}), inArea(answersArea, []breakage{
	// Status codes.
	{"an unknown run is 400 rather than 404", stateless(rewrite(func(r *http.Request, a *answer) {
		if a.status == http.StatusNotFound && strings.HasPrefix(r.URL.Path, "/agent/runs/") {
			problem(a, http.StatusBadRequest, "invalid_request", "Invalid request")
		}
	}))},
	{"a PENDING run's cancel is 400 rather than a retryable 409", stateless(rewrite(func(r *http.Request, a *answer) {
		if a.status == http.StatusConflict && isCancel(r) {
			problem(a, http.StatusBadRequest, "invalid_request", "Invalid request")
		}
	}))},
	{"a finished run's cancel is accepted", stateless(rewrite(func(r *http.Request, a *answer) {
		if a.status == http.StatusBadRequest && isCancel(r) {
			a.status = http.StatusOK
			a.header.Set("Content-Type", "application/json")
			a.body, _ = json.Marshal(strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/agent/runs/"), "/cancel"))
		}
	}))},
	{"a create answers 201", stateless(rewrite(func(r *http.Request, a *answer) {
		if r.Method == http.MethodPost && (r.URL.Path == "/agent/run" || r.URL.Path == "/agent/runs") && a.status == http.StatusOK {
			a.status = http.StatusCreated
		}
	}))},
}), inArea(runsArea, []breakage{
	// Runs as they move.
	{"CLAIMED is skipped: shown as INPROGRESS", onRuns(func(_ *http.Request, run map[string]any) {
		if run["state"] == "CLAIMED" {
			run["state"] = "INPROGRESS"
		}
	})},
	{"a FAILED run has no status_message", onRuns(func(_ *http.Request, run map[string]any) {
		if run["state"] == "FAILED" {
			delete(run, "status_message")
		}
	})},
	{"an ERROR run's status_message has no error_code", onRuns(func(_ *http.Request, run map[string]any) {
		if m, ok := run["status_message"].(map[string]any); ok && run["state"] == "ERROR" {
			delete(m, "error_code")
		}
	})},
	{"updated_at never moves", onRuns(func(_ *http.Request, run map[string]any) {
		run["updated_at"] = run["created_at"]
	})},
	{"started_at is set from creation", onRuns(func(_ *http.Request, run map[string]any) {
		run["started_at"] = run["created_at"]
	})},
	{"a cancelled run turns SUCCEEDED later", sinceState("CANCELLED", func(run map[string]any) {
		run["state"] = "SUCCEEDED"
	})},
	{"a finished run turns FAILED later", sinceState("SUCCEEDED", func(run map[string]any) {
		run["state"] = "FAILED"
		run["status_message"] = map[string]any{"message": "The run failed after all.", "error_code": "internal_error"}
	})},
	{"every other look is a stale read of the look before last", staleReads},
}), inArea(artifactsArea, []breakage{
	// Artifacts and their downloads.
	{"a plan comes without its content", stateless(editObject("GET", isArtifactPath, func(_ *http.Request, doc map[string]any) {
		if data, ok := doc["data"].(map[string]any); ok && doc["artifact_type"] == "PLAN" {
			data["content"] = ""
		}
	}))},
	{"a file's size is not that of its run's artifact", stateless(editObject("GET", isArtifactPath, func(_ *http.Request, doc map[string]any) {
		if data, ok := doc["data"].(map[string]any); ok && doc["artifact_type"] == "FILE" {
			data["size_bytes"] = 1
		}
	}))},
	{"a screenshot downloads as octet-stream", stateless(rewrite(func(r *http.Request, a *answer) {
		if strings.HasPrefix(r.URL.Path, "/downloads/") && a.header.Get("Content-Type") == "image/png" {
			a.header.Set("Content-Type", "application/octet-stream")
		}
	}))},
}))

// breakage is a mutant before it is given its area.
type breakage struct {
	name string
	wrap func() func(http.Handler) http.Handler
}

func inArea(a area, bs []breakage) []mutant {
	ms := make([]mutant, len(bs))
	for i, b := range bs {
		ms[i] = mutant{name: b.name, wrap: b.wrap, area: a}
	}
	return ms
}

// mutationModes are the two ways the suite meets a server.
var mutationModes = []struct {
	name string
	opts mockserver.Options
}{
	{"control", mockserver.Options{}},
	// Runs wait in PENDING long enough for a poll to find them there, even
	// on a busy machine, stay CLAIMED long enough for a poll to see that
	// state, and work long enough for the suite to ask their session's
	// redirect while they work.
	//
	// Signed links live four seconds rather than an hour, so that the
	// suite, polling, sees them expire within its patience.
	{"polling", mockserver.Options{Step: 40 * time.Millisecond, Pending: 600 * time.Millisecond, Claimed: 200 * time.Millisecond, InProgress: 400 * time.Millisecond,
		LinkLifetime: 4 * time.Second, DisableControl: true}},
}

// TestMutants runs the suite against every mutant in both modes and fails
// when one survives. The unbroken mock must pass first, in each mode, or
// kills would prove nothing.
//
// A verdict must not depend on the machine's load. In control mode the
// mock's clock orders everything. In polling mode a mutant whose bug shows
// only when a request lands in a window of the runs' own pace (a state
// skipped, a stale read, a cancel that must reach a run before it ends)
// may escape on a busy machine, where the suite's requests come late. So a
// survivor is run once more on a mock whose runs take slowerRetry times as
// long, windows as many times wider, after the unbroken mock has passed
// the same features at that pace; it is a survivor only if it survives
// there too.
func TestMutants(t *testing.T) {
	all := slices.Concat(mutants, resourceMutants, movedMutants, newestMutants)
	if *onlyNamed != "" {
		re, err := regexp.Compile(*onlyNamed)
		require.NoError(t, err, "-mutants-run")
		all = slices.DeleteFunc(all, func(m mutant) bool { return !re.MatchString(m.name) })
		require.NotEmpty(t, all, "no mutant's name matches -mutants-run %q", *onlyNamed)
	}
	rates := killRates{}
	for _, mode := range mutationModes {
		t.Run(mode.name, func(t *testing.T) {
			ms := all
			if mode.name == "polling" {
				ms = slices.DeleteFunc(slices.Clone(all), func(m mutant) bool { return m.outOfPolling != "" })
				t.Logf("polling with the flags a diligent server team passes: %s", diligentFlagsSaid)
			}
			// The unbroken mock first, on the areas the mutants will be run
			// against, and on a faster clock where they will.
			passesUnbroken(t, mode.name, mode.opts, ms, 1)

			killedBy := map[string]string{}
			survivors := runMutants(t, "mutants", mode.name, mode.opts, ms, 1, killedBy)
			if len(survivors) > 0 && mode.name == "polling" {
				passesUnbroken(t, mode.name, mode.opts, survivors, slowerRetry)
				survivors = runMutants(t, "survivors, at a slower pace", mode.name, mode.opts, survivors, slowerRetry, killedBy)
			}
			for _, m := range ms {
				if by, ok := killedBy[m.name]; ok {
					t.Logf("killed   %-58s by %s", m.name, by)
				}
				rates.count(m, mode.name, killedBy[m.name] != "")
			}
			t.Logf("%s mode: %d of %d mutants killed", mode.name, len(ms)-len(survivors), len(ms))
			for _, m := range survivors {
				t.Errorf("mutant survived in %s mode: %s", mode.name, m.name)
			}
		})
	}
	for _, m := range all {
		if m.outOfPolling != "" {
			rates.leftOut(m)
		}
	}
	t.Log("kill rates by area:\n" + rates.table())
}

// diligentFlags gives the suite, in both modes, what the README asks a
// server team to pass: a key of another team, a prompt the server fails,
// the size of the plan. (--wait-for-ticks is given where the mock's clock
// runs fast enough for a tick to come within the suite's patience:
// tuneForMutants.)
func diligentFlags(c *suiteconfig.Config) {
	c.OtherAPIKey = "wk-mock-carol"                                // of another team than alice's (fixtures/principals.json)
	c.FailingPrompt = "Contract suite run that fails: [mock:fail]" // fixtures/fates.json
	c.IdentityPlan = 3                                             // the plan of wk-mock-alice's team
}

const diligentFlagsSaid = "--other-api-key, --failing-prompt, --identity-plan, and --wait-for-ticks on a mock whose clock runs fast"

// killRates counts, per area and mode, the mutants run and killed, and
// the mutants left out of polling with their reasons.
type killRates map[string]*areaRate

type areaRate struct {
	run, killed map[string]int
	outOfReach  []string
}

func (k killRates) of(a string) *areaRate {
	if k[a] == nil {
		k[a] = &areaRate{run: map[string]int{}, killed: map[string]int{}}
	}
	return k[a]
}

func (k killRates) count(m mutant, mode string, killed bool) {
	r := k.of(m.area.name)
	r.run[mode]++
	if killed {
		r.killed[mode]++
	}
}

func (k killRates) leftOut(m mutant) {
	r := k.of(m.area.name)
	r.outOfReach = append(r.outOfReach, m.name+" ("+m.outOfPolling+")")
}

// table is the kill rates as a Markdown table, areas in name order, and
// the totals.
func (k killRates) table() string {
	var b strings.Builder
	b.WriteString("| area | control | polling | left out of polling |\n|---|---|---|---|\n")
	total := &areaRate{run: map[string]int{}, killed: map[string]int{}}
	rate := func(r *areaRate, mode string) string {
		if r.run[mode] == 0 {
			return "-"
		}
		return fmt.Sprintf("%d/%d (%d%%)", r.killed[mode], r.run[mode], 100*r.killed[mode]/r.run[mode])
	}
	names := slices.Sorted(maps.Keys(k))
	for _, name := range names {
		r := k[name]
		for _, mode := range []string{"control", "polling"} {
			total.run[mode] += r.run[mode]
			total.killed[mode] += r.killed[mode]
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", name, rate(r, "control"), rate(r, "polling"), strings.Join(r.outOfReach, "; "))
	}
	fmt.Fprintf(&b, "| all | %s | %s | |\n", rate(total, "control"), rate(total, "polling"))
	return b.String()
}

// TestMutantsOutOfReachSayWhy holds each mutant left out of polling to a
// reason that names the flag the suite would need or the mock-only fact.
func TestMutantsOutOfReachSayWhy(t *testing.T) {
	for _, m := range slices.Concat(mutants, resourceMutants, newestMutants) {
		if r := m.outOfPolling; r != "" && !strings.HasPrefix(r, "--") && !strings.HasPrefix(r, "mock-only: ") {
			t.Errorf("mutant %q is left out of polling because %q: the reason must start with the flag (--...) or \"mock-only: \"", m.name, r)
		}
	}
}

// slowerRetry is how many times longer runs take when a polling survivor is
// run again (TestMutants).
const slowerRetry = 4

// passesUnbroken requires the unbroken mock to pass the features of the
// given mutants' areas, at each clock speed they will be run at, with runs
// slower times as long.
func passesUnbroken(t *testing.T, mode string, base mockserver.Options, ms []mutant, slower int) {
	t.Helper()
	speeds := map[int][]string{}
	for _, m := range ms {
		speeds[m.speed(mode)] = append(speeds[m.speed(mode)], m.area.features...)
	}
	for speed, areas := range speeds {
		slices.Sort(areas)
		areas = slices.Compact(areas)
		res, out := runSuite(t, newMock(t, pace(base, speed, slower), nil).URL, func(c *suiteconfig.Config) {
			tuneForMutants(mode, speed)(c)
			if speed > 1 || slower > 1 || *onlyNamed != "" {
				c.Features = someFeatures(t, areas...)
			}
		})
		require.True(t, res.Passed(), "the suite fails against the unbroken mock in %s mode (clock speed %d, runs %d times slower):\n%s", mode, speed, slower, out)
	}
}

// runMutants runs the suite against each mutant at once, in subtests of a
// test named group, records what killed each killed one in killedBy, and
// returns the survivors.
func runMutants(t *testing.T, group, mode string, base mockserver.Options, ms []mutant, slower int, killedBy map[string]string) []mutant {
	var mu sync.Mutex
	survived := map[string]bool{}
	t.Run(group, func(t *testing.T) {
		for _, m := range ms {
			t.Run(m.name, func(t *testing.T) {
				t.Parallel()
				speed := m.speed(mode)
				res, _ := runSuite(t, newMock(t, pace(base, speed, slower), m.wrap()).URL, func(c *suiteconfig.Config) {
					tuneForMutants(mode, speed)(c)
					if !*fullSuite {
						c.Features = someFeatures(t, m.area.features...)
					}
				})
				mu.Lock()
				defer mu.Unlock()
				if res.Passed() {
					survived[m.name] = true
					return
				}
				var names []string
				for _, f := range res.Failed() {
					names = append(names, f.Name)
				}
				killedBy[m.name] = fmt.Sprintf("%d scenarios, e.g. %q", len(names), names[0])
			})
		}
	})
	return slices.DeleteFunc(slices.Clone(ms), func(m mutant) bool { return !survived[m.name] })
}

// speed is how many times faster than the wall the mock's clock runs for
// this mutant in the given mode.
func (m mutant) speed(mode string) int {
	if mode == "polling" && m.clockSpeed > 0 {
		return m.clockSpeed
	}
	return 1
}

// tuneForMutants bounds the suite's patience: a mutant that hides an
// event is killed when the patience runs out, and a run of the mock in
// polling mode ends within a few seconds. On a mock whose clock runs
// faster than the wall a schedule's tick comes within that patience, so
// the suite waits for ticks there.
func tuneForMutants(mode string, clockSpeed int) func(*suiteconfig.Config) {
	return func(c *suiteconfig.Config) {
		diligentFlags(c)
		// The mock keeps its instants to the millisecond it shows: a bound
		// made inclusive is a failure, polled too, not an inconclusive.
		c.ExactTimestamps = true
		if mode == "polling" {
			c.Timeout = 15 * time.Second
			c.WaitForTicks = clockSpeed > 1
		}
	}
}

// speedUp has the mock's clock run speed times faster than the wall, as
// a server's clock seen in fast motion, and its runs spend as long in each
// state, in real time, as before. Everything the suite reads of the
// server's time (timestamps, the Date header) follows that clock; the
// suite's patience stays in real time.
func speedUp(opts mockserver.Options, speed int) mockserver.Options {
	start := time.Now()
	opts.Wall = func() time.Time { return start.Add(time.Since(start) * time.Duration(speed)) }
	return slowDown(opts, speed) // as many times longer on the faster clock: as long on the wall
}

// slowDown makes each of a run's states last times as long.
func slowDown(opts mockserver.Options, times int) mockserver.Options {
	for _, d := range []*time.Duration{&opts.Step, &opts.Queued, &opts.Pending, &opts.Claimed, &opts.InProgress} {
		*d *= time.Duration(times)
	}
	return opts
}

// pace is base with the clock running speed times faster than the wall and
// the runs' states lasting slower times as long on the wall.
func pace(base mockserver.Options, speed, slower int) mockserver.Options {
	opts := base
	if speed > 1 {
		opts = speedUp(opts, speed)
	}
	if slower > 1 {
		opts = slowDown(opts, slower)
	}
	return opts
}
