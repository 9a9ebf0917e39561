Feature: Get a run
  GET /agent/runs/{runId} returns everything known about one run: the prompt it
  was given, where it came from and who started it, its timestamps, a link to
  its session once it has one, and the agent configuration that
  was actually used once defaults were filled in.

  In these scenarios "{label}" stands for a config name made up for each
  scenario, so that scenarios sharing one server never see each other's runs.
  The run they look at, watched to its end, is shared with every scenario
  whose arrangement is the same word for word (@shares-runs), in this
  feature and others: it is made once.

  @creates-runs @runs-as-written @shares-runs
  Scenario: A run's details carry its prompt, provenance, timestamps and configuration
    Given I created a run with the prompt "Tidy the README" and:
      | config.name | {label} |
    And I watched the run until it reached a terminal state
    When I fetch the run
    Then the run's "prompt" is "Tidy the README"
    And the run's "source" is "API"
    And the run has a non-empty "creator.uid"
    And the run's "created_at" is a timestamp
    And the run's "updated_at" is a timestamp not before its "created_at"
    And the run's "agent_config.name" is "{label}"
    And the run has a non-empty "agent_config.model_id"

  # session_id is shown "if available": the suite waits, with its usual
  # patience, for the run to show one, and skips the scenario when the run
  # ends without one. The bundled mock shows it from CLAIMED on.
  @creates-runs @slow @shares-runs
  Scenario: A run's session, once shown, is a UUID with a link
    Given I created a run with the prompt "Tidy the README" and:
      | config.name | {label} |
    And I watched the run until it reached a terminal state
    When I wait until the run shows its session
    Then the run's "session_id" is a UUID
    And the run's "session_link" is an absolute URL

  # Whatever runs the caller already has: each one that failed says why.
  # (Every run the suite sees is held to this, in every feature; this
  # scenario makes sure the failed ones are looked at.)
  Scenario: Runs that failed say why, with an error code
    When I list runs with "state=FAILED&state=ERROR&limit=100"
    Then every listed run carries a status message with a message and an error code

  Scenario: An unknown run is not found
    When I fetch a run that does not exist
    Then the response is a problem with status 404 and code "resource_not_found"
