@creates-runs
Feature: Run state progression
  A run moves forward only: QUEUED, then PENDING, CLAIMED and INPROGRESS, and
  it stops in SUCCEEDED, FAILED (the caller's side failed) or ERROR (the
  platform failed); a cancel stops it in CANCELLED. BLOCKED (waiting for a
  person) sits beside INPROGRESS. Once a run is in a terminal state nothing
  about it changes any more.

  A run's session (session_id, session_link) is shown "if available": the
  suite asks only that it stays once shown; the bundled mock shows it from
  CLAIMED on.

  Against a real server the suite watches runs by polling, which can take
  minutes (scenarios tagged @slow). There a scenario that only looks at a
  run the server ends on its own shares it with every other scenario,
  in any feature, whose arrangement (its Given steps) is the same word for
  word (@shares-runs): the run is made and watched once, from its
  creation, and each sharer judges every state and timestamp that watch
  saw, however late it joins. Against a server offering the mock's
  control API it moves the server's clock instead, and the scenarios tagged
  with mock-control choose how a run ends. A poll interval is the time
  between two looks at a run: 2 seconds of real time by default when
  polling, one second of the mock's clock when the suite moves it.

  A server may be fast or slow: a run may still be queued when the suite
  first looks, or already finished. A cancel that arrives after the run has
  ended is refused with 400, and a cancel that arrives while the run is
  PENDING (being handed to a worker) is refused with a retryable 409; so
  "I cancel the run, retrying while ..." sends the cancel again after each
  retryable 409, and "I send a single cancel request" sends it once.

  @slow @shares-runs
  Scenario: A run moves only forward until it reaches a terminal state
    Given I created a run with the prompt "Tidy the README" and:
      | config.name | {label} |
    And I watched the run until it reached a terminal state
    Then the run only moved forward along QUEUED, PENDING, CLAIMED, INPROGRESS to a terminal state
    And the run's "updated_at" never went back
    And the run had a "started_at" from the moment it was INPROGRESS, and none before it was CLAIMED
    And the run kept its "session_link" from the moment it showed one

  @slow @shares-runs
  Scenario: Terminal states never change
    Given I created a run with the prompt "Tidy the README" and:
      | config.name | {label} |
    And I watched the run until it reached a terminal state
    When 3 poll intervals pass
    And I fetch the run
    Then the run has not changed since it ended
    And the run's run_time and request_usage are as when it ended

  # The run spends longer in each state than a poll interval, so that the
  # suite sees every state whatever pace the mock was started with.
  @mock-control
  Scenario: A successful run passes through every state in order
    Given the mock will end my next run in "SUCCEEDED", spending 2 seconds in each state
    When I create a run with the prompt "Update the changelog"
    And I watch the run until it reaches a terminal state
    Then the run was seen in QUEUED, PENDING, CLAIMED, INPROGRESS and SUCCEEDED, in that order
    And the run had a "session_link" from the moment it was CLAIMED

  # A server may pass a run through its states faster than any poll, so
  # polling cannot ask to have seen each state, as the scenario above does
  # on the mock. It can judge that a run that succeeded was worked on: the
  # run shows when it started, and its events report it in progress before
  # its end. A run that ends otherwise leaves the scenario inconclusive.
  @slow @shares-runs
  Scenario: A run that succeeded was worked on
    Given I created a run with the prompt "Tidy the README" and:
      | config.name | {label} |
    And I watched the run until it reached a terminal state
    When I poll the run's events until they report the state it ended in
    Then a run that succeeded shows when it started, and its events report it in progress before its end

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
      | FAILED | environment_setup_failed |
      | ERROR  | resource_unavailable     |

  # On a fast server the run may have ended (or be waiting for a person,
  # BLOCKED) before the cancel arrives; the server then refuses it with 400,
  # and the run ends as it would have. The run, cancelled once, is shared
  # with events.feature (@shares-runs): the second cancel, refused, changes
  # nothing.
  @shares-runs
  Scenario: A cancelled run is CANCELLED, and cancelling it again is refused
    Given I created a run with the prompt "Rename the config package"
    And I cancelled the run, retrying while the server answers a retryable 409
    And I watched the run until it reached a terminal state
    Then the cancel was accepted with the run's id, or refused with 400 because the run had ended or was BLOCKED
    And the run is in state "CANCELLED" if the cancel was accepted
    When I send a single cancel request for the run
    Then the response is a problem with status 400 and code "invalid_request"

  # Polling a real server, the suite cannot choose how a run ends; the
  # operator can name a prompt the server under test fails, with
  # --failing-prompt (the bundled mock fails any prompt holding
  # "[mock:fail]"). Without one the scenario is skipped. The run is the
  # one environments_and_models.feature makes in the last listed
  # environment, shared (@shares-runs).
  @slow @failing-prompt @shares-runs
  Scenario: A run that fails says why, with an error code
    Given I created a run with the failing prompt in the last listed environment
    And I watched the run until it reached a terminal state
    Then the run ended in FAILED or ERROR, with a status message carrying a message and an error code

  # The same rule, by polling: the run is cancelled as soon as a look finds
  # it PENDING or later. A server that keeps runs PENDING for longer than a
  # poll interval is caught refusing with anything but a retryable 409; on a
  # faster one the cancel meets a run that has moved on, and is judged as
  # any cancel.
  Scenario: A run seen being handed to a worker is not cancelled yet
    When I create a run with the prompt "Pin the linter version"
    And I wait until the run is "PENDING" or later
    And I send a single cancel request for the run
    Then a run still PENDING refused the cancel with a retryable 409, and one that had moved on took it as any other

  @mock-control
  Scenario: A run being handed to a worker cannot be cancelled yet
    When I create a run with the prompt "Bump the base image"
    And the mock puts the run into "PENDING"
    And I send a single cancel request for the run
    Then the response is a problem with status 409 and code "conflict"
    And the problem says it is retryable

  @mock-control
  Scenario: A run waiting for a person cannot be cancelled
    When I create a run with the prompt "Ask before pushing the branch"
    And the mock puts the run into "BLOCKED"
    And I send a single cancel request for the run
    Then the response is a problem with status 400 and code "invalid_request"
