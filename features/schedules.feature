Feature: Scheduled agents
  A schedule is an agent that starts a run at every tick of a 5-field cron
  expression read in UTC. Callers create, list, read, replace, pause, resume
  and delete schedules under /agent/schedules. Runs a schedule starts carry
  source SCHEDULED_AGENT and a schedule block naming it, and can be listed
  with schedule_id.

  Schedules a scenario creates are named after the scenario, so that a
  listing on a server full of schedules can be narrowed to them; on a real
  server they are deleted when the scenario ends.

  @creates-runs
  Scenario: Creating a schedule answers 201 with the schedule
    When I create a schedule "nightly" with the cron "0 3 * * *"
    Then the response field "cron_schedule" is "0 3 * * *"
    And the response field "enabled" is "true"
    When I fetch schedule "nightly"
    Then the response status is 200
    And the response is schedule "nightly"

  @creates-runs
  Scenario: Schedules are listed in alphabetical order of name
    Given I create a schedule "charlie" with the cron "0 3 * * *"
    And I create a schedule "alpha" with the cron "0 4 * * *"
    And I create a schedule "bravo" with the cron "0 5 * * 1-5"
    Then the schedules I created are listed in the order alpha, bravo, charlie

  @creates-runs
  Scenario: Replacing a schedule changes its cron and prompt
    Given I create a schedule "nightly" with the cron "0 3 * * *"
    When I replace schedule "nightly" with the cron "30 4 * * 1-5" and the prompt "Look for slow tests"
    Then the response status is 200
    And the response field "cron_schedule" is "30 4 * * 1-5"
    And the response field "prompt" is "Look for slow tests"
    And the response field "enabled" is "true"

  @creates-runs
  Scenario: Pausing and resuming flip enabled
    Given I create a schedule "nightly" with the cron "0 3 * * *"
    When I pause schedule "nightly"
    Then the response status is 200
    And the response field "enabled" is "false"
    When I resume schedule "nightly"
    Then the response status is 200
    And the response field "enabled" is "true"

  @creates-runs
  Scenario: Deleting a schedule answers success, and it is gone
    Given I create a schedule "nightly" with the cron "0 3 * * *"
    When I delete schedule "nightly"
    Then the response status is 200
    And the response field "success" is "true"
    When I fetch schedule "nightly"
    Then the response is a problem with status 404 and code "resource_not_found"

  Scenario: An unknown schedule is not found
    When I fetch a schedule that does not exist
    Then the response is a problem with status 404 and code "resource_not_found"

  @writes
  Scenario Outline: A schedule with <case> is a 400
    When I create a schedule with the body <body>
    Then the response is a problem with status 400 and code "invalid_request"

    Examples:
      | case                     | body                                                                   |
      | a cron that is not cron  | {"name": "{label} bad", "cron_schedule": "every night", "prompt": "p"} |
      | a cron with four fields  | {"name": "{label} bad", "cron_schedule": "0 3 * *", "prompt": "p"}     |
      | no name                  | {"cron_schedule": "0 3 * * *", "prompt": "p"}                          |
      | neither prompt nor skill | {"name": "{label} bad", "cron_schedule": "0 3 * * *"}                  |

  # The error schema requires type, title, status and error only; a detail
  # is optional and free text. The mock's names the field at fault.
  @mock-only @writes
  Scenario Outline: The mock's 400 for a schedule with <case> names <field>
    When I create a schedule with the body <body>
    Then the response is a problem with status 400 and code "invalid_request"
    And the problem's detail names "<field>"

    Examples:
      | case                     | body                                                                   | field         |
      | a cron that is not cron  | {"name": "{label} bad", "cron_schedule": "every night", "prompt": "p"} | cron_schedule |
      | a cron with four fields  | {"name": "{label} bad", "cron_schedule": "0 3 * *", "prompt": "p"}     | cron_schedule |
      | no name                  | {"cron_schedule": "0 3 * * *", "prompt": "p"}                          | name          |
      | neither prompt nor skill | {"name": "{label} bad", "cron_schedule": "0 3 * * *"}                  | prompt        |

  # Needs a key of another team (--other-api-key). The published document
  # lists 403 and 404 for a schedule: a server may refuse another team's
  # schedule or hide that it exists. Either way the schedule stays as it was.
  @creates-runs @two-callers
  Scenario Outline: Another team's schedule is refused when it <action> it, and never listed
    Given I create a schedule "nightly" with the cron "0 3 * * *"
    When another team <action> schedule "nightly"
    Then the response is a problem with status 403 and code "not_authorized", or 404 and "resource_not_found"
    And another team's schedule listing does not show "nightly"
    When I fetch schedule "nightly"
    Then the response is schedule "nightly"
    And the response field "enabled" is "true"

    Examples:
      | action  |
      | fetches |
      | pauses  |
      | deletes |

  # Spawning is driven by the mock's clock: three days pass in an instant.
  @creates-runs @mock-control
  Scenario: A daily schedule starts one run per day, listed under its schedule_id
    Given I create a schedule "nightly" with the cron "0 3 * * *"
    When 3 days pass on the mock's clock
    And I list the runs of schedule "nightly"
    Then the listing holds 3 runs
    And every listed run was started by schedule "nightly", each at its own tick

  # A replaced cron is the one that fires: 04:30 each day, never 03:00.
  @creates-runs @mock-control
  Scenario: A replaced schedule fires on its new cron only
    Given I create a schedule "nightly" with the cron "0 3 * * *"
    And I replace schedule "nightly" with the cron "30 4 * * *" and the prompt "Look for slow tests"
    When 3 days pass on the mock's clock
    And I list the runs of schedule "nightly"
    Then the listing holds 3 runs
    And every listed run was started by schedule "nightly" at 04:30 UTC

  @creates-runs @mock-control
  Scenario: A paused schedule starts nothing until resumed
    Given I create a schedule "nightly" with the cron "0 3 * * *"
    And I pause schedule "nightly"
    When 2 days pass on the mock's clock
    And I list the runs of schedule "nightly"
    Then the listing holds 0 runs
    When I resume schedule "nightly"
    And 1 day passes on the mock's clock
    And I list the runs of schedule "nightly"
    Then the listing holds 1 run

  # The same two rules on any server, as its clock runs. The suite reads
  # the server's clock by its Date header; "the server's minute N" is the
  # Nth whole minute after that reading, and each schedule here fires once,
  # at one such minute (its cron names the minute, hour, day and month).
  # Without the mock's control API the suite waits for those minutes in
  # real time, about three, and each scenario starts one run: they run only
  # with --wait-for-ticks (Config.WaitForTicks). A change that lands too
  # close to a tick, or a tick the server's clock does not reach within the
  # suite's patience (--timeout), leaves the scenario inconclusive; a
  # schedule that has not fired a minute after its tick fails it.
  @creates-runs @schedule-ticks
  Scenario: A replaced schedule fires on its new cron, not on its old one
    Given I read the server's clock
    And I create a schedule "once" that fires once, at the server's minute 2
    When I replace schedule "once" so that it fires once, at the server's minute 3
    And I wait until schedule "once" has started a run
    Then schedule "once" started no run before the server's minute 3

  @creates-runs @schedule-ticks
  Scenario: A paused schedule does not fire at its tick
    Given I read the server's clock
    And I create a schedule "paused" that fires once, at the server's minute 2
    And I create a schedule "witness" that fires once, at the server's minute 3
    When I pause schedule "paused"
    Then the response field "enabled" is "false"
    And the server answered before its minute 2
    When I wait until schedule "witness" has started a run
    And I list the runs of schedule "paused"
    Then the listing holds 0 runs
