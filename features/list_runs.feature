Feature: List runs
  GET /agent/runs returns one page of the runs the caller may see, with
  page_info telling whether more follow. Filters are query parameters and
  combine with AND; a repeated state matches any of its values. Passing
  page_info.next_cursor back as cursor reads the next page. Without sort_by
  and sort_order, the runs updated last come first.

  In these scenarios "{label}" stands for a config name made up for each
  scenario. Scenarios that create runs give them that name and always filter
  by it, so they only ever look at their own runs, even on a busy server.
  Runs in the tables are known by a nickname (alpha, beta, ...) and are created
  in the order shown, a moment apart. "{a model}" and "{another model}" are
  two models the server lists as available (GET /agent/models): a server
  may refuse others. With fewer than two, the scenario is skipped.

  # Any runs of the caller may be listed here, old ones too, so nothing is
  # assumed about them beyond the contract (an old run's task_id, for one,
  # need not be its run_id).
  Scenario: A listing has runs and page information
    When I list runs with "limit=5"
    Then the response status is 200
    And the listing has a list of runs and page information saying whether more follow
    And the listing holds at most 5 runs

  # The six runs of these scenarios are the listing rules' paging runs
  # (list_rules.feature), made once and shared (@shares-runs): run 1 is
  # cancelled a moment after its creation, unless it ended first, and the
  # scenarios look once all six have ended.
  @creates-runs @shares-runs @slow
  Scenario: A created run appears in the listing
    Given I created 6 runs
    And a moment later I cancelled run "run 1", unless it had already ended
    And every run I created has ended
    When I list runs with "name={label}"
    Then the listing holds exactly the runs I created

  @creates-runs @shares-runs @slow
  Scenario: Runs are listed newest first
    Given I created 6 runs
    And a moment later I cancelled run "run 1", unless it had already ended
    And every run I created has ended
    When I list runs with "name={label}&sort_by=created_at"
    Then the listing holds the runs I created, newest first

  @creates-runs @shares-runs @slow
  Scenario: Runs can be listed oldest first
    Given I created 6 runs
    And a moment later I cancelled run "run 1", unless it had already ended
    And every run I created has ended
    When I list runs with "name={label}&sort_by=created_at&sort_order=asc"
    Then the listing holds the runs I created, oldest first

  # Cancelling beta, then alpha, makes alpha the run updated last and beta,
  # which then moves no more, the one before: order by update is the
  # reverse of order by creation. A run may end before the cancel reaches
  # it; its last update then still orders it. The two runs are shared with
  # the time filters of list_rules.feature (@shares-runs).
  @creates-runs @shares-runs
  Scenario: Without sort_by the runs updated last come first
    Given I created these runs:
      | run   |
      | alpha |
      | beta  |
    And a moment later I cancelled run "beta", unless it had already ended
    And a moment later I cancelled run "alpha", unless it had already ended
    When I list runs with "name={label}"
    Then the listing holds exactly alpha and beta
    And the listed runs are ordered by "updated_at", newest first

  # Runs that nobody touched since they were created were last updated when
  # they were created. Only a server whose clock the suite holds still (the
  # mock's) keeps runs from moving between their creation and the listing.
  @creates-runs @mock-control
  Scenario: Without sort_by, runs that have not moved since their creation come newest first
    Given I created 3 runs
    When I list runs with "name={label}"
    Then the listing holds the runs I created, newest first

  @creates-runs @shares-runs
  Scenario Outline: Runs can be ordered by their last update, <order> first
    Given I created these runs:
      | run   |
      | alpha |
      | beta  |
    And a moment later I cancelled run "beta", unless it had already ended
    And a moment later I cancelled run "alpha", unless it had already ended
    When I list runs with "name={label}&sort_by=updated_at&sort_order=<sort_order>"
    Then the listing holds exactly alpha and beta
    And the listed runs are ordered by "updated_at", <order> first

    Examples:
      | order  | sort_order |
      | newest | desc       |
      | oldest | asc        |

  # The runs are those of "Filters combine with AND" (list_rules.feature),
  # shared with it (@shares-runs): each differs from "match" in one thing
  # only, and "early" and "late" lie before and after the others. "{an
  # environment}", "{a skill}" and their "another" are, like the models,
  # what the server offers; with fewer than two of each, the scenario is
  # skipped.
  @creates-runs @shares-runs
  Scenario Outline: Filtering by <filter> returns only the matching runs
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
      | filter                 | query                                                                                            | expected                                                     |
      | name                   | name={label}                                                                                     | early, match, other-model, other-env, other-skill and late |
      | model_id               | name={label}&model_id={another model}                                                            | other-model                                                  |
      | creator                | name={label}&creator={creator of match}                                                          | early, match, other-model, other-env, other-skill and late |
      | a creator with no runs | name={label}&creator=nobody-{label}                                                              | no runs                                                      |
      | source                 | name={label}&source=API                                                                          | early, match, other-model, other-env, other-skill and late |
      | a source with no runs  | name={label}&source=SLACK                                                                        | no runs                                                      |
      | created_after          | name={label}&created_after={between other-name and late}                                         | late                                                         |
      | created_before         | name={label}&created_before={between early and match}                                            | early                                                        |
      | both time bounds       | name={label}&created_after={between early and match}&created_before={between match and other-model} | match                                                    |

    # config_name is the mock's older name for the name filter; the published
    # document does not have it, and a server may ignore it.
    @mock-only
    Examples: a filter only the mock offers
      | filter      | query               | expected                                                     |
      | config_name | config_name={label} | early, match, other-model, other-env, other-skill and late |

  @creates-runs @mock-control
  Scenario Outline: Filtering by state returns only runs in those states: <query>
    Given I created these runs:
      | run   |
      | alpha |
      | beta  |
      | gamma |
    And the mock has put run "beta" into "INPROGRESS"
    And the mock has put run "gamma" into "FAILED"
    When I list runs with "name={label}&<query>"
    Then the listing holds exactly <expected>

    Examples:
      | query                     | expected        |
      | state=QUEUED              | alpha           |
      | state=INPROGRESS          | beta            |
      | state=QUEUED&state=FAILED | alpha and gamma |
      | state=SUCCEEDED           | no runs         |

  # The same rule on any server: run 1 is cancelled a moment after its
  # creation (unless it ended first), run 2 is left to end as it will; once
  # every run has ended, a listing by the state either ended in holds
  # exactly the runs that ended in it (both, when they ended alike).
  @creates-runs @slow @shares-runs
  Scenario Outline: Filtering by the state <run> ended in holds exactly the runs that ended in it
    Given I created 6 runs
    And a moment later I cancelled run "run 1", unless it had already ended
    And every run I created has ended
    When I list runs with "name={label}&state={state of <run>}"
    Then the listing holds every run that ended in the state of run "<run>", and no other

    Examples:
      | run   |
      | run 1 |
      | run 2 |

  # Every state at once, in two orders: a server that reads only the first
  # value of a repeated state leaves out runs, whatever state they are in.
  @creates-runs @shares-runs @slow
  Scenario Outline: A repeated state matches any of its values, <first> first
    Given I created 6 runs
    And a moment later I cancelled run "run 1", unless it had already ended
    And every run I created has ended
    When I list runs with "name={label}&<query>"
    Then the listing holds exactly the runs I created

    Examples:
      | first     | query                                                                                                                             |
      | QUEUED    | state=QUEUED&state=PENDING&state=CLAIMED&state=INPROGRESS&state=BLOCKED&state=SUCCEEDED&state=FAILED&state=ERROR&state=CANCELLED |
      | CANCELLED | state=CANCELLED&state=ERROR&state=FAILED&state=SUCCEEDED&state=BLOCKED&state=INPROGRESS&state=CLAIMED&state=PENDING&state=QUEUED |

  @creates-runs @shares-runs @slow
  Scenario: limit caps the size of a page
    Given I created 6 runs
    And a moment later I cancelled run "run 1", unless it had already ended
    And every run I created has ended
    When I list runs with "name={label}&limit=2"
    Then the listing holds from 1 to 2 runs
    And the listing says there is a next page

  # By creation time, because a run's creation time never changes: in the
  # default order (last update) a run still going can move from a later page
  # to an earlier one while the walk goes on, and the document promises no
  # snapshot.
  @creates-runs @shares-runs @slow
  Scenario: Walking every page with the cursor yields each run exactly once
    Given I created 6 runs
    And a moment later I cancelled run "run 1", unless it had already ended
    And every run I created has ended
    When I walk every page of "name={label}&sort_by=created_at&limit=2"
    Then no page of the walk held more than 2 runs, and none was empty
    And the walk saw each of the runs I created exactly once

  Scenario Outline: A bad <parameter> is refused with 400
    When I list runs with "<query>"
    Then the response is a problem with status 400 and code "invalid_request"

    Examples:
      | parameter                  | query                   |
      | limit of 0                 | limit=0                 |
      | limit of 501               | limit=501               |
      | limit that is not a number | limit=ten               |
      | cursor                     | cursor=!!not-a-cursor!! |
      | state                      | state=SLEEPING          |

  # The newest official client (oz-agent-sdk 1.4.0-alpha.6), newer than the
  # published document (May 2026), sends runs with metadata and filters
  # them by metadata, automation, executor and factory. The suite judges
  # these where the server serves that surface, or --newest-client promises it.

  @creates-runs @newest-client
  Scenario: Metadata is kept, given back and filtered on
    When I created these runs:
      | run | metadata.ticket_id | metadata.automation_id |
      | a   | VIS-1-{label}      | nightly-{label}        |
      | b   | VIS-2-{label}      | nightly-{label}        |
      | c   | VIS-1-{label}      | weekly-{label}         |
    And I fetch the run
    Then the run's "metadata.ticket_id" is "VIS-1-{label}"
    When I list runs with "metadata[ticket_id]=VIS-1-{label}"
    Then the listing holds exactly a and c
    When I list runs with "metadata[ticket_id]=VIS-1-{label}&metadata[automation_id]=nightly-{label}"
    Then the listing holds exactly a
    When I list runs with "automation_id=nightly-{label}"
    Then the listing holds exactly a and b

  @creates-runs @newest-client
  Scenario: The executor and factory filters match what they name, and nothing else
    When I created these runs:
      | run |
      | a   |
    And I fetch the run
    And I list runs with "name={label}&executor=nobody-{unknown}"
    Then the listing holds exactly no runs
    When I list runs with "name={label}&factory_uid=factory-{unknown}"
    Then the listing holds exactly no runs
    When I list runs by the executor of the run
    Then the listing holds exactly a

  # An empty value names no one: it is no filter, or a request the server
  # refuses, never "the runs executed (or created) by no one". (An empty
  # metadata value is a value: metadata values may be empty.)
  @creates-runs @newest-client
  Scenario Outline: An empty <filter> filter is no filter, or refused
    When I created these runs:
      | run |
      | a   |
      | b   |
    Then an empty "<filter>" added to "name={label}" lists the same runs, or is refused with a 400

    Examples:
      | filter   |
      | executor |
      | creator  |
