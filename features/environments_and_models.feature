Feature: Environments and models
  A run executes in a cloud environment and thinks with a language model.
  GET /agent/environments lists the environments the caller's team can use,
  each with what its latest run says about it; GET /agent/models lists the
  models a run can name and the one it gets when it names none.

  Names are in alphabetical order as people read it ("backend, Data
  pipelines, web-app"); the suite takes the order of bytes as well.

  Scenario: The models listing names a default that is one of its models
    When I list the models
    Then the default model is one of the listed models

  # The run is shared with the scenarios of other features that only look
  # at a finished run (@shares-runs).
  @creates-runs @shares-runs
  Scenario: A run that names no model gets the default model
    Given I created a run with the prompt "Tidy the README" and:
      | config.name | {label} |
    And I watched the run until it reached a terminal state
    When I fetch the run
    Then the run's model is the default model

  Scenario: Environments are listed most recently updated first by default
    When I list the environments
    Then the listed environments are ordered by last update

  Scenario: Environments can be listed by name
    When I list the environments with "sort_by=name"
    Then the listed environments are ordered by name

  # The published document gives this operation no 400: a server may
  # ignore an order it does not know. The mock refuses it.
  @mock-only
  Scenario: An unknown sort order is refused
    When I list the environments with "sort_by=size"
    Then the response is a problem with status 400 and code "invalid_request"

  Scenario Outline: Environments and models need credentials: <path>
    When I send "GET <path>" with no Authorization header
    Then the response is a problem with status 401 and code "authentication_required"

    Examples:
      | path                |
      | /agent/environments |
      | /agent/models       |

  @creates-runs @mock-control
  Scenario: An environment follows its newest run as it moves
    When I create a run in the first listed environment
    Then that environment shows the run as its last task, in state "QUEUED"
    When the mock puts the run into "INPROGRESS"
    Then that environment shows the run as its last task, in state "INPROGRESS"
    And that environment's last run started when the run did
    And that environment says its setup did not fail

  # On a shared server another caller may start a run in the environment
  # in between: a run created no earlier will do, never the older one.
  # last_task_created is shown only if available; without it the scenario
  # is skipped, saying so.
  @creates-runs
  Scenario: An environment shows its newest run, not an older one
    When I create a run in the first listed environment
    And I create another run in that environment
    Then that environment shows the run, or a newer one, as its last task

  # setup_failed says why the newest run failed: only a failure in setting
  # the environment up counts.
  @creates-runs @mock-control
  Scenario Outline: An environment whose newest run failed with <code> says its setup <verdict>
    When I create a run in the first listed environment
    And the mock puts the run into "<state>" with error code "<code>"
    Then that environment shows the run as its last task, in state "<state>"
    And that environment says its setup <verdict>

    Examples:
      | state  | code                     | verdict      |
      | FAILED | environment_setup_failed | failed       |
      | FAILED | insufficient_credits     | did not fail |
      | ERROR  | internal_error           | did not fail |

  # The same rule on any server, with the prompt the operator says it
  # fails: a run that failed after it started did not fail in its setup.
  # A run that failed before it started leaves nothing to judge. The run is
  # shared with the scenarios of state_progression.feature and events.feature
  # that judge a failed run (@shares-runs).
  @creates-runs @failing-prompt @shares-runs
  Scenario: An environment whose newest run failed after it started does not say its setup failed
    Given I created a run with the failing prompt in the last listed environment
    And I watched the run until it reached a terminal state
    Then that environment does not say its setup failed, the run having failed after it started
