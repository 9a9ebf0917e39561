Feature: Listing runs, to the letter
  The exact rules of GET /agent/runs as the published document gives them,
  and, where it is silent, what the suite assumes:

  - limit is a whole number from 1 to 500, and 20 when it is absent. The
    suite assumes that a page holds limit runs whenever at least that many
    match, and fewer only when it is the last.
  - page_info.has_next_page is true exactly when more runs follow: a last
    page that happens to be full says false, so that a client never asks
    for an empty page.
  - The time filters are strict, as their names say: created_after keeps
    runs created after the instant, not at it; created_before, runs created
    before it; updated_after, runs last updated after it. The suite takes a
    run's timestamps as the server shows them for the instants the server
    filters on (a server that keeps more precision than it shows could
    disagree at the very instant, which these scenarios test).
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
      | query                                 |
      | state=SUCCEEDED                       |
      | state=FAILED&state=ERROR&state=CANCELLED |
      | state=QUEUED&state=INPROGRESS         |
      | source=API                            |
      | source=SCHEDULED_AGENT                |
      | created_before=2001-01-01T00:00:00Z   |
      | updated_after=2100-01-01T00:00:00Z    |

  @creates-runs
  Scenario: Without a limit, a page holds 20 runs
    Given I created 21 runs
    When I list runs with "name={label}&sort_by=created_at"
    Then the listing holds 20 runs
    And the listing says there is a next page
    When I walk every page of "name={label}&sort_by=created_at"
    Then the walk took 2 pages
    And the walk saw each of the runs I created exactly once

  @creates-runs
  Scenario: A single page that is exactly full says there is no next page
    Given I created 2 runs
    When I list runs with "name={label}&limit=2"
    Then the listing holds 2 runs
    And the listing says there is no next page

  @creates-runs
  Scenario: A last page that is exactly full says there is no next page
    Given I created 4 runs
    When I walk every page of "name={label}&sort_by=created_at&limit=2"
    Then the walk took 2 pages
    And every page of the walk held 2 runs
    And the walk saw each of the runs I created exactly once

  @creates-runs
  Scenario Outline: Pages of <limit> hold each run once, in creation order
    Given I created 5 runs
    When I walk every page of "name={label}&sort_by=created_at&sort_order=asc&limit=<limit>"
    Then the walk took <pages> pages
    And the walk saw each of the runs I created exactly once

    Examples:
      | limit | pages |
      | 1     | 5     |
      | 4     | 2     |
      | 5     | 1     |
      | 6     | 1     |

  @creates-runs
  Scenario Outline: The time filters are strict: <filter>
    Given I created these runs:
      | run   |
      | alpha |
      | beta  |
      | gamma |
    When I list runs with "name={label}&<query>"
    Then the listing holds exactly <expected>

    Examples:
      | filter                                      | query                                                                   | expected        |
      | created_after leaves out a run created at its instant  | created_after={created_at of alpha}                          | beta and gamma  |
      | created_before leaves out a run created at its instant | created_before={created_at of gamma}                         | alpha and beta  |
      | both bounds at the instants of two runs                | created_after={created_at of alpha}&created_before={created_at of gamma} | beta |
      | updated_after an hour after the last run was created   | updated_after={an hour after the creation of gamma}          | no runs         |

  # A run is last updated when it is created, or later; so a run created
  # after an instant was last updated after it, while runs created before it
  # are listed only if they moved since.
  @creates-runs
  Scenario: updated_after keeps the runs updated after the instant
    Given I created these runs:
      | run   |
      | alpha |
      | beta  |
      | gamma |
    When I list runs with "name={label}&updated_after={created_at of beta}"
    Then the listing holds gamma, and of alpha and beta only runs that moved since beta was created

  # A finished run is never updated again, so its updated_at is an instant
  # at which it stays, however long the listing takes to come.
  @creates-runs @slow
  Scenario: updated_after leaves out a finished run last updated at its instant
    When I create a run with the prompt "Sort the imports" and:
      | config.name | {label} |
    And I watch the run until it reaches a terminal state
    And I list runs with "name={label}&updated_after={updated_at of the run}"
    Then the listing holds exactly no runs

  # Each run but "match" differs from it in one thing only, so that a filter
  # the server drops, or joins with OR, lets one of them through.
  @creates-runs
  Scenario Outline: Filters combine with AND: <filters>
    Given I created these runs:
      | run         | config.name   | config.model_id | config.environment_id | config.skill_spec                  |
      | early       | {label}       | claude-4-sonnet | env-backend           | acme/agent-skills:dependency-bumps |
      | match       | {label}       | claude-4-sonnet | env-backend           | acme/agent-skills:dependency-bumps |
      | other-model | {label}       | gpt-5           | env-backend           | acme/agent-skills:dependency-bumps |
      | other-env   | {label}       | claude-4-sonnet | env-web-app           | acme/agent-skills:dependency-bumps |
      | other-skill | {label}       | claude-4-sonnet | env-backend           | acme/agent-skills:release-notes    |
      | other-name  | {label}-other | claude-4-sonnet | env-backend           | acme/agent-skills:dependency-bumps |
      | late        | {label}       | claude-4-sonnet | env-backend           | acme/agent-skills:dependency-bumps |
    When I list runs with "<query>"
    Then the listing holds exactly <expected>

    Examples:
      | filters                            | query                                                                                     | expected                                   |
      | name and model_id                  | name={label}&model_id=gpt-5                                                               | other-model                                |
      | model_id and environment_id        | name={label}&model_id=claude-4-sonnet&environment_id=env-web-app                          | other-env                                  |
      | environment_id and skill_spec      | name={label}&environment_id=env-backend&skill_spec=acme/agent-skills:release-notes        | other-skill                                |
      | skill_spec and created_after       | name={label}&skill_spec=acme/agent-skills:dependency-bumps&created_after={created_at of other-name} | late                  |
      | created_after and created_before   | name={label}&created_after={created_at of early}&created_before={created_at of late}      | match, other-model, other-env, other-skill |
      | creator, source and a time bound   | name={label}&creator={creator of match}&source=API&created_before={created_at of match}   | early                                      |
      | every filter at once               | name={label}&model_id=claude-4-sonnet&environment_id=env-backend&skill_spec=acme/agent-skills:dependency-bumps&creator={creator of match}&source=API&created_after={created_at of early}&created_before={created_at of late}&updated_after={created_at of early} | match |
