Feature: Listing runs, to the letter
  The exact rules of GET /agent/runs as the published document gives them,
  and, where it is silent, what the suite assumes:

  - limit is a whole number from 1 to 500, and 20 when it is absent. It is a
    maximum: a server may hold pages shorter than the limit (a cap of its
    own, a budget of bytes), so the suite counts no pages and asks no page
    to be full; it asks that no page hold more than the limit, that the
    pages together hold each run once, and that no page be empty but for
    a listing that matches nothing.
  - page_info.has_next_page is true exactly when more runs follow: a last
    page that happens to be full says false, so that a client never asks
    for an empty page.
  - The time filters are strict, as their names say: created_after keeps
    runs created after the instant, not at it; created_before, runs created
    before it; updated_after, runs last updated after it. No precision of
    timestamps is promised: a server may keep more than it shows. On every
    page the suite lists, a run is judged on the wrong side of a bound only
    when it is by more than the last digit its timestamp shows. The
    scenarios tagged @exact-timestamps test the bounds at the very instant
    of a run, taking its timestamps as shown for the instants the server
    filters on. Where the digits shown leave it undecided which side of a
    bound a run lies on (a server that shows seconds and keeps more), the
    scenario is inconclusive, not failed; --exact-timestamps says the
    server keeps exactly what it shows, and every instant is judged.
  - Filters combine with AND: a run is listed only when it matches every
    one of them. The suite checks this on every page it lists, in every
    feature: each listed run must match each filter of the query whose
    value the run shows (state, name, model_id, creator, source,
    environment_id and the time bounds).

  "{label}" stands for a config name made up for each scenario, and
  "{created_at of alpha}" for alpha's created_at exactly as the server
  wrote it. Runs in the tables are created in the order shown, a moment
  apart, so that each was created at an instant of its own.

  Scenario: A limit of 500, the largest, is accepted
    When I list runs with "limit=500"
    Then the response status is 200
    And the listing holds at most 500 runs

  # Whatever runs the server already has: a dropped filter shows in them.
  Scenario Outline: The runs already there are listed only when they match the filter: <query>
    When I list runs with "<query>&limit=100"
    Then the response status is 200
    And the listing has a list of runs and page information saying whether more follow

    Examples:
      | query                                    |
      | state=SUCCEEDED                          |
      | state=FAILED&state=ERROR&state=CANCELLED |
      | state=QUEUED&state=INPROGRESS            |
      | source=API                               |
      | source=SCHEDULED_AGENT                   |
      | created_before=2001-01-01T00:00:00Z      |
      | updated_after=2100-01-01T00:00:00Z       |

  # The paging scenarios here and the listings of list_runs.feature share
  # one set of six runs, made once (@shares-runs): run 1 is cancelled a
  # moment after its creation, unless it ended first, so that the runs do
  # not all end alike, and every listing comes once all six have ended, so
  # that no run moves while the pages are walked.
  #
  # The default page size is judged over every run the key can see, the
  # six and any already there: only more than 20 can show it. A key that
  # sees 20 or fewer leaves the scenario inconclusive, saying so: the suite
  # creates no runs only to fill a page.
  @creates-runs @shares-runs @slow
  Scenario: Without a limit, a page holds at most 20 runs
    Given I created 6 runs
    And a moment later I cancelled run "run 1", unless it had already ended
    And every run I created has ended
    When I list runs with "sort_by=created_at&limit=21"
    Then without a limit, the same listing holds from 1 to 20 runs and says there is a next page
    When I walk every page of "name={label}&sort_by=created_at"
    Then no page of the walk held more than 20 runs, and none was empty
    And the walk saw each of the runs I created exactly once

  @creates-runs @shares-runs @slow
  Scenario: A single page that is exactly full says there is no next page
    Given I created 6 runs
    And a moment later I cancelled run "run 1", unless it had already ended
    And every run I created has ended
    When I walk every page of "name={label}&sort_by=created_at&limit=6"
    Then no page of the walk held more than 6 runs, and none was empty
    And the walk saw each of the runs I created exactly once

  @creates-runs @shares-runs @slow
  Scenario: A last page that is exactly full says there is no next page
    Given I created 6 runs
    And a moment later I cancelled run "run 1", unless it had already ended
    And every run I created has ended
    When I walk every page of "name={label}&sort_by=created_at&limit=3"
    Then no page of the walk held more than 3 runs, and none was empty
    And the walk saw each of the runs I created exactly once

  # Every limit here leaves a last page shorter than the others.
  @creates-runs @shares-runs @slow
  Scenario Outline: Pages of <limit> hold each run once, in creation order
    Given I created 6 runs
    And a moment later I cancelled run "run 1", unless it had already ended
    And every run I created has ended
    When I walk every page of "name={label}&sort_by=created_at&sort_order=asc&limit=<limit>"
    Then no page of the walk held more than <limit> runs, and none was empty
    And the walk saw each of the runs I created exactly once

    Examples:
      | limit |
      | 4     |
      | 5     |

  # The two runs of the time filters are those of list_runs.feature's
  # orders by last update (@shares-runs): beta, then alpha, is cancelled a
  # moment after beta's creation, which moves neither creation time.
  @creates-runs @exact-timestamps @shares-runs
  Scenario Outline: The time filters are strict: <filter>
    Given I created these runs:
      | run   |
      | alpha |
      | beta  |
    And a moment later I cancelled run "beta", unless it had already ended
    And a moment later I cancelled run "alpha", unless it had already ended
    When I list runs with "name={label}&<query>"
    Then the listing holds exactly <expected>

    Examples:
      | filter                                                 | query                                                                   | expected |
      | created_after leaves out a run created at its instant  | created_after={created_at of alpha}                                     | beta     |
      | created_before leaves out a run created at its instant | created_before={created_at of beta}                                     | alpha    |
      | both bounds at the instants of two runs                | created_after={created_at of alpha}&created_before={created_at of beta} | no runs  |
      | updated_after an hour after the last run was created   | updated_after={an hour after the creation of beta}                      | no runs  |

  # A run is last updated when it is created, or later; so a run created
  # after an instant was last updated after it, while runs created before it
  # are listed only if they moved since.
  @creates-runs @exact-timestamps @shares-runs
  Scenario: updated_after keeps the runs updated after the instant
    Given I created these runs:
      | run   |
      | alpha |
      | beta  |
    And a moment later I cancelled run "beta", unless it had already ended
    And a moment later I cancelled run "alpha", unless it had already ended
    When I list runs with "name={label}&updated_after={created_at of alpha}"
    Then the listing holds beta, and of alpha only runs that moved since alpha was created

  # A finished run is never updated again, so its updated_at is an instant
  # at which it stays, however long the listing takes to come. The run is
  # the one watched to its end that the scenarios which only look at a
  # finished run share (@shares-runs; state_progression.feature).
  @creates-runs @slow @exact-timestamps @shares-runs
  Scenario: updated_after leaves out a finished run last updated at its instant
    Given I created a run with the prompt "Tidy the README" and:
      | config.name | {label} |
    And I watched the run until it reached a terminal state
    When I list runs with "name={label}&updated_after={updated_at of the run}"
    Then the listing holds exactly no runs

  # Each run but "match" differs from it in one thing only, so that a filter
  # the server drops, or joins with OR, lets one of them through. The time
  # bounds fall between two runs, so that no precision matters. "{a model}",
  # "{an environment}", "{a skill}" and their "another" are what the server
  # offers (GET /agent/models, /agent/environments, /agent): a server may
  # refuse others. With fewer than two of each, the scenario is skipped.
  @creates-runs @shares-runs
  Scenario Outline: Filters combine with AND: <filters>
    Given I created these runs:
      | run         | config.name   | config.model_id | config.environment_id | config.skill_spec |
      | early       | {label}       | {a model}       | {an environment}      | {a skill}         |
      | match       | {label}       | {a model}       | {an environment}      | {a skill}         |
      | other-model | {label}       | {another model} | {an environment}      | {a skill}         |
      | other-env   | {label}       | {a model}       | {another environment} | {a skill}         |
      | other-skill | {label}       | {a model}       | {an environment}      | {another skill}   |
      | other-name  | {label}-other | {a model}       | {an environment}      | {a skill}         |
      | late        | {label}       | {a model}       | {an environment}      | {a skill}         |
    When I list runs with "<query>"
    Then the listing holds exactly <expected>

    Examples:
      | filters                          | query                                                                                                                                                                                                                                                   | expected                                   |
      | name and model_id                | name={label}&model_id={another model}                                                                                                                                                                                                                   | other-model                                |
      | model_id and environment_id      | name={label}&model_id={a model}&environment_id={another environment}                                                                                                                                                                                    | other-env                                  |
      | environment_id and skill_spec    | name={label}&environment_id={an environment}&skill_spec={another skill}                                                                                                                                                                                 | other-skill                                |
      | skill_spec and created_after     | name={label}&skill_spec={a skill}&created_after={between other-name and late}                                                                                                                                                                           | late                                       |
      | created_after and created_before | name={label}&created_after={between early and match}&created_before={between other-name and late}                                                                                                                                                       | match, other-model, other-env, other-skill |
      | creator, source and a time bound | name={label}&creator={creator of match}&source=API&created_before={between early and match}                                                                                                                                                             | early                                      |
      | every filter at once             | name={label}&model_id={a model}&environment_id={an environment}&skill_spec={a skill}&creator={creator of match}&source=API&created_after={between early and match}&created_before={between other-name and late}&updated_after={between early and match} | match                                      |
