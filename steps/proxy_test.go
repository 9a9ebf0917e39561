package steps_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/agentruns/agentruns/proxy"
	"github.com/agentruns/agentruns/refserver"
	"github.com/agentruns/agentruns/rules"
	"github.com/agentruns/agentruns/suiteconfig"
)

// The validating proxy (package proxy) must see what each broken server of
// broken_servers_test.go does wrong, and judge the reference server built to
// the published document by what it serves. These tests put it in front of
// those servers, run the suite through it, and read what it found. (Its
// clean verdicts in front of the reference server and the mock, and the
// replay of what it records, are package e2e's.)

// proxyCatches names, for each broken server, the rule the proxy must
// report it breaking while the suite runs through it.
var proxyCatches = map[string]string{
	"an identity without the skills the newest client reads": rules.ResponseFollowsDocument,
	"a wrong state name":                                                rules.ResponseFollowsDocument,
	"a missing required field":                                          rules.ResponseFollowsDocument,
	"task_id different from run_id":                                     rules.CreatedRunIsItsTask,
	"a list that ignores a filter (model_id)":                           rules.ListingMatchesFilters,
	"a cursor that repeats a run":                                       rules.WalkNeverRepeats,
	"a state that moves backwards":                                      rules.StatesMoveForward,
	"an error that is not a problem document":                           rules.ResponseFollowsDocument,
	"a problem whose status differs from the HTTP status":               rules.ProblemStatusMatches,
	"a cancel that does not cancel":                                     rules.AcceptedCancelCancels,
	"a cancel refused while the run is still going":                     rules.CancelRefusedOnlyLate,
	"a list that ignores sort_order":                                    rules.ListingOrdered,
	"a listing without has_next_page":                                   rules.ResponseFollowsDocument,
	"no session link once claimed":                                      rules.ClaimedRunLinksSession,
	"a terminal run that changes afterwards":                            rules.TerminalRunNeverChanges,
	"events numbered anew at every poll":                                rules.EventsNeverChange,
	"events newest first":                                               rules.EventsOrdered,
	"an end reported before it happened":                                rules.EventsTellTheEnd,
	"a reported event that moves a finished run back":                   rules.FinishedRunTakesNoEvent,
	"has_next_page on a full last page":                                 rules.NextPageHasRuns,
	"a default page of 50 runs":                                         rules.PageWithinLimit,
	"filters joined by OR":                                              rules.ListingMatchesFilters,
	"an artifact answered under another uid":                            rules.AnswerIsTheOneAsked,
	"a transcript served in place of a redirect":                        rules.ResponseFollowsDocument,
	"a schedule create answering 200":                                   rules.ResponseFollowsDocument,
	"an agent variant without its source":                               rules.ResponseFollowsDocument,
	"creating an identity answers 200 rather than 201":                  rules.ResponseFollowsDocument,
	"plans without their content":                                       rules.PlanHasContent,
	"a default model that is not listed":                                rules.DefaultModelListed,
	"environments listed oldest first":                                  rules.EnvironmentsOrdered,
	"deleting an identity that leaves it and its keys in place":         rules.DeletedIdentityGone,
	"read_at and delivered_at that move on every call":                  rules.MessageTimesSetOnce,
	"messages accepted for a finished run, and shown delivered at once": rules.FinishedRunTakesNoMessage,
	"conversations with their messages newest first":                    rules.ConversationInTimeOrder,
	"a continued run that starts a conversation of its own":             rules.ConversationKeepsItsRuns,
	"a schedule that fires twice per tick":                              rules.ScheduleOneRunPerTick,
	"agents out of name order":                                          rules.SkillsOrdered,
	"follow-ups accepted and dropped":                                   rules.FollowupStartsEndedRun,
	"a follow-up that restarts a run from nothing":                      rules.RunKeepsItsHistory,
	"handoff files before the run has ended":                            rules.HandoffFilesAfterAnEnd,
	"metadata accepted and dropped":                                     rules.MetadataKept,
	"metadata and automation filters ignored":                           rules.ListingMatchesFilters,
	"executor and factory filters ignored":                              rules.ListingMatchesFilters,
}

// proxyCannotSee names the broken servers whose fault the traffic of one
// caller, passing through unchanged, cannot show, and why.
var proxyCannotSee = map[string]string{
	"handoff files that never come": "the document lets any run list no handoff files (\"when the last [execution] left no files\"); " +
		"which files a run leaves is the mock's to choose, by the fate the suite sends it (a mock-only scenario)",
	"handoff links that need the API key": "the same as other download links: a handoff link points at the upstream's host, and the client fetches it there, not through the proxy",
	"redirects that need an API key": "the published document (May 2026) asks for a key at the session redirect, so a " +
		"401 to a request without one follows it; that both redirects need none is the newest client's reading, which the " +
		"suite holds only under @newest-client, and nothing in the traffic says which of the two a server claims (the " +
		"suite asks the session redirect first and stops at its 401)",
	"a 200 for an unknown run": "the id the suite asks for was made up to be unknown; an observer cannot tell a run that does not exist " +
		"from one of the server's it has not seen",
	"another team's runs listed": "a caller's team is in no answer (runs show a creator, not a team), so a run of another team " +
		"looks like any run of the caller's own; telling them apart needs a second team's key",
	"another team's run readable and cancellable": "the same: which team a run belongs to is in no answer; the suite shows it " +
		"with a second team's key, which one caller's traffic does not have",
	"another team's artifact handed out": "the same: an artifact names neither its run's team nor the caller's",
	"a conversation shown to another team, and a session that never redirects": "a conversation names no team; and an empty " +
		"object is what the document allows a session's redirect to answer until the conversation is available, which only " +
		"the mock promises at a given moment (a mock-only scenario)",
	"downloads that never expire, and serve a truncated file": "a download URL names the upstream's own host (a storage " +
		"service's, on a real server): the client fetches it there, not through the proxy, which rewrites no URL on the way",
	"a transcript link that still wants the API key": "the same: the transcript link points at the upstream's host, not " +
		"through the proxy",
	"a summary before the run has ended": "the document does not say when a step gets its summary; that it comes once the " +
		"run has ended is the mock's promise (a mock-only scenario), so holding another server to it would be wrong",
	"a schedule that never fires": "whether a tick has come is the server's clock's to say, and no answer carries the " +
		"server's now (a mock's clock is virtual; a real scheduler may lag); an empty listing of a schedule's runs is " +
		"right until then",
	"environments that do not follow their runs": "last_task_created is optional in the document, and this server " +
		"never shows it: a server that leaves it out follows the document (the proxy holds it only where it is shown, " +
		"to be no older than the newest run seen created in the environment)",
	"time bounds that include their instant": "this server lists a run created at the bound's very instant; a run shown " +
		"to the millisecond may have been created a fraction after it (no precision is promised), so only a server known " +
		"to keep exact timestamps can be held at the instant, as the suite's @exact-timestamps scenarios hold the mock",
	"a schedule that ignores pause": "a run listed under a paused schedule may have started at a tick just before the " +
		"pause: the instant the pause took effect on the server's clock is in no answer (a pause need not change updated_at)",
}

