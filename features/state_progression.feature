@creates-runs
Feature: Run state progression
  A run moves forward only: QUEUED, then PENDING, CLAIMED and INPROGRESS, and
  it stops in SUCCEEDED, FAILED (the caller's side failed) or ERROR (the
  platform failed); a cancel stops it in CANCELLED. BLOCKED (waiting for a
  person) sits beside INPROGRESS. Once a run is in a terminal state nothing
  about it changes any more.

  Against a real server the suite watches runs by polling, which can take
  minutes (scenarios tagged @slow). Against a server offering the mock's
  control API it moves the server's clock instead, and the scenarios tagged
  with mock-control choose how a run ends.

  @slow
  Scenario: A run moves only forward until it reaches a terminal state
    When I create a run with the prompt "Add a unit test for the parser"
    And I watch the run until it reaches a terminal state
    Then the run only moved forward along QUEUED, PENDING, CLAIMED, INPROGRESS to a terminal state
    And the run's "updated_at" never went back
    And the run had a "started_at" from the moment it was INPROGRESS, and none before it was CLAIMED
    And the run had a "session_link" from the moment it was CLAIMED

  @slow
  Scenario: Terminal states never change
    When I create a run with the prompt "Rename the config package"
    And I watch the run until it reaches a terminal state
    And a while passes
    And I fetch the run
    Then the run has not changed since it ended

  @mock-control
  Scenario: A successful run passes through every state in order
    Given the mock will end my next run in "SUCCEEDED"
    When I create a run with the prompt "Update the changelog"
    And I watch the run until it reaches a terminal state
    Then the run was seen in QUEUED, PENDING, CLAIMED, INPROGRESS and SUCCEEDED, in that order

  @mock-control
  Scenario Outline: A run that ends in <state> carries a status message with its error code, <code>
    Given the mock will end my next run in "<state>" with error code "<code>"
    When I create a run with the prompt "Deploy the preview environment"
    And I watch the run until it reaches a terminal state
    Then the run is in state "<state>"
    And the run has a status message with error code "<code>"

    Examples:
      | state  | code                     |
      | FAILED | insufficient_credits     |
      | FAILED | invalid_request          |
      | ERROR  | internal_error           |
      | ERROR  | environment_setup_failed |

  @mock-control
  Scenario: A run stopped by a platform failure stays stopped
    When I create a run with the prompt "Regenerate the API client"
    And I wait until the run is "INPROGRESS" or later
    And the mock puts the run into "ERROR" with error code "internal_error"
    And I fetch the run
    Then the run is in state "ERROR"
    And the run has a status message with error code "internal_error"
    And the run's "started_at" is a timestamp
    When a while passes
    And I fetch the run
    Then the run is in state "ERROR"

  Scenario: A cancelled run is CANCELLED, and cancelling it again is refused
    When I create a run with the prompt "Refactor the payment module"
    And I cancel the run
    Then the response status is 200
    And the response is the run's id as a JSON string
    When I fetch the run
    Then the run is in state "CANCELLED"
    When I try to cancel the run once
    Then the response is a problem with status 400 and code "invalid_request"

  @mock-control
  Scenario: A run being handed to a worker cannot be cancelled yet
    When I create a run with the prompt "Bump the base image"
    And the mock puts the run into "PENDING"
    And I try to cancel the run once
    Then the response is a problem with status 409 and code "conflict"
    And the problem says it is retryable
