@newest-client
Feature: Follow-ups to a run
  POST /agent/runs/{runId}/followups adds a message from the run's user to
  the run's conversation, the way typing it in the session would. The
  service routes it by the run's state: a run not started yet reads it
  with its prompt, a running run receives it at once, and an ended run is
  started again (a new execution of the same run, in the same
  conversation) to act on it. A 200 means the follow-up was accepted;
  GET /agent/runs/{runId} shows what it did.

  The operation is newer than the published document (May 2026): the
  official client oz-agent-sdk 1.4.0-alpha.6 calls it. The suite judges
  these scenarios where the server serves the operation, or where
  --newest-client promises it; elsewhere they are skipped, saying so.

  @creates-runs @runs-as-written
  Scenario: A follow-up to a running run joins its conversation
    When I create a run with the prompt "Bump the lint rules"
    And I wait until the run is "INPROGRESS" or later
    And I send the follow-up "Also update the changelog"
    Then the follow-up was accepted
    When I fetch the run
    And a worker took the run on
    And I fetch the run's conversation
    Then the conversation holds the prompts "Bump the lint rules" and "Also update the changelog", in that order

  @creates-runs @slow @runs-as-written
  Scenario: A follow-up to an ended run starts it again
    When I create a run with the prompt "Draft the release notes"
    And I watch the run until it reaches a terminal state
    And a worker took the run on
    And I send the follow-up "Shorten them to five lines"
    Then the follow-up was accepted
    And the run was started again by the follow-up
    And the run kept what its earlier executions accumulated
    When I watch the run until it reaches a terminal state
    And I fetch the run's conversation
    Then the conversation holds the prompts "Draft the release notes" and "Shorten them to five lines", in that order

  # Every end counts: a run cancelled, or failed, is started again as a
  # run that succeeded is, keeping what its executions accumulated.
  @creates-runs @slow
  Scenario: A follow-up to a cancelled run starts it again
    When I create a run with the prompt "Split the billing module"
    And I cancel the run, retrying while the server answers a retryable 409
    And I watch the run until it reaches a terminal state
    And I send the follow-up "Only the invoices part, then"
    Then the follow-up was accepted
    And the run was started again by the follow-up
    And the run kept what its earlier executions accumulated

  @creates-runs @slow @failing-prompt
  Scenario: A follow-up to a failed run starts it again
    When I create a run with the failing prompt
    And I watch the run until it reaches a terminal state
    And the run ended in FAILED or ERROR
    And I send the follow-up "Try once more"
    Then the follow-up was accepted
    And the run was started again by the follow-up
    And the run kept what its earlier executions accumulated

  # A run that has not ended takes the follow-up in the execution under
  # way: it is neither refused nor sent back to the queue.
  @creates-runs
  Scenario Outline: A follow-up to a run <situation> is taken without starting it over
    When I create a run with the prompt "Tidy the test helpers"
    And <how it got there>
    And I send the follow-up "Keep the old names as aliases"
    Then the follow-up was accepted
    And the follow-up kept the run going

    Examples:
      | situation    | how it got there                              |
      | just created | I fetch the run                               |
      | at work      | I wait until the run is "INPROGRESS" or later |

  @mock-only @mock-control @creates-runs
  Scenario: On the mock, a follow-up to a finished run queues it again and keeps its history
    When I create a run with the prompt "Rename the config flag"
    And the mock puts the run into "SUCCEEDED"
    And I fetch the run
    And I remember the response field "run_time" as "first run time"
    And I send the follow-up "And its documentation"
    Then the follow-up was accepted
    When I fetch the run
    Then the run is in state "QUEUED"
    And the run's "run_time" is "{first run time}"
    And the run's "started_at" is a timestamp

  @mock-only @mock-control @creates-runs
  Scenario: On the mock, a follow-up answers a run that waits for its user
    When I create a run with the prompt "Migrate the orders table"
    And the mock puts the run into "BLOCKED"
    And I send the follow-up "Yes, drop the old column"
    Then the follow-up was accepted
    When I fetch the run
    Then the run is in state "INPROGRESS"

  @writes
  Scenario: A follow-up to a run that does not exist is a 404
    When I send "POST /agent/runs/{unknown}/followups" with the body {"message": "hello"}
    Then the response is a problem with status 404 and code "resource_not_found"

  @writes
  Scenario: Follow-ups need credentials
    When I send "POST /agent/runs/{unknown}/followups" with no Authorization header
    Then the response is a problem with status 401 and code "authentication_required"

  @mock-only @creates-runs
  Scenario: A follow-up needs a message
    When I create a run with the prompt "Tidy the imports"
    And I send the follow-up ""
    Then the response is a problem with status 400 and code "invalid_request"