func TestProxyListsNameBrokenServers(t *testing.T) {
	names := map[string]bool{}
	for _, bs := range brokenServers {
		names[bs.name] = true
	}
	for name := range proxyCatches {
		assert.True(t, names[name], "proxyCatches names %q, which is no broken server", name)
	}
	for name := range proxyCannotSee {
		assert.True(t, names[name], "proxyCannotSee names %q, which is no broken server", name)
	}
}

// TestProxyReportsWhatEachBrokenServerDoes puts the proxy in front of each
// broken server, runs the suite's features for it through the proxy (the
// mock's control API is forwarded, so the suite drives the mock's clock as
// it does without the proxy), and checks the proxy reported the rule that
// server breaks.
func TestProxyReportsWhatEachBrokenServerDoes(t *testing.T) {
	judgesServers(t)
	for _, bs := range brokenServers {
		t.Run(bs.name, func(t *testing.T) {
			rule, catches := proxyCatches[bs.name]
			why, cannot := proxyCannotSee[bs.name]
			require.True(t, catches != cannot, "say in proxyCatches which rule the proxy reports %q breaking, or in proxyCannotSee why it cannot", bs.name)
			srv := newMock(t, mockserver.Options{}, bs.wrap)
			p, base := newProxy(t, srv.URL, proxy.Options{})
			_, _ = runSuite(t, base, func(c *suiteconfig.Config) { c.Features = someFeatures(t, bs.features...) })
			s := foundBy(t, p)
			var broken []string
			count := map[string]int{}
			for _, r := range s.Rules {
				if r.Violations > 0 {
					broken = append(broken, fmt.Sprintf("%s=%d", r.ID, r.Violations))
					count[r.ID] = r.Violations
				}
			}
			if cannot {
				t.Logf("not expected to be seen (%s); found: %s", why, strings.Join(broken, " "))
				return
			}
			assert.Positive(t, count[rule], "the proxy did not report %s\n%s", rule, describe(s))
			t.Logf("found: %s", strings.Join(broken, " "))
		})
	}
}

// The proxy left to its default judges the upstream by the surface it
// serves: in front of the reference server serving the published document
// alone, the suite's whole traffic (the newest client's requests included,
// which that server answers 404 or 405) breaks nothing, although its
// identities lack the five fields only the newest client requires. A run's
// title taken out of that server's answers, which the published document
// requires, is still reported.
func TestProxyJudgesThePublishedReferenceServerByWhatItServes(t *testing.T) {
	judgesServers(t)
	published := refserver.Options{Step: 20 * time.Millisecond, Published: true}
	t.Run("as served", func(t *testing.T) {
		p, err := proxy.New(proxy.Options{Upstream: newReferenceServer(t, published)})
		require.NoError(t, err)
		srv := httptest.NewServer(p)
		t.Cleanup(func() { srv.Close(); p.Close() })
		_, _ = runSuite(t, srv.URL, func(c *suiteconfig.Config) { oneCaller(c); runFeaturesOnly(c) })
		s := foundBy(t, p)
		assert.Zero(t, s.Violations, describe(s))
		assert.Greater(t, s.Checked, 200, "the suite's traffic went through the proxy")
		assert.Contains(t, s.Document, "the published document")
	})
	t.Run("a run without its title", func(t *testing.T) {
		untitled := rewrite(func(r *http.Request, a *answer) {
			editRuns(a, func(run map[string]any) { delete(run, "title") })
		})(refserver.New(published))
		upstream := httptest.NewServer(untitled)
		t.Cleanup(upstream.Close)
		p, err := proxy.New(proxy.Options{Upstream: upstream.URL + "/api/v1"})
		require.NoError(t, err)
		srv := httptest.NewServer(p)
		t.Cleanup(func() { srv.Close(); p.Close() })
		_, _ = runSuite(t, srv.URL, func(c *suiteconfig.Config) {
			oneCaller(c)
			c.Features = someFeatures(t, "create_run.feature", "list_runs.feature")
		})
		s := foundBy(t, p)
		require.Positive(t, s.Violations, describe(s))
		for _, f := range s.Latest {
			assert.True(t, strings.HasSuffix(f.Field, "title"), "only the missing title is reported: %s", f.Violation)
		}
	})
}
