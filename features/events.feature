Feature: Run events
  A run's lifecycle can be followed without fetching the run over and over:
  GET /agent/events returns the events of the runs it names, oldest first,
  each with a sequence number that only grows. A poller passes the last
  sequence it saw as "since" to get only what came after. The events are
  run_in_progress, run_blocked, and one for each way a run ends:
  run_succeeded, run_failed, run_errored and run_cancelled. Clients skip
  event types they do not know, and so does the suite.

  An event is stamped with the moment the state it reports began, and once
  recorded it does not change: the same poll gives the same events. The
  document promises their order, not that an event is there the moment its
  state begins: the suite waits for the event of a run's end with its usual
  patience (--timeout), and a cancel may take effect a moment after the
  server accepts it.

  The scenarios that only look at a run's events share the run with every
  scenario whose arrangement (its Given steps) is the same word for word
  (@shares-runs), in this feature and others: it is made, and watched to
  its end, once.

  The program running an agent reports events with POST
  /agent/events/{runId}: that is how the service learns of each change, so
  a reported event moves the run into the state it reports. The service
  keeps these two operations for its own agents, so the scenarios that
  report events are tagged @mock-only: a real service may refuse a user's
  key there.

  @creates-runs @slow @shares-runs
  Scenario: A finished run's events end with the event of its final state
    Given I created a run with the prompt "Tidy the README" and:
      | config.name | {label} |
    And I watched the run until it reached a terminal state
    When I poll the run's events until they report the state it ended in
    Then the events are about the run, in increasing sequence order
    And the last event reports the run's state
    And every event occurred between the run's creation and its last update
    And each event occurred when the state it reports began, as the run's timestamps show

  @creates-runs @slow @shares-runs
  Scenario: Events do not change from poll to poll, and "since" skips what was seen
    Given I created a run with the prompt "Tidy the README" and:
      | config.name | {label} |
    And I watched the run until it reached a terminal state
    When I poll the run's events until they report the state it ended in
    And 2 poll intervals pass
    And I poll the run's events again
    Then the events are the same as at the first poll
    When I poll the run's events since the last one
    Then no events came back

  @creates-runs @mock-control
  Scenario: A run's events follow it as it moves, each stamped with the moment its state began
    Given the mock will end my next run in "SUCCEEDED", spending 2 seconds in each state
    When I create a run with the prompt "Update the changelog"
    And I poll the run's events
    Then no events came back
    When I wait until the run is "INPROGRESS" or later
    And I poll the run's events
    Then the run's events are run_in_progress
    And the "run_in_progress" event occurred at the run's "started_at"
    When I watch the run until it reaches a terminal state
    And I poll the run's events
    Then the run's events are run_in_progress and run_succeeded
    And the "run_succeeded" event occurred at the run's "updated_at"

  @creates-runs @mock-control
  Scenario Outline: A run that ends in <state> has the event <event>
    Given the mock will end my next run in "<state>" with error code "<code>"
    When I create a run with the prompt "Deploy the preview environment"
    And I watch the run until it reaches a terminal state
    And I poll the run's events
    Then the run's events are run_in_progress and <event>
    And the last event reports the run's state

    Examples:
      | state  | code                     | event       |
      | FAILED | insufficient_credits     | run_failed  |
      | ERROR  | internal_error           | run_errored |

  # The same rule on any server, given a prompt it fails (--failing-prompt):
  # the run may end in FAILED or ERROR, and its last event reports which.
  @creates-runs @failing-prompt @slow @shares-runs
  Scenario: A run that fails has the event of its failure last
    Given I created a run with the failing prompt in the last listed environment
    And I watched the run until it reached a terminal state
    When I poll the run's events until they report the state it ended in
    Then the run ended in FAILED or ERROR, with a status message carrying a message and an error code
    And the events are about the run, in increasing sequence order
    And the last event reports the run's state
    And each event occurred when the state it reports began, as the run's timestamps show

  # On a fast server the run may end before the cancel reaches it; its last
  # event then reports how it ended. The run is state_progression.feature's
  # cancelled run, shared (@shares-runs).
  @creates-runs @shares-runs
  Scenario: A cancelled run's last event is run_cancelled
    Given I created a run with the prompt "Rename the config package"
    And I cancelled the run, retrying while the server answers a retryable 409
    And I watched the run until it reached a terminal state
    Then the cancel was accepted with the run's id, or refused with 400 because the run had ended or was BLOCKED
    When I poll the run's events until they report the state it ended in
    Then the run is in state "CANCELLED" if the cancel was accepted
    And the events are about the run, in increasing sequence order
    And the last event reports the run's state
    And each event occurred when the state it reports began, as the run's timestamps show

  @creates-runs @mock-only
  Scenario: A reported event moves the run forward and is polled with what the reporter sent
    Given the mock will end my next run in "SUCCEEDED", spending 60 seconds in each state
    When I create a run with the prompt "Run the migrations"
    And I report the event "run_in_progress" for the run with the execution id "exec-41"
    Then the response status is 200
    And the response has a non-empty "sequence"
    When I fetch the run
    Then the run is in state "INPROGRESS"
    When I poll the run's events
    Then the run's events are run_in_progress
    And the last event carries the execution id "exec-41"
    When I report the event "run_blocked" for the run
    And I report the event "run_in_progress" for the run
    And I report the event "run_succeeded" for the run
    And I fetch the run
    Then the run is in state "SUCCEEDED"
    When I poll the run's events
    Then the run's events are run_in_progress, run_blocked, run_in_progress and run_succeeded

  @creates-runs @mock-only
  Scenario Outline: An event that would move a finished run is refused: <event>
    Given the mock will end my next run in "SUCCEEDED", spending 60 seconds in each state
    When I create a run with the prompt "Run the migrations"
    And I report the event "run_succeeded" for the run
    And I report the event "<event>" for the run
    Then the response is a problem with status 400 and code "invalid_request"
    When I fetch the run
    Then the run is in state "SUCCEEDED"

    Examples:
      | event           |
      | run_in_progress |
      | run_failed      |
      | run_cancelled   |

  # The document's bearer security covers every operation: this holds on
  # any server, and creates nothing.
  @writes
  Scenario: Reporting needs a key
    When I send "POST /agent/events/{unknown}" with no Authorization header
    Then the response is a problem with status 401 and code "authentication_required"
